import Foundation
import ReelCore

/// Follows one live HLS media playlist (RFC 8216bis §6.3.4–6.3.5 and low-latency HLS): what
/// to fetch next, when and how to reload the playlist, where to join, and when the stream
/// has gone stale. A value-type machine — playlists and fetches in, decisions out, time
/// given as monotonic seconds by the caller — that the segment scheduler runs for each live
/// rendition, and that tests drive with a manual clock.
///
/// - **Join** at the live edge: `EXT-X-START` when the playlist has one, otherwise
///   `PART-HOLD-BACK` (when playing parts), `HOLD-BACK`, or three target durations from
///   the end; with parts, at an independent part.
/// - **Fetch** each segment once. At the edge of a low-latency playlist it fetches the parts
///   of the segment being written, one after another, and a segment whose parts it fetched
///   is not fetched again whole.
/// - **Reload** one target duration after a playlist that changed, half of one after a
///   playlist that did not; with `CAN-BLOCK-RELOAD` at once, asking for the next segment or
///   part (`_HLS_msn`, `_HLS_part`); a delta update (`_HLS_skip=YES`) when the server allows
///   skipping and a full playlist is known.
/// - **Refuse** a media sequence that goes backwards, a delta update that skips segments it
///   never saw (it asks for a full playlist instead, once: a delta again is a failure), and a
///   playlist that has listed nothing newer than before for `staleAfter` target durations
///   (a part list that shrinks and grows back is no change). Parts that contradict their
///   segment (longer than it, or each longer than the part target by half) are not used: it
///   falls back to segments.
public struct LivePlaylistTracker: Sendable {
    /// What to fetch next.
    public enum Fetch: Sendable, Hashable {
        /// A whole segment, with the init section it needs if that changed.
        case segment(HLSMediaPlaylist.Segment, initSection: HLSMediaPlaylist.Part?)
        /// Part `index` of segment `sequence`.
        case part(sequence: Int64, index: Int, HLSMediaPlaylist.PartialSegment, initSection: HLSMediaPlaylist.Part?)
        /// Nothing is there yet: reload the playlist first.
        case waitForReload
        /// The playlist ended (`EXT-X-ENDLIST`) and everything in it was fetched.
        case ended
    }

    /// How to ask for the playlist next.
    public struct Reload: Sendable, Hashable {
        /// Monotonic seconds at which to send it.
        public var at: Double
        /// `_HLS_msn` and `_HLS_part` of a blocking reload.
        public var blockingSequence: Int64?
        public var blockingPart: Int?
        /// `_HLS_skip=YES`: a delta update.
        public var skip: Bool

        public init(at: Double, blockingSequence: Int64? = nil, blockingPart: Int? = nil, skip: Bool = false) {
            self.at = at
            self.blockingSequence = blockingSequence
            self.blockingPart = blockingPart
            self.skip = skip
        }

        /// The playlist URL with the query this reload adds (RFC 8216bis §6.2.5).
        public func url(for playlist: URL) -> URL {
            guard blockingSequence != nil || skip,
                  var components = URLComponents(url: playlist, resolvingAgainstBaseURL: true) else { return playlist }
            var items = (components.queryItems ?? []).filter { !["_HLS_msn", "_HLS_part", "_HLS_skip"].contains($0.name) }
            if let blockingSequence { items.append(URLQueryItem(name: "_HLS_msn", value: String(blockingSequence))) }
            if let blockingPart { items.append(URLQueryItem(name: "_HLS_part", value: String(blockingPart))) }
            if skip { items.append(URLQueryItem(name: "_HLS_skip", value: "YES")) }
            components.queryItems = items
            return components.url ?? playlist
        }
    }

    /// Why a live playlist cannot be followed.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case mediaSequenceWentBackwards(from: Int64, to: Int64)
        case stale(seconds: Double)
        case noTargetDuration
        case fellBehind(wanted: Int64, oldest: Int64)
        /// A delta update (`EXT-X-SKIP`) that leaves out segments never seen, answering a
        /// request for the whole playlist: the server sends deltas to a client that did not ask.
        case unaskedDeltaUpdate(skipped: Int)

