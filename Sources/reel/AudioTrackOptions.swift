import ArgumentParser
import Foundation
import ReelMedia

/// `--audio-language`, `--audio-role`, `--audio-track`: which audio track every item a command
/// plays starts with. Parsing them sets ``AudioSelection/processDefault``, which every player the
/// command makes starts with (the feed's pool, the window's, the terminal's, the headless one),
/// as ``LoudnessOptions`` does; a feed keeps the language from item to item.
struct AudioTrackOptions: ParsableArguments {
    @Option(name: .customLong("audio-language"), help: ArgumentHelp(
        "Play the audio track in this language when the item has one (fr, fra, en-GB…); else its default track.",
        valueName: "lang"))
    var language: String?

    @Option(name: .customLong("audio-role"), help: ArgumentHelp(
        "Prefer the audio track with this role (describes-video, commentary…).", valueName: "role"))
    var role: String?

    @Option(name: .customLong("audio-track"), help: ArgumentHelp(
        "Play this audio stream (its index, as reel probe lists it) when the item has it.", valueName: "index"))
    var track: Int?

    init() {}

    var selection: AudioSelection {
        AudioSelection(preferredLanguages: language.map { [$0] } ?? [], preferredRole: role, track: track)
    }

    mutating func validate() throws {
        if let language, language.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--audio-language takes a language (fr, fra, en-GB…), not an empty word")
        }
        if let track, track < 0 { throw ValidationError("--audio-track takes a stream index (0 or more), not \(track)") }
        AudioSelection.processDefault = selection
    }
}

extension TraceWriter {
    /// An `audioTracks` line: the item's audio tracks, the one playing, and why it was chosen.
    static func audioTracks(_ info: MediaInfo) -> [String: Any] {
        var object: [String: Any] = ["type": "audioTracks", "tracks": info.audioTracks.map { track -> [String: Any] in
            var entry: [String: Any] = ["id": track.id, "codec": track.codec, "default": track.isDefault,
                                        "selected": track.isSelected, "roles": track.roles]
            if let language = track.language { entry["language"] = language }
            if let label = track.label { entry["label"] = label }
            if let channels = track.channels { entry["channels"] = channels }
            return entry
        }]
        if let selected = info.audioTracks.first(where: \.isSelected) { object["selected"] = selected.id }
        if let reason = info.audioChoice { object["reason"] = reason }
        return object
    }
}
