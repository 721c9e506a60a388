import ReelCore
import ReelMedia

/// Which `caption` lines a trace writes: one for each settled cue the screen showed (once, even
/// when a seek or a loop shows it again), with the time it was first on screen. A cue shown first as provisional (CEA-608: the screen as it
/// changed, before the decoder settled the cue) counts from that showing — the provisional cue
/// of the same track and words that began within the settled one — and its line is written
/// once the settled cue is known, whether or not the screen still shows it then.
///
/// A value the trace keeps under its mutex; fed on the player's clock context.
struct CaptionTraceLog {
    struct Line: Equatable {
        var cue: CaptionEvent
        /// The presented frame's time when the cue's words were first on screen.
        var shownAt: MediaTime
    }

    private struct Appearance {
        var track: CaptionTrackID
        var text: String
        var start: MediaTime
        var shownAt: MediaTime
    }

    private var onScreen: Set<CaptionEvent> = []
    /// Provisional cues shown, oldest first (the last ``appearanceLimit``).
    private var appearances: [Appearance] = []
    private static let appearanceLimit = 4096
    /// Settled cues written.
    private var written: Set<CaptionEvent> = []
    /// Tracks whose provisional cues were shown: their settled cues are looked for.
    private(set) var provisionalTracks: Set<CaptionTrackID> = []

    /// A caption frame was presented: lines for the settled cues it shows that the last did not.
    mutating func presented(_ frame: CaptionFrame) -> [Line] {
        let fresh = frame.events.filter { !onScreen.contains($0) }
        onScreen = Set(frame.events)
        var lines: [Line] = []
        for cue in fresh {
            if cue.isProvisional {
                provisionalTracks.insert(cue.track)
                appearances.append(Appearance(track: cue.track, text: cue.plainText, start: cue.start, shownAt: frame.time))
                if appearances.count > Self.appearanceLimit { appearances.removeFirst() }
                continue
            }
            guard written.insert(cue).inserted else { continue }
            lines.append(Line(cue: cue, shownAt: firstShown(cue) ?? frame.time))
        }
        return lines
    }

    /// `events` (a track's cues as the player holds them): lines for the settled ones that were
    /// shown only as provisional so far.
    mutating func settled(_ events: [CaptionEvent]) -> [Line] {
        var lines: [Line] = []
        for cue in events where !cue.isProvisional && !cue.isOpen && !written.contains(cue) {
            guard let shownAt = firstShown(cue) else { continue }
            written.insert(cue)
            lines.append(Line(cue: cue, shownAt: shownAt))
        }
        return lines
    }

    /// The first showing of a provisional cue of `cue`'s track and words that began within it.
    private func firstShown(_ cue: CaptionEvent) -> MediaTime? {
        let text = cue.plainText
        return appearances.lazy
            .filter { $0.track == cue.track && $0.text == text && $0.start >= cue.start && $0.start < cue.end }
            .map(\.shownAt).min()
    }
}
