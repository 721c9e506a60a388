import Foundation
import ReelCore

/// What to play: a URL and the loader every byte of it comes through.
public struct PlayerItem: Sendable {
    public var url: URL
    public var loader: any ResourceLoader
    /// Where playback starts (an exact seek before the first frame), if not at the beginning.
    public var startTime: MediaTime?

    public init(url: URL, loader: any ResourceLoader, startTime: MediaTime? = nil) {
        self.url = url
        self.loader = loader
        self.startTime = startTime
    }
}

/// Something that happened in a ``Player``.
public enum PlayerEvent: Sendable {
    case statusChanged(PlayerStateMachine.Status)
    case timeControlStatusChanged(PlayerStateMachine.TimeControlStatus)
    case rateChanged(Double)
    /// The item's first frame is on screen; the phases of getting there.
    case firstFrame(FirstFrameReport)
    /// A seek ended: `finished` is `false` when a newer seek replaced it.
    case seekCompleted(target: MediaTime, landed: MediaTime?, finished: Bool)
    /// Playback stalled waiting for data (`true`), or recovered (`false`).
    case stall(Bool)
    /// The item reached its end (and looped, when ``Player/actionAtItemEnd`` is `.loop`).
    case ended(looping: Bool)
    /// The item failed.
    case failed(MediaError)
    /// A frame became current.
    case framePresented(pts: MediaTime, presentation: Presentation)
}

/// Counters for the HUD, the benchmark and tests.
public struct PlayerStatistics: Sendable, Hashable {
    public var presentedFrames: Int
    public var droppedFrames: Int
    public var bytesRead: Int64
    public var requests: Int
    public var firstFrame: FirstFrameReport?
}

/// A handle for removing an observer.
public final class ObserverToken: Hashable, Sendable {
    let id: Int
    init(id: Int) { self.id = id }
    public static func == (a: ObserverToken, b: ObserverToken) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Reel's player, shaped like `AVPlayer`: an item, a rate, seeks with tolerances,
/// periodic time observers — over FFmpeg, reading only through a ``ResourceLoader``,
/// timed only by an injected ``EngineClock``.
///
/// With a ``ManualClock`` and a `FakeResourceLoader`, tests drive it
/// deterministically: call ``waitUntilSettled()`` and then advance the clock.
///
/// Thread-safe: call it from anywhere. Observers run on the engine's clock
/// context unless a queue is given.
public final class Player: @unchecked Sendable {
    public let clock: any EngineClock
    public let videoSink: (any VideoSink)?
    public let audioSink: (any AudioSink)?
    public let configuration: PipelineConfiguration

    private let lock = NSRecursiveLock()
    private var machine = PlayerStateMachine(actionAtItemEnd: .pause)
    private var engine: PlaybackEngine?
    private var item: PlayerItem?
    private var info: MediaInfo?
    private var nextID = 0
    private var seekWaiters: [Int: (target: MediaTime, done: @Sendable (Bool) -> Void)] = [:]
    private var seekLanded: [Int: MediaTime] = [:]
    private var eventObservers: [Int: @Sendable (PlayerEvent) -> Void] = [:]
    private var timeObservers: [Int: TimeObserver] = [:]
    private var firstFrame: FirstFrameReport?
    private var pendingCompletions: [() -> Void] = []
    private var lastTime: MediaTime = .zero
    private var volumeValue: Float = 1
    private var muted = false
    /// Told when this player needs the network (opening, seeking, running low), so
    /// preloads yield to playback. Usually a `PlaybackLoadCoordinator`.
    public var demandObserver: (any PlaybackDemandObserver)? {
        get { lock.withLock { demandObserverValue } }
        set { lock.withLock { demandObserverValue = newValue } }
    }
    private weak var demandObserverValue: (any PlaybackDemandObserver)?

    /// The rate `play()` uses.
    public var defaultRate: Double {
        get { lock.withLock { defaultRateValue } }
        set { lock.withLock { defaultRateValue = max(0.1, newValue) } }
    }
    private var defaultRateValue: Double = 1

    private struct TimeObserver {
        var interval: MediaTime
        var queue: DispatchQueue?
        var block: @Sendable (MediaTime) -> Void
        var lastFired: MediaTime?
    }

    /// The clock first-frame phases are measured on (the player's clock unless given).
    public let measurementClock: (any EngineClock)?

