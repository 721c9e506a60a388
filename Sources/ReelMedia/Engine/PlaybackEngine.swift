import Foundation
import Logging
import ReelCore
import ReelThreads
import ReelCaptions

/// What the engine tells its owner (the ``Player``). Always called without any lock of the
/// engine held, from the engine's owner context (the clock's).
protocol PlaybackEngineDelegate: AnyObject, Sendable {
    func engine(_ engine: PlaybackEngine, didOpen info: MediaInfo)
    func engineIsReady(_ engine: PlaybackEngine)
    func engine(_ engine: PlaybackEngine, didFail error: MediaError)
    func engine(_ engine: PlaybackEngine, bufferingChanged isEmpty: Bool)
    func engine(_ engine: PlaybackEngine, didCompleteSeek id: Int, landedAt time: MediaTime)
    func engineDidReachEnd(_ engine: PlaybackEngine)
    /// A looping item's time ran on into its next pass (a seamless loop).
    func engineDidLoop(_ engine: PlaybackEngine)
    func engine(_ engine: PlaybackEngine, didReportFirstFrame report: FirstFrameReport)
    func engine(_ engine: PlaybackEngine, didPresent frame: VideoFrame, presentation: Presentation)
    func engine(_ engine: PlaybackEngine, didTick currentTime: MediaTime)
    func engine(_ engine: PlaybackEngine, didShowCaptions frame: CaptionFrame)
    func engine(_ engine: PlaybackEngine, didChangeCaptionTracks tracks: [CaptionTrack])
    func engine(_ engine: PlaybackEngine, captionSourceFailed failure: CaptionSourceFailure)
    func engine(_ engine: PlaybackEngine, didLevelLoudness report: LoudnessReport)
}

/// Tunables of the pipeline.
public struct PipelineConfiguration: Sendable, Hashable {
    /// Decoded video frames kept ready ahead of the clock (ffplay keeps 3). Each one is a whole
    /// picture — 3 MB at 1080×1920 — so this is most of what the pipeline holds.
    public var videoFrameCapacity = 3
    /// Frames kept ready before the item first plays (a feed's pre-rendered next page): its
    /// first picture only. Frame-threaded decoding, whose frame pool and threads' frames cost
    /// tens of megabytes at 1080×1920, starts with the first play too; until then the first
    /// picture comes from the single-threaded first-frame decoder.
    public var idleVideoFrameCapacity = 1

    /// ``idleVideoFrameCapacity`` within 1…``videoFrameCapacity``.
    var idleCapacity: Int { max(1, min(videoFrameCapacity, idleVideoFrameCapacity)) }
    /// Frames an item that never ran keeps queued behind the one it shows.
    var idleFramesAhead: Int { idleCapacity - 1 }
    /// Demux ahead until each stream has this much media queued…
    public var packetQueueDuration = MediaTime(value: 5, timescale: 1)
    /// …or, for a local file, this much: there is no network to ride out, so a read-ahead
    /// above the low-water mark is enough (mpv reads one second ahead of a file).
    public var localPacketQueueDuration = MediaTime(value: 2, timescale: 1)
    /// …or all queues together hold this many bytes.
    public var packetQueueBytes = 16 << 20
    /// Decoded audio kept ready.
    public var audioQueueDuration = MediaTime(value: 1, timescale: 2)
    /// Rendered audio kept in the ring the audio device reads (resampled, stretched).
    public var audioRingDuration = MediaTime(value: 1, timescale: 5)
    /// Below this much queued media the player tells preloads to pause.
    public var lowWaterMark = MediaTime(value: 1, timescale: 1)
    /// Audio needed before playback starts or resumes after a stall.
    public var audioStartDuration = MediaTime(value: 1, timescale: 5)
    /// Decode the first frame on one thread (no frame-threading delay), then switch.
    public var fastFirstFrame = true
    /// Skip `avformat_find_stream_info` where the container header suffices.
    public var fastStart = true
    /// Which audio track plays (preferred languages, a role, a track): the same for every item.
    public var audioSelection = AudioSelection.processDefault

    /// The defaults above: three frames ahead, five seconds of packets (two for a local file)
    /// or 16 MiB, fast first frame and fast start on, and the process's audio selection.
    public init() {}
}

