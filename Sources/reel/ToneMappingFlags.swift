import ArgumentParser
import ReelCore
import ReelMedia

extension ToneMappingCurve: ExpressibleByArgument {}

/// `--tone-mapping` and `--target-peak`, shared by `play` and `feed`: how HDR (HLG, PQ,
/// Dolby Vision 8.x's base layer) is brought to an SDR screen. SDR video is never touched.
struct ToneMappingFlags: ParsableArguments {
    @Option(help: "HDR to SDR: auto (BT.2390), bt2390, clip (exact below the display's peak, highlights lost) or linear (the content's peak scaled onto the display's).")
    var toneMapping: ToneMappingCurve = .auto

    @Option(help: "The display's peak in nits (HDR reference white, 203, is SDR white; a brighter display shows HDR white darker and keeps more highlight).")
    var targetPeak: Double = ColorMapping.referenceWhite

    /// Checks the values and makes them the options every output's colour mapper starts with
    /// (parsing happens before any output exists, so declaring the group is all a command does).
    mutating func validate() throws {
        guard targetPeak.isFinite, targetPeak >= 80, targetPeak <= 10_000 else {
            throw ValidationError("--target-peak must be between 80 and 10000 nits (got \(targetPeak))")
        }
        ToneMappingOptions.current = ToneMappingOptions(curve: toneMapping, targetPeak: targetPeak)
    }
}
