import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelTerminal
import Synchronization
import ReelStreaming
import ReelThreads

struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a media file or URL.",
        discussion: """
            --headless plays without output (for tests and benchmarks); --trace writes one JSON \
            object per presented frame (pts, framemd5-compatible md5, time, drops) and per event.
            """
    )

    enum ClockKind: String, ExpressibleByArgument, CaseIterable {
        case realtime, fast
    }

    @Argument(help: "A file path or an http(s) URL.")
    var input: String

    @Option(help: "Start at this time (seconds), with an exact seek.")
    var start: Double?

    @Option(help: "Playback rate (0.5 to 4).")
    var rate: Double = 1

    @Option(help: "Stop after this many presented frames.")
    var frames: Int?

    @Option(help: "realtime paces to the host clock; fast presents as fast as decoding allows.")
    var clock: ClockKind = .realtime

    @Option(help: "Write a JSON-lines trace here ('-' for standard output).")
    var trace: String?

    @Option(name: .customLong("audio-out"), help: "Write the played audio to this WAV file.")
    var audioOut: String?

    @Option(name: .customLong("scheduler"), help: "Who fetches an HLS stream's segments: reel (its own segment reader, adaptive) or ffmpeg (FFmpeg's HLS demuxer, one variant for the whole item).")
    var scheduler: LivePlayback.Scheduler = .reel

    @Flag(inversion: .prefixedNo, help: "Switch an HLS master's variants as the bandwidth estimate and the buffer say (--no-adaptive: hold the variant it started on).")
    var adaptive = true

    @Option(name: .customLong("variant-plan"), help: "Switch variants at fixed segments instead (\"2:1,5:0\": before the 3rd segment to the 2nd lowest variant, before the 6th to the lowest). For tests and comparisons.")
    var variantPlan: String?

    @Flag(help: "Loop at the end instead of stopping.")
    var loop = false

    @Option(name: .customLong("live-offset"), help: "How far behind a live HLS stream's newest media to play, in seconds (default: the playlist's PART-HOLD-BACK with parts, else HOLD-BACK, else three target durations). Held with a playback speed of 0.97-1.03x.")
    var liveOffset: Double?

    @OptionGroup(title: "Captions") var captions: CaptionOptions
    @OptionGroup(title: "HDR") var toneMapping: ToneMappingFlags
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var loading: LoadingOptions
    @OptionGroup var global: GlobalOptions
    @OptionGroup(title: "Loudness") var loudness: LoudnessOptions<PlayLoudness>
    @OptionGroup(title: "Audio tracks") var audioTracks: AudioTrackOptions

    func validate() throws {
        guard rate >= 0.25, rate <= 4 else { throw ValidationError("--rate must be between 0.25 and 4") }
        if let frames, frames <= 0 { throw ValidationError("--frames must be positive") }
        if let start, !(start >= 0) { throw ValidationError("--start must be a time in seconds, 0 or more") }
        if let liveOffset, !(liveOffset >= 0 && liveOffset <= 3600) { throw ValidationError("--live-offset must be seconds in [0, 3600]") }
        if let variantPlan, LivePlayback.parsePlan(variantPlan) == nil {
            throw ValidationError("--variant-plan must be segment:rank pairs, such as 2:1,5:0")
        }
        _ = try outputOptions.choose()
    }

    func run() async throws {
        global.apply()
        let source = try MediaSource(input)
        let captionSources = try captions.sources()
        let output = try outputOptions.choose()
        // Opened before anything plays, so a bad path is a usage error up front.
        let writer = try TraceWriter(path: trace)
        let stack = try loading.makeLoader(for: source, alsoReading: captionSources.map(\.url))
        stack.variants.addObserver { choice in writer.write(TraceWriter.variant(choice)) }
        // The engine offers every HLS playlist it opens to Reel's segment scheduler.
        let itemLoader: any ResourceLoader = scheduler == .ffmpeg ? stack.loader : HLSSchedulingLoader(
            upstream: stack.loader, variants: stack.variants, tracker: LivePlaylistTracker(liveOffset: liveOffset),
            configuration: .init(adaptive: adaptive, estimate: stack.meter, plan: variantPlan.flatMap(LivePlayback.parsePlan),
                                 observer: { event in writer.write(TraceWriter.live(event)) }))
        let item = PlayerItem(url: source.url, loader: itemLoader,
                              startTime: start.map { MediaTime(seconds: $0, preferredTimescale: 1_000_000) },
                              captions: captionSources)
        let end: PlaybackEnd
        switch output {
        case .window:
            let audio = ProcessAudio()
            WindowAudio.makeSink = { audio.makeSink() }
            end = await WindowSession.run(
                source: source, item: item, captions: captions.selection, rate: rate, loop: loop,
                renderer: outputOptions.renderer.kind, hud: outputOptions.terminal.hud, frames: frames,
                trace: writer
            )
            audio.close()
        case .terminal:
            let app = TerminalApp(configuration: outputOptions.terminal.appConfiguration(trace: writer), audio: ProcessAudio())
            let content = terminalContent(app: app, source: source, item: item, trace: writer)
            do {
                end = PlaybackEnd(try await app.run(content))
            } catch {
                writer.close()
                await stack.shutdown()
                throw error
            }
        case .headless:
            let session: HeadlessSession
            do {
                session = try HeadlessSession(
                    item: item, captions: captions.selection, rate: rate, frames: frames, fast: clock == .fast,
                    trace: writer, audioOut: audioOut, loop: loop
                )
            } catch {
                writer.close()
                await stack.shutdown()
                throw error
            }
            end = await session.run()
        }
        // Every session has stopped its player by now: nothing more reaches the trace.
        writer.close()
        await stack.shutdown()
        try end.naming(as: source.displayName).throwIfFailed()
    }
}

