import ArgumentParser
import Foundation
import ReelMedia

/// `--loudness LUFS|off`: loudness levelling (EBU R128) of every item a command plays. Parsing
/// it sets ``Player/defaultLoudnessLevelling``, which every player the command makes starts
/// with (the feed's pool, the window's, the terminal's, the headless one), so a command wires
/// it with one `@OptionGroup` line.
///
/// The default: −14 LUFS for `reel feed` and `reel demo` (clips from many uploaders, one after
/// another, at one loudness, as streaming services level them), off for `reel play` (one file
/// plays as it was mastered, as in mpv and ffplay; `--loudness -14` levels it).
struct LoudnessOptions<Default: LoudnessDefault>: ParsableArguments {
    @Option(name: .customLong("loudness"), parsing: .unconditional, help: ArgumentHelp(
        "Level every item to this loudness (LUFS, -70 to 0), its true peak kept at or under -1 dBTP, or 'off'. Default: \(Default.text).",
        valueName: "LUFS|off"))
    var loudness: String?

    init() {}

    /// What `--loudness` says (or the command's default): `nil` for off.
    func levelling() throws -> LoudnessLevelling? {
        guard let text = loudness else { return Default.target.map { LoudnessLevelling(target: $0) } }
        if text.lowercased() == "off" { return nil }
        guard let target = Double(text), target.isFinite, (-70...0).contains(target) else {
            throw ValidationError("--loudness takes a loudness in LUFS from -70 to 0 (such as -14) or 'off', not '\(text)'")
        }
        return LoudnessLevelling(target: target)
    }

    mutating func validate() throws {
        Player.defaultLoudnessLevelling = try levelling()
    }
}

/// A command's default for `--loudness`.
protocol LoudnessDefault {
    /// LUFS, or `nil` for off.
    static var target: Double? { get }
    static var text: String { get }
}

/// `reel feed` and `reel demo`: −14 LUFS.
enum FeedLoudness: LoudnessDefault {
    static let target: Double? = -14
    static let text = "-14"
}

/// `reel play`: off.
enum PlayLoudness: LoudnessDefault {
    static let target: Double? = nil
    static let text = "off"
}
