import Foundation
import ReelCore
@_exported import ReelCaptions
import Synchronization

/// Reel's player, shaped like `AVPlayer`: an item, a rate, seeks with tolerances, periodic
/// time observers — over FFmpeg, reading only through a `ResourceLoader`, timed only by an
/// injected `EngineClock`.
///
/// With a `ManualClock` and a `FakeResourceLoader`, tests drive it deterministically: await
/// ``settled()``, then run the clock's next action (ReelTestSupport's `PlaybackDriver` does it).
///
/// Thread-safe: call it from anywhere. Commands are serialised (``replaceCurrentItem(with:)``
/// is atomic); events and observers run one at a time, in order, never under a lock, on the
/// thread that caused them (the engine's clock context, or the caller of a command).
public final class Player: Sendable {
    /// The clock playback is timed by: `HostClock.shared` for real time, a `ManualClock` for
    /// simulated time. Every sink call and event happens in its scheduled actions.
    public let clock: any EngineClock
    /// Where frames go; `nil` decodes no video at all (audio only).
    public let videoSink: (any VideoSink)?
    /// Where samples go; `nil` decodes no audio, and the video runs on the clock alone.
    public let audioSink: (any AudioSink)?
    /// Where the cues on screen go (a window's overlay, a terminal's caption row).
    public let captionSink: (any CaptionSink)?
    /// The pipeline's buffer sizes and thread counts, fixed for the player's life and used by
    /// every item it plays.
    public let configuration: PipelineConfiguration
    /// The clock first-frame phases are measured on (the player's clock unless given).
    public let measurementClock: (any EngineClock)?

    /// Serialises commands that swap the engine: held through an item replacement (which
    /// waits for the old pipeline to stop); never taken by the engine's callbacks.
    private let commandLock = Mutex(0)
    /// The player's state: short critical sections only (see ``PlayerState``).
    let state = Mutex(PlayerState())
    /// Scrubbing mode's machine and record (Player+Scrubbing.swift).
    let scrubbing = Mutex(ScrubbingState())

    /// A player timed by `clock`. `measurementClock` times the first-frame phases when they
    /// should be wall time although playback is simulated (`--clock fast`).
    public init(clock: any EngineClock = HostClock.shared, videoSink: (any VideoSink)? = nil,
                audioSink: (any AudioSink)? = nil, captionSink: (any CaptionSink)? = nil,
                configuration: PipelineConfiguration = PipelineConfiguration(),
                measurementClock: (any EngineClock)? = nil) {
        self.clock = clock
        self.measurementClock = measurementClock
        self.videoSink = videoSink
        self.audioSink = audioSink
        self.captionSink = captionSink
        self.configuration = configuration
        let levelling = Self.defaultLoudnessLevelling
        state.withTrackedLock { $0.levelling = levelling }
    }

    private static let defaultLevelling = Mutex<LoudnessLevelling?>(nil)

    /// The loudness levelling every player made from now on starts with (the command line's
    /// `--loudness`); `nil`, the default, levels nothing.
    public static var defaultLoudnessLevelling: LoudnessLevelling? {
        get { defaultLevelling.withTrackedLock { $0 } }
        set { defaultLevelling.withTrackedLock { $0 = newValue } }
    }

    deinit {
        state.withTrackedLock { $0.engine }?.close()
    }

    /// Told when this player needs the network (opening, seeking, running low), so preloads
    /// yield to playback. Usually a `PlaybackLoadCoordinator`. Applies from the next item.
    public var demandObserver: (any PlaybackDemandObserver)? {
        get { state.withTrackedLock { $0.demandObserver.value } }
        set { state.withTrackedLock { $0.demandObserver = WeakDemandObserver(value: newValue) } }
    }

    /// The rate `play()` uses.
    public var defaultRate: Double {
        get { state.withTrackedLock { $0.defaultRate } }
        set { state.withTrackedLock { $0.defaultRate = max(0.1, newValue) } }
    }

    // MARK: Item

    /// The item set by the last ``replaceCurrentItem(with:)``, or `nil`. Stays set after the
    /// item ends or fails.
    public var currentItem: PlayerItem? { state.withTrackedLock { $0.item } }

    /// Whether this player holds an open video decoder now (its item is open and has video).
    /// `replaceCurrentItem(with: nil)` closes it before returning.
    public var hasOpenVideoDecoder: Bool {
        state.withTrackedLock { $0.engine }?.isVideoDecoderOpen ?? false
    }