/// The phases of opening an item, in milliseconds since ``Player/replaceCurrentItem(with:)``.
///
/// The engine fills it in as the item opens and hands it to the ``Player`` when the first frame
/// is presented. Every phase is milliseconds from the moment the item was set (when
/// ``Player/replaceCurrentItem(with:)`` made the item's pipeline), on the player's
/// ``Player/measurementClock`` if it has one, else on its clock; a phase is `nil` when the
/// engine did not see it before the first frame was presented.
public struct FirstFrameReport: Sendable, Hashable, Codable {
    /// When the item's resource first answered with its content information (length, type,
    /// whether it takes byte ranges): the response headers, for a remote item.
    public var contentInfoMs: Double?
    /// When FFmpeg read the first byte of the item's resource (for HLS, of its playlist).
    public var firstByteMs: Double?
    /// When the container's header was parsed and the decoders were open (including
    /// `avformat_find_stream_info`, if it had to run: see ``probedStreamInfo``).
    public var headerParsedMs: Double?
    /// When the first video packet was demuxed (audio packets read before it do not count).
    public var firstPacketMs: Double?
    /// When the first video frame came out of the decoder.
    public var firstFrameDecodedMs: Double?
    /// When the first video frame was presented: handed to the video sink, at the clock step
    /// that sends this report.
    public var firstFramePresentedMs: Double?
    /// Bytes read through the item's resource loader before the first frame was presented,
    /// nested resources (an HLS playlist's renditions and segments) included.
    public var bytesRead: Int64
    /// Requests made to the item's resource loader before the first frame was presented,
    /// nested ones (an HLS playlist's renditions and segments) included.
    public var requests: Int
    /// Whether `avformat_find_stream_info` had to run.
    public var probedStreamInfo: Bool
}

/// One item's pipeline, in ffplay's shape: a demux thread, a decode thread per stream, an
/// audio render thread, and presentation steps run by the owner — the injected clock's
/// context — through a ``PresentationMachine``. Packet and frame queues carry a serial; a seek
/// bumps it, and stale data is dropped by comparison. The threading model is in ReelMedia's
/// README; in short:
///
/// - Immutable after init: everything declared with `let` below, the delegate and the
///   demand observer included (fixed before any thread starts).
/// - Guarded by `monitor` (one mutex): ``EngineState``.
/// - Shared lock-free: the audio ring (atomics; see ``AudioRing``).
/// - Not shared: the ``AudioRenderer`` is made on the audio render thread and lives there.
final class PlaybackEngine: Sendable {
    let url: URL
    let loader: any ResourceLoader
    /// The loader, when it wants each presented frame's time (a segment scheduler).
    let positionListener: (any PlaybackPositionListener)?
    let clock: any EngineClock
    let configuration: PipelineConfiguration
    let videoSink: (any VideoSink)?
    let audioSink: (any AudioSink)?
    /// Where the cues on screen go, if anywhere (fixed before any thread starts, as the sinks are).
    let captionSink: (any CaptionSink)?
    /// The item's sideloaded caption files.
    let captionSources: [CaptionSource]
    weak let delegate: (any PlaybackEngineDelegate)?
    weak let demandObserver: (any PlaybackDemandObserver)?
    let monitor: PipelineMonitor<EngineState>
    let logger = Logger(label: "reel.engine")
    /// Rendered audio for the sink; `nil` without an audio sink.
    let ring: AudioRing?
    /// The clock first-frame phases are measured on: the engine's own, unless the owner
    /// measures elsewhere (`--clock fast` over a real network measures wall time).
    let phaseClock: any EngineClock
    let phaseOpenedAt: MediaTime
    let startTime: MediaTime?
    /// Loudness levelling for the item (off when `nil`), and the item's own figures.
    let levelling: LoudnessLevelling?
    let itemLoudness: ItemLoudness?
    /// Threads still running; `close()` waits for them.
    let exited = DispatchGroup()

