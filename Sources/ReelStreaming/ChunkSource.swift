import Foundation

/// The segment scheduler's decisions for one rendition as a value: what to do next — reload
/// the playlist (when, how, through the cache or not), fetch a chunk, or end and why — from
/// what happened — a playlist loaded at a time, a blocking reload left unanswered, a chunk
/// asked for and fetched, a wait for room in the buffer — with no task, socket, file or clock
/// of its own. ``LiveSegmentReader`` is its driver: it asks ``nextAction(at:)``, carries the
/// action out (the I/O, the sections, the trace) and tells the machine what came of it, as
/// ``HTTPLoader`` drives `RangeResponseMachine`. Media3's `HlsChunkSource.getNextChunk` shape
/// (a chunk, the end of the stream, or a playlist to load first), over the
/// ``LivePlaylistTracker`` that follows the playlist.
///
/// What it decides:
/// - **The first playlist** is read through the cache (``Action/reload(_:fromCache:)``), later
///   ones from the origin. After it the stream is positioned: a stream with an end at the
///   segment holding ``Configuration/startTime``; a live one at the sequence of a live seek (the
///   oldest listed when that left the window), at the edge, or joined at the edge (``Positioned``).
/// - **Reload timing.** The tracker's reload, made plain (after a target duration, half of one
///   after a playlist with nothing new) when the server may hold a blocking reload longer than
///   ``Configuration/maximumBlockingWait`` or once one was left unanswered
///   (``reloadUnanswered(at:)``: the next goes at once); a blocking reload after a playlist that
///   brought nothing new waits half a target duration (a server answering at once must not be
///   asked in a spin). Before every reload the tracker's stale rule is asked.
/// - **Falling behind the window.** Once positioned, a playlist whose window moved past what was
///   still to fetch moves on to the oldest segment listed, and the next chunk restarts the
///   timeline (``Chunk/restartsTimeline``).
/// - **The forward buffer.** No whole segment is fetched while ``Configuration/maximumBuffer``
///   seconds are ahead of the playhead (``roomWait(ahead:)``); a wait of three target durations
///   or more makes a live playlist be read again before fetching (``waitedForRoom(since:at:)``).
/// - **The end**: after `EXT-X-ENDLIST` and everything before it, or a tracker failure
///   (``Ending``). Once ended it stays ended.
/// - **The seams**: a new section at a switch, an init section that changes or timestamps that
///   start again (once something was sent), the init section to send first, and whether the
///   chunk may be abandoned (``Chunk``).
///
/// Still the driver's (the next steps of issue 39): the switch rule's inputs and the new
/// variant's playlist, the abandonment watch, the separate audio rendition's pairing and its
/// own reloads.
public struct ChunkSource: Sendable {
    /// Where a live stream starts.
    public enum LiveStart: Sendable, Hashable {
        /// At the edge, as a player joining it (the join is reported: ``Positioned/joined``).
        case join
        /// At the edge, for a seek at or past the join point (no join reported).
        case edge
        /// At segment `sequence` (a seek within the window): the oldest listed when it left.
        case at(Int64)
    }

    public struct Configuration: Sendable, Hashable {
        /// The longest a blocking reload may be held (HTTPLoader gives a response 20 s).
        public var maximumBlockingWait: Double
        /// Seconds buffered ahead of the playhead at which no whole segment is fetched.
        public var maximumBuffer: Double
        /// A stream with an end starts at the segment holding this time (`nil`: its start).
        public var startTime: Double?
        public var liveStart: LiveStart

        public init(maximumBlockingWait: Double = 15, maximumBuffer: Double = 12, startTime: Double? = nil,
                    liveStart: LiveStart = .join) {
            self.maximumBlockingWait = maximumBlockingWait
            self.maximumBuffer = maximumBuffer
            self.startTime = startTime
            self.liveStart = liveStart
        }
    }

    /// Why the stream ended.
    public enum Ending: Sendable, Hashable {
        /// `EXT-X-ENDLIST`, and everything before it was fetched.
        case endList
        /// The playlist cannot be followed.
        case failed(LivePlaylistTracker.Failure)
    }

    /// A chunk to fetch, and the seam before it.
    public struct Chunk: Sendable, Hashable {
        /// The tracker's fetch (what ``chunkLoaded(_:)`` gives back).
        public var fetch: LivePlaylistTracker.Fetch
        /// The segment or part itself.
        public var resource: HLSMediaPlaylist.Part
        public var duration: Double
        /// The init section its media needs (`nil`: none, not fragmented MP4).
        public var initSection: HLSMediaPlaylist.Part?
        /// Its timestamps start again: a discontinuity, or a jump ahead in the window.
        public var restartsTimeline: Bool
        /// A new section (container stream) starts with it: after a switch, an init section
        /// that changes, or timestamps that start again, once something was sent.
        public var startsSection: Bool
        /// The init section to send before it (a section's first, or one that changed).
        public var sendsInit: HLSMediaPlaylist.Part?
        /// Whether it may be abandoned in flight: only inside a section already under way (its
        /// init section sent before), so a section never holds an init section alone.
        public var abandonable: Bool
    }