    /// Replaces the item, atomically with respect to every other command. `nil` stops playback
    /// and frees every decoder and buffer before returning. A new item starts opening at once
    /// and shows its first frame as soon as it is decoded, playing or not.
    public func replaceCurrentItem(with newItem: PlayerItem?) {
        commandLock.withTrackedLock { _ in
            let old = state.withTrackedLock { state -> PlaybackEngine? in
                defer { state.engine = nil }
                return state.engine
            }
            old?.close()
            if old != nil { captionSink?.show(CaptionFrame(time: .zero, events: [])) }
            let (engine, outcome) = state.withTrackedLock { state -> (PlaybackEngine?, Outcome) in
                state.item = newItem
                state.info = nil
                state.firstFrame = nil
                state.loudness = nil
                state.lastTime = newItem?.startTime ?? .zero
                var actions = state.machine.handle(.itemReplaced(hasItem: newItem != nil))
                var engine: PlaybackEngine?
                if let newItem {
                    engine = PlaybackEngine(
                        url: newItem.url, loader: newItem.loader, clock: clock, configuration: configuration,
                        videoSink: videoSink, audioSink: audioSink, captionSink: captionSink,
                        captionSources: newItem.captions, captionSelection: state.captionSelection,
                        startTime: newItem.startTime,
                        phaseClock: measurementClock, delegate: self, demandObserver: state.demandObserver.value,
                        volume: state.muted ? 0 : state.volume,
                        rate: state.machine.rate > 0 ? state.machine.rate : state.defaultRate,
                        levelling: state.levelling, itemLoudness: newItem.loudness,
                        looping: state.machine.actionAtItemEnd == .loop)
                    state.engine = engine
                    // Re-apply the requested rate so time runs once the item is ready.
                    actions += state.machine.handle(.rateRequested(state.machine.rate))
                }
                return (engine, perform(actions, &state))
            }
            engine?.start()
            carryOut(outcome)
        }
    }

    // MARK: Rate

    /// Plays at ``defaultRate``.
    public func play() { setRate(defaultRate) }
    /// Pauses (rate 0).
    public func pause() { setRate(0) }

    /// The requested rate: 0 is paused, 0.5…4 play (2 for hold-to-speed-up). A change takes
    /// effect at the engine's next step: the video follows the new pace at once, and the audio
    /// keeps its pitch (atempo) and is heard at the new pace from the device's next buffer.
    public var rate: Double {
        get { state.withTrackedLock { $0.machine.rate } }
        set { setRate(newValue) }
    }

    private func setRate(_ newRate: Double) {
        commandLock.withTrackedLock { _ in
            let clamped = newRate <= 0 ? 0 : min(max(newRate, 0.25), 4)
            var outcome = state.withTrackedLock { state in perform(state.machine.handle(.rateRequested(clamped)), &state) }
            outcome.deliveries += state.withTrackedLock { timeObserverCalls(&$0, force: true) }
            carryOut(outcome)
        }
    }

    /// Whether the current item can play: `.unknown` while it opens (and with no item),
    /// `.readyToPlay` once its streams are open, `.failed` with a reason when it cannot play.
    /// Changes are also sent as ``PlayerEvent/statusChanged(_:)``.
    public var status: PlayerStateMachine.Status { state.withTrackedLock { $0.machine.status } }
    /// Whether time is running: `.paused` (rate 0, or the item ended), `.waitingToPlay` with the
    /// reason (the item is opening, buffers ran dry, there is no item) although a rate is set,
    /// or `.playing`. Changes are also sent as ``PlayerEvent/timeControlStatusChanged(_:)``.
    public var timeControlStatus: PlayerStateMachine.TimeControlStatus { state.withTrackedLock { $0.machine.timeControlStatus } }

    /// What happens at the item's end: `.pause` on the last frame (the default, as `AVPlayer`)
    /// or `.loop` back to the start without a gap (what feeds do). Applies to the current item
    /// at once and is kept for the next ones.
    public var actionAtItemEnd: PlayerStateMachine.ActionAtItemEnd {
        get { state.withTrackedLock { $0.machine.actionAtItemEnd } }
        set {
            let engine = state.withTrackedLock { state -> PlaybackEngine? in
                state.machine.actionAtItemEnd = newValue
                return state.engine
            }
            engine?.setLooping(newValue == .loop)
        }
    }

    // MARK: Time

    /// The current media time.
    public var currentTime: MediaTime {
        let (engine, last) = state.withTrackedLock { ($0.engine, $0.lastTime) }
        return engine?.currentTimeNow() ?? last
    }

    /// The item's duration, or `.indefinite` until known.
    public var duration: MediaTime {
        state.withTrackedLock { $0.engine }?.durationNow() ?? .indefinite
    }

    /// What is buffered ahead, as media time ranges.
    public var loadedTimeRanges: [TimeRange] {
        state.withTrackedLock { $0.engine }?.loadedTimeRanges() ?? []
    }