    init(url: URL, loader: any ResourceLoader, clock: any EngineClock, configuration: PipelineConfiguration,
         videoSink: (any VideoSink)?, audioSink: (any AudioSink)?, captionSink: (any CaptionSink)? = nil,
         captionSources: [CaptionSource] = [], captionSelection: CaptionSelection = CaptionSelection(),
         startTime: MediaTime?,
         phaseClock: (any EngineClock)? = nil, delegate: (any PlaybackEngineDelegate)?,
         demandObserver: (any PlaybackDemandObserver)?, volume: Float, rate: Double = 1,
         levelling: LoudnessLevelling? = nil, itemLoudness: ItemLoudness? = nil, looping: Bool = false) {
        self.levelling = levelling
        self.itemLoudness = itemLoudness
        self.url = url
        self.loader = loader
        self.positionListener = loader as? any PlaybackPositionListener
        // The item's own timeline: its presentation and audio steps run there, in order,
        // and wait for no other player's (the clock's time is the same).
        self.clock = clock.makeTimeline()
        var configuration = configuration
        if url.isFileURL { configuration.packetQueueDuration = min(configuration.packetQueueDuration, configuration.localPacketQueueDuration) }
        self.configuration = configuration
        self.videoSink = videoSink
        self.audioSink = audioSink
        self.captionSink = captionSink
        self.captionSources = captionSources
        self.delegate = delegate
        self.demandObserver = demandObserver
        self.phaseClock = phaseClock ?? clock
        self.phaseOpenedAt = (phaseClock ?? clock).now
        self.startTime = startTime.flatMap { $0.isNumeric && $0 > .zero ? $0 : nil }
        var presentation = PresentationMachine.Configuration()
        presentation.startVideoFrames = min(2, max(1, configuration.videoFrameCapacity - 1))
        presentation.idleStartVideoFrames = min(presentation.startVideoFrames, configuration.idleFramesAhead)
        presentation.startAudio = configuration.audioStartDuration
        var state = EngineState(machine: PresentationMachine(configuration: presentation))
        state.volume = volume
        _ = state.loop.handle(.loopingChanged(looping))
        state.captions = CaptionPresentation(selection: captionSelection)
        // Audio is rendered ahead at the rate the item will most likely play at, so starting
        // it does not flush the ring.
        state.audioRate = rate > 0 ? rate : 1
        monitor = PipelineMonitor(state, label: url.absoluteString)
        if let audioSink {
            let format = audioSink.format
            let frames = Int((configuration.audioRingDuration.seconds * Double(format.sampleRate)).rounded(.up))
            ring = AudioRing(channels: format.channels, capacity: max(2048, frames), sampleRate: format.sampleRate,
                             rampFrames: AudioRing.rampFrames(sampleRate: format.sampleRate))
        } else {
            ring = nil
        }
        MediaResources.engineCreated()
    }

    deinit {
        MediaResources.engineFreed()
    }

    /// Starts the demux thread (which opens the item and starts the decoders) and, with an
    /// audio sink, the audio render thread and the device.
    func start() {
        if let observer = demandObserver {
            let token = observer.playbackDemandBegan(.needsConnection)
            monitor.update { $0.connectionDemand = token }
        }
        if let startTime { seek(id: -1, to: startTime, before: .zero, after: .zero) }
        let demux = monitor.register("demux")
        spawn("reel.demux") { [self] in runDemux(demux) }
        startCaptionLoaders()
        if let ring, let audioSink {
            let worker = monitor.register("audio-render")
            spawn("reel.audio-render") { [self] in
                // Made here: the renderer's state belongs to this thread alone.
                let renderer = AudioRenderer(ring: ring, format: audioSink.format, mode: audioSink.mode,
                                             deviceLatency: audioSink.latency, levelling: levelling,
                                             itemLoudness: itemLoudness)
                renderer.run(engine: self, worker: worker)
            }
        }
        if let audioSink, let ring, audioSink.mode == .pull {
            audioSink.start(pulling: AudioPullSource(ring: ring, clock: clock))
        }
        requestStep(at: clock.now)
    }

    func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        exited.enter()
        let group = exited
        let thread = Thread {
            nameCurrentThread(name)
            body()
            group.leave()
        }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Stops every thread and frees decoders, queues and the demuxer. Returns when done; no
    /// frame reaches the sink after. Safe from inside the sink's `present` (it does not wait
    /// for itself) and from an observer.
    func close() {
        let me = pthread_self()
        let (demuxer, opening, captionReads) = monitor.update { state -> (Demuxer?, AVIOBridge?, [ByteStream]) in
            state.closing = true
            state.stepAction?.cancel()
            state.audioStepAction?.cancel()
            defer { state.openingBridge = nil }
            return (state.demuxer, state.openingBridge, state.captionReads)
        }
        captionReads.forEach { $0.cancel() }
        demuxer?.interrupt()
        if opening !== demuxer?.bridge { opening?.interrupt() }
        if let audioSink, audioSink.mode == .pull { audioSink.stop() }
        ring?.setRunning(false)
        let closer = monitor.register("close")
        monitor.wait(closer, until: { state in
            state.presentingThread.map { pthread_equal($0, me) != 0 } ?? true
        }, then: { _ in })
        monitor.exit(closer)
        exited.wait()
        let tokens = monitor.update { state -> [PlaybackDemandToken] in
            state.videoPackets.removeAll()
            state.audioPackets.removeAll()
            state.videoFrames = []
            state.audioChunks = []
            state.demuxer = nil
            state.openingBridge = nil
            defer { state.connectionDemand = nil; state.lowWaterDemand = nil }
            return [state.connectionDemand, state.lowWaterDemand].compactMap { $0 }
        }
        tokens.forEach { $0.end() }
        videoSink?.clear()
    }

