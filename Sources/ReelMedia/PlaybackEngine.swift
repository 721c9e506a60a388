import Foundation
import Logging
import ReelCore
internal import CFFmpeg

/// What the engine tells its owner (the ``Player``). Always called without the
/// engine's lock held.
protocol PlaybackEngineDelegate: AnyObject, Sendable {
    func engine(_ engine: PlaybackEngine, didOpen info: MediaInfo)
    func engineIsReady(_ engine: PlaybackEngine)
    func engine(_ engine: PlaybackEngine, didFail error: MediaError)
    func engine(_ engine: PlaybackEngine, bufferingChanged isEmpty: Bool)
    func engine(_ engine: PlaybackEngine, didCompleteSeek id: Int, landedAt time: MediaTime)
    func engineDidReachEnd(_ engine: PlaybackEngine)
    func engine(_ engine: PlaybackEngine, didReportFirstFrame report: FirstFrameReport)
    func engine(_ engine: PlaybackEngine, didPresent frame: VideoFrame, presentation: Presentation)
    func engine(_ engine: PlaybackEngine, didTick currentTime: MediaTime)
}

/// Tunables of the pipeline.
public struct PipelineConfiguration: Sendable, Hashable {
    /// Decoded video frames kept ready ahead of the clock.
    public var videoFrameCapacity = 4
    /// Demux ahead until each stream has this much media queued…
    public var packetQueueDuration = MediaTime(value: 5, timescale: 1)
    /// …or all queues together hold this many bytes.
    public var packetQueueBytes = 16 << 20
    /// Decoded audio kept ready.
    public var audioQueueDuration = MediaTime(value: 1, timescale: 2)
    /// Below this much queued media the player tells preloads to pause.
    public var lowWaterMark = MediaTime(value: 1, timescale: 1)
    /// Audio needed before playback starts or resumes after a stall.
    public var audioStartDuration = MediaTime(value: 1, timescale: 5)
    /// Decode the first frame on one thread (no frame-threading delay), then switch.
    public var fastFirstFrame = true
    /// Skip `avformat_find_stream_info` where the container header suffices.
    public var fastStart = true

    public init() {}
}

/// The phases of opening an item, in milliseconds since ``Player/replaceCurrentItem(with:)``.
public struct FirstFrameReport: Sendable, Hashable, Codable {
    public var contentInfoMs: Double?
    public var firstByteMs: Double?
    public var headerParsedMs: Double?
    public var firstPacketMs: Double?
    public var firstFrameDecodedMs: Double?
    public var firstFramePresentedMs: Double?
    /// Bytes read and requests made before the first frame was presented.
    public var bytesRead: Int64
    public var requests: Int
    /// Whether `avformat_find_stream_info` had to run.
    public var probedStreamInfo: Bool
}

/// One item's pipeline: a demux thread, a decode thread per stream, and
/// presentation steps scheduled on the player's clock. ffplay's shape: packet and
/// frame queues carry a serial; a seek bumps it, and stale data is dropped by comparison.
final class PlaybackEngine: @unchecked Sendable {
    let url: URL
    let loader: any ResourceLoader
    let clock: any EngineClock
    let isManualClock: Bool
    let configuration: PipelineConfiguration
    let activity = PipelineActivity()
    var lock: PipelineLock { activity.condition }
    weak var delegate: (any PlaybackEngineDelegate)?
    let videoSink: (any VideoSink)?
    let audioSink: (any AudioSink)?
    let logger = Logger(label: "reel.engine")

    // MARK: Shared state (guarded by `lock`)

    var serial = 0
    var closing = false
    /// Held while a frame is handed to the sink; `close()` takes it once after setting
    /// `closing`, so no frame is presented after it returns. Recursive: a sink may
    /// close its own player from inside `present`.
    let presentLock = NSRecursiveLock()
    /// Whether this engine's video decoder is open (between its creation and its
    /// decode thread's exit).
    private(set) var videoDecoderOpen = false
    private var openingBridge: AVIOBridge?
    var opened = false
    var failure: MediaError?
    var info: MediaInfo?
    var hasVideo = false
    var hasAudio = false
    var rotation = 0
    var duration: MediaTime = .indefinite
    var videoTimeBase = TimeBase(AVRational(num: 1, den: 1))
    var audioTimeBase = TimeBase(AVRational(num: 1, den: 1))
    var videoFrameDuration = MediaTime(value: 1, timescale: 30)

    var videoPackets = PacketQueue()
    var audioPackets = PacketQueue()
    var demuxAtEnd = false
    var demuxInIO = false
    var videoFrames: [VideoFrame] = []
    var videoEndedSerial = -1
    var audioChunks: [AudioChunk] = []
    var audioChunksDuration: MediaTime = .zero
    var audioEndedSerial = -1

