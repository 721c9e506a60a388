import Foundation

/// The one definition of how a stream's colour reaches an SDR display: from the source's
/// encoded R'G'B' (after the YUV matrix) to the display's encoded R'G'B', both 0…1.
///
/// 1. Linearise to absolute light: PQ by its EOTF; HLG by its inverse OETF and the OOTF of a
///    1000-nit reference display (system gamma 1.2); SDR transfers by their display EOTF with
///    white at ``referenceWhite``.
/// 2. Primaries to BT.709.
/// 3. Tone-map the largest component with ``curve`` from ``sourcePeak`` to ``targetPeak``,
///    scaling the three components alike (no hue shift).
/// 4. Light relative to the display's white (``targetPeak`` nits is code value 1), then
///    ``GamutMapping`` (constant luminance and hue, less saturation).
/// 5. The display's transfer (BT.1886 by default).
///
/// Steps 1–2 (``converted(_:)``, smooth) are what ``ColorLUT`` tabulates; the tone mapping,
/// the gamut mapping and the display's transfer run per pixel after it (a table cannot hold a
/// knee or a fold without bleeding it into its neighbours).
public struct ColorMapping: Sendable, Hashable {
    /// BT.2408's HDR reference white: the light of SDR white in an HDR grade.
    public static let referenceWhite = 203.0
    /// HLG's reference display (BT.2100): 1000 nits.
    public static let hlgDisplayPeak = 1000.0

    public var transfer: ColorTransfer
    public var primaries: ColorPrimaries
    /// The brightest light of the content, in nits (metadata or a scene estimate).
    public var sourcePeak: Double
    /// The display's peak, in nits: SDR white (203) unless the user says otherwise.
    public var targetPeak: Double
    public var curve: ToneMappingCurve
    public var display: DisplayTransfer

    public init(transfer: ColorTransfer, primaries: ColorPrimaries, sourcePeak: Double,
                targetPeak: Double = ColorMapping.referenceWhite, curve: ToneMappingCurve = .auto,
                display: DisplayTransfer = .bt1886) {
        self.transfer = transfer
        self.primaries = primaries
        self.sourcePeak = sourcePeak
        self.targetPeak = targetPeak
        self.curve = curve
        self.display = display
    }

    /// Whether frames with these tags go through the mapping at all: HDR transfers, and SDR
    /// with primaries wider than BT.709's. Everything else is shown untouched.
    public static func applies(transfer: ColorTransfer, primaries: ColorPrimaries) -> Bool {
        transfer.isHDR || !primaries.isBT709Like
    }

    /// Absolute light (nits) of the source's encoded `rgb`, in the source's primaries.
    public func linearise(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
        switch transfer {
        case .pq:
            return SIMD3(PQ.eotf(rgb.x), PQ.eotf(rgb.y), PQ.eotf(rgb.z))
        case .hlg:
            let scene = SIMD3(HLG.inverseOETF(rgb.x), HLG.inverseOETF(rgb.y), HLG.inverseOETF(rgb.z))
            return HLG.ootf(scene, peak: Self.hlgDisplayPeak)
        default:
            return SIMD3(transfer.sdrEOTF(rgb.x), transfer.sdrEOTF(rgb.y), transfer.sdrEOTF(rgb.z)) * Self.referenceWhite
        }
    }

    /// The display's encoded R'G'B' for the source's encoded `rgb`.
    public func map(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
        display(toneMapped(rgb))
    }

    /// Tone-mapped light in nits with BT.709 primaries (components may fall outside the
    /// display's gamut: below zero, above ``targetPeak``).
    public func toneMapped(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
        toneMap(converted(rgb))
    }

    /// Light in nits with BT.709 primaries, before tone mapping: the smooth part, which
    /// ``ColorLUT`` tabulates.
    public func converted(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
        let light = linearise(rgb)
        return primaries == .bt709 ? light : conversion * light
    }

    /// `light` with its largest component brought to the display by ``curve`` and the
    /// others scaled alike (no hue shift).
    public func toneMap(_ light: SIMD3<Double>) -> SIMD3<Double> {
        let peak = light.max()
        guard peak > 0 else { return light }
        return light * (curve.map(peak, sourcePeak: max(sourcePeak, 1), targetPeak: targetPeak) / peak)
    }

    /// The display's encoded R'G'B' for tone-mapped BT.709 light in nits: gamut-mapped, then
    /// the display's transfer.
    public func display(_ nits: SIMD3<Double>) -> SIMD3<Double> {
        let fitted = GamutMapping.map(nits / targetPeak)
        return SIMD3(display.encode(fitted.x), display.encode(fitted.y), display.encode(fitted.z))
    }

    private var conversion: Matrix3 { primaries.conversion(to: .bt709) }

    /// What was applied, in words (for the trace and `reel probe`).
    public var summary: String {
        let peak = Int(sourcePeak.rounded())
        return "\(transfer.displayName) \(primaries.displayName) → BT.709 \(display == .bt1886 ? "BT.1886" : "sRGB"), "
            + "\(curve.rawValue) tone mapping from \(peak) to \(Int(targetPeak.rounded())) nits"
    }
}