    /// Fails the item (once); the owner reports it at its next step.
    func fail(_ error: MediaError) {
        let first = monitor.update { state -> Bool in
            guard state.failure == nil, !state.closing else { return false }
            state.failure = error
            state.commands.append(.failed)
            scheduleStepLocked(&state, at: clock.now)
            return true
        }
        if first { logger.debug("item failed: \(error)") }
    }

    /// Milliseconds since the item was set, on the clock first-frame phases are measured with.
    func phaseNowMs() -> Double {
        (phaseClock.now - phaseOpenedAt).seconds * 1000
    }

    // MARK: Commands (from the Player; carried out by the owner's next step)

    func runClock(rate: Double) { command(.runClock(rate: rate)) }

    func stopClock() { command(.stopClock) }

    private func command(_ event: PresentationMachine.Event) {
        monitor.update { state in
            state.commands.append(event)
            scheduleStepLocked(&state, at: clock.now)
        }
    }

    /// Starts a seek: a new serial at once (stale data is dropped from now on), the demux thread
    /// moves, and the owner shows the first frame at the target. With `decodeOn` (scrubbing), a
    /// target forward of the frame on screen is reached by decoding on where the decoder is,
    /// when it can be (``continueDecoding(id:to:)``); otherwise as any exact seek.
    func seek(id: Int, to target: MediaTime, before: MediaTime, after: MediaTime, decodeOn: Bool = false) {
        if decodeOn, continueDecoding(id: id, to: target) { return }
        let token = demandObserver?.playbackDemandBegan(.needsConnection)
        let (interrupt, replaced) = monitor.update { state -> (Demuxer?, PlaybackDemandToken?) in
            var replaced: PlaybackDemandToken?
            if let token {
                replaced = state.connectionDemand
                state.connectionDemand = token
            }
            state.serial += 1
            state.chainSerial = state.serial
            state.handoffFrame = nil
            let lower = before.isPositiveInfinity ? MediaTime.negativeInfinity : target - before
            state.seekRequest = SeekRequest(serial: state.serial, target: target, before: before, after: after)
            state.discardUntil = lower.isNumeric ? lower : nil
            state.flushQueuesLocked()
            state.captions.seeked()
            _ = state.loop.handle(.restarted)
            let seek = PresentationMachine.Seek(id: id, serial: state.serial, target: target, discardUntil: lower)
            state.commands.append(.seek(seek))
            scheduleStepLocked(&state, at: clock.now)
            return (state.demuxInIO ? state.demuxer : nil, replaced)
        }
        replaced?.end()
        interrupt?.interruptRead()
    }

    func setVolume(_ value: Float) {
        monitor.update { $0.volume = value }
    }

    /// Schedules the owner's next step at `deadline`, keeping an earlier one.
    func requestStep(at deadline: MediaTime) {
        monitor.update { scheduleStepLocked(&$0, at: deadline) }
    }

    func scheduleStepLocked(_ state: inout EngineState, at deadline: MediaTime) {
        guard !state.closing else { return }
        if let existing = state.stepDeadline, existing <= deadline { return }
        state.stepAction?.cancel()
        state.stepDeadline = deadline
        state.stepAction = clock.schedule(at: deadline) { [weak self] in self?.presentationStep() }
    }

    /// A producer added data: wake the owner if it waits for some.
    func kickOwnerLocked(_ state: inout EngineState) {
        if state.ownerWantsData { scheduleStepLocked(&state, at: clock.now) }
    }
}

extension EngineState {
    /// Drops everything queued (a seek).
    mutating func flushQueuesLocked() {
        videoPackets.removeAll()
        audioPackets.removeAll()
        videoFrames.removeAll()
        audioChunks.removeAll()
        audioChunksDuration = .zero
        demuxAtEnd = false
        handoffFrame = nil
    }
}