    /// What to do next.
    public enum Action: Sendable, Hashable {
        /// Load the playlist as `reload` says, at `reload.at`; `fromCache`: the first read,
        /// through the cache. Answer with ``playlistLoaded(_:at:)`` or ``reloadUnanswered(at:)``.
        case reload(LivePlaylistTracker.Reload, fromCache: Bool)
        /// Fetch this chunk (its init section first when it names one), then ``chunkLoaded(_:)``.
        case fetch(Chunk)
        case end(Ending)
    }

    /// Where the first playlist put the stream.
    public enum Positioned: Sendable, Hashable {
        /// A stream with an end, at its start or at ``Configuration/startTime``'s segment.
        case fromStart
        /// A live stream joined at its edge, fetching from this segment and part (`nil`: the
        /// playlist listed nothing yet).
        case joined(sequence: Int64?, part: Int)
        /// A live seek: at its segment, the oldest listed, or the edge.
        case seeked
    }

    /// What a loaded playlist did.
    public struct Loaded: Sendable, Hashable {
        /// It listed something new.
        public var changed: Bool
        /// The window had moved past segment `from`: the stream goes on from `to`.
        public var skippedAhead: SkippedAhead?
        /// Set for the first playlist.
        public var positioned: Positioned?
    }

    public struct SkippedAhead: Sendable, Hashable {
        public var from: Int64
        public var to: Int64
    }

    enum Phase: Sendable, Hashable {
        case reload(LivePlaylistTracker.Reload)
        case fetching
        case ended(Ending)
    }

    public let configuration: Configuration
    /// The playlist followed; replaced on a switch of variant (``switched(to:)``).
    public private(set) var tracker: LivePlaylistTracker
    private(set) var phase: Phase
    /// The first playlist was read and the stream placed.
    public private(set) var isPositioned = false
    /// Whether the last playlist listed something new.
    private var lastChanged = true
    /// A blocking reload was left unanswered: plain reloads from then on.
    public private(set) var blockingGivenUp = false
    /// The window moved past what was still to fetch: the next chunk restarts the timeline.
    private var skippedAhead = false
    /// The init section the current section began with (or changed to).
    public private(set) var initSent: HLSMediaPlaylist.Part?
    /// Something was sent into the current section.
    public private(set) var isSectionStarted = false
    /// The next chunk starts a new section (a switch).
    private var seamPending = false

    /// A source whose first action is to load the playlist at `now`.
    public init(tracker: LivePlaylistTracker, configuration: Configuration = Configuration(), at now: Double) {
        self.tracker = tracker
        self.configuration = configuration
        self.phase = .reload(LivePlaylistTracker.Reload(at: now))
    }

    /// What to do next at `now`. While fetching, a tracker with nothing left to fetch ends the
    /// stream (after `EXT-X-ENDLIST`) or, once the stale rule passed, schedules the next reload.
    public mutating func nextAction(at now: Double) -> Action {
        switch phase {
        case .ended(let ending):
            return .end(ending)
        case .reload(let reload):
            return .reload(reload, fromCache: !isPositioned)
        case .fetching:
            let fetch = tracker.next()
            switch fetch {
            case .ended:
                phase = .ended(.endList)
                return .end(.endList)
            case .waitForReload:
                do { try tracker.checkStale(at: now) } catch {
                    phase = .ended(.failed(error))
                    return .end(.failed(error))
                }
                let reload = nextReload(at: now)
                phase = .reload(reload)
                return .reload(reload, fromCache: false)
            case .segment(let segment, _):
                return .fetch(chunk(fetch, resource: segment.resource, duration: segment.duration,
                                    initSection: segment.initSection, restartsTimeline: segment.discontinuity || skippedAhead))
            case .part(let sequence, _, let part, _):
                let segment = tracker.segments.first { $0.sequence == sequence } ?? tracker.segments.last
                return .fetch(chunk(fetch, resource: part.resource, duration: part.duration,
                                    initSection: segment?.initSection, restartsTimeline: false))
            }
        }
    }

    /// The playlist asked for arrived at `now`. `nil` when it cannot be followed (the next
    /// action ends the stream and says why).
    public mutating func playlistLoaded(_ playlist: HLSMediaPlaylist, at now: Double) -> Loaded? {
        guard case .reload = phase else { return nil }
        var loaded = Loaded(changed: false)
        do {
            loaded.changed = try tracker.received(playlist, at: now)
        } catch {
            guard isPositioned, case .fellBehind(let wanted, let oldest) = error, tracker.move(to: oldest) else {
                phase = .ended(.failed(error))
                return nil
            }
            // Behind the window (a player paused behind the edge): on from the oldest listed.
            skippedAhead = true
            loaded.changed = true
            loaded.skippedAhead = SkippedAhead(from: wanted, to: oldest)
        }
        lastChanged = loaded.changed
        if !isPositioned {
            loaded.positioned = position()
            isPositioned = true
        }
        phase = .fetching
        return loaded
    }

    /// A blocking reload went unanswered past its deadline: the tracker is as it was, and from
    /// now on reloads are plain, the next at once.
    public mutating func reloadUnanswered(at now: Double) {
        guard case .reload = phase else { return }
        blockingGivenUp = true
        phase = .reload(LivePlaylistTracker.Reload(at: now))
    }