    /// A player timed by `clock`. `measurementClock` times the first-frame phases when
    /// they should be wall time although playback is simulated (`--clock fast`).
    public init(clock: any EngineClock = HostClock.shared, videoSink: (any VideoSink)? = nil,
                audioSink: (any AudioSink)? = nil, configuration: PipelineConfiguration = PipelineConfiguration(),
                measurementClock: (any EngineClock)? = nil) {
        self.clock = clock
        self.measurementClock = measurementClock
        self.videoSink = videoSink
        self.audioSink = audioSink
        self.configuration = configuration
    }

    deinit {
        engine?.close()
    }

    // MARK: Item

    public var currentItem: PlayerItem? { lock.withLock { item } }

    /// Whether this player holds an open video decoder now (its item is open and
    /// has video). `replaceCurrentItem(with: nil)` closes it before returning.
    public var hasOpenVideoDecoder: Bool {
        let engine = lock.withLock { self.engine }
        return engine?.isVideoDecoderOpen ?? false
    }

    /// Replaces the item. `nil` stops playback and frees every decoder and buffer
    /// before returning. A new item starts opening at once and shows its first
    /// frame as soon as it is decoded, playing or not.
    public func replaceCurrentItem(with newItem: PlayerItem?) {
        lock.lock()
        let old = engine
        engine = nil
        item = newItem
        info = nil
        firstFrame = nil
        lastTime = newItem?.startTime ?? .zero
        lock.unlock()
        old?.close()

        lock.lock()
        var actions = machine.handle(.itemReplaced(hasItem: newItem != nil))
        if let newItem {
            let fresh = PlaybackEngine(
                url: newItem.url, loader: newItem.loader, clock: clock, configuration: configuration,
                videoSink: videoSink, audioSink: audioSink, startTime: newItem.startTime,
                phaseClock: measurementClock
            )
            fresh.delegate = self
            fresh.demandObserver = demandObserverValue
            fresh.volumeLocked = muted ? 0 : volumeValue
            engine = fresh
            fresh.start()
            // Re-apply the requested rate so time runs once the item is ready.
            actions += machine.handle(.rateRequested(machine.rate))
        }
        let events = perform(actions)
        lock.unlock()
        dispatch(events)
    }

    // MARK: Rate

    /// Plays at ``defaultRate``.
    public func play() { setRate(defaultRate) }
    /// Pauses (rate 0).
    public func pause() { setRate(0) }

    /// The requested rate: 0 is paused, 0.5…4 play (2 for hold-to-speed-up).
    /// A change takes effect on the next presentation step: the video follows the
    /// new pace at once, and the audio keeps its pitch (atempo).
    public var rate: Double {
        get { lock.withLock { machine.rate } }
        set { setRate(newValue) }
    }

    private func setRate(_ newRate: Double) {
        lock.lock()
        let clamped = newRate <= 0 ? 0 : min(max(newRate, 0.25), 4)
        let events = perform(machine.handle(.rateRequested(clamped)))
        lock.unlock()
        dispatch(events)
        fireTimeObservers(force: true)
    }

    public var status: PlayerStateMachine.Status { lock.withLock { machine.status } }
    public var timeControlStatus: PlayerStateMachine.TimeControlStatus { lock.withLock { machine.timeControlStatus } }

    public var actionAtItemEnd: PlayerStateMachine.ActionAtItemEnd {
        get { lock.withLock { machine.actionAtItemEnd } }
        set { lock.withLock { machine.actionAtItemEnd = newValue } }
    }

    // MARK: Time

    /// The current media time.
    public var currentTime: MediaTime {
        lock.lock()
        defer { lock.unlock() }
        guard let engine else { return lastTime }
        return engine.currentTimeNow()
    }

    /// The item's duration, or `.indefinite` until known.
    public var duration: MediaTime {
        lock.lock()
        defer { lock.unlock() }
        return engine?.durationNow() ?? .indefinite
    }

    /// What is buffered ahead, as media time ranges.
    public var loadedTimeRanges: [TimeRange] {
        lock.lock()
        defer { lock.unlock() }
        return engine?.loadedTimeRanges() ?? []
    }

    /// The item's streams, once opened.
    public var mediaInfo: MediaInfo? { lock.withLock { info } }

