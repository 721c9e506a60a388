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
            if let anchor, let moved = time(entries[drop].sequence, from: anchor) {
                self.anchor = Anchor(sequence: entries[drop].sequence, time: moved)
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
        return time(sequence, from: anchor)
    }

    private func time(_ sequence: Int64, from anchor: Anchor) -> Double? {
        guard let from = entries.firstIndex(where: { $0.sequence == anchor.sequence }),
              let to = entries.firstIndex(where: { $0.sequence == sequence }) else { return nil }
        var time = anchor.time
        if to >= from {
            for index in from..<to {
                if entries[index + 1].discontinuity { return nil }
                time += entries[index].duration
            }
        } else {
            for index in to..<from {
                if entries[index + 1].discontinuity { return nil }
                time -= entries[index].duration
            }
        }
        return time
    }

    /// What can be seeked to: from the start of the window's first segment (the first one on
    /// the anchor's side of a discontinuity) to the end of its last; `nil` before an anchor.
    public var window: ClosedRange<Double>? {
        guard let windowStart, let last = entries.last,
              let first = entries.first(where: { $0.sequence >= windowStart && start(of: $0.sequence) != nil }),
              let from = start(of: first.sequence), let lastStart = start(of: last.sequence) else { return nil }
        return from...(lastStart + last.duration)
    }

    /// Where a player joining now plays from: `holdBack` before the window's end.
    public var joinTime: Double? {
        guard let window else { return nil }
        return max(window.lowerBound, window.upperBound - holdBack)
    }

    /// What a live player can seek within: from the window's start to the join point (the
    /// edge as a player joining now plays it); `nil` before an anchor.
    public var seekable: ClosedRange<Double>? {
        guard let window, let joinTime else { return nil }
        return window.lowerBound...joinTime
    }

    /// The segment of the window holding `time`: the first when `time` is before it, `nil`
    /// when it is past the join point (a player asked for the edge joins there) or nothing is
    /// anchored.
    public func sequence(holding time: Double) -> Int64? {
        guard let window, let joinTime, time < joinTime, let windowStart else { return nil }
        var found: Int64?
        for entry in entries where entry.sequence >= windowStart {
            guard let start = start(of: entry.sequence) else { continue }
            if found == nil || start <= max(time, window.lowerBound) { found = entry.sequence } else { break }
        }
        return found
    }
}
