/// Where a live stream's segments lie on its own clock: what lets a live item seek within its
/// window. A live playlist says how long each segment is, never when it starts; the stream's
/// timestamps say when, once one frame of a known segment was shown. So the timeline keeps
/// the segments the playlists listed (merged across reloads, as the window slides) and an
/// anchor — the time at which one sequence number starts — and from those the start of every
/// segment after the anchor's, up to the next discontinuity (whose timestamps start again).
///
/// A value: the reader records what the playlists list, the loader the anchor; both under the
/// lock of whoever holds it.
public struct LiveTimeline: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var sequence: Int64
        public var duration: Double
        /// `#EXT-X-DISCONTINUITY` before it.
        public var discontinuity: Bool

        public init(sequence: Int64, duration: Double, discontinuity: Bool = false) {
            self.sequence = sequence
            self.duration = duration
            self.discontinuity = discontinuity
        }
    }

    /// The time (seconds, the stream's own) at which segment `sequence` starts.
    public struct Anchor: Sendable, Hashable {
        public var sequence: Int64
        public var time: Double

        public init(sequence: Int64, time: Double) {
            self.sequence = sequence
            self.time = time
        }
    }

    /// The segments known, ascending and without gaps: the latest playlist's window, and those
    /// before it back to the anchor.
    public private(set) var entries: [Entry] = []
    /// The first segment the latest playlist lists (the window's start).
    public private(set) var windowStart: Int64?
    public private(set) var anchor: Anchor?
    /// An anchor on a segment not listed yet (the newest one, whose parts were playing): it
    /// takes effect once a playlist lists it.
    private var pendingAnchor: Anchor?
    /// The latest playlist's target duration.
    public private(set) var targetDuration: Double = 0
    /// How far behind its newest media a player joins the window (the reader's join point).
    public private(set) var holdBack: Double = 0
    /// At most this many entries are kept (a playlist that grows without bound is cut here,
    /// from the oldest).
    public var limit = 4096

    public init() {}

    /// Takes in the segments a playlist listed, `holdBack` being how far behind their end a
    /// player joins.
    public mutating func listed(_ segments: [Entry], targetDuration: Double, holdBack: Double) {
        self.targetDuration = targetDuration
        self.holdBack = holdBack
        guard let first = segments.first else { return }
        windowStart = first.sequence
        // Keep what is known before the new window (back to the anchor) only while it runs on
        // without a gap into it (a reload that skipped past what was known starts afresh).
        var kept = anchor == nil ? [] : entries.filter { $0.sequence < first.sequence }
        if let last = kept.last, last.sequence + 1 != first.sequence { kept = [] }
        entries = kept + segments
        // Nothing before the anchor is needed, and nothing is kept beyond the limit.
        if let anchor, let index = entries.firstIndex(where: { $0.sequence == anchor.sequence }), index > 0,
           entries[index].sequence < first.sequence {
            entries.removeFirst(index)
        }
        if entries.count > limit {
            let drop = entries.count - limit
            if let anchor, let moved = placed(from: anchor).first(where: { $0.entry.sequence == entries[drop].sequence }) {
                self.anchor = Anchor(sequence: moved.entry.sequence, time: moved.start)
            }
            entries.removeFirst(drop)
        }
        if let anchor, !entries.contains(where: { $0.sequence == anchor.sequence }) { self.anchor = nil }
        if let pending = pendingAnchor, entries.contains(where: { $0.sequence == pending.sequence }) {
            anchor = pending
            pendingAnchor = nil
        }
    }

    /// Sets the anchor: segment `sequence` starts at `time` (once listed, when it is not yet).
    public mutating func anchor(_ sequence: Int64, at time: Double) {
        let anchor = Anchor(sequence: sequence, time: time)
        if entries.contains(where: { $0.sequence == sequence }) {
            self.anchor = anchor
        } else if sequence > entries.last?.sequence ?? .min {
            pendingAnchor = anchor
        }
    }

    /// When segment `sequence` starts, when no discontinuity lies between it and the anchor.
    public func start(of sequence: Int64) -> Double? {
        guard let anchor else { return nil }
        return placed(from: anchor).first { $0.entry.sequence == sequence }?.start
    }

    /// The entries on the anchor's side of every discontinuity, in order, each with its start:
    /// one pass out from the anchor each way.
    private func placed(from anchor: Anchor) -> [(entry: Entry, start: Double)] {
        guard let at = entries.firstIndex(where: { $0.sequence == anchor.sequence }) else { return [] }
        var before: [(entry: Entry, start: Double)] = []
        var index = at, time = anchor.time
        // A discontinuity flag stands before its entry: stepping back over it is not allowed.
        while index > 0, !entries[index].discontinuity {
            index -= 1
            time -= entries[index].duration
            before.append((entries[index], time))
        }
        var result = Array(before.reversed()) + [(entries[at], anchor.time)]
        (index, time) = (at, anchor.time)
        while index + 1 < entries.count, !entries[index + 1].discontinuity {
            time += entries[index].duration
            index += 1
            result.append((entries[index], time))
        }
        return result
    }

    /// The placed entries of the window (from its first listed segment), when its last one is
    /// placed too: what ``window``, ``seekable`` and ``sequence(holding:)`` are read from.
    private var placedWindow: (entries: ArraySlice<(entry: Entry, start: Double)>, range: ClosedRange<Double>)? {
        guard let anchor, let windowStart, let last = entries.last else { return nil }
        let placed = placed(from: anchor)
        guard let end = placed.last, end.entry.sequence == last.sequence,
              let first = placed.firstIndex(where: { $0.entry.sequence >= windowStart }) else { return nil }
        return (placed[first...], placed[first].start...(end.start + end.entry.duration))
    }

    /// What can be seeked to: from the start of the window's first segment (the first one on
    /// the anchor's side of a discontinuity) to the end of its last; `nil` before an anchor.
    public var window: ClosedRange<Double>? { placedWindow?.range }

    /// Where a player joining now plays from: `holdBack` before the window's end.
    public var joinTime: Double? { window.map(joinTime(in:)) }

    private func joinTime(in window: ClosedRange<Double>) -> Double {
        max(window.lowerBound, window.upperBound - holdBack)
    }

    /// What a live player can seek within: from the window's start to the join point (the
    /// edge as a player joining now plays it); `nil` before an anchor.
    public var seekable: ClosedRange<Double>? {
        window.map { $0.lowerBound...joinTime(in: $0) }
    }

    /// The segment of the window holding `time`: the first when `time` is before it, `nil`
    /// when it is past the join point (a player asked for the edge joins there) or nothing is
    /// anchored.
    public func sequence(holding time: Double) -> Int64? {
        guard let (placed, window) = placedWindow, time < joinTime(in: window) else { return nil }
        return placed.last { $0.start <= max(time, window.lowerBound) }?.entry.sequence
    }
}
