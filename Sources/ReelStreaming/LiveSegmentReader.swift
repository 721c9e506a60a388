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
    private struct Run {
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
    }

    /// Where reading a separate audio rendition is (see ``audio``).
    private struct AudioRun {
        var playlist: URL
        /// A stream with an end: every audio segment and where it starts.
        var segments: [(resource: HLSMediaPlaylist.Part, start: Double)]
        var initSection: HLSMediaPlaylist.Part
        var initBytes: Data?
        /// The join of the current section's video init section with the audio's.
        var merge: FragmentedMP4Merge?
        /// The next audio segment to send (a stream with an end).
        var next = 0
        /// Where each video segment starts on the stream's timeline, by sequence number (a
        /// stream with an end).
        var videoStarts: [Int64: Double]
        /// A live stream: the audio segments its playlist lists now, by sequence number (the
        /// video's segment N goes with the audio's N, as a packager's renditions line up).
        var listed: [Int64: HLSMediaPlaylist.Part]?
        var targetDuration: Double = 1
    }

    /// An audio segment read, to be sent.
    private struct FetchedAudio: Sendable {
        var url: URL
        var range: ByteRange?
        var bytes: Data
    }

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
            let changed: Bool
            do {
                guard let loaded = try await load(reload, state: &state, stored: !positioned) else {
                    // A blocking reload held past what a server may hold one: plain reloads
                    // from now on, the first at once.
                    if waits { state.output.setIdle(false) }
                    state.blockingGivenUp = true
                    reload = LivePlaylistTracker.Reload(at: now())
                    continue
                }
                changed = loaded
            } catch let failure as LivePlaylistTracker.Failure where positioned {
                // The window slid past what was still to fetch (a player paused behind the
                // edge): on from the oldest segment listed, as hls.js goes on from the window.
                guard case .fellBehind(let wanted, let oldest) = failure, state.tracker.move(to: oldest) else { throw failure }
                state.skippedAhead = true
                observer?(.skippedAhead(from: wanted, to: oldest))
                changed = true
            }
            if waits { state.output.setIdle(false) }
            if !positioned, let audio {
                state.audio = try await loadAudio(audio, video: state.tracker)
            }
            if !positioned, state.tracker.isFinal {
                let segments = state.tracker.segments
                if let startTime, let held = Self.segment(holding: startTime, durations: segments.map(\.duration)) {
                    state.tracker.move(to: segments[held.index].sequence)
                }
                sections.setTimeline(state.tracker.segments, start: state.tracker.cursor?.sequence)
            }
            if !positioned, !state.tracker.isFinal, let sequence = liveStart?.sequence ?? nil,
               !state.tracker.move(to: sequence), let oldest = state.tracker.segments.first {
                state.tracker.move(to: oldest.sequence)
            }
            if !state.tracker.isFinal {
                sections.listed(state.tracker.segments, targetDuration: state.tracker.targetDuration,
                                holdBack: state.tracker.joinHoldBack)
            }
            positioned = true
            var reloadsFirst = false
            while case let fetch = state.tracker.next(), fetch != .waitForReload {
                if case .ended = fetch {
                    // The audio that outlasts the video.
                    if let audio = state.audio { try await sendAudio(try fetchAudio(before: .infinity, audio), state: &state) }
                    return
                }
                if case .segment = fetch {
                    let waited = now()
                    try await waitForRoomIdle(state)
                    // A live playlist not seen for three target durations (a player paused
                    // behind the edge): read it again before fetching from what it listed then.
                    if !state.tracker.isFinal, now() - waited >= 3 * state.tracker.targetDuration {
                        reloadsFirst = true
                        break
                    }
                }
                if case .segment(let segment, _) = fetch, variants.count > 1,
                   try await switchIfWanted(before: segment.sequence, state: &state, sections: sections) {
                    continue
                }
                let resource: HLSMediaPlaylist.Part
                // The init section this fetch needs (each section starts with its own).
                let needed: HLSMediaPlaylist.Part?
                let duration: Double
                var discontinuity = false
                switch fetch {
                case .segment(let segment, _):
                    (resource, needed, duration) = (segment.resource, segment.initSection, segment.duration)
                    discontinuity = segment.discontinuity || state.skippedAhead
                case .part(let sequence, _, let part, _):
                    let segment = state.tracker.segments.first { $0.sequence == sequence } ?? state.tracker.segments.last
                    (resource, needed, duration) = (part.resource, segment?.initSection, part.duration)
                case .waitForReload, .ended: return
                }
                // A seam: a switch, an init section that changes, or timestamps that start
                // again. The demuxer reopens on the next section.
                let initChanges = needed != nil && state.initSent != nil && needed != state.initSent
                // A segment may be abandoned only within a section already under way (its init
                // sent before): a section is never left holding an init section alone.
                let abandonable = state.sectionStarted && !state.seamPending && !discontinuity && !initChanges
                if state.sectionStarted, state.seamPending || discontinuity || initChanges {
                    let next = sections.announce(restartsTimeline: discontinuity)
                    state.output.finish()
                    state.output = next.continuation
                    state.section = next.index
                    state.initSent = nil
                    state.sectionStarted = false
                }
                state.seamPending = false
                state.skippedAhead = false
                let started = now()
                let url = try resolve(resource.uri, rank: state.rank)
                let range = resource.range ?? .all
                // The audio segments this video segment needs arrive beside it and go before it.
                var audioFetch: Task<[FetchedAudio], any Error>?
                if case .segment(let segment, _) = fetch, let audio = state.audio {
                    if audio.listed != nil {
                        audioFetch = try await fetchLiveAudio(segment.sequence, state: &state)
                    } else if let start = audio.videoStarts[segment.sequence] {
                        audioFetch = try fetchAudio(before: start + duration, audio)
                    }
                }
                defer { audioFetch?.cancel() }
                // A section's first segment arrives beside its init section (as FFmpeg's HLS
                // demuxer has the head start read them); it is never one that may be abandoned.
                let initToSend = needed.flatMap { $0 != state.initSent ? $0 : nil }
                let prefetched: Task<Data, any Error>? = initToSend == nil ? nil : Task { [self] in
                    try await Self.read(url, range: range, limit: maximumSegmentBytes, what: "the segment", loader: loader)
                }
                defer { prefetched?.cancel() }
                if let needed = initToSend {
                    // The audio's init section (read once) arrives beside the video's.
                    let audioInit = state.audio.flatMap { $0.initBytes == nil ? readAudioInit($0) : nil }
                    defer { audioInit?.cancel() }
                    let initURL = try resolve(needed.uri, rank: state.rank)
                    var initBytes = try await arrival(of: initURL, what: "the init section", live: !state.tracker.isFinal,
                                                      targetDuration: state.tracker.targetDuration) { [self] in
                        try await Self.read(initURL, range: needed.range ?? .all, limit: maximumSegmentBytes,
                                            what: "the init section", loader: loader)
                    }
                    if state.audio != nil { initBytes = try await joinAudio(to: initBytes, fetched: audioInit, state: &state) }
                    try await state.output.send(initBytes)
                    state.initSent = needed
                    state.sectionStarted = true
                } else if needed == nil, state.audio != nil {
                    throw Failure.unsupportedAudio("the video segments are not fragmented MP4 (no EXT-X-MAP)")
                }
                var watched: Data?
                if case .segment(let segment, _) = fetch, abandonable, let watch = abandonWatch(state, duration: duration) {
                    do {
                        watched = try await arrival(of: url, what: "the segment", live: !state.tracker.isFinal, targetDuration: state.tracker.targetDuration) {
                            try await readWatched(url, range: range, watch: watch)
                        }
                    } catch let abandoned as Abandoned {
                        // Too slow to arrive before the buffer runs dry: the same segment from
                        // the highest lower variant that can.
                        state.lastThroughput = abandoned.throughput
                        state.throughputs = Array((state.throughputs + [abandoned.throughput]).suffix(3))
                        let why = String(format: "down: abandoned %@ after %.1f s at %lld b/s, %.1f s from running dry",
                                         url.lastPathComponent, abandoned.elapsed, abandoned.throughput, abandoned.bufferLeft)
                        if try await switchTo(abandoned.target, before: segment.sequence, why: why, estimate: abandoned.throughput,
                                              buffered: abandoned.bufferLeft, state: &state, sections: sections) {
                            state.noStepUpBefore = segment.sequence + 3
                            // The audio goes on in the section the abandoned segment was for.
                            try await sendAudio(audioFetch, state: &state)
                            continue
                        }
                    }
                }
                // Not watched, or abandoned with nowhere to go: read plainly (live: while it may
                // still arrive in time).
                let bytes = if let watched { watched } else {
                    try await arrival(of: url, what: "the segment", live: !state.tracker.isFinal, targetDuration: state.tracker.targetDuration) { [self] in
                        if let prefetched { try await prefetched.value } else {
                            try await Self.read(url, range: range, limit: maximumSegmentBytes, what: "the segment", loader: loader)
                        }
                    }
                }
                let took = now() - started
                try await sendAudio(audioFetch, state: &state)
                if took > 0.001 {
                    let throughput = Int64(Double(bytes.count * 8) / took)
                    state.lastThroughput = throughput
                    // Small transfers measure the round trip more than the link.
                    if bytes.count >= 16 << 10 { state.throughputs = Array((state.throughputs + [throughput]).suffix(3)) }
                }
                switch fetch {
                case .segment(let segment, _): sections.started(at: segment.sequence, offset: 0)
                case .part(let sequence, let index, _, _):
                    sections.started(at: sequence, offset: state.tracker.offset(ofPart: index, in: sequence))
                case .waitForReload, .ended: break
                }
                state.tracker.fetched(fetch)
                if case .segment = fetch { state.segmentsFetched += 1 }
                observer?(.fetched(url: url, range: resource.range, bytes: bytes.count, behindEdge: state.tracker.behindEdge))
                try await state.output.send(bytes)
                state.sectionStarted = true
                state.playhead.deliver(duration, at: now())
            }
            if reloadsFirst {
                reload = LivePlaylistTracker.Reload(at: now())
                continue
            }
            try state.tracker.checkStale(at: now())
            reload = state.tracker.nextReload()
            if reload.blockingSequence != nil, state.blockingGivenUp || state.tracker.targetDuration * 3 > maximumBlockingWait {
                // The server may hold a blocking reload for three target durations, longer than
                // a response may take here: reload plainly, after a target duration.
                reload = LivePlaylistTracker.Reload(at: now() + (changed ? state.tracker.targetDuration : state.tracker.targetDuration / 2),
                                                    skip: reload.skip)
            }
            // A plain reload waits; a blocking one goes at once but must not spin on a server
            // that answers at once with nothing new: then it waits half a target duration.
            if reload.blockingSequence != nil, !changed {
                reload.at = max(reload.at, now() + state.tracker.targetDuration / 2)
            }
        }
    }

    /// Seconds of media played: the player's report, else (none yet, or sound alone) the
    /// virtual playhead's.
    private func played(_ virtual: VirtualPlayhead) -> Double {
        playhead?() ?? virtual.position(at: now())
    }

    /// Seconds delivered ahead of the playhead.
    private func buffered(_ virtual: VirtualPlayhead) -> Double {
        max(0, virtual.delivered - played(virtual))
    }

    /// With a reported playhead, waits while the forward buffer is full.
    private func waitForRoom(_ state: Run) async throws {
        guard playhead != nil else { return }
        while !Task.isCancelled {
            let ahead = state.playhead.delivered - played(state.playhead)
            if ahead < maximumBuffer { return }
            try await sleep(min(1, max(0.05, ahead - maximumBuffer)))
        }
    }

    /// ``waitForRoom(_:)``, with the output marked idle meanwhile: the reader waits for the
    /// player to play on, which a reader blocked on the output does not hold up.
    private func waitForRoomIdle(_ state: Run) async throws {
        state.output.setIdle(true)
        defer { state.output.setIdle(false) }
        try await waitForRoom(state)
    }

    /// Loads a playlist into `tracker`; whether it listed something new. `stored`: the first
    /// read of a variant, tried through the cache (kept if it has an end, else read again from
    /// the origin); later reloads go to the origin.
    private func load(_ url: URL, into tracker: inout LivePlaylistTracker, stored: Bool) async throws -> Bool {
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

    /// How long a blocking reload may go unanswered: a server holds one for at most three
    /// target durations (RFC 8216bis §6.2.5.2), and a second more is allowed for the way;
    /// never past ``maximumBlockingWait`` and its second (the loader's own response timeout is
    /// longer, and would retry).
    public func blockingDeadline(targetDuration: Double) -> Double {
        min(3 * targetDuration, maximumBlockingWait) + 1
    }

    /// How long a live segment or part may take to arrive: three target durations and a second,
    /// as a blocking reload. A segment that takes longer has let the player run dry for two
    /// target durations at least, and one that never ends (a body that trickles for ever, a
    /// response that stalls) would otherwise hold the stream for the loader's timeouts and
    /// retries, or for ever.
    public func liveArrivalDeadline(targetDuration: Double) -> Double {
        3 * targetDuration + 1
    }

    /// `read`'s bytes; a live one (`live`) fails as ``Failure/notArrived(what:url:seconds:)`` when
    /// ``watchdog`` has waited out ``liveArrivalDeadline(targetDuration:)`` first.
    private func arrival(of url: URL, what: String, live: Bool, targetDuration: Double,
                         _ read: @escaping @Sendable () async throws -> Data) async throws -> Data {
        guard live, targetDuration > 0 else { return try await read() }
        let deadline = liveArrivalDeadline(targetDuration: targetDuration)
        guard let bytes = try await firstOf(read, orNilAfter: deadline) else {
            throw Failure.notArrived(what: what, url: url, seconds: deadline)
        }
        return bytes
    }

    /// `body`'s result, or `nil` when ``watchdog`` waited out `seconds` first (`body` is then
    /// cancelled).
    private func firstOf<T: Sendable>(_ body: @escaping @Sendable () async throws -> T,
                                      orNilAfter seconds: Double) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask { [watchdog] in
                try await watchdog(seconds)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Loads the playlist as `reload` asks into the run's tracker; whether it listed something
    /// new, or `nil` for a blocking reload left unanswered past its deadline (given up: the
    /// tracker is as it was).
    private func load(_ reload: LivePlaylistTracker.Reload, state: inout Run, stored: Bool) async throws -> Bool? {
        let url = reload.url(for: variants[state.rank].playlist)
        guard reload.blockingSequence != nil else { return try await load(url, into: &state.tracker, stored: stored) }
        let tracker = state.tracker
        let answer = try await firstOf({ [self] in
            var tracker = tracker
            let changed = try await load(url, into: &tracker, stored: false)
            return (tracker, changed)
        }, orNilAfter: blockingDeadline(targetDuration: state.tracker.targetDuration))
        guard let answer else { return nil }
        state.tracker = answer.0
        return answer.1
    }

    /// Asks the switching rule before segment `sequence`; on a switch, loads the new variant's
    /// playlist and moves to it there. `true` when it switched (the caller asks again what to fetch).
    private func switchIfWanted(before sequence: Int64, state: inout Run, sections: StreamSections) async throws -> Bool {
        let target: Int
        var why: String
        var estimate: Int64?
        var source = "meter"
        let buffered = self.buffered(state.playhead)
        switch switching {
        case .fixed:
            return false
        case .plan(let plan):
            guard let planned = plan[state.segmentsFetched] else { return false }
            target = min(max(planned, 0), variants.count - 1)
            why = "planned before segment \(state.segmentsFetched)"
        case .adaptive(let rule, let meter):
            guard state.segmentsFetched > 0 else { return false }
            // The meter's estimate; before it has one (it waits for 2 s of transfers or
            // 512 KiB), the harmonic mean of the last segments' own throughputs, as hls.js does.
            estimate = meter.bandwidthEstimate.bitsPerSecond ?? Self.harmonicMean(state.throughputs)
            if meter.bandwidthEstimate.bitsPerSecond == nil, estimate != nil { source = "segments" }
            let decision = rule.decide(bandwidths: variants.map(\.bandwidth), current: state.rank, estimate: estimate,
                                       buffered: buffered, lastThroughput: state.lastThroughput)
            target = decision.rank
            why = decision.description
            // Not back up right after an abandonment (the segment again, or the next two).
            if target > state.rank, sequence < state.noStepUpBefore { return false }
        }
        guard target != state.rank else { return false }
        if source == "segments" { why += " (estimated from the last segments' throughput)" }
        return try await switchTo(target, before: sequence, why: why, estimate: estimate, buffered: buffered,
                                  state: &state, sections: sections)
    }

    /// Moves to variant `target` before segment `sequence` (its playlist loaded, its tracker
    /// there) and tells the observer; `false` when its sequence numbers do not line up.
    private func switchTo(_ target: Int, before sequence: Int64, why: String, estimate: Int64?, buffered: Double,
                          state: inout Run, sections: StreamSections) async throws -> Bool {
        var tracker = LivePlaylistTracker(staleAfter: self.tracker.staleAfter, prefersParts: self.tracker.prefersParts)
        _ = try await load(variants[target].playlist, into: &tracker, stored: true)
        // Playlists whose sequence numbers do not line up: stay (and ask again next segment).
        guard tracker.move(to: sequence) else { return false }
        // Beside a separate audio rendition, only a variant of fragmented MP4 can be joined.
        if state.audio != nil, tracker.segments.contains(where: { $0.initSection == nil }) { return false }
        let from = state.rank
        state.rank = target
        state.tracker = tracker
        state.seamPending = true
        sections.rank = target
        observer?(.switched(Switch(from: from, to: target, sequence: sequence, playlist: variants[target].playlist,
                                   bandwidth: variants[target].bandwidth, why: why, estimate: estimate,
                                   buffered: buffered, section: state.sectionStarted ? state.section + 1 : state.section,
                                   representation: variants[target].representation)))
        return true
    }

    /// What watching a segment in flight for abandonment needs.
    private struct AbandonWatch: Sendable {
        /// Seconds buffered ahead of the playhead now (it falls as the player plays).
        var bufferLeft: @Sendable () -> Double
        var started: Double
        /// The segment's expected bytes when its length is not told: BANDWIDTH × duration.
        var expectedBytes: Double
        /// Each lower variant's expected bytes for the segment, highest variant first.
        var lower: [(rank: Int, bytes: Double)]
    }

    /// A segment given up in flight: the variant to fetch it from instead, and what was seen.
    private struct Abandoned: Error {
        var target: Int
        var throughput: Int64
        var elapsed: Double
        var bufferLeft: Double
    }

    /// The watch for the next segment, when it may be abandoned: the adaptive rule, and a
    /// lower variant to go to.
    private func abandonWatch(_ state: Run, duration: Double) -> AbandonWatch? {
        guard abandonsSlowSegments, case .adaptive = switching, state.rank > 0, duration > 0 else { return nil }
        let virtual = state.playhead
        return AbandonWatch(
            bufferLeft: { [self] in buffered(virtual) },
            started: now(), expectedBytes: Double(variants[state.rank].bandwidth) * duration / 8,
            lower: (0..<state.rank).reversed().map { (rank: $0, bytes: Double(variants[$0].bandwidth) * duration / 8) })
    }

    /// Reads a segment while a watchdog checks, every 0.1 s from 0.5 s on, whether at the rate
    /// so far it would arrive before the buffer runs dry; when it would not and a lower
    /// variant's segment would, the read is cancelled and ``Abandoned`` thrown.
    private func readWatched(_ url: URL, range: ByteRange, watch: AbandonWatch) async throws -> Data {
        let stream = loader.read(url, range: range)
        defer { stream.cancel() }
        let progress = Mutex<(received: Int, length: Int64?, verdict: Abandoned?)>((0, range.length, nil))
        let (sleep, now) = (self.sleep, self.now)
        let watchdog = Task {
            while !Task.isCancelled {
                do { try await sleep(0.1) } catch { return }
                let elapsed = now() - watch.started
                let (received, length) = progress.withTrackedLock { ($0.received, $0.length) }
                guard elapsed >= 0.5, received > 0 else { continue }
                let rate = Double(received) / elapsed
                let total = length.map(Double.init) ?? watch.expectedBytes
                let left = watch.bufferLeft()
                guard max(0, total - Double(received)) / rate > left,
                      let target = watch.lower.first(where: { $0.bytes / rate < left }) else { continue }
                progress.withTrackedLock {
                    $0.verdict = Abandoned(target: target.rank, throughput: Int64(rate * 8), elapsed: elapsed, bufferLeft: left)
                }
                stream.cancel()
                return
            }
        }
        defer { watchdog.cancel() }
        do {
            let information = try await stream.contentInformation()
            if range == .all, let length = information.length { progress.withTrackedLock { $0.length = length } }
            var data = Data()
            for try await chunk in stream {
                data.append(chunk)
                if data.count > maximumSegmentBytes { throw Failure.tooLarge(what: "the segment", url: url, limit: maximumSegmentBytes) }
                progress.withTrackedLock { $0.received = data.count }
            }
            // A cancelled read may end quietly: what came is not the segment.
            if let abandoned = progress.withTrackedLock({ $0.verdict }) { throw abandoned }
            return data
        } catch {
            if let abandoned = progress.withTrackedLock({ $0.verdict }) { throw abandoned }
            throw error
        }
    }

    /// Reads the audio rendition's playlist beside the video's first (`video`, read already).
    private func loadAudio(_ playlist: URL, video: LivePlaylistTracker) async throws -> AudioRun {
        try Self.checkScheme(playlist)
        let parsed = try await readAudioPlaylist(playlist, stored: video.isFinal)
        guard parsed.isFinal == video.isFinal else {
            throw Failure.unsupportedAudio(video.isFinal ? "its playlist has no end" : "its playlist ended while the video is live")
        }
        guard let initSection = parsed.segments.first?.initSection,
              parsed.segments.allSatisfy({ $0.initSection == initSection && !$0.discontinuity }) else {
            throw Failure.unsupportedAudio("it is not fragmented MP4 with one init section")
        }
        if !video.isFinal {
            var run = AudioRun(playlist: playlist, segments: [], initSection: initSection, videoStarts: [:])
            run.listed = Self.bySequence(parsed)
            run.targetDuration = max(0.1, parsed.targetDuration ?? video.targetDuration)
            return run
        }
        let segments = Array(zip(parsed.segments.map(\.resource), Self.starts(parsed.segments.map(\.duration))))
        let videoStarts = Dictionary(zip(video.segments.map(\.sequence), Self.starts(video.segments.map(\.duration))),
                                     uniquingKeysWith: { $1 })
        var run = AudioRun(playlist: playlist, segments: segments, initSection: initSection, videoStarts: videoStarts)
        if let startTime, let held = Self.segment(holding: startTime, durations: parsed.segments.map(\.duration)) {
            run.next = held.index
        }
        return run
    }

    /// Where each of consecutive segments of `durations` starts, the first at 0.
    static func starts(_ durations: [Double]) -> [Double] {
        var start = 0.0
        return durations.map { duration in
            defer { start += duration }
            return start
        }
    }

    /// A playlist's segments by media sequence number.
    private static func bySequence(_ playlist: HLSMediaPlaylist) -> [Int64: HLSMediaPlaylist.Part] {
        Dictionary(playlist.segments.map { ($0.sequence, $0.resource) }, uniquingKeysWith: { $1 })
    }

    /// The audio rendition's playlist: through the cache when it has an end (it never
    /// changes), from the origin when it is live.
    private func readAudioPlaylist(_ playlist: URL, stored: Bool) async throws -> HLSMediaPlaylist {
        let document = try await Self.read(playlist, range: .all, limit: maximumPlaylistBytes, what: "the playlist",
                                            loader: stored ? loader : loader.unstoredLoader)
        do { return try HLSMediaPlaylist.parse(document) } catch { throw Failure.notAMediaPlaylist(error.description) }
    }

    /// A live stream's audio segment `sequence`, started reading (`nil` when the audio's window
    /// has moved past it: the video goes on without it). The audio playlist is read again
    /// while it does not list it yet, every half target duration for three target durations,
    /// then the stream fails as stale.
    private func fetchLiveAudio(_ sequence: Int64, state: inout Run) async throws -> Task<[FetchedAudio], any Error>? {
        guard var audio = state.audio, var listed = audio.listed else { return nil }
        let deadline = now() + 3 * audio.targetDuration
        while listed[sequence] == nil {
            if let newest = listed.keys.max(), newest > sequence { return nil }
            guard now() < deadline else {
                throw Failure.unsupportedAudio("its playlist has not listed segment \(sequence) for \(Int(3 * audio.targetDuration)) s")
            }
            state.output.setIdle(true)
            try await sleep(audio.targetDuration / 2)
            state.output.setIdle(false)
            listed = Self.bySequence(try await readAudioPlaylist(audio.playlist, stored: false))
            observer?(.playlist(url: audio.playlist, changed: listed[sequence] != nil, at: now()))
        }
        audio.listed = listed
        state.audio = audio
        let resource = listed[sequence]!
        let url = try resolve(resource.uri, against: audio.playlist)
        return Task { [self] in
            [FetchedAudio(url: url, range: resource.range,
                          bytes: try await Self.read(url, range: resource.range ?? .all, limit: maximumSegmentBytes, what: "the segment",
                                                     loader: loader))]
        }
    }

    /// Starts reading the audio rendition's init section.
    private func readAudioInit(_ audio: AudioRun) -> Task<Data, any Error> {
        Task { [self] in
            try await Self.read(try resolve(audio.initSection.uri, against: audio.playlist), range: audio.initSection.range ?? .all,
                                limit: maximumSegmentBytes, what: "the init section", loader: loader)
        }
    }

    /// A video init section joined with the audio rendition's (read once: `fetched`, the read
    /// started beside the video's, when it had not been read yet).
    private func joinAudio(to video: Data, fetched: Task<Data, any Error>?, state: inout Run) async throws -> Data {
        guard var audio = state.audio else { return video }
        let audioInit: Data
        if let bytes = audio.initBytes {
            audioInit = bytes
        } else if let fetched {
            audioInit = try await fetched.value
        } else {
            audioInit = try await readAudioInit(audio).value
        }
        audio.initBytes = audioInit
        let merge: FragmentedMP4Merge
        do { merge = try FragmentedMP4Merge(video: video, audio: audioInit) } catch let failure as FragmentedMP4Merge.Failure {
            throw Failure.unsupportedAudio(failure.description)
        }
        audio.merge = merge
        state.audio = audio
        return merge.initSection
    }

    /// Starts reading the audio segments not sent yet that start before `end` seconds, side by
    /// side (`nil`: none); ``sendAudio(_:state:)`` sends them in order.
    private func fetchAudio(before end: Double, _ audio: AudioRun) throws -> Task<[FetchedAudio], any Error>? {
        var wanted: [(url: URL, range: ByteRange?)] = []
        var index = audio.next
        while index < audio.segments.count, audio.segments[index].start < end - 0.001 {
            let resource = audio.segments[index].resource
            wanted.append((try resolve(resource.uri, against: audio.playlist), resource.range))
            index += 1
        }
        guard !wanted.isEmpty else { return nil }
        return Task { [self] in
            try await withThrowingTaskGroup(of: (Int, FetchedAudio).self) { group in
                for (index, (url, range)) in wanted.enumerated() {
                    group.addTask {
                        (index, FetchedAudio(url: url, range: range, bytes: try await Self.read(
                            url, range: range ?? .all, limit: maximumSegmentBytes, what: "the segment", loader: loader)))
                    }
                }
                var fetched: [FetchedAudio?] = Array(repeating: nil, count: wanted.count)
                for try await (index, audio) in group { fetched[index] = audio }
                return fetched.compactMap { $0 }
            }
        }
    }

    /// Sends what `fetch` read, each segment renumbered to the joined init section, in order.
    private func sendAudio(_ fetch: Task<[FetchedAudio], any Error>?, state: inout Run) async throws {
        guard let fetch, var audio = state.audio, let merge = audio.merge else { return }
        defer { state.audio = audio }
        for fetched in try await fetch.value {
            let joined: Data
            do { joined = try merge.audioSegment(fetched.bytes) } catch let failure as FragmentedMP4Merge.Failure {
                throw Failure.unsupportedAudio(failure.description)
            }
            observer?(.fetched(url: fetched.url, range: fetched.range, bytes: fetched.bytes.count, behindEdge: 0))
            try await state.output.send(joined)
            state.sectionStarted = true
            audio.next += 1
        }
    }

    /// The harmonic mean of at least two samples (a slow one weighs most), else `nil`.
    static func harmonicMean(_ samples: [Int64]) -> Int64? {
        let positive = samples.filter { $0 > 0 }
        guard positive.count >= 2 else { return nil }
        return Int64(Double(positive.count) / positive.reduce(0) { $0 + 1 / Double($1) })
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
    private static func read(_ url: URL, range: ByteRange, limit: Int, what: String,
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
    private func resolve(_ uri: String, rank: Int) throws -> URL {
        try resolve(uri, against: variants[rank].playlist)
    }

    private func resolve(_ uri: String, against playlist: URL) throws -> URL {
        guard let url = URL(string: uri, relativeTo: playlist)?.absoluteURL else { throw Failure.refusedURL(uri) }
        try Self.checkScheme(url)
        return url
    }

    static func checkScheme(_ url: URL) throws {
        guard ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { throw Failure.refusedURL(url.absoluteString) }
    }
}
