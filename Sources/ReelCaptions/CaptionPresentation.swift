import ReelCore

/// What an item's captions are and show, as a value the player's owner step runs (as it runs
/// the `PresentationMachine`): the tracks, the cues, the selection, and the cues on screen.
///
/// Cues are looked up at the timestamp of each presented frame, so captions follow the frames
/// actually shown: at 2x, after a seek, while paused. ``presented(at:)`` and ``refresh()`` say
/// what changed on screen; nothing else does.
public struct CaptionPresentation: Sendable {
    /// Every cue read so far, of every track (picture cues only of the track shown).
    public private(set) var timeline = CaptionTimeline()
    /// The item's caption tracks in picker order: the container's streams, captions in the
    /// video, sideloaded files, then a manifest's renditions.
    public private(set) var tracks: [CaptionTrack] = []
    /// The session's choice, applied to ``tracks`` to pick ``selected``.
    public private(set) var selection: CaptionSelection
    /// The track shown, chosen by ``selection`` among ``tracks``.
    public private(set) var selected: CaptionTrackID?
    /// The cues on screen.
    public private(set) var shown: [CaptionEvent] = []
    /// The time the shown cues were looked up at (the last presented frame's).
    public private(set) var time: MediaTime?
    /// Something changed that may change what is on screen before the next frame.
    public private(set) var needsRefresh = false
    /// The track list changed since ``takeTracksChanged()``.
    public private(set) var tracksChanged = false
    /// Picture cues' bytes held per track.
    private var bitmapBytes: [CaptionTrackID: Int] = [:]

    /// A track's picture cues are kept up to this many bytes; past it, the cues that ended more
    /// than ``bitmapKeepBehind`` before the current time go (a 1080p PGS track holds megabytes a
    /// cue: a film's worth would not fit in memory).
    public static let bitmapBytesPerTrack = 32 << 20
    /// How far behind the current time ended picture cues are kept once a track holds more than
    /// ``bitmapBytesPerTrack`` (30 s: a short seek back still finds them).
    public static let bitmapKeepBehind = MediaTime(value: 30, timescale: 1)

    /// No tracks or cues yet; `selection` picks among the tracks as they are added.
    public init(selection: CaptionSelection = CaptionSelection()) {
        self.selection = selection
    }

    /// Adds a track (or replaces the one with its id). Tracks are kept in one order whatever
    /// order they were found in: the container's streams, captions in the video, then files
    /// (sideloaded, by number), then a manifest's renditions (in its order).
    public mutating func add(_ track: CaptionTrack) {
        if let index = tracks.firstIndex(where: { $0.id == track.id }) {
            tracks[index] = track
        } else {
            tracks.append(track)
            tracks.sort { Self.order($0) < Self.order($1) }
        }
        tracksChanged = true
        reselect()
    }

    /// Replaces the selection and chooses the track again; when the choice changes,
    /// ``needsRefresh`` is set and the next ``refresh()`` shows the new track's cues.
    public mutating func select(_ selection: CaptionSelection) {
        self.selection = selection
        reselect()
    }

    /// Adds cues (duplicates are dropped). A cue of the shown track that is on at the current
    /// time asks for a refresh.
    public mutating func insert(_ events: [CaptionEvent]) {
        for event in events {
            let bytes = event.bitmapBytes
            // Pictures only for the track shown: a picture track not chosen costs nothing.
            if bytes > 0, event.track != selected { continue }
            guard timeline.insert(event) else { continue }
            if bytes > 0 { keepBitmapsBounded(event.track, adding: bytes) }
            if event.track == selected, let time, event.isActive(at: time) { needsRefresh = true }
        }
    }

    private mutating func keepBitmapsBounded(_ track: CaptionTrackID, adding bytes: Int) {
        bitmapBytes[track, default: 0] += bytes
        guard bitmapBytes[track, default: 0] > Self.bitmapBytesPerTrack else { return }
        let now = time ?? .zero
        timeline.removeEvents(of: track, endingBefore: now - Self.bitmapKeepBehind)
        bitmapBytes[track] = timeline.events(of: track).reduce(0) { $0 + $1.bitmapBytes }
        // Still over (cues far ahead of the clock, a hostile stream): the latest go, never one on
        // screen now; a seek back reads them again.
        while bitmapBytes[track, default: 0] > Self.bitmapBytesPerTrack,
              let latest = timeline.events(of: track).last(where: { !$0.isActive(at: now) }) {
            timeline.remove(latest)
            bitmapBytes[track, default: 0] -= latest.bitmapBytes
        }
    }

    /// Ends `track`'s open cues at `time` (its next cue began, or a clearing set came).
    public mutating func close(_ track: CaptionTrackID, at time: MediaTime) {
        timeline.close(track, at: time)
        if track == selected { needsRefresh = true }
    }

    /// A seek or a loop: open cues end where the old position was, so nothing stale stays on.
    /// The new position's first frame looks the cues up again.
    public mutating func seeked() {
        let at = time ?? .zero
        for track in tracks { timeline.close(track.id, at: at) }
    }

    /// A frame at `time` was presented: the cues on screen now, if they changed.
    public mutating func presented(at time: MediaTime) -> CaptionFrame? {
        self.time = time
        return refresh()
    }

    /// Looks the cues up again at the current time: the new screen, if it changed.
    public mutating func refresh() -> CaptionFrame? {
        needsRefresh = false
        guard let time else { return nil }
        let active = selected.map { timeline.active($0, at: time) } ?? []
        guard active != shown else { return nil }
        shown = active
        return CaptionFrame(time: time, events: active)
    }

    /// Whether the track list changed since the last call; resets the flag.
    public mutating func takeTracksChanged() -> Bool {
        defer { tracksChanged = false }
        return tracksChanged
    }

    private static func order(_ track: CaptionTrack) -> (Int, Int, String) {
        switch track.origin {
        case .inBand(let stream): (0, stream, track.id.raw)
        case .closedCaptions(let channel): (1, channel, track.id.raw)
        case .sideloaded: (2, Int(track.id.raw.drop { !$0.isNumber }) ?? 0, track.id.raw)
        case .manifest(_, let position): (3, position, track.id.raw)
        }
    }

    private mutating func reselect() {
        let chosen = selection.choose(from: tracks)
        if chosen != selected {
            selected = chosen
            needsRefresh = true
        }
    }
}