    /// The driver started on `chunk` (a new section opened when it says so): the seam and a
    /// jump ahead are behind it.
    public mutating func chunkStarted(_ chunk: Chunk) {
        if chunk.startsSection {
            initSent = nil
            isSectionStarted = false
        }
        seamPending = false
        skippedAhead = false
    }

    /// The init section `part` was sent into the current section.
    public mutating func initSectionSent(_ part: HLSMediaPlaylist.Part) {
        initSent = part
        isSectionStarted = true
    }

    /// Media (a chunk, or audio beside it) was sent into the current section.
    public mutating func mediaSent() {
        isSectionStarted = true
    }

    /// `fetch` arrived whole and was delivered: the tracker moves past it.
    public mutating func chunkLoaded(_ fetch: LivePlaylistTracker.Fetch) {
        tracker.fetched(fetch)
    }

    /// Another variant's tracker, moved to where this one was (a switch): the next chunk
    /// starts a new section.
    public mutating func switched(to tracker: LivePlaylistTracker) {
        self.tracker = tracker
        seamPending = true
    }

    /// Seconds to wait before looking at the buffer again when `ahead` seconds are buffered
    /// ahead of the playhead; `nil` when there is room for a segment.
    public func roomWait(ahead: Double) -> Double? {
        guard ahead >= configuration.maximumBuffer else { return nil }
        return min(1, max(0.05, ahead - configuration.maximumBuffer))
    }

    /// The driver waited for room from `since` to `now` before fetching a whole segment;
    /// whether it goes on fetching it. After three target durations or more a live playlist is
    /// read again first (what it listed then may have left the window): `false`, and the next
    /// action is that reload.
    public mutating func waitedForRoom(since: Double, at now: Double) -> Bool {
        guard case .fetching = phase, !tracker.isFinal, now - since >= 3 * tracker.targetDuration else { return true }
        phase = .reload(LivePlaylistTracker.Reload(at: now))
        return false
    }

    /// Which of consecutive segments of `durations` holds `seconds` from the first one's start
    /// (the last for a time past the end), and where it starts.
    public static func segment(holding seconds: Double, durations: some Sequence<Double>) -> (index: Int, start: Double)? {
        var start = 0.0
        var last: (index: Int, start: Double)?
        for (index, duration) in durations.enumerated() {
            if seconds < start + duration { return (index, start) }
            last = (index, start)
            start += duration
        }
        return last
    }

    // MARK: - Inside

    /// `fetch` as a chunk, with the seam before it.
    private func chunk(_ fetch: LivePlaylistTracker.Fetch, resource: HLSMediaPlaylist.Part, duration: Double,
                       initSection: HLSMediaPlaylist.Part?, restartsTimeline: Bool) -> Chunk {
        let initChanges = initSection != nil && initSent != nil && initSection != initSent
        let startsSection = isSectionStarted && (seamPending || restartsTimeline || initChanges)
        let current = startsSection ? nil : initSent
        return Chunk(fetch: fetch, resource: resource, duration: duration, initSection: initSection,
                     restartsTimeline: restartsTimeline, startsSection: startsSection,
                     sendsInit: initSection.flatMap { $0 != current ? $0 : nil },
                     abandonable: isSectionStarted && !seamPending && !restartsTimeline && !initChanges)
    }

    /// Places the stream after its first playlist.
    private mutating func position() -> Positioned {
        if tracker.isFinal {
            let segments = tracker.segments
            if let startTime = configuration.startTime,
               let held = Self.segment(holding: startTime, durations: segments.map(\.duration)) {
                tracker.move(to: segments[held.index].sequence)
            }
            return .fromStart
        }
        switch configuration.liveStart {
        case .at(let sequence):
            if !tracker.move(to: sequence), let oldest = tracker.segments.first { tracker.move(to: oldest.sequence) }
            return .seeked
        case .edge:
            return .seeked
        case .join:
            let cursor = tracker.cursor
            return .joined(sequence: cursor?.sequence, part: cursor?.part ?? 0)
        }
    }

    /// When and how to reload after the fetching: the tracker's choice, plain when blocking
    /// reloads were given up or could be held past ``Configuration/maximumBlockingWait``, and
    /// never at once after a playlist that brought nothing new.
    private func nextReload(at now: Double) -> LivePlaylistTracker.Reload {
        var reload = tracker.nextReload()
        let target = tracker.targetDuration
        if reload.blockingSequence != nil, blockingGivenUp || target * 3 > configuration.maximumBlockingWait {
            // The server may hold a blocking reload for three target durations, longer than a
            // response may take here: reload plainly, after a target duration.
            reload = LivePlaylistTracker.Reload(at: now + (lastChanged ? target : target / 2), skip: reload.skip)
        }
        // A blocking one goes at once but must not spin on a server that answers at once with
        // nothing new: then it waits half a target duration.
        if reload.blockingSequence != nil, !lastChanged {
            reload.at = max(reload.at, now + target / 2)
        }
        return reload
    }
}
