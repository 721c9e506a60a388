import Foundation

/// How light above the display's peak is brought within it.
public enum ToneMappingCurve: String, Sendable, Hashable, Codable, CaseIterable {
    /// BT.2390 for HDR (the default).
    case auto
    /// ITU-R BT.2390's EETF: a Hermite knee in PQ space, identity below the knee.
    case bt2390
    /// Clip at the display's peak (exact below it, highlights lost).
    case clip
    /// Scale the source's peak linearly onto the display's (darker, nothing clipped).
    case linear

    /// `nits` (the largest component of a pixel) brought into a display of `targetPeak`
    /// nits, for content whose peak is `sourcePeak` nits.
    public func map(_ nits: Double, sourcePeak: Double, targetPeak: Double) -> Double {
        guard nits > 0 else { return 0 }
        switch self {
        case .clip:
            return min(nits, targetPeak)
        case .linear:
            return sourcePeak > targetPeak ? min(nits * targetPeak / sourcePeak, targetPeak) : min(nits, targetPeak)
        case .auto, .bt2390:
            return BT2390.eetf(nits, sourcePeak: sourcePeak, targetPeak: targetPeak)
        }
    }
}

/// ITU-R BT.2390-10 §5.4.1 EETF with zero black on both sides.
public enum BT2390 {
    /// `nits` mapped from a source of peak `sourcePeak` to a display of peak `targetPeak`.
    /// Identity below the knee; the source's peak lands on the display's peak.
    public static func eetf(_ nits: Double, sourcePeak: Double, targetPeak: Double) -> Double {
        let sourceMax = PQ.inverseEOTF(sourcePeak)
        let e1 = PQ.inverseEOTF(nits) / sourceMax
        let maxLum = PQ.inverseEOTF(targetPeak) / sourceMax
        guard maxLum < 1 else { return nits }
        let ks = max(0, 1.5 * maxLum - 0.5)
        let e2: Double
        if e1 < ks {
            e2 = e1
        } else if e1 >= 1 {
            e2 = maxLum
        } else {
            let t = (e1 - ks) / (1 - ks)
            let t2 = t * t, t3 = t2 * t
            e2 = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * maxLum
        }
        return min(PQ.eotf(e2 * sourceMax), targetPeak)
    }
}

/// Gamut mapping into BT.709's [0, 1] cube without a hue shift: a colour outside is moved in
/// a straight line (in linear light) toward the grey of the same luminance, just far enough to
/// fit. Its luminance stays, and so does its hue as a dominant wavelength (the line through
/// the white point on the chromaticity diagram); only its saturation drops. Closed form, so
/// the window's shader and the CPU path run it per pixel after the lookup table (a table
/// cannot hold the fold at the gamut's edge without bleeding it into the colours inside).
public enum GamutMapping {
    /// BT.709 luminance weights.
    public static let luma = SIMD3(0.2126, 0.7152, 0.0722)

    /// `linear` (BT.709 primaries, relative to white) unchanged when inside the cube; otherwise
    /// desaturated toward the grey of its luminance (a luminance at or above white becomes
    /// white, at or below black black).
    public static func map(_ linear: SIMD3<Double>) -> SIMD3<Double> {
        if linear.min() >= 0 && linear.max() <= 1 { return linear }
        let y = (linear * luma).sum()
        if y >= 1 { return SIMD3(repeating: 1) }
        if y <= 0 { return .zero }
        var t = 1.0
        for c in [linear.x, linear.y, linear.z] {
            if c > 1 { t = min(t, (1 - y) / (c - y)) }
            if c < 0 { t = min(t, y / (y - c)) }
        }
        let mapped = SIMD3(repeating: y) + (linear - SIMD3(repeating: y)) * t
        return mapped.replacing(with: 0, where: mapped .< 0).replacing(with: 1, where: mapped .> 1)
    }
}
