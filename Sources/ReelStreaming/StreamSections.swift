import Foundation
import ReelCore
import Synchronization

/// The sections of one segmented stream as its reader writes them (see
/// ``SectionedResourceLoader``): section 0 first; at a seam (an init section that changes, a
/// switch of variant, a discontinuity) the reader announces the next section, then ends the
/// current one, so whoever reads a section to its end can already ask whether another follows.
///
/// A section's stream can be taken once (a demuxer opens it once). Cancelling the newest
/// section's stream stops the reader; cancelling one that already ended (the demuxer closing
/// it after moving on) does not.
public final class StreamSections: Sendable {
    private struct Entry: Sendable {
        var stream: ByteStream?
        var continuation: ByteStream.Continuation
        var restartsTimeline: Bool
    }

    private struct State: Sendable {
        var entries: [Int: Entry] = [:]
        /// How many sections were announced.
        var count = 0
        var onCancel: (@Sendable () -> Void)?
        var duration: Double?
        var rank = 0
        /// A stream with an end: its segments' sequence numbers and durations, and the one
        /// the run started at.
        var timeline: [(sequence: Int64, duration: Double, discontinuity: Bool)] = []
        var startSequence: Int64?
        /// A live stream: its segments on its own clock (carried from run to run).
        var live = LiveTimeline()
        /// Where this run's first media starts: a segment, and seconds into it (a part).
        var runStart: (sequence: Int64, offset: Double)?
        /// Whether this run's first frame shown anchors the live timeline (not after a seek,
        /// whose first frames shown are not its first segment's).
        var anchorsOnFirstFrame = true
        /// A live join still to present: seconds from the first media fetched to the target
        /// offset, when the playlist that decided it arrived, and the target duration.
        var join: Join?
        /// The latest live playlist: seconds of parts listed after its last whole segment, and
        /// when it arrived.
        var edge: (trailing: Double, at: Double)?
        /// The latest of the playlists' "media listed since the join's start − arrival": where
        /// the edge is, measured from the join's start (a playlist lists complete media only, so
        /// the latest is the closest to the true edge).
        var leadSinceJoin: Double?
        /// What the joining playlist listed from the join's start.
        var joinListed: Double?
    }

    /// A live join still to present.
    struct Join: Sendable {
        /// Seconds from the first media fetched to the target, by the joining playlist.
        var skip: Double
        /// When that playlist arrived (the reader's clock).
        var at: Double
        var targetDuration: Double
        /// The offset behind the edge joined at.
        var target: Double
    }

    private let state = Mutex(State())
    private let highWaterMark: Int
    private let information: ContentInformation

    init(information: ContentInformation, highWaterMark: Int = 4 << 20) {
        self.information = information
        self.highWaterMark = highWaterMark
    }