    /// The item's streams, once opened.
    public var mediaInfo: MediaInfo? { state.withTrackedLock { $0.info } }

    /// Whether the item is a live stream (no end, no duration: a LIVE badge, not a time).
    public var isLive: Bool { state.withTrackedLock { $0.info?.isLive ?? false } }

    /// A live item's window, on its own clock: what it can seek within (`nil` for an item
    /// with an end, and for a live one until its first frame placed the window).
    public var seekableRange: TimeRange? {
        guard isLive else { return nil }
        return state.withTrackedLock { $0.engine }?.liveWindowNow()
    }

    /// Width and height as displayed (after rotation), once known.
    public var presentationSize: (width: Int, height: Int)? {
        state.withTrackedLock { state in
            guard let video = state.info?.videoStream, let w = video.width, let h = video.height else { return nil }
            return (video.rotation ?? 0) % 180 == 0 ? (w, h) : (h, w)
        }
    }

    // MARK: Seeking

    /// Seeks to `time`. Zero tolerances give the exact frame whose display interval contains
    /// `time` (decoded from the keyframe before it); infinite tolerances give the nearest
    /// keyframe, fast. A newer seek finishes this one with `false`.
    @discardableResult
    public func seek(to time: MediaTime, toleranceBefore: MediaTime = .positiveInfinity,
                     toleranceAfter: MediaTime = .positiveInfinity) async -> Bool {
        await withCheckedContinuation { continuation in
            seek(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter) { finished in
                continuation.resume(returning: finished)
            }
        }
    }

    /// The completion-handler form of ``seek(to:toleranceBefore:toleranceAfter:)``.
    public func seek(to time: MediaTime, toleranceBefore: MediaTime = .positiveInfinity,
                     toleranceAfter: MediaTime = .positiveInfinity, completionHandler: @escaping @Sendable (Bool) -> Void) {
        seek(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter, decodeOn: false,
             completionHandler: completionHandler)
    }

    /// A seek; with `decodeOn` (scrubbing), a target forward of the frame on screen in the
    /// decoder's GOP is reached by decoding on, with no flush.
    func seek(to time: MediaTime, toleranceBefore: MediaTime, toleranceAfter: MediaTime, decodeOn: Bool,
              completionHandler: @escaping @Sendable (Bool) -> Void) {
        commandLock.withTrackedLock { _ in
            let outcome = state.withTrackedLock { state -> Outcome? in
                guard let engine = state.engine, time.isNumeric else { return nil }
                // A live item seeks within its window only, once the window is known.
                let window = state.info?.isLive == true ? engine.liveWindowNow() : nil
                if state.info?.isLive == true, window == nil { return nil }
                state.nextID += 1
                let id = state.nextID
                state.seekWaiters[id] = (time, completionHandler)
                let outcome = perform(state.machine.handle(.seekRequested(id: id)), &state)
                let duration = engine.durationNow()
                let clamped = if let window { min(max(time, window.start), window.end) }
                    else { max(.zero, duration.isNumeric ? min(time, duration) : time) }
                engine.seek(id: id, to: clamped, before: toleranceBefore, after: toleranceAfter, decodeOn: decodeOn)
                return outcome
            }
            guard let outcome else {
                completionHandler(false)
                return
            }
            carryOut(outcome)
        }
    }

    // MARK: Captions

    /// Which captions show: off, or on with a chosen track or preferred languages. Kept for the
    /// next items; a change shows at once, paused or not, and never touches the video.
    public var captionSelection: CaptionSelection {
        get { state.withTrackedLock { $0.captionSelection } }
        set {
            let engine = state.withTrackedLock { state -> PlaybackEngine? in
                state.captionSelection = newValue
                return state.engine
            }
            engine?.selectCaptions(newValue)
        }
    }

    /// The current item's caption tracks: its own subtitle streams, then its sideloaded files
    /// as they are read.
    public var captionTracks: [CaptionTrack] {
        state.withTrackedLock { $0.engine }?.captionTracksNow ?? []
    }

    /// The cues on screen now (as last handed to the caption sink): for a renderer that draws
    /// captions with each frame rather than through a sink.
    public var shownCaptions: [CaptionEvent] {
        state.withTrackedLock { $0.engine }?.shownCaptionsNow ?? []
    }

    /// Every cue of `track` read so far, by start (a transcript; in-band cues arrive as the
    /// item is read).
    public func captionEvents(of track: CaptionTrackID) -> [CaptionEvent] {
        state.withTrackedLock { $0.engine }?.captionEventsNow(of: track) ?? []
    }

    // MARK: Audio