extension PlayCommand {
    /// The item in the terminal: its video to the renderer (through the trace and `--frames`
    /// when asked for), its sound to the app's audio.
    func terminalContent(app: TerminalApp, source: MediaSource, item: PlayerItem,
                         trace writer: TraceWriter) -> SingleItemContent {
        let trace = PlaybackTrace(writer: writer, clock: HostClock.shared)
        let limit = frames.map { FrameLimit($0) { [app] in app.finish(.finished) } }
        let (loop, rate, audio, selection) = (loop, rate, app.audio, captions.selection)
        return SingleItemContent(
            app: app, item: item, title: (source.displayName as NSString).lastPathComponent,
            makePlayer: { renderer in
                let sink: any VideoSink = trace.isEnabled || limit != nil
                    ? trace.videoSink(forwardingTo: renderer, limit: limit) : renderer
                let player = Player(clock: HostClock.shared, videoSink: sink, audioSink: audio.makeSink(),
                                    measurementClock: HostClock.shared)
                player.actionAtItemEnd = loop ? .loop : .pause
                player.defaultRate = rate
                player.captionSelection = selection
                return player
            },
            observe: { event, player in
                trace.record(event, player: player)
                if case .firstFrame = event { limit?.firstFrameDelivered() }
            })
    }
}

/// How `reel play` ended: at the end (or `--frames`, or `q`), with a media failure (exit
/// 3), or on SIGINT/SIGTERM in headless mode (exit 128 + the signal, after the trace is
/// written).
enum PlaybackEnd: Sendable {
    case finished
    case failed(String)
    case signal(Int32)

    init(_ outcome: SessionOutcome) {
        switch outcome {
        case .finished: self = .finished
        case .failed(let message): self = .failed(message)
        }
    }

    /// The same end, its message naming `shown` where it named a section of the segment
    /// reader's stream (`reel-live://N/…`, which the user never gave).
    func naming(as shown: String) -> PlaybackEnd {
        guard case .failed(let message) = self else { return self }
        let prefix = "\(LiveMediaLoader.scheme)://"
        var result = ""
        var rest = Substring(message)
        while let found = rest.range(of: prefix) {
            result += rest[..<found.lowerBound] + shown
            rest = rest[found.upperBound...].drop { !$0.isWhitespace && $0 != ":" }
        }
        return .failed(result + rest)
    }

    func throwIfFailed() throws {
        switch self {
        case .finished: return
        case .failed(let message): throw CommandFailure.media(message)
        case .signal(let number):
            let name = number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : "signal \(number)"
            throw CommandFailure(message: "stopped by \(name)", status: 128 + number)
        }
    }
}

/// A headless playback run: the player, its sinks, the trace, and when to stop.
///
/// Threads: built and run from the command's task; the player calls the sink and the
/// event observer on its clock context; SIGINT/SIGTERM arrive on a dispatch queue. They
/// meet only in `outcome` and `limit` (each with its own mutex); the rest is immutable.
final class HeadlessSession: Sendable {
    // Immutable after init.
    let player: Player
    private let manual: ManualClock?
    private let trace: PlaybackTrace
    private let wav: WAVAudioSink?
    private let item: PlayerItem
    private let rate: Double
    /// Fulfilled once: the end, the frame limit, a failure, or a signal.
    private let outcome: OneShot<PlaybackEnd>
    /// Holds a live item at its target offset (real time only: a simulated clock has no edge).
    private let latency: LiveLatencyDriver?