    struct SeekRequest {
        var id: Int
        var target: MediaTime
        var before: MediaTime
        var after: MediaTime
    }
    struct ActiveSeek {
        var id: Int
        var serial: Int
        var target: MediaTime
        /// Frames (and samples) before this time are decoded but not shown.
        var discardUntil: MediaTime
        var completed = false
    }
    var seekRequest: SeekRequest?
    var activeSeek: ActiveSeek?

    // Presentation (guarded by `lock`).
    var anchor = TimelineAnchor(media: .zero, host: .zero, rate: 1, isRunning: false)
    var audioAnchor: TimelineAnchor?
    var clockRunning = false
    var rate: Double = 1
    var resumeAfterSeek = false
    var currentTime: MediaTime = .zero
    var lastPresented: VideoFrame?
    var presentedSerial = -1
    var droppedFrames = 0
    var presentedFrames = 0
    var readyReported = false
    var endReported = false
    var bufferingReported = false
    var audioStarved = false
    var audioRunning = false
    var stepScheduled: ScheduledAction?
    var stepDeadline: MediaTime?
    var audioStepScheduled: ScheduledAction?
    var audioStepStart: (host: MediaTime, frames: Int64)?

    let audioRender = AudioRenderState()

    // Network demand reported to whoever shares the network (guarded by `lock`).
    weak var demandObserver: (any PlaybackDemandObserver)?
    var connectionDemand: PlaybackDemandToken?
    var lowWaterDemand: PlaybackDemandToken?
    var volumeLocked: Float = 1

    // First-frame measurement.
    let openedAt: MediaTime
    /// The clock first-frame phases are measured on: the engine's own, unless the
    /// owner measures elsewhere (`--clock fast` over a real network measures wall time).
    let phaseClock: any EngineClock
    let phaseOpenedAt: MediaTime
    var report = FirstFrameReport(bytesRead: 0, requests: 0, probedStreamInfo: false)
    var firstFrameReported = false

    // Threads.
    var threads: [Thread] = []
    let exited = DispatchGroup()
    var demuxer: Demuxer?

    init(url: URL, loader: any ResourceLoader, clock: any EngineClock, configuration: PipelineConfiguration,
         videoSink: (any VideoSink)?, audioSink: (any AudioSink)?, startTime: MediaTime?,
         phaseClock: (any EngineClock)? = nil) {
        self.url = url
        self.loader = loader
        self.clock = clock
        self.isManualClock = clock is ManualClock
        self.configuration = configuration
        self.videoSink = videoSink
        self.audioSink = audioSink
        self.openedAt = clock.now
        self.phaseClock = phaseClock ?? clock
        self.phaseOpenedAt = (phaseClock ?? clock).now
        if let startTime, startTime.isNumeric, startTime > .zero {
            seekRequest = SeekRequest(id: -1, target: startTime, before: .zero, after: .zero)
        }
    }

    /// Starts the demux thread (which opens the item and starts the decoders).
    func start() {
        if let observer = demandObserver {
            let token = observer.playbackDemandBegan(.needsConnection)
            lock.withLock { connectionDemand = token }
        }
        let worker = activity.register("demux")
        spawn("reel.demux") { [weak self] in self?.runDemux(worker) }
        if let audioSink, audioSink.mode == .pull {
            audioSink.start(pulling: AudioPullSource { [weak self] n in
                self?.renderAudio(frameCount: n) ?? [Float](repeating: 0, count: n * audioSink.format.channels)
            })
        }
        schedulePoll()
    }