    /// The audio's gain, linear, from 0 (silent) to 1 (as decoded, after levelling; the
    /// default); a value outside is clamped. Heard from the next block the renderer makes, and
    /// kept for the next items.
    public var volume: Float {
        get { state.withTrackedLock { $0.volume } }
        set { applyVolume { $0.volume = max(0, min(1, newValue)) } }
    }

    /// Loudness levelling (EBU R128) for the items set from now on; `nil` (the default) plays
    /// every item at its own loudness.
    public var loudnessLevelling: LoudnessLevelling? {
        get { state.withTrackedLock { $0.levelling } }
        set { state.withTrackedLock { $0.levelling = newValue } }
    }

    /// What levelling decided for the current item (its loudness, the source, the gain).
    public var loudness: LoudnessReport? { state.withTrackedLock { $0.loudness } }

    /// Whether the audio is silenced; ``volume`` is kept, and applies again when unmuted. Time
    /// still runs on the audio clock while muted.
    public var isMuted: Bool {
        get { state.withTrackedLock { $0.muted } }
        set { applyVolume { $0.muted = newValue } }
    }

    private func applyVolume(_ change: (inout PlayerState) -> Void) {
        let (engine, gain) = state.withTrackedLock { state -> (PlaybackEngine?, Float) in
            change(&state)
            return (state.engine, state.muted ? 0 : state.volume)
        }
        engine?.setVolume(gain)
    }

    // MARK: Observing

    /// Calls `block` every `interval` of media time while playing, and whenever time jumps
    /// (seeks) or playback starts or stops. On `queue`, or in line with the player's events
    /// when `queue` is `nil`.
    @discardableResult
    public func addPeriodicTimeObserver(forInterval interval: MediaTime, queue: DispatchQueue? = nil,
                                        using block: @escaping @Sendable (MediaTime) -> Void) -> ObserverToken {
        state.withTrackedLock { state in
            state.nextID += 1
            state.timeObservers[state.nextID] = PlayerState.TimeObserver(interval: interval, queue: queue, block: block)
            return ObserverToken(id: state.nextID)
        }
    }

    /// Stops the periodic observer `token` names: no call is queued for it after this returns
    /// (calls queued before may still arrive). A token removed already is ignored.
    public func removeTimeObserver(_ token: ObserverToken) {
        state.withTrackedLock { _ = $0.timeObservers.removeValue(forKey: token.id) }
    }

    /// Calls `handler` for every ``PlayerEvent``, in order, one at a time (keep it short).
    @discardableResult
    public func addEventObserver(_ handler: @escaping @Sendable (PlayerEvent) -> Void) -> ObserverToken {
        state.withTrackedLock { state in
            state.nextID += 1
            state.eventObservers[state.nextID] = handler
            return ObserverToken(id: state.nextID)
        }
    }

    /// Stops the event observer `token` names: no event is queued for it after this returns
    /// (events queued before may still arrive). A token removed already is ignored.
    public func removeEventObserver(_ token: ObserverToken) {
        state.withTrackedLock { _ = $0.eventObservers.removeValue(forKey: token.id) }
    }

    /// The current item's counters, read now (zeros with no item; a new item starts from zero).
    public var statistics: PlayerStatistics {
        let (engine, first) = state.withTrackedLock { ($0.engine, $0.firstFrame) }
        let (presented, dropped, decoded) = engine?.statistics ?? (0, 0, 0)
        let (bytes, requests) = engine?.bytesAndRequests ?? (0, 0)
        var result = PlayerStatistics(presentedFrames: presented, droppedFrames: dropped, bytesRead: bytes,
                                      requests: requests, firstFrame: first)
        result.decodedVideoFrames = decoded
        if let sync = engine?.syncStatistics {
            result.avOffsetP95Ms = sync.p95
            result.avOffsetMaxMs = sync.max
            result.audioUnderruns = sync.underruns
            result.rateChangeLatenciesMs = sync.rateChanges.map { $0.seconds * 1000 }
        }
        return result
    }

    // MARK: Settling (manual clocks)

    /// Blocks until the pipeline has done everything it can without time moving (with a
    /// `ManualClock`): then the clock's next action gives the same result every run. For
    /// threads of the caller's own (`--clock fast`); async code awaits ``settled()``.
    public func waitUntilSettled() {
        state.withTrackedLock { $0.engine }?.monitor.waitUntilSettled()
    }

    /// Suspends until the pipeline has done everything it can without time moving. The wait
    /// runs on a queue of the pipeline's, never on the concurrency pool.
    public func settled() async {
        guard let engine = state.withTrackedLock({ $0.engine }) else { return }
        _ = await engine.monitor.settled()
    }

    /// The current engine (for tests that check it is released).
    var engineForTesting: PlaybackEngine? { state.withTrackedLock { $0.engine } }
}
