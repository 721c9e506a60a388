import Foundation

/// CIE 1976 L*a*b* and ΔE*ab, for measuring how far a rendered picture is from a reference.
/// Pixels are read as sRGB-encoded BT.709 (what an SDR screen shows), white D65.
public enum ColorDifference {
    /// CIE L*a*b* of an 8-bit sRGB pixel.
    public static func lab(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> SIMD3<Double> {
        let linear = SIMD3(ColorTransfer.srgb.sdrEOTF(Double(r) / 255), ColorTransfer.srgb.sdrEOTF(Double(g) / 255),
                           ColorTransfer.srgb.sdrEOTF(Double(b) / 255))
        let xyz = ColorPrimaries.bt709.toXYZ * linear
        let white = ColorPrimaries.bt709.toXYZ * SIMD3(1, 1, 1)
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        let fx = f(xyz.x / white.x), fy = f(xyz.y / white.y), fz = f(xyz.z / white.z)
        return SIMD3(116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))
    }

    /// CIE76 ΔE between two 8-bit sRGB pixels.
    public static func deltaE76(_ a: (UInt8, UInt8, UInt8), _ b: (UInt8, UInt8, UInt8)) -> Double {
        let d = lab(a.0, a.1, a.2) - lab(b.0, b.1, b.2)
        return (d * d).sum().squareRoot()
    }

    /// The mean CIE76 ΔE between two packed RGB24 buffers of the same size.
    public static func meanDeltaE76(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count && a.count % 3 == 0)
        guard !a.isEmpty else { return 0 }
        var total = 0.0
        for i in stride(from: 0, to: a.count, by: 3) {
            total += deltaE76((a[i], a[i + 1], a[i + 2]), (b[i], b[i + 1], b[i + 2]))
        }
        return total / Double(a.count / 3)
    }
}