    /// Runs when the newest section's reader cancels it.
    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        state.withTrackedLock { $0.onCancel = handler }
    }

    /// Announces section `count` (its stream exists from now on) and returns where to write it.
    func announce(restartsTimeline: Bool) -> (index: Int, continuation: ByteStream.Continuation) {
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: highWaterMark)
        continuation.respond(with: information)
        let index = state.withTrackedLock { state -> Int in
            let index = state.count
            state.entries[index] = Entry(stream: stream, continuation: continuation, restartsTimeline: restartsTimeline)
            state.count += 1
            return index
        }
        continuation.onCancel { [weak self] in
            guard let self else { return }
            let handler = self.state.withTrackedLock { state in index == state.count - 1 ? state.onCancel : nil }
            handler?()
        }
        return (index, continuation)
    }

    /// The stream's duration in seconds, once a playlist with an end said it (`nil` for live).
    public var duration: Double? { state.withTrackedLock { $0.duration } }

    /// The rank of the variant being read (a restart carries on with it).
    public internal(set) var rank: Int {
        get { state.withTrackedLock { $0.rank } }
        set { state.withTrackedLock { $0.rank = newValue } }
    }

    /// Records a stream with an end: its segments and where this run starts.
    func setTimeline(_ segments: [HLSMediaPlaylist.Segment], start: Int64?) {
        state.withTrackedLock { state in
            state.timeline = segments.map { ($0.sequence, $0.duration, $0.discontinuity) }
            state.duration = segments.reduce(0) { $0 + $1.duration }
            state.startSequence = start
        }
    }

    /// A live stream's timeline as known so far.
    public var live: LiveTimeline { state.withTrackedLock { $0.live } }

    /// Starts from what an earlier run of the same stream knew (a seek within a live window).
    func inherit(_ live: LiveTimeline, anchorsOnFirstFrame: Bool) {
        state.withTrackedLock { state in
            state.live = live
            state.anchorsOnFirstFrame = anchorsOnFirstFrame
        }
    }

    /// Records what a live playlist listed (see ``LiveTimeline/listed(_:targetDuration:holdBack:)``).
    func listed(_ segments: [HLSMediaPlaylist.Segment], targetDuration: Double, holdBack: Double) {
        let entries = segments.map { LiveTimeline.Entry(sequence: $0.sequence, duration: $0.duration, discontinuity: $0.discontinuity) }
        state.withTrackedLock { $0.live.listed(entries, targetDuration: targetDuration, holdBack: holdBack) }
    }

    /// Records where this run's first media starts (once).
    func started(at sequence: Int64, offset: Double) {
        state.withTrackedLock { state in
            if state.runStart == nil { state.runStart = (sequence, offset) }
        }
    }

    /// The first frame of this run was shown at `time`: it anchors the live timeline, unless
    /// one is anchored already or this run is a seek's.
    func firstFrameShown(at time: Double) {
        state.withTrackedLock { state in
            guard state.anchorsOnFirstFrame, state.live.anchor == nil, let start = state.runStart else { return }
            state.live.anchor(start.sequence, at: time - start.offset)
        }
    }

    /// A live stream was joined `skip` seconds of media before its `target` offset, by a
    /// playlist that arrived at `at` (the reader's clock).
    func joined(skip: Double, at: Double, targetDuration: Double, target: Double) {
        state.withTrackedLock { $0.join = Join(skip: max(0, skip), at: at, targetDuration: targetDuration, target: target) }
    }

    /// A live playlist arrived at `at` listing `trailing` seconds of parts after its segments,
    /// and `sinceJoin` seconds of media from where the join started fetching.
    func edgeListed(trailing: Double, at: Double, sinceJoin: Double? = nil) {
        state.withTrackedLock { state in
            state.edge = (trailing, at)
            guard let sinceJoin else { return }
            // Only a playlist that listed newer media than the joining one shows the stream
            // growing in time (a playlist that never changes places no edge that moves).
            if let first = state.joinListed, sinceJoin > first {
                state.leadSinceJoin = max(state.leadSinceJoin ?? -.infinity, sinceJoin - at)
            } else if state.joinListed == nil {
                state.joinListed = sinceJoin
            }
        }
    }

    /// A live join's first frame was decoded at `time`, `now` on the reader's clock: it anchors
    /// the timeline (it starts the run's first media), and frames are shown from the target
    /// offset: behind the edge as it is now when a playlist after the joining one showed the
    /// stream growing (placed by the latest of them, as ``edgeListed(trailing:at:sinceJoin:)``
    /// keeps it; at most two target durations past the join's skip), else the join's skip. `nil`: not a join (a stream with an end, a
    /// seek), or asked already.
    public func presentationStart(firstDecoded time: Double, now: Double) -> Double? {
        let (join, lead) = state.withTrackedLock { state -> (Join?, Double?) in
            defer { state.join = nil }
            return (state.join, state.leadSinceJoin)
        }
        guard let join else { return nil }
        firstFrameShown(at: time)
        let byEdge = lead.map { $0 + now - join.target } ?? join.skip
        let skip = min(max(join.skip, byEdge), join.skip + 2 * join.targetDuration)
        return skip > 0 ? time + skip : nil
    }

    /// A live stream's newest listed media on its own clock (once anchored), and seconds since
    /// the playlist that listed it arrived, `now` on the reader's clock.
    public func liveEdge(now: Double) -> (newest: Double, age: Double, holdBack: Double)? {
        state.withTrackedLock { state in
            guard state.duration == nil, let edge = state.edge, let window = state.live.window else { return nil }
            return (window.upperBound + edge.trailing, max(0, now - edge.at), state.live.holdBack)
        }
    }

    /// A stream with an end: where the segment holding `seconds` starts on the item's
    /// timeline (the sum of the durations before it), when a discontinuity comes before it —
    /// its own timestamps started again, so a restart there must be placed (see
    /// ``ResourceSection/startsAt``); `nil` when none does (its timestamps are the item's).
    public func placement(ofSegmentHolding seconds: Double) -> Double? {
        state.withTrackedLock { state in
            guard let held = LiveSegmentReader.segment(holding: seconds, durations: state.timeline.lazy.map(\.duration)),
                  state.timeline.prefix(held.index + 1).dropFirst().contains(where: \.discontinuity) else { return nil }
            return held.start
        }
    }

    /// Whether this run started at the segment holding `seconds` and has no seam yet (and
    /// needs no placing: see ``placement(ofSegmentHolding:)``).
    func startsAtSegment(holding seconds: Double) -> Bool {
        if placement(ofSegmentHolding: seconds) != nil { return false }
        return state.withTrackedLock { state in
            guard state.count == 1, let start = state.startSequence,
                  let held = LiveSegmentReader.segment(holding: seconds, durations: state.timeline.lazy.map(\.duration)) else { return false }
            return state.timeline[held.index].sequence == start
        }
    }

    /// Stops the reader (a restart replaces it): the newest section's stream is cancelled.
    func cancel() {
        let newest = state.withTrackedLock { state in state.entries[state.count - 1]?.continuation }
        let handler = state.withTrackedLock { $0.onCancel }
        newest?.finish(throwing: CancellationError())
        handler?()
    }

    /// How many sections were announced so far.
    public var count: Int { state.withTrackedLock { $0.count } }

    /// Section `index`'s stream, once (a second take, or a section never announced, is `nil`).
    public func take(_ index: Int) -> ByteStream? {
        state.withTrackedLock { state in
            let stream = state.entries[index]?.stream
            state.entries[index]?.stream = nil
            return stream
        }
    }

    /// Whether section `index + 1` was announced, and whether its timestamps start again.
    public func restartsTimeline(after index: Int) -> Bool? {
        state.withTrackedLock { $0.entries[index + 1]?.restartsTimeline }
    }

    /// Ends every announced section's stream that is still open (the reader stopped).
    func finishAll(throwing error: (any Error)?) {
        let open = state.withTrackedLock { $0.entries.values.map(\.continuation) }
        for continuation in open {
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        }
    }

    /// Reads every section to its end, one after another, into one `Data` (for tests and
    /// tools that want the bytes, not a demuxer).
    public func collectAll(limit: Int = .max) async throws -> [Data] {
        var result: [Data] = []
        var index = 0
        while let stream = take(index) {
            result.append(try await stream.collect(limit: limit))
            index += 1
        }
        return result
    }
}
