import Foundation
import ReelCore
import Synchronization

/// Reads an HLS stream the way Reel's segment scheduler does and gives its media as
/// ``StreamSections``: the init section (fMP4), then every segment (or part) in order, each
/// fetched once, through the loader. What FFmpeg's mov or mpegts demuxer reads in place of
/// FFmpeg's HLS demuxer; `LivePlaylistTracker` decides what to fetch and when, and, with more
/// than one variant, ``AdaptiveVariantRule`` (or a fixed plan) decides from which.
///
/// A live playlist is joined at its edge and followed; one with `EXT-X-ENDLIST` is read from
/// its start. Each section is one container stream: a new one starts at every seam — a switch
/// of variant, an init section that changes, a discontinuity (whose timestamps start again) —
/// so the demuxer reopens there on the engine's side. Switches happen only at whole segments
/// of playlists whose media sequence numbers line up (as a packager's ladder does).
///
/// The stream has no length and cannot seek: a seek starts a new reader (``startTime``, or
/// ``liveStart`` within a live window; see ``LiveMediaLoader``). It ends after `EXT-X-ENDLIST`
/// and everything before it, and fails with a ``LivePlaylistTracker/Failure`` (stale playlist,
/// media sequence going backwards), a ``LiveSegmentReader/Failure``, or the loader's error. A
/// window that moved past what was still to fetch is not a failure: it goes on from the oldest
/// segment listed, in a section whose timeline restarts.
/// A variant's playlist is first read through the loader itself (its cache): one with
/// `EXT-X-ENDLIST` never changes, so a warm replay asks the origin for nothing. A copy without
/// one may be stale, so it is read again at once through the loader's unstored side, as is
/// every reload of a live playlist (it must reach the origin). Segments are read through the
/// loader itself, so they are cached.
public struct LiveSegmentReader: Sendable {
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case notAMediaPlaylist(String)
        case tooLarge(what: String, url: URL, limit: Int)
        case refusedURL(String)
        /// A separate audio rendition that cannot be read beside the variants (see ``audio``).
        case unsupportedAudio(String)
        /// A live segment, part or init section still arriving after
        /// ``liveArrivalDeadline(targetDuration:)``.
        case notArrived(what: String, url: URL, seconds: Double)

