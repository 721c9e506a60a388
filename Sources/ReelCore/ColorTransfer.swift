import Foundation

/// A transfer function as a stream tags it (H.273 `TransferCharacteristics`), with the maths to
/// take its code values to light and back. Pure Swift: the window's lookup table, the CPU
/// path and the tests all use these definitions.
public enum ColorTransfer: String, Sendable, Hashable, Codable, CaseIterable {
    /// BT.709 (and BT.2020's 10/12-bit SDR curve): shown on a BT.1886 display (gamma 2.4).
    case bt709
    /// BT.601 (SMPTE 170M): the same curve as BT.709.
    case bt601
    /// IEC 61966-2-1 sRGB.
    case srgb
    /// SMPTE ST 2084, the perceptual quantiser of HDR10 and Dolby Vision.
    case pq
    /// ARIB STD-B67, hybrid log-gamma (BT.2100 HLG).
    case hlg
    /// Linear light.
    case linear
    /// BT.470 M: a pure 2.2 power.
    case gamma22
    /// BT.470 BG: a pure 2.8 power.
    case gamma28

    /// Whether the transfer carries light above SDR reference white (PQ, HLG).
    public var isHDR: Bool { self == .pq || self == .hlg }

    /// The name `reel probe` prints.
    public var displayName: String {
        switch self {
        case .bt709: "BT.709"
        case .bt601: "BT.601"
        case .srgb: "sRGB"
        case .pq: "PQ (SMPTE 2084)"
        case .hlg: "HLG (ARIB STD-B67)"
        case .linear: "linear"
        case .gamma22: "gamma 2.2"
        case .gamma28: "gamma 2.8"
        }
    }

    /// For an SDR transfer: the display's light for code value `v` (0…1), relative to its white
    /// (BT.709 and BT.601 as a BT.1886 display with zero black shows them). Not for PQ or HLG.
    public func sdrEOTF(_ v: Double) -> Double {
        let v = max(0, v)
        switch self {
        case .bt709, .bt601: return pow(v, 2.4)
        case .srgb: return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        case .linear: return v
        case .gamma22: return pow(v, 2.2)
        case .gamma28: return pow(v, 2.8)
        case .pq: return PQ.eotf(v) / 10_000
        case .hlg: return HLG.inverseOETF(v)
        }
    }
}

/// SMPTE ST 2084 (PQ): code value ↔ absolute luminance in cd/m² (nits), 0…10 000.
public enum PQ {
    static let m1 = 2610.0 / 16384
    static let m2 = 2523.0 / 4096 * 128
    static let c1 = 3424.0 / 4096
    static let c2 = 2413.0 / 4096 * 32
    static let c3 = 2392.0 / 4096 * 32

    /// Nits for code value `e` (0…1).
    public static func eotf(_ e: Double) -> Double {
        let p = pow(min(max(e, 0), 1), 1 / m2)
        return 10_000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// The code value (0…1) for `nits`.
    public static func inverseEOTF(_ nits: Double) -> Double {
        let y = pow(min(max(nits, 0), 10_000) / 10_000, m1)
        return pow((c1 + c2 * y) / (1 + c3 * y), m2)
    }
}

/// BT.2100 hybrid log-gamma.
public enum HLG {
    static let a = 0.17883277
    static let b = 1 - 4 * a
    static let c = 0.5 - a * log(4 * a)

    /// Scene light (0…1) for code value `e` (0…1).
    public static func inverseOETF(_ e: Double) -> Double {
        let e = min(max(e, 0), 1)
        return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
    }

    /// The code value (0…1) for scene light `l` (0…1).
    public static func oetf(_ l: Double) -> Double {
        let l = min(max(l, 0), 1)
        return l <= 1.0 / 12 ? (3 * l).squareRoot() : a * log(12 * l - b) + c
    }

    /// The system gamma BT.2100 gives a display of peak `nits` (1.2 at 1000 nits).
    public static func systemGamma(peak nits: Double) -> Double {
        1.2 + 0.42 * log10(nits / 1000)
    }

    /// The reference display's light in nits for scene light `rgb` (BT.2020 components, 0…1):
    /// the OOTF `Lw · Ys^(γ−1) · E` of a display of peak `peak` nits with zero black.
    public static func ootf(_ rgb: SIMD3<Double>, peak: Double = 1000) -> SIMD3<Double> {
        let ys = 0.2627 * rgb.x + 0.6780 * rgb.y + 0.0593 * rgb.z
        guard ys > 0 else { return .zero }
        return rgb * (peak * pow(ys, systemGamma(peak: peak) - 1))
    }

    /// Scene light (BT.2020 components, 0…1) for the reference display's light `nits`: BT.2100's
    /// inverse OOTF `E = (Yd / Lw)^((1 − γ) / γ) · Fd / Lw`, so `ootf(inverseOOTF(x)) == x`. This is
    /// the definition FFmpeg's zscale follows only with `agamma=0`; its default applies the system
    /// gamma to each component on its own (`E = (Fd / Lw)^(1/γ)`), which agrees on greys only.
    public static func inverseOOTF(_ nits: SIMD3<Double>, peak: Double = 1000) -> SIMD3<Double> {
        let relative = nits / peak
        let yd = 0.2627 * relative.x + 0.6780 * relative.y + 0.0593 * relative.z
        guard yd > 0 else { return .zero }
        let gamma = systemGamma(peak: peak)
        return relative * pow(yd, (1 - gamma) / gamma)
    }
}

/// The transfer a display applies: the output side of the colour path.
public enum DisplayTransfer: String, Sendable, Hashable, Codable, CaseIterable {
    /// BT.1886 with zero black: a 2.4 power, as SDR video is graded for.
    case bt1886
    /// IEC 61966-2-1 sRGB.
    case srgb

    /// The code value (0…1) for light `l` relative to the display's white.
    public func encode(_ l: Double) -> Double {
        let l = min(max(l, 0), 1)
        switch self {
        case .bt1886: return pow(l, 1 / 2.4)
        case .srgb: return l <= 0.0031308 ? 12.92 * l : 1.055 * pow(l, 1 / 2.4) - 0.055
        }
    }
}
