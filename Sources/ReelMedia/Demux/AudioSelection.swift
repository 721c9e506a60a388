import Foundation
import ReelCore
import Synchronization

extension MediaInfo {
    /// The item's audio tracks: the renditions a segment scheduler offers
    /// (``renditionAudioTracks``), else its audio streams in stream order.
    public var audioTracks: [AudioTrack] {
        if let renditionAudioTracks { return renditionAudioTracks }
        return streams.filter { $0.kind == .audio }.map { stream in
            AudioTrack(id: stream.index, language: stream.language, label: stream.title, codec: stream.codec,
                       channels: stream.channels, channelLayout: stream.channelLayout, roles: stream.roles,
                       isDefault: stream.isDefault, isSelected: stream.isSelected)
        }
    }
}

/// Which audio track plays, kept for a session and applied to every item (as Media3's
/// `TrackSelectionParameters` and mpv's `--alang`): an explicit track, preferred languages, a
/// preferred role.
///
/// The rule: the explicit track if the item offers it; else, for the first preferred language
/// that has a track, its track with the preferred role (without one, its first track that does
/// not describe the video, as Media3 keeps audio description for those who ask); else the track
/// the item marks default; else its first track. ``choose(from:)`` says why.
public struct AudioSelection: Sendable, Hashable {
    /// Languages in order of preference (`fr` matches `fra`, `fre` and `fr-CA`).
    public var preferredLanguages: [String]
    /// A role wanted among the tracks of the chosen language (`describes-video`).
    public var preferredRole: String?
    /// A track chosen by the user (its stream index), honoured while the item offers it.
    public var track: Int?

    /// A selection from these preferences; the defaults (no language, no role, no track) leave
    /// the choice to the item: its default track, else its first.
    public init(preferredLanguages: [String] = [], preferredRole: String? = nil, track: Int? = nil) {
        self.preferredLanguages = preferredLanguages
        self.preferredRole = preferredRole
        self.track = track
    }

    /// The track chosen among `tracks` (the ones the player can decode) and why.
    public struct Choice: Sendable, Hashable {
        /// The track that plays; `nil` only when there was no track to choose from.
        public var track: AudioTrack?
        /// One line for a trace: `language fra`, `no audio track in de: the default track`…
        public var reason: String
    }

    /// Applies the rule above to `tracks` (in the item's order, the ones the player can
    /// decode): the explicit track, else the first preferred language with a track (its track
    /// with the preferred role, or its first that does not describe the video), else, with
    /// only a role preferred, the first track with that role, else the default track, else the
    /// first. The demuxer calls it when it opens an item; a pure function of its arguments.
    public func choose(from tracks: [AudioTrack]) -> Choice {
        guard !tracks.isEmpty else { return Choice(track: nil, reason: "no audio track") }
        if let track, let match = tracks.first(where: { $0.id == track }) {
            return Choice(track: match, reason: "track \(track) asked for")
        }
        for language in preferredLanguages {
            let candidates = tracks.filter { CaptionSelection.language($0.language, matches: language) }
            guard let first = candidates.first else { continue }
            if let preferredRole {
                if let withRole = candidates.first(where: { $0.roles.contains(preferredRole) }) {
                    return Choice(track: withRole, reason: "language \(language), role \(preferredRole)")
                }
                return Choice(track: first, reason: "language \(language) (no track with role \(preferredRole))")
            }
            let plain = candidates.first { !$0.roles.contains(AudioTrack.describesVideo) } ?? first
            return Choice(track: plain, reason: "language \(language)")
        }
        if let preferredRole, preferredLanguages.isEmpty, let withRole = tracks.first(where: { $0.roles.contains(preferredRole) }) {
            return Choice(track: withRole, reason: "role \(preferredRole)")
        }
        let fallback = tracks.first(where: \.isDefault).map { ($0, "the default track") } ?? (tracks[0], "the first track")
        var reason = fallback.1
        if let explicit = track { reason = "no track \(explicit): " + reason }
        if !preferredLanguages.isEmpty {
            reason = "no audio track in \(preferredLanguages.joined(separator: ", ")): " + reason
        }
        return Choice(track: fallback.0, reason: reason)
    }
}

extension AudioSelection {
    private static let defaultSelection = Mutex(AudioSelection())

    /// The selection every ``PipelineConfiguration`` made from now on starts with: the command
    /// line's `--audio-language`/`--audio-role`/`--audio-track` set it once, before any player is
    /// made, so every output and every item of a feed plays the viewer's language.
    public static var processDefault: AudioSelection {
        get { defaultSelection.withTrackedLock { $0 } }
        set { defaultSelection.withTrackedLock { $0 = newValue } }
    }
}