        public var description: String {
            switch self {
            case .unsupportedAudio(let why): "the audio rendition cannot be played beside the video: \(why)"
            case .refusedURL(let url): "refused to open \(url): a playlist read over HTTP may name only http and https URLs"
            case .notAMediaPlaylist(let why): "the playlist cannot be read: \(why)"
            case .tooLarge(let what, let url, let limit): "\(what) \(url.absoluteString) is larger than \(limit) bytes"
            case .notArrived(let what, let url, let seconds):
                String(format: "%@ %@ of the live stream has not arrived in %.1f s", what, url.absoluteString, seconds)
            }
        }
    }

    /// What the reader did, for traces and tests.
    public enum Event: Sendable, Hashable {
        /// A playlist arrived (`changed`: it listed something new) at `at` seconds.
        case playlist(url: URL, changed: Bool, at: Double)
        /// A segment or part was fetched: its URL and byte range (`nil`: whole), bytes, and
        /// how far behind the newest listed media the fetching then was, in seconds.
        case fetched(url: URL, range: ByteRange?, bytes: Int, behindEdge: Double)
        /// The next segments come from another variant (or the same one after a seam):
        /// `sequence` is the first of them, `section` the stream section they start.
        case switched(Switch)
        /// The live window moved past segment `from` before it was fetched: the stream goes on
        /// from `to`, the oldest listed.
        case skippedAhead(from: Int64, to: Int64)
    }

    /// A switch of variant, and why.
    public struct Switch: Sendable, Hashable {
        public var from: Int
        public var to: Int
        public var sequence: Int64
        public var playlist: URL
        public var bandwidth: Int64
        /// The rule's sentence, or "planned" for a fixed plan.
        public var why: String
        public var estimate: Int64?
        public var buffered: Double
        public var section: Int
        /// The DASH Representation switched to (its `@id`), for a manifest said as HLS.
        public var representation: String?
    }

    /// One variant of the stream: its media playlist and `BANDWIDTH`.
    public struct Variant: Sendable, Hashable {
        public var playlist: URL
        public var bandwidth: Int64
        public var resolution: String?
        /// The DASH Representation it is (its `@id`), for a manifest said as HLS.
        public var representation: String?

        public init(playlist: URL, bandwidth: Int64, resolution: String? = nil, representation: String? = nil) {
            self.playlist = playlist
            self.bandwidth = bandwidth
            self.resolution = resolution
            self.representation = representation
        }
    }

    /// How the variant of each segment is chosen.
    public enum Switching: Sendable {
        /// The one variant it started on.
        case fixed
        /// ``AdaptiveVariantRule`` over the estimate, before every whole segment.
        case adaptive(AdaptiveVariantRule, estimate: any BandwidthEstimating)
        /// A fixed plan: before the `n`th segment fetched (0 is the first), switch to the
        /// variant of rank `plan[n]`. For tests and side-by-side comparisons.
        case plan([Int: Int])
    }

    /// The variants, lowest bandwidth first.
    public var variants: [Variant]
    /// The rank (in ``variants``) it starts on.
    public var startRank: Int
    public var switching: Switching
    public var loader: any ResourceLoader
    public var tracker: LivePlaylistTracker
    /// Monotonic seconds now.
    public var now: @Sendable () -> Double
    /// Waits `seconds` (a sleep; a test's clock can make it instant).
    public var sleep: @Sendable (Double) async throws -> Void
    /// Waits out a watchdog's deadline, a time only a stuck transfer reaches (a blocking
    /// reload held too long, a live segment that never ends). On the wall clock by default,
    /// apart from ``sleep``: a test's simulated clock is not moved on by the watchdogs of
    /// transfers that do arrive.
    public var watchdog: @Sendable (Double) async throws -> Void = { seconds in try await Task.sleep(for: .seconds(seconds)) }
    public var observer: (@Sendable (Event) -> Void)?
    /// Seconds of media played since the first frame, as the player reports it (`nil`: no
    /// report yet). Without it the reader assumes playback at 1× from its first delivery
    /// (``VirtualPlayhead``) for the adaptive rule, and keeps no forward-buffer limit.
    public var playhead: (@Sendable () -> Double?)?
    /// With a ``playhead``: no segment is fetched while this many seconds are buffered ahead
    /// of it (what a short-video feed spends on a clip the viewer may swipe away from).
    public var maximumBuffer: Double = 12
    /// The longest a blocking reload may be held: a server holds one for up to three target
    /// durations, and HTTPLoader gives a response 20 s. With longer target durations (over
    /// 5 s) the reader reloads plainly instead.
    public var maximumBlockingWait: Double = 15
    /// The least time a live segment, part or init section is given to arrive (seconds). The
    /// deadline is wall time, and a process the machine starves is not a stalled origin: on one
    /// core beside the whole test suite (a concurrency pool of one thread shared by a thousand
    /// tests) an init section on loopback was seen to take 19 s. A stall still ends, cheaply,
    /// after this long.
    public var minimumArrivalDeadline: Double = 30
    /// Whether live segments, parts and init sections must arrive within
    /// ``liveArrivalDeadline(targetDuration:)`` (``Failure/notArrived(what:url:seconds:)``). Off
    /// for a reader made by hand (a test of what it fetches, on a machine that may starve it);
    /// `LiveMediaLoader`, through which the player reads, turns it on.
    public var arrivalDeadlines = false
    /// Where a stream with an end starts, in seconds from its first segment (a seek): at the
    /// segment holding it. `nil`: its start (a live stream joins at its edge either way).
    public var startTime: Double?
    /// A live stream's seek: the segment it starts at (the oldest listed when the window has
    /// moved past it; `nil`: the edge, as when joining), and the timeline an earlier run of it
    /// knew, which this run carries on.
    public var liveStart: (sequence: Int64?, timeline: LiveTimeline)?
    /// With the adaptive rule: give up a segment in flight that would arrive after the buffer
    /// runs dry when a lower variant's would arrive before (as hls.js abandons a fragment), and
    /// fetch the same segment from the highest such variant instead.
    public var abandonsSlowSegments = true
    /// An audio rendition played beside every variant (a master whose variants carry video
    /// alone): its media playlist. Both it and the variants must be fragmented MP4, and both
    /// have an end or both be live with sequence numbers in line (``HLSSchedulingLoader`` leaves
    /// anything else to FFmpeg's HLS demuxer; the reader fails clearly on it). Each section's
    /// init section is the variant's joined with the rendition's (``FragmentedMP4Merge``), and
    /// before each video segment go the audio segments that start before it ends (with an end)
    /// or the audio segment of the same number (live, followed by whole segments), so the
    /// demuxer reads the two as one stream.
    public var audio: URL?
    /// The largest playlist read (a live playlist that grows without bound stops here).
    public var maximumPlaylistBytes = 4 << 20
    /// The largest segment, part or init section read (a segment that never ends stops here).
    public var maximumSegmentBytes = 256 << 20

    /// The playlist of the variant it starts on.
    public var playlist: URL { variants[startRank].playlist }

    /// One media playlist.
    public init(playlist: URL, loader: any ResourceLoader, tracker: LivePlaylistTracker = LivePlaylistTracker(),
                observer: (@Sendable (Event) -> Void)? = nil) {
        self.init(variants: [Variant(playlist: playlist, bandwidth: 0)], startRank: 0, switching: .fixed, loader: loader,
                  tracker: tracker, observer: observer)
    }

    /// Several variants (sorted here, lowest bandwidth first), starting on `startRank`.
    public init(variants: [Variant], startRank: Int, switching: Switching, loader: any ResourceLoader,
                tracker: LivePlaylistTracker = LivePlaylistTracker(), observer: (@Sendable (Event) -> Void)? = nil) {
        precondition(!variants.isEmpty, "a stream has at least one variant")
        self.variants = variants.sorted { $0.bandwidth < $1.bandwidth }
        self.startRank = min(max(startRank, 0), variants.count - 1)
        self.switching = switching
        self.loader = loader
        self.tracker = tracker
        let start = ContinuousClock.now
        self.now = { (ContinuousClock.now - start).inSeconds }
        self.sleep = { seconds in try await Task.sleep(for: .seconds(seconds)) }
        self.observer = observer
    }

    /// Starts reading; the returned sections carry the media. Cancelling the newest section's
    /// stream stops the reading. `failingAs` turns the reader's own failures (not the loader's,
    /// not a cancellation) into a loader error, for readers that only know those.
    public func sections(failingAs: (@Sendable (any Error) -> ResourceLoaderError)? = nil) -> StreamSections {
        let sections = StreamSections(information: ContentInformation(
            length: nil, contentType: nil, isByteRangeAccessSupported: false, finalURL: playlist))
        if let liveStart { sections.inherit(liveStart.timeline, anchorsOnFirstFrame: false) }
        let first = sections.announce(restartsTimeline: false)
        let task = Task { [self] in
            do {
                try await run(sections, first: first.continuation)
                sections.finishAll(throwing: nil)
            } catch let error as ResourceLoaderError {
                sections.finishAll(throwing: error)
            } catch is CancellationError {
                sections.finishAll(throwing: CancellationError())
            } catch {
                sections.finishAll(throwing: failingAs?(error) ?? error)
            }
        }
        sections.onCancel { task.cancel() }
        return sections
    }

    /// The first section alone (a stream with no seam is all there): for tests and tools.
    public func stream(failingAs: (@Sendable (any Error) -> ResourceLoaderError)? = nil) -> ByteStream {
        sections(failingAs: failingAs).take(0)!
    }

    /// The running reader's state.
    struct Run {
        var rank: Int
        var tracker: LivePlaylistTracker
        var output: ByteStream.Continuation
        var section = 0
        var initSent: HLSMediaPlaylist.Part?
        /// Something was sent into the current section.
        var sectionStarted = false
        var segmentsFetched = 0
        var playhead = VirtualPlayhead()
        var lastThroughput: Int64?
        /// The last few segments' own throughputs (bits per second), for an estimate before the
        /// meter has one.
        var throughputs: [Int64] = []
        /// The next segment starts a new section (a switch).
        var seamPending = false
        /// After a segment was abandoned the rule may not step up before this sequence: the
        /// meter's estimate still remembers the link as it was.
        var noStepUpBefore: Int64 = .min
        /// The window moved past what was still to fetch: the next segment (the oldest
        /// listed) starts a section whose timeline restarts, as after a discontinuity.
        var skippedAhead = false
        /// The separate audio rendition, once its playlist is read.
        var audio: AudioRun?
        /// A blocking reload was held past ``blockingDeadline(targetDuration:)``: the server's
        /// are not trusted again, and the playlist is reloaded plainly.
        var blockingGivenUp = false
        /// Where a live join started fetching (a segment, a part of it).
        var joinedAt: (sequence: Int64, part: Int)?
    }

    /// Follows the stream: reloads its playlist when the tracker says, fetches what it lists
    /// (``fetchNext(_:state:sections:)``), until it ends, fails or is cancelled.
    private func run(_ sections: StreamSections, first: ByteStream.Continuation) async throws {
        var state = Run(rank: startRank, tracker: tracker, output: first)
        // Beside a separate audio rendition a live stream is followed by whole segments (its
        // segment N goes with the audio's N).
        if audio != nil { state.tracker.prefersParts = false }
        sections.rank = startRank
        var positioned = false
        var reload = LivePlaylistTracker.Reload(at: now())
        while !Task.isCancelled {
            // Waiting for the stream to grow is waiting on time outside the player: a reader
            // blocked meanwhile is idle, not busy (a simulated clock may move on).
            let waits = state.sectionStarted && (reload.at > now() || reload.blockingSequence != nil)
            if waits { state.output.setIdle(true) }
            let wait = reload.at - now()
            if wait > 0 { try await sleep(wait) }
            let loaded = try await loadPlaylist(reload, state: &state, positioned: positioned)
            if waits { state.output.setIdle(false) }
            guard let changed = loaded else {
                // A blocking reload held past what a server may hold one: plain reloads from
                // now on, the first at once.
                state.blockingGivenUp = true
                reload = LivePlaylistTracker.Reload(at: now())
                continue
            }
            if !positioned { try await position(&state, sections: sections) }
            if !state.tracker.isFinal {
                sections.listed(state.tracker.segments, targetDuration: state.tracker.targetDuration,
                                holdBack: state.tracker.joinHoldBack)
                sections.edgeListed(trailing: state.tracker.trailingParts.reduce(0) { $0 + $1.duration }, at: now(),
                                    sinceJoin: state.joinedAt.flatMap { state.tracker.listedMedia(from: $0.sequence, part: $0.part) })
            }
            positioned = true
            var reloadsFirst = false
            fetching: while case let fetch = state.tracker.next(), fetch != .waitForReload {
                switch try await fetchNext(fetch, state: &state, sections: sections) {
                case .fetched: continue
                case .reloadFirst: reloadsFirst = true; break fetching
                case .finished: return
                }
            }
            if reloadsFirst {
                reload = LivePlaylistTracker.Reload(at: now())
                continue
            }
            try state.tracker.checkStale(at: now())
            reload = nextReload(state, changed: changed)
        }
    }

    /// Loads the playlist as `reload` asks (``load(_:state:stored:)``); `nil` for a blocking
    /// reload given up. Once positioned, a window that slid past what was still to fetch (a
    /// player paused behind the edge) goes on from the oldest segment listed, as hls.js goes
    /// on from the window.
    private func loadPlaylist(_ reload: LivePlaylistTracker.Reload, state: inout Run, positioned: Bool) async throws -> Bool? {
        do {
            return try await load(reload, state: &state, stored: !positioned)
        } catch let failure as LivePlaylistTracker.Failure where positioned {
            guard case .fellBehind(let wanted, let oldest) = failure, state.tracker.move(to: oldest) else { throw failure }
            state.skippedAhead = true
            observer?(.skippedAhead(from: wanted, to: oldest))
            return true
        }
    }

    /// After the first playlist: the audio rendition's read beside it, a stream with an end
    /// started at ``startTime`` and its timeline set, a live seek's segment moved to.
    private func position(_ state: inout Run, sections: StreamSections) async throws {
        if let audio {
            state.audio = try await loadAudio(audio, video: state.tracker)
        }
        if state.tracker.isFinal {
            let segments = state.tracker.segments
            if let startTime, let held = Self.segment(holding: startTime, durations: segments.map(\.duration)) {
                state.tracker.move(to: segments[held.index].sequence)
            }
            sections.setTimeline(state.tracker.segments, start: state.tracker.cursor?.sequence)
        } else if let sequence = liveStart?.sequence ?? nil, !state.tracker.move(to: sequence),
                  let oldest = state.tracker.segments.first {
            state.tracker.move(to: oldest.sequence)
        } else if liveStart == nil {
            // Joined at the edge: the player decodes from where fetching starts and shows
            // from the target offset on.
            sections.joined(skip: state.tracker.joinSkip, at: now(), targetDuration: state.tracker.targetDuration,
                            target: state.tracker.joinHoldBack)
            state.joinedAt = state.tracker.cursor
        }
    }

    /// When and how to reload next: the tracker's choice, plain when blocking reloads were
    /// given up or could be held past ``maximumBlockingWait``, and never at once after a
    /// playlist that brought nothing new.
    private func nextReload(_ state: Run, changed: Bool) -> LivePlaylistTracker.Reload {
        var reload = state.tracker.nextReload()
        let target = state.tracker.targetDuration
        if reload.blockingSequence != nil, state.blockingGivenUp || target * 3 > maximumBlockingWait {
            // The server may hold a blocking reload for three target durations, longer than
            // a response may take here: reload plainly, after a target duration.
            reload = LivePlaylistTracker.Reload(at: now() + (changed ? target : target / 2), skip: reload.skip)
        }
        // A plain reload waits; a blocking one goes at once but must not spin on a server
        // that answers at once with nothing new: then it waits half a target duration.
        if reload.blockingSequence != nil, !changed {
            reload.at = max(reload.at, now() + target / 2)
        }
        return reload
    }

    /// Seconds of media played: the player's report, else (none yet, or sound alone) the
    /// virtual playhead's.
    func played(_ virtual: VirtualPlayhead) -> Double {
        playhead?() ?? virtual.position(at: now())
    }

    /// Seconds delivered ahead of the playhead.
    func buffered(_ virtual: VirtualPlayhead) -> Double {
        max(0, virtual.delivered - played(virtual))
    }

    /// With a reported playhead, waits while the forward buffer is full.
    func waitForRoom(_ state: Run) async throws {
        guard playhead != nil else { return }
        while !Task.isCancelled {
            let ahead = state.playhead.delivered - played(state.playhead)
            if ahead < maximumBuffer { return }
            try await sleep(min(1, max(0.05, ahead - maximumBuffer)))
        }
    }

    /// ``waitForRoom(_:)``, with the output marked idle meanwhile: the reader waits for the
    /// player to play on, which a reader blocked on the output does not hold up.
    func waitForRoomIdle(_ state: Run) async throws {
        state.output.setIdle(true)
        defer { state.output.setIdle(false) }
        try await waitForRoom(state)
    }

    /// Loads a playlist into `tracker`; whether it listed something new. `stored`: the first
    /// read of a variant, tried through the cache (kept if it has an end, else read again from
    /// the origin); later reloads go to the origin.
    func load(_ url: URL, into tracker: inout LivePlaylistTracker, stored: Bool) async throws -> Bool {
        try Self.checkScheme(url)
        func parse(_ loader: any ResourceLoader) async throws -> HLSMediaPlaylist {
            let document = try await Self.read(url, range: .all, limit: maximumPlaylistBytes, what: "the playlist", loader: loader)
            do { return try HLSMediaPlaylist.parse(document) } catch {
                throw Failure.notAMediaPlaylist(error.description)
            }
        }
        var parsed = try await parse(stored ? loader : loader.unstoredLoader)
        if stored, !parsed.isFinal, loader is any StoringResourceLoader {
            parsed = try await parse(loader.unstoredLoader)
        }
        let changed = try tracker.received(parsed, at: now())
        observer?(.playlist(url: url, changed: changed, at: now()))
        return changed
    }

    /// Which of consecutive segments of `durations` holds `seconds` from the first one's start
    /// (the last for a time past the end), and where it starts.
    static func segment(holding seconds: Double, durations: some Sequence<Double>) -> (index: Int, start: Double)? {
        var start = 0.0
        var last: (index: Int, start: Double)?
        for (index, duration) in durations.enumerated() {
            if seconds < start + duration { return (index, start) }
            last = (index, start)
            start += duration
        }
        return last
    }

    /// Reads `range` of `url` whole, refusing more than `limit` bytes.
    static func read(_ url: URL, range: ByteRange, limit: Int, what: String,
                             loader: any ResourceLoader) async throws -> Data {
        let stream = loader.read(url, range: range)
        defer { stream.cancel() }
        _ = try await stream.contentInformation()
        let data = try await stream.collect(limit: limit)
        if data.count > limit { throw Failure.tooLarge(what: what, url: url, limit: limit) }
        return data
    }

    /// `uri` against variant `rank`'s playlist, behind the closed door: a stream read over
    /// HTTP opens only HTTP(S) URLs (a playlist naming `file:`, `data:` or any other scheme is
    /// refused), as ReelMedia's `NestedAccessPolicy` does for FFmpeg's HLS demuxer.
    func resolve(_ uri: String, rank: Int) throws -> URL {
        try resolve(uri, against: variants[rank].playlist)
    }

    func resolve(_ uri: String, against playlist: URL) throws -> URL {
        guard let url = URL(string: uri, relativeTo: playlist)?.absoluteURL else { throw Failure.refusedURL(uri) }
        try Self.checkScheme(url)
        return url
    }

    static func checkScheme(_ url: URL) throws {
        guard ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { throw Failure.refusedURL(url.absoluteString) }
    }
}