    func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        exited.enter()
        let group = exited
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = name
        thread.stackSize = 8 << 20
        threads.append(thread)
        thread.start()
    }

    /// The demuxer's I/O while it opens (before `demuxer` is set): `close()` interrupts
    /// it too, so a close never waits for a stalled open.
    func opening(_ bridge: AVIOBridge) {
        let closingNow = lock.withLock { () -> Bool in
            openingBridge = bridge
            return closing
        }
        if closingNow { bridge.interrupt() }
    }

    func setVideoDecoderOpen(_ open: Bool) {
        lock.withLock { videoDecoderOpen = open }
    }

    var isVideoDecoderOpen: Bool { lock.withLock { videoDecoderOpen } }

    /// Stops every thread and frees decoders, queues and the demuxer. Returns when
    /// done; no frame reaches the sink after.
    func close() {
        lock.lock()
        closing = true
        stepScheduled?.cancel()
        audioStepScheduled?.cancel()
        lock.broadcast()
        let demuxer = self.demuxer
        let opening = openingBridge
        openingBridge = nil
        lock.unlock()
        demuxer?.bridge.interrupt()
        if opening !== demuxer?.bridge { opening?.interrupt() }
        if let audioSink, audioSink.mode == .pull { audioSink.stop() }
        presentLock.lock()
        presentLock.unlock()
        exited.wait()
        lock.lock()
        threads = []
        videoPackets.removeAll()
        audioPackets.removeAll()
        videoFrames = []
        audioChunks = []
        lastPresented = nil
        self.demuxer = nil
        lock.unlock()
        videoSink?.clear()
        if isManualClock { logger.debug("\(activity.settleStatistics)") }
    }

    /// Fails the item (once) and tells the owner.
    func fail(_ error: MediaError) {
        lock.lock()
        guard failure == nil, !closing else { lock.unlock(); return }
        failure = error
        lock.broadcast()
        lock.unlock()
        logger.debug("item failed: \(error)")
        delegate?.engine(self, didFail: error)
    }

    /// Milliseconds since the item was set, on the clock first-frame phases are measured with.
    func phaseNowMs() -> Double {
        (phaseClock.now - phaseOpenedAt).seconds * 1000
    }

    // MARK: Control (called by the Player)

    func runClock(rate newRate: Double) {
        lock.lock()
        let now = clock.now
        rate = newRate
        if activeSeek.map({ !$0.completed }) ?? false {
            resumeAfterSeek = true
        } else {
            anchor = TimelineAnchor(media: currentTime, host: now, rate: newRate, isRunning: true)
            if var a = audioAnchor { a = a.reanchored(at: now, rate: newRate); audioAnchor = a }
            clockRunning = true
            audioRunning = true
        }
        lock.unlock()
        scheduleStep(at: now)
        scheduleAudioStep(restart: true)
    }

    func stopClock() {
        lock.lock()
        let now = clock.now
        if clockRunning {
            currentTime = masterTime(at: now)
        }
        anchor = TimelineAnchor(media: currentTime, host: now, rate: rate, isRunning: false)
        audioAnchor = nil
        clockRunning = false
        audioRunning = false
        resumeAfterSeek = false
        audioStepScheduled?.cancel()
        audioStepScheduled = nil
        lock.unlock()
    }

    func seek(id: Int, to target: MediaTime, before: MediaTime, after: MediaTime) {
        let token = demandObserver?.playbackDemandBegan(.needsConnection)
        lock.lock()
        var replaced: PlaybackDemandToken?
        if let token {
            replaced = connectionDemand
            connectionDemand = token
        }
        defer { replaced?.end() }
        seekRequest = SeekRequest(id: id, target: target, before: before, after: after)
        if clockRunning {
            currentTime = masterTime(at: clock.now)
            resumeAfterSeek = true
        }
        clockRunning = false
        audioRunning = false
        audioAnchor = nil
        endReported = false
        let interruptIO = demuxInIO
        let demuxer = self.demuxer
        lock.broadcast()
        lock.unlock()
        if interruptIO { demuxer?.bridge.interrupt() }
        schedulePoll()
    }

    var statistics: (presented: Int, dropped: Int) { lock.withLock { (presentedFrames, droppedFrames) } }

    var bytesAndRequests: (Int64, Int) {
        let demuxer = lock.withLock { self.demuxer }
        return demuxer.map { $0.bridge.statistics } ?? (0, 0)
    }
}

extension PlaybackEngine {
    /// The current media time, read now.
    func currentTimeNow() -> MediaTime {
        lock.withLock {
            guard clockRunning else { return currentTime }
            let media = masterTime(at: clock.now)
            return max(.zero, duration.isNumeric ? min(media, duration) : media)
        }
    }

    func durationNow() -> MediaTime { lock.withLock { duration } }

    /// What is demuxed or decoded ahead of the current time.
    func loadedTimeRanges() -> [TimeRange] {
        lock.withLock {
            let start = currentTime
            var end = start
            if let frame = videoFrames.last, frame.pts > end { end = frame.pts + (frame.duration ?? videoFrameDuration) }
            if let chunk = audioChunks.last, chunk.pts + chunk.duration > end { end = chunk.pts + chunk.duration }
            end = end + max(videoPackets.duration, audioPackets.duration)
            if demuxAtEnd, duration.isNumeric { end = duration }
            if duration.isNumeric { end = min(end, duration) }
            guard end > start else { return [] }
            return [TimeRange(start: start, end: end)]
        }
    }

    func setVolume(_ value: Float) {
        lock.withLock { volumeLocked = value }
    }
}

extension PlaybackEngine {
    /// Tells the demand observer whether the queues are below the low-water mark
    /// (call with the lock held; tokens end outside it).
    func updateLowWaterDemandLocked() -> PlaybackDemandToken? {
        guard let observer = demandObserver else { return nil }
        let queued = [hasVideo ? videoPackets.duration : nil, hasAudio ? audioPackets.duration : nil]
            .compactMap { $0 }.min() ?? .zero
        let low = !demuxAtEnd && failure == nil && queued < configuration.lowWaterMark
        let full = demuxAtEnd || failure != nil || !demuxWantsMore()
        if low, lowWaterDemand == nil {
            lowWaterDemand = observer.playbackDemandBegan(.belowLowWaterMark)
        } else if full, let token = lowWaterDemand {
            lowWaterDemand = nil
            return token
        }
        return nil
    }

    /// The item is showing (first frame or a seek landed): the urgent demand ends.
    func endConnectionDemandLocked() -> PlaybackDemandToken? {
        defer { connectionDemand = nil }
        return connectionDemand
    }
}