    /// Width and height as displayed (after rotation), once known.
    public var presentationSize: (width: Int, height: Int)? {
        lock.withLock {
            guard let video = info?.videoStream, let w = video.width, let h = video.height else { return nil }
            return (video.rotation ?? 0) % 180 == 0 ? (w, h) : (h, w)
        }
    }

    // MARK: Seeking

    /// Seeks to `time`. Zero tolerances give the exact frame whose display interval
    /// contains `time` (decoded from the keyframe before it); infinite tolerances
    /// give the nearest keyframe, fast. A newer seek finishes this one with `false`.
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
        lock.lock()
        guard let engine, time.isNumeric else {
            lock.unlock()
            completionHandler(false)
            return
        }
        nextID += 1
        let id = nextID
        seekWaiters[id] = (time, completionHandler)
        let events = perform(machine.handle(.seekRequested(id: id)))
        let clamped = max(.zero, engine.durationNow().isNumeric ? min(time, engine.durationNow()) : time)
        engine.seek(id: id, to: clamped, before: toleranceBefore, after: toleranceAfter)
        lock.unlock()
        dispatch(events)
    }

    // MARK: Audio

    public var volume: Float {
        get { lock.withLock { volumeValue } }
        set { lock.withLock { volumeValue = max(0, min(1, newValue)); applyVolume() } }
    }

    public var isMuted: Bool {
        get { lock.withLock { muted } }
        set { lock.withLock { muted = newValue; applyVolume() } }
    }

    private func applyVolume() {
        engine?.setVolume(muted ? 0 : volumeValue)
    }

    // MARK: Observing

    /// Calls `block` every `interval` of media time while playing, and whenever
    /// time jumps (seeks) or playback starts or stops. On `queue`, or on the
    /// engine's clock context when `queue` is `nil`.
    @discardableResult
    public func addPeriodicTimeObserver(forInterval interval: MediaTime, queue: DispatchQueue? = nil,
                                        using block: @escaping @Sendable (MediaTime) -> Void) -> ObserverToken {
        lock.withLock {
            nextID += 1
            timeObservers[nextID] = TimeObserver(interval: interval, queue: queue, block: block, lastFired: nil)
            return ObserverToken(id: nextID)
        }
    }

    public func removeTimeObserver(_ token: ObserverToken) {
        lock.withLock { _ = timeObservers.removeValue(forKey: token.id) }
    }

    /// Calls `handler` for every ``PlayerEvent`` (on the engine's context; keep it short).
    @discardableResult
    public func addEventObserver(_ handler: @escaping @Sendable (PlayerEvent) -> Void) -> ObserverToken {
        lock.withLock {
            nextID += 1
            eventObservers[nextID] = handler
            return ObserverToken(id: nextID)
        }
    }

    public func removeEventObserver(_ token: ObserverToken) {
        lock.withLock { _ = eventObservers.removeValue(forKey: token.id) }
    }

    public var statistics: PlayerStatistics {
        lock.lock()
        let engine = self.engine
        let first = firstFrame
        lock.unlock()
        let (presented, dropped) = engine?.statistics ?? (0, 0)
        let (bytes, requests) = engine?.bytesAndRequests ?? (0, 0)
        return PlayerStatistics(presentedFrames: presented, droppedFrames: dropped, bytesRead: bytes, requests: requests, firstFrame: first)
    }

    /// Blocks until the pipeline has done everything it can without time moving
    /// (with a ``ManualClock``): then advancing the clock gives the same result every run.
    public func waitUntilSettled() {
        let engine = lock.withLock { self.engine }
        engine?.activity.waitUntilSettled()
    }

    // MARK: Carrying out the state machine's actions

    private func perform(_ actions: [PlayerStateMachine.Action]) -> [PlayerEvent] {
        var events: [PlayerEvent] = []
        for action in actions {
            switch action {
            case .runClock(let rate):
                engine?.runClock(rate: rate)
            case .stopClock:
                engine?.stopClock()
            case .finishSeek(let id, let finished):
                if let waiter = seekWaiters.removeValue(forKey: id) {
                    let landed = seekLanded.removeValue(forKey: id)
                    events.append(.seekCompleted(target: waiter.target, landed: landed, finished: finished))
                    pendingCompletions.append { waiter.done(finished) }
                }
            case .restartFromBeginning:
                nextID += 1
                engine?.seek(id: -1, to: .zero, before: .zero, after: .zero)
            case .notifyStatus(let status):
                events.append(.statusChanged(status))
            case .notifyTimeControlStatus(let status):
                events.append(.timeControlStatusChanged(status))
            case .notifyRate(let rate):
                events.append(.rateChanged(rate))
            case .notifyEnded:
                events.append(.ended(looping: machine.actionAtItemEnd == .loop))
            }
        }
        return events
    }

