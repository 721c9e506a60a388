import ReelCore

/// Every cue of an item's caption tracks, by track, kept sorted by start: the store the
/// presentation step looks up what to show at a frame's time.
///
/// Cues stay after they are shown, so a seek back or a loop finds them again; the same cue read
/// twice (a demuxer re-reading after a seek, a loop) is kept once.
public struct CaptionTimeline: Sendable {
    /// At most this many cues per track; later ones are refused (a hostile file cannot grow the
    /// store without bound).
    public static let maximumEventsPerTrack = 50_000

    private struct Track {
        var events: [CaptionEvent] = []
        /// The longest finite cue so far: how far back from a time a cue can start and still be on.
        var longest: MediaTime = .zero
        /// How many cues have no end yet, and the earliest start among them.
        var openCount = 0
        var earliestOpenStart: MediaTime = .positiveInfinity
        /// No provisional cue starts before this (a hint: it may be earlier than the earliest).
        var provisionalFrom: MediaTime = .positiveInfinity
    }

    private var tracks: [CaptionTrackID: Track] = [:]
    /// This timeline's cap per track (``maximumEventsPerTrack`` unless a test asks for less).
    public let capacityPerTrack: Int

    /// An empty timeline holding at most `capacityPerTrack` cues per track (at least 1).
    public init(capacityPerTrack: Int = CaptionTimeline.maximumEventsPerTrack) {
        self.capacityPerTrack = max(1, capacityPerTrack)
    }

    /// How many cues `track` holds.
    public func count(of track: CaptionTrackID) -> Int { tracks[track]?.events.count ?? 0 }

    /// Every cue of `track`, by start.
    public func events(of track: CaptionTrackID) -> [CaptionEvent] { tracks[track]?.events ?? [] }

    /// Adds `event`; `false` when it was already there, has no valid start, ends before it
    /// starts, or its track is full.
    @discardableResult
    public mutating func insert(_ event: CaptionEvent) -> Bool {
        guard event.start.isNumeric, event.end.isNumeric || event.end.isPositiveInfinity, event.start < event.end else {
            return false
        }
        // Changed in place: a copy of the track would copy every cue on each insert.
        return Self.insert(event, into: &tracks[event.track, default: Track()], capacity: capacityPerTrack)
    }

    private static func insert(_ event: CaptionEvent, into track: inout Track, capacity: Int) -> Bool {
        if !event.isProvisional, track.provisionalFrom < event.end { settle(&track, before: event.end) }
        guard track.events.count < capacity else { return false }
        // The first index whose start is after the event's: equal starts keep their arrival order.
        let index = upperBound(track.events, event.start)
        var probe = index - 1
        while probe >= 0, track.events[probe].start == event.start {
            if track.events[probe] == event { return false }
            probe -= 1
        }
        track.events.insert(event, at: index)
        if event.isProvisional { track.provisionalFrom = min(track.provisionalFrom, event.start) }
        if event.isOpen {
            track.openCount += 1
            track.earliestOpenStart = min(track.earliestOpenStart, event.start)
        } else {
            track.longest = max(track.longest, event.end - event.start)
        }
        return true
    }

    /// A settled cue ending at `end` came: the provisional cues before it go; one still on after
    /// it is kept from `end` on (what the screen shows until the next cue).
    private static func settle(_ track: inout Track, before end: MediaTime) {
        let first = lowerBound(track.events, track.provisionalFrom)
        var tail: [CaptionEvent] = []
        var provisionalFrom = MediaTime.positiveInfinity
        for var event in track.events[first...] {
            if event.isProvisional, event.start < end {
                guard event.end > end else { continue }
                event.start = end
            }
            if event.isProvisional { provisionalFrom = min(provisionalFrom, event.start) }
            tail.append(event)
        }
        // Stable: a kept cue moved to `end` goes after the cues that already started there.
        tail = tail.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        // Open cues before `first` start before `provisionalFrom`; they are untouched.
        let openBefore = track.events[first...].count(where: \.isOpen)
        let earliestInPrefix = track.earliestOpenStart < track.provisionalFrom ? track.earliestOpenStart : .positiveInfinity
        track.events.replaceSubrange(first..., with: tail)
        track.provisionalFrom = provisionalFrom
        track.openCount += tail.count(where: \.isOpen) - openBefore
        track.earliestOpenStart = min(earliestInPrefix, tail.first(where: \.isOpen)?.start ?? .positiveInfinity)
    }

    /// The cues of `track` on screen at `time`, by start.
    public func active(_ track: CaptionTrackID, at time: MediaTime) -> [CaptionEvent] {
        guard let entry = tracks[track], time.isNumeric else { return [] }
        let end = Self.upperBound(entry.events, time)
        var result: [CaptionEvent] = []
        // A cue on screen started at most the longest cue's length ago, or is open.
        let earliest = min(time - entry.longest, entry.earliestOpenStart)
        var index = end - 1
        while index >= 0, entry.events[index].start >= earliest {
            if entry.events[index].isActive(at: time) { result.append(entry.events[index]) }
            index -= 1
        }
        return result.reversed()
    }

    /// Ends `track`'s open cues at `time` (the next cue of a 608 or bitmap track began, a seek
    /// left them behind); an open cue that starts at or after `time` is removed.
    public mutating func close(_ track: CaptionTrackID, at time: MediaTime) {
        guard tracks[track]?.openCount ?? 0 > 0 else { return }
        Self.close(&tracks[track, default: Track()], at: time)
    }

    private static func close(_ entry: inout Track, at time: MediaTime) {
        var kept: [CaptionEvent] = []
        kept.reserveCapacity(entry.events.count)
        for var event in entry.events {
            if event.isOpen {
                guard time.isNumeric, event.start < time else { continue }
                event.end = time
                entry.longest = max(entry.longest, event.end - event.start)
            }
            kept.append(event)
        }
        entry.events = kept
        entry.openCount = 0
        entry.earliestOpenStart = .positiveInfinity
    }

    /// Forgets `track`'s cues that ended before `time` (open ones stay); returns how many went.
    @discardableResult
    public mutating func removeEvents(of track: CaptionTrackID, endingBefore time: MediaTime) -> Int {
        guard var entry = tracks[track] else { return 0 }
        tracks[track] = nil
        let before = entry.events.count
        entry.events.removeAll { !$0.isOpen && $0.end < time }
        tracks[track] = entry
        return before - entry.events.count
    }

    /// Forgets one cue; `false` when it was not there.
    @discardableResult
    public mutating func remove(_ event: CaptionEvent) -> Bool {
        guard var entry = tracks[event.track], let index = entry.events.firstIndex(of: event) else { return false }
        tracks[event.track] = nil
        entry.events.remove(at: index)
        if event.isOpen { entry.openCount -= 1 }
        tracks[event.track] = entry
        return true
    }

    /// Forgets every cue of `track`.
    public mutating func remove(_ track: CaptionTrackID) {
        tracks[track] = nil
    }

    /// The first index whose start is at or after `time`.
    private static func lowerBound(_ events: [CaptionEvent], _ time: MediaTime) -> Int {
        var low = 0
        var high = events.count
        while low < high {
            let middle = (low + high) / 2
            if events[middle].start < time { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static func upperBound(_ events: [CaptionEvent], _ time: MediaTime) -> Int {
        var low = 0
        var high = events.count
        while low < high {
            let middle = (low + high) / 2
            if events[middle].start <= time { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
