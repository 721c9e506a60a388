import Foundation

/// Colour primaries as a stream tags them (H.273 `ColourPrimaries`), all with a D65 white.
public enum ColorPrimaries: String, Sendable, Hashable, Codable, CaseIterable {
    case bt709
    /// BT.601 625-line (BT.470 BG, PAL).
    case bt601_625
    /// BT.601 525-line (SMPTE 170M / 240M, NTSC).
    case bt601_525
    case bt2020
    /// Display P3 (SMPTE EG 432-1, D65).
    case displayP3

    /// The name `reel probe` prints.
    public var displayName: String {
        switch self {
        case .bt709: "BT.709"
        case .bt601_625: "BT.601 625"
        case .bt601_525: "BT.601 525"
        case .bt2020: "BT.2020"
        case .displayP3: "Display P3"
        }
    }

    /// Whether SDR video with these primaries is shown as it always was, untouched: BT.709 and
    /// BT.601's primaries are close enough that players (and displays) treat them alike.
    public var isBT709Like: Bool { self == .bt709 || self == .bt601_625 || self == .bt601_525 }

    /// CIE xy of red, green, blue.
    public var chromaticities: [(x: Double, y: Double)] {
        switch self {
        case .bt709: [(0.640, 0.330), (0.300, 0.600), (0.150, 0.060)]
        case .bt601_625: [(0.640, 0.330), (0.290, 0.600), (0.150, 0.060)]
        case .bt601_525: [(0.630, 0.340), (0.310, 0.595), (0.155, 0.070)]
        case .bt2020: [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046)]
        case .displayP3: [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)]
        }
    }

    /// The D65 white point.
    public static let d65 = (x: 0.3127, y: 0.3290)

    /// Linear RGB → CIE XYZ (Y of white = 1), rows x, y, z.
    public var toXYZ: Matrix3 {
        func xyz(_ p: (x: Double, y: Double)) -> SIMD3<Double> { SIMD3(p.x / p.y, 1, (1 - p.x - p.y) / p.y) }
        let c = chromaticities.map(xyz)
        let primaries = Matrix3(columns: c[0], c[1], c[2])
        let scale = primaries.inverse * xyz(Self.d65)
        return Matrix3(columns: c[0] * scale.x, c[1] * scale.y, c[2] * scale.z)
    }

    /// Linear RGB in these primaries → linear RGB in `target`'s.
    public func conversion(to target: ColorPrimaries) -> Matrix3 {
        target.toXYZ.inverse * toXYZ
    }
}

/// A 3×3 matrix of doubles, stored by rows.
public struct Matrix3: Sendable, Hashable {
    public var rows: [SIMD3<Double>]

    public init(rows: SIMD3<Double>, _ r1: SIMD3<Double>, _ r2: SIMD3<Double>) { self.rows = [rows, r1, r2] }

    public init(columns c0: SIMD3<Double>, _ c1: SIMD3<Double>, _ c2: SIMD3<Double>) {
        rows = [SIMD3(c0.x, c1.x, c2.x), SIMD3(c0.y, c1.y, c2.y), SIMD3(c0.z, c1.z, c2.z)]
    }

    public static let identity = Matrix3(rows: SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1))

    public static func * (m: Matrix3, v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((m.rows[0] * v).sum(), (m.rows[1] * v).sum(), (m.rows[2] * v).sum())
    }

    public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        let c0 = a * SIMD3(b.rows[0].x, b.rows[1].x, b.rows[2].x)
        let c1 = a * SIMD3(b.rows[0].y, b.rows[1].y, b.rows[2].y)
        let c2 = a * SIMD3(b.rows[0].z, b.rows[1].z, b.rows[2].z)
        return Matrix3(columns: c0, c1, c2)
    }

    public var determinant: Double {
        let (a, b, c) = (rows[0], rows[1], rows[2])
        return a.x * (b.y * c.z - b.z * c.y) - a.y * (b.x * c.z - b.z * c.x) + a.z * (b.x * c.y - b.y * c.x)
    }

    public var inverse: Matrix3 {
        let (a, b, c) = (rows[0], rows[1], rows[2])
        let d = determinant
        return Matrix3(
            rows: SIMD3(b.y * c.z - b.z * c.y, a.z * c.y - a.y * c.z, a.y * b.z - a.z * b.y) / d,
            SIMD3(b.z * c.x - b.x * c.z, a.x * c.z - a.z * c.x, a.z * b.x - a.x * b.z) / d,
            SIMD3(b.x * c.y - b.y * c.x, a.y * c.x - a.x * c.y, a.x * b.y - a.y * b.x) / d
        )
    }
}