    private func dispatch(_ events: [PlayerEvent]) {
        let (observers, completions) = lock.withLock { () -> ([@Sendable (PlayerEvent) -> Void], [() -> Void]) in
            defer { pendingCompletions = [] }
            return (Array(eventObservers.values), pendingCompletions)
        }
        // Seek completions run on the engine's context, like observers: synchronous
        // with a manual clock, so tests see them exactly when the seek lands.
        for completion in completions { completion() }
        for event in events {
            for observer in observers { observer(event) }
        }
    }

    private func fireTimeObservers(force: Bool) {
        lock.lock()
        let time = engine?.currentTimeNow() ?? lastTime
        var calls: [(DispatchQueue?, @Sendable (MediaTime) -> Void)] = []
        for (id, var observer) in timeObservers {
            let due: Bool
            if force { due = true } else if let last = observer.lastFired {
                due = time < last || time - last >= observer.interval
            } else {
                due = true
            }
            if due {
                observer.lastFired = time
                timeObservers[id] = observer
                calls.append((observer.queue, observer.block))
            }
        }
        lock.unlock()
        for (queue, block) in calls {
            if let queue { queue.async { block(time) } } else { block(time) }
        }
    }

    /// The current engine (for tests that check it is released).
    var engineForTesting: PlaybackEngine? { lock.withLock { engine } }

    private func isCurrent(_ engine: PlaybackEngine) -> Bool { lock.withLock { self.engine === engine } }
}

extension Player: PlaybackEngineDelegate {
    func engine(_ engine: PlaybackEngine, didOpen info: MediaInfo) {
        lock.withLock { if self.engine === engine { self.info = info } }
    }

    func engineIsReady(_ engine: PlaybackEngine) {
        lock.lock()
        guard self.engine === engine else { lock.unlock(); return }
        let events = perform(machine.handle(.itemReady))
        lock.unlock()
        dispatch(events)
    }

    func engine(_ engine: PlaybackEngine, didFail error: MediaError) {
        lock.lock()
        guard self.engine === engine else { lock.unlock(); return }
        var events = perform(machine.handle(.itemFailed(error.description)))
        events.append(.failed(error))
        lock.unlock()
        dispatch(events)
    }

    func engine(_ engine: PlaybackEngine, bufferingChanged isEmpty: Bool) {
        lock.lock()
        guard self.engine === engine else { lock.unlock(); return }
        var events = perform(machine.handle(isEmpty ? .bufferEmpty : .bufferReady))
        events.append(.stall(isEmpty))
        lock.unlock()
        dispatch(events)
    }

    func engine(_ engine: PlaybackEngine, didCompleteSeek id: Int, landedAt time: MediaTime) {
        lock.lock()
        guard self.engine === engine else { lock.unlock(); return }
        seekLanded[id] = time
        let events = perform(machine.handle(.seekCompleted(id: id)))
        lock.unlock()
        dispatch(events)
        fireTimeObservers(force: true)
    }

    func engineDidReachEnd(_ engine: PlaybackEngine) {
        lock.lock()
        guard self.engine === engine else { lock.unlock(); return }
        let events = perform(machine.handle(.reachedEnd))
        lock.unlock()
        dispatch(events)
        fireTimeObservers(force: true)
    }

    func engine(_ engine: PlaybackEngine, didReportFirstFrame report: FirstFrameReport) {
        lock.lock()
        guard self.engine === engine else { lock.unlock(); return }
        firstFrame = report
        lock.unlock()
        dispatch([.firstFrame(report)])
    }

    func engine(_ engine: PlaybackEngine, didPresent frame: VideoFrame, presentation: Presentation) {
        guard isCurrent(engine) else { return }
        dispatch([.framePresented(pts: frame.pts, presentation: presentation)])
    }

    func engine(_ engine: PlaybackEngine, didTick currentTime: MediaTime) {
        guard isCurrent(engine) else { return }
        fireTimeObservers(force: false)
    }
}