    init(item: PlayerItem, captions: CaptionSelection, rate: Double, frames: Int?, fast: Bool,
         trace writer: TraceWriter, audioOut: String?, loop: Bool) throws {
        let manual = fast ? ManualClock() : nil
        let clock: any EngineClock = manual ?? HostClock.shared
        self.manual = manual
        self.rate = rate
        if let audioOut {
            do {
                wav = try WAVAudioSink(url: URL(fileURLWithPath: audioOut))
            } catch {
                throw CommandFailure.usage("cannot write \(audioOut)")
            }
        } else {
            wav = nil
        }
        self.item = item
        let outcome = OneShot<PlaybackEnd>()
        self.outcome = outcome
        let trace = PlaybackTrace(writer: writer, clock: clock)
        self.trace = trace
        let limit = frames.map { FrameLimit($0) { outcome.fulfil(.finished) } }
        let sink = trace.videoSink(forwardingTo: nil, limit: limit)
        let player = Player(clock: clock, videoSink: sink, audioSink: wav ?? NullAudioSink(), measurementClock: HostClock.shared)
        self.player = player
        latency = fast ? nil : LiveLatencyDriver(player: player) { writer.write(TraceWriter.liveOffset($0)) }
        player.actionAtItemEnd = loop ? .loop : .pause
        player.captionSelection = captions
        // The observer is fixed before anything plays; it holds the player weakly (the
        // player holds the observer).
        _ = player.addEventObserver { [weak player] event in
            guard let player else { return }
            trace.record(event, player: player)
            switch event {
            case .firstFrame: limit?.firstFrameDelivered()
            case .ended(let looping): if !looping { outcome.fulfil(.finished) }
            case .failed(let error): outcome.fulfil(.failed(error.description))
            default: break
            }
        }
    }

    /// Plays until the end, the frame limit, a failure or SIGINT/SIGTERM; then stops the
    /// player (no event reaches the trace after) and finishes the WAV file. The caller
    /// closes the trace.
    func run() async -> PlaybackEnd {
        let outcome = self.outcome
        let signals = TerminationSignals { outcome.fulfil(.signal($0)) }
        player.replaceCurrentItem(with: item)
        player.defaultRate = rate
        player.play()
        let result: PlaybackEnd
        if let manual {
            let stalled = await driveSimulatedClock(manual, player: player) { outcome.isFulfilled }
            result = stalled.map { .failed($0) } ?? outcome.value ?? .finished
        } else {
            result = await outcome.wait()
        }
        // Closing the item joins the engine's threads: not on the concurrency pool.
        latency?.stop()
        let player = self.player
        await onOwnThread(named: "reel.close") {
            player.pause()
            player.replaceCurrentItem(with: nil)
        }
        wav?.finish()
        signals.cancel()
        return result
    }
}

/// `--frames N`: a run may stop once N frames are presented *and* the player's
/// first-frame event was delivered. The engine reports the first frame just after
/// presenting it, so stopping at the Nth presentation alone would lose that event for
/// N = 1. Frames presented after the Nth (while the player is being stopped) are not part
/// of the run: ``framePresented()`` says so, and the trace leaves them out.
final class FrameLimit: Sendable {
    private struct State {
        var presented = 0
        var firstFrameDelivered = false
        var reached = false
    }

    // Immutable after init.
    private let limit: Int
    private let onReached: @Sendable () -> Void

    /// Guarded: the counts, and whether `onReached` ran.
    private let state = Mutex(State())

    /// `onReached` runs once, on the thread of the call that completes the condition,
    /// with no lock held.
    init(_ limit: Int, onReached: @escaping @Sendable () -> Void = {}) {
        self.limit = limit
        self.onReached = onReached
    }

    /// Counts a presented frame; whether it is one of the first N.
    @discardableResult
    func framePresented() -> Bool {
        var admitted = false
        update { state in
            state.presented += 1
            admitted = state.presented <= limit
        }
        return admitted
    }

    func firstFrameDelivered() { update { $0.firstFrameDelivered = true } }

    /// Whether both conditions hold.
    var isReached: Bool { state.withTrackedLock { $0.reached } }

    private func update(_ change: (inout State) -> Void) {
        let fire = state.withTrackedLock { state in
            change(&state)
            guard !state.reached, state.presented >= limit, state.firstFrameDelivered else { return false }
            state.reached = true
            return true
        }
        if fire { onReached() }
    }
}

/// SIGINT and SIGTERM, caught (instead of ending the process) while a headless session
/// plays, so it stops its player and writes its trace on the way out. `handler` runs once,
/// on a dispatch queue; ``cancel()`` gives the signals back their default action.
final class TerminationSignals: Sendable {
    private static let numbers = [SIGINT, SIGTERM]

    private struct State {
        var sources: [any DispatchSourceSignal] = []
        var fired = false
    }
    /// Guarded: the dispatch sources, and whether the handler ran.
    private let state = Mutex(State())

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        state.withTrackedLock { state in
            for number in Self.numbers {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [weak self] in
                    guard let self else { return }
                    let first = self.state.withTrackedLock { state in
                        defer { state.fired = true }
                        return !state.fired
                    }
                    if first { handler(number) }
                }
                source.resume()
                state.sources.append(source)
            }
        }
    }

    func cancel() {
        state.withTrackedLock { state in
            for source in state.sources { source.cancel() }
            state.sources = []
        }
        for number in Self.numbers { signal(number, SIG_DFL) }
    }
}