        public var description: String {
            switch self {
            case .mediaSequenceWentBackwards(let from, let to):
                "the live playlist's media sequence went backwards, from \(from) to \(to)"
            case .stale(let seconds):
                String(format: "the live playlist has not changed for %.1f s", seconds)
            case .noTargetDuration:
                "the live playlist has no usable #EXT-X-TARGETDURATION"
            case .fellBehind(let wanted, let oldest):
                "segment \(wanted) left the live playlist before it was fetched (it now starts at \(oldest))"
            case .unaskedDeltaUpdate(let skipped):
                "the live playlist is a delta update (EXT-X-SKIP of \(skipped) segments never listed) though the whole playlist was asked for"
            }
        }
    }

    /// How many target durations without a change make the playlist stale.
    public var staleAfter: Double
    /// Whether to play parts at the edge when the playlist has them.
    public var prefersParts: Bool
    /// How far behind the newest media to join and play, seconds, in place of the playlist's
    /// `PART-HOLD-BACK`, `HOLD-BACK` or three target durations (`reel play --live-offset`);
    /// `EXT-X-START` still comes first.
    public var liveOffset: Double?
    /// Seconds of media from where the join starts fetching (an independent part, or a whole
    /// segment) to the target offset behind the newest media of the first playlist: decoded,
    /// not shown. 0 until a live playlist was joined, and after a ``move(to:)``.
    public private(set) var joinSkip: Double = 0

    /// The segments known, oldest first (those before the cursor are forgotten as it moves).
    public private(set) var segments: [HLSMediaPlaylist.Segment] = []
    /// The parts of the segment being written, from the last playlist.
    public private(set) var trailingParts: [HLSMediaPlaylist.PartialSegment] = []
    public private(set) var targetDuration: Double = 0
    public private(set) var partTarget: Double?
    public private(set) var serverControl = HLSMediaPlaylist.ServerControl()
    public private(set) var isFinal = false
    /// Why parts are not used, when a playlist's parts contradicted it.
    public private(set) var partsRefused: String?

    /// The next segment to fetch, and the next part of it (0 when fetching it whole).
    public private(set) var cursor: (sequence: Int64, part: Int)?
    private var lastInitSection: HLSMediaPlaylist.Part?
    private var mediaSequence: Int64 = 0
    private var nextSequence: Int64 = 0
    /// The newest media any playlist listed: the next segment's number and how many of its
    /// parts were out.
    private var newestListed: (sequence: Int64, parts: Int) = (0, 0)
    private var lastChange: Double = 0
    private var lastLoad: Double = 0
    private var lastLoadChanged = true
    private var hasFullPlaylist = false
    private var needsFullPlaylist = false
    /// How many parts of the cursor's segment were fetched as parts.
    private var partsFetched = 0

    public init(staleAfter: Double = 3, prefersParts: Bool = true, liveOffset: Double? = nil) {
        self.staleAfter = staleAfter
        self.prefersParts = prefersParts
        self.liveOffset = liveOffset
    }

    /// Whether parts are being played.
    public var usesParts: Bool { prefersParts && partsRefused == nil && partTarget != nil }

    /// Takes in a playlist loaded at `now`. Returns whether it brought anything new.
    @discardableResult
    public mutating func received(_ playlist: HLSMediaPlaylist, at now: Double) throws(Failure) -> Bool {
        guard let target = playlist.targetDuration, target > 0 else { throw .noTargetDuration }
        let firstListed = playlist.mediaSequence + Int64(playlist.skippedSegments)
        if hasFullPlaylist, playlist.mediaSequence < mediaSequence {
            throw .mediaSequenceWentBackwards(from: mediaSequence, to: playlist.mediaSequence)
        }
        if playlist.skippedSegments > 0 {
            // A delta update: the segments it left out must be known already.
            let knownEnd = segments.last.map { $0.sequence + 1 } ?? mediaSequence
            guard hasFullPlaylist, firstListed <= knownEnd else {
                // Asked for the whole playlist (none known yet, or after such a delta) and
                // answered with a delta again: a server that sends nothing else would be
                // asked for ever.
                if needsFullPlaylist { throw .unaskedDeltaUpdate(skipped: playlist.skippedSegments) }
                needsFullPlaylist = true
                lastLoad = now
                lastLoadChanged = false
                return false
            }
        }
        needsFullPlaylist = false
        var merged = segments.filter { $0.sequence < firstListed && $0.sequence >= playlist.mediaSequence }
        merged += playlist.segments
        segments = merged
        trailingParts = playlist.trailingParts
        targetDuration = target
        partTarget = playlist.partTarget
        serverControl = playlist.serverControl
        isFinal = playlist.isFinal
        mediaSequence = playlist.mediaSequence
        nextSequence = playlist.nextSequence
        hasFullPlaylist = true
        checkParts()
        // New only past the newest media ever listed: a part list that shrinks, or a playlist
        // that takes back segments it listed, and then grows back is not progress (a server
        // alternating between two lists would otherwise be reloaded at once for ever).
        let listed = (sequence: nextSequence, parts: trailingParts.count)
        let changed = listed > newestListed || playlist.isFinal
        if listed > newestListed { newestListed = listed }
        if changed { lastChange = now }
        lastLoad = now
        lastLoadChanged = changed
        if cursor == nil, let join = joinPoint(playlist) {
            cursor = (join.sequence, join.part)
            joinSkip = join.skip
        }
        if let current = cursor, current.part > 0,
           let segment = segments.first(where: { $0.sequence == current.sequence }),
           !segment.parts.isEmpty, current.part >= segment.parts.count {
            // Its parts were all fetched at the edge: the segment is complete, not fetched again.
            cursor = (current.sequence + 1, 0)
        }
        if let cursor, cursor.sequence < mediaSequence {
            throw .fellBehind(wanted: cursor.sequence, oldest: mediaSequence)
        }
        forgetBehindCursor()
        return changed
    }

    /// Whether the playlist has shown no change for too long: from the load that last brought
    /// something new to the latest load (not to `now`: time spent fetching, or a client that
    /// was not scheduled, is no evidence that the playlist stopped), at most `now`.
    public func checkStale(at now: Double) throws(Failure) {
        guard !isFinal, hasFullPlaylist else { return }
        let quiet = min(now, lastLoad) - lastChange
        if quiet >= staleAfter * targetDuration { throw .stale(seconds: quiet) }
    }

    /// When and how to load the playlist next.
    public func nextReload() -> Reload {
        let skip = !needsFullPlaylist && hasFullPlaylist
            && (serverControl.canSkipUntil ?? 0) >= 6 * targetDuration && targetDuration > 0
        if serverControl.canBlockReload, hasFullPlaylist, !needsFullPlaylist {
            // Ask for what comes after what is listed: the server answers when it has it.
            if usesParts {
                return Reload(at: lastLoad, blockingSequence: nextSequence, blockingPart: trailingParts.count, skip: skip)
            }
            return Reload(at: lastLoad, blockingSequence: nextSequence, blockingPart: nil, skip: skip)
        }
        let wait = needsFullPlaylist ? 0 : (lastLoadChanged ? targetDuration : targetDuration / 2)
        return Reload(at: lastLoad + wait, blockingSequence: nil, blockingPart: nil, skip: skip)
    }

    /// What to fetch next; ``fetched(_:)`` moves on past it.
    public func next() -> Fetch {
        guard let cursor else { return isFinal ? .ended : .waitForReload }
        if let segment = segments.first(where: { $0.sequence == cursor.sequence }) {
            if cursor.part > 0, usesParts, cursor.part < segment.parts.count {
                // Parts of it were played at the edge: the rest by parts too.
                return .part(sequence: segment.sequence, index: cursor.part, segment.parts[cursor.part],
                             initSection: initIfChanged(segment.initSection))
            }
            return .segment(segment, initSection: initIfChanged(segment.initSection))
        }
        if cursor.sequence == nextSequence, usesParts, cursor.part < trailingParts.count {
            return .part(sequence: cursor.sequence, index: cursor.part, trailingParts[cursor.part],
                         initSection: initIfChanged(segments.last?.initSection))
        }
        return isFinal && cursor.sequence >= nextSequence ? .ended : .waitForReload
    }

    /// Moves the cursor to segment `sequence` (a switch of variant continues there), forgetting
    /// the init section sent, so the next fetch names this playlist's. `false` (nothing moved)
    /// when the playlist does not list it.
    @discardableResult
    public mutating func move(to sequence: Int64) -> Bool {
        guard segments.contains(where: { $0.sequence == sequence }) else { return false }
        cursor = (sequence, 0)
        lastInitSection = nil
        joinSkip = 0
        return true
    }

    /// Records that `fetch` (what ``next()`` returned) was fetched.
    public mutating func fetched(_ fetch: Fetch) {
        guard let current = cursor else { return }
        switch fetch {
        case .segment(let segment, let initSection):
            guard segment.sequence == current.sequence else { return }
            if let initSection { lastInitSection = initSection } else if lastInitSection == nil { lastInitSection = segment.initSection }
            cursor = (segment.sequence + 1, 0)
        case .part(let sequence, let index, _, let initSection):
            guard sequence == current.sequence, index == current.part else { return }
            if let initSection { lastInitSection = initSection }
            let total = segments.first { $0.sequence == sequence }?.parts.count
            if let total, index + 1 >= total {
                cursor = (sequence + 1, 0)
            } else {
                cursor = (sequence, index + 1)
            }
        case .waitForReload, .ended:
            return
        }
        forgetBehindCursor()
    }

    /// Seconds of media from the cursor to the newest listed media (parts included): how far
    /// behind the live edge the fetching is.
    public var behindEdge: Double {
        guard let cursor else { return 0 }
        var seconds = segments.filter { $0.sequence >= cursor.sequence }.reduce(0) { $0 + $1.duration }
        if let current = segments.first(where: { $0.sequence == cursor.sequence }), cursor.part > 0 {
            seconds -= current.parts.prefix(cursor.part).reduce(0) { $0 + $1.duration }
        }
        let trailing = cursor.sequence == nextSequence ? trailingParts.dropFirst(cursor.part) : trailingParts[...]
        return seconds + trailing.reduce(0) { $0 + $1.duration }
    }

    /// How far behind the newest media a player joins (without `EXT-X-START`):
    /// `PART-HOLD-BACK` with parts, else `HOLD-BACK`, else three target durations.
    public var joinHoldBack: Double {
        if let liveOffset { return liveOffset }
        if usesParts, let partHoldBack = serverControl.partHoldBack { return partHoldBack }
        return serverControl.holdBack ?? 3 * targetDuration
    }

    /// Seconds of media listed from the start of part `part` of segment `sequence` to the
    /// newest listed media (the parts after the last segment included); `nil` when that
    /// segment is no longer known.
    public func listedMedia(from sequence: Int64, part: Int) -> Double? {
        let trailing = trailingParts.reduce(0) { $0 + $1.duration }
        let whole: Double
        if let index = segments.firstIndex(where: { $0.sequence == sequence }) {
            whole = segments[index...].reduce(0) { $0 + $1.duration }
        } else if sequence == nextSequence {
            whole = 0
        } else {
            return nil
        }
        return whole + trailing - offset(ofPart: part, in: sequence)
    }

    /// Seconds into segment `sequence` at which its part `index` starts.
    public func offset(ofPart index: Int, in sequence: Int64) -> Double {
        let parts = segments.first { $0.sequence == sequence }?.parts ?? (sequence == nextSequence ? trailingParts : [])
        return parts.prefix(index).reduce(0) { $0 + $1.duration }
    }

    // MARK: - Inside

    private func initIfChanged(_ section: HLSMediaPlaylist.Part?) -> HLSMediaPlaylist.Part? {
        section == lastInitSection ? nil : section
    }

    /// Where playback joins the first playlist: the segment and part fetching starts at, and the
    /// seconds from there to the target (the target lies inside the segment, or between an
    /// independent part and the next one).
    private func joinPoint(_ playlist: HLSMediaPlaylist) -> (sequence: Int64, part: Int, skip: Double)? {
        guard !playlist.segments.isEmpty || !playlist.trailingParts.isEmpty else { return nil }
        if playlist.isFinal, playlist.start == nil { return (playlist.segments.first?.sequence ?? playlist.nextSequence, 0, 0) }
        let total = playlist.duration + (usesParts ? playlist.trailingParts.reduce(0) { $0 + $1.duration } : 0)
        let back: Double
        if let start = playlist.start {
            back = start.offset < 0 ? -start.offset : max(0, total - start.offset)
        } else {
            back = joinHoldBack
        }
        // Walk back from the end: parts of the trailing segment, then whole segments (or
        // their independent parts), to the first place fetching can start at or before the
        // target; `remaining` then says how far before it (negative).
        var remaining = back
        if usesParts {
            for index in playlist.trailingParts.indices.reversed() {
                remaining -= playlist.trailingParts[index].duration
                if remaining <= 0, playlist.trailingParts[index].independent { return (playlist.nextSequence, index, -remaining) }
            }
        }
        for segment in playlist.segments.reversed() {
            if usesParts, !segment.parts.isEmpty {
                for index in segment.parts.indices.reversed() {
                    remaining -= segment.parts[index].duration
                    if remaining <= 0, segment.parts[index].independent { return (segment.sequence, index, -remaining) }
                }
            } else {
                remaining -= segment.duration
            }
            if remaining <= 0 { return (segment.sequence, 0, -remaining) }
        }
        return (playlist.segments.first?.sequence ?? playlist.nextSequence, 0, 0)
    }

    /// Parts that contradict their segment are not used.
    private mutating func checkParts() {
        guard partsRefused == nil, let partTarget else { return }
        for segment in segments where !segment.parts.isEmpty {
            let sum = segment.parts.reduce(0) { $0 + $1.duration }
            if sum > segment.duration + partTarget {
                partsRefused = String(format: "segment %lld's parts last %.3f s, the segment %.3f s", segment.sequence, sum, segment.duration)
                return
            }
        }
        if let long = (segments.flatMap(\.parts) + trailingParts).first(where: { $0.duration > partTarget * 1.5 }) {
            partsRefused = String(format: "a part of %.3f s against a part target of %.3f s", long.duration, partTarget)
        }
    }

    /// Forgets the segments well behind the cursor (a live playlist's window slides; an
    /// event playlist grows), keeping the last few for delta updates.
    private mutating func forgetBehindCursor() {
        guard let cursor, segments.count > 64 else { return }
        let keepFrom = min(cursor.sequence, nextSequence) - 8
        if let first = segments.first, first.sequence < keepFrom {
            segments.removeAll { $0.sequence < keepFrom }
        }
    }
}
