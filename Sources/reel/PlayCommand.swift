import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia

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

    @Flag(help: "Loop at the end instead of stopping.")
    var loop = false

    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var loading: LoadingOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard rate >= 0.25, rate <= 4 else { throw ValidationError("--rate must be between 0.25 and 4") }
        if let frames, frames <= 0 { throw ValidationError("--frames must be positive") }
        if let start, !(start >= 0) { throw ValidationError("--start must be a time in seconds, 0 or more") }
        _ = try outputOptions.choose()
    }

    func run() async throws {
        global.apply()
        let source = try MediaSource(input)
        let stack = try loading.makeLoader(for: source)
        let output = try outputOptions.choose()
        if output == .window {
            let audio = ProcessAudio()
            WindowAudio.makeSink = { audio.makeSink() }
            let outcome = await WindowSession.run(
                source: source, loader: stack.loader, start: start, rate: rate, loop: loop,
                renderer: outputOptions.renderer.kind, hud: outputOptions.terminal.hud, frames: frames
            )
            audio.close()
            await stack.shutdown()
            try outcome.throwIfFailed()
            return
        }
        if output == .terminal {
            let app = TerminalApp(options: outputOptions.terminal, frameLimit: frames)
            let content = SingleItemContent(app: app, source: source, loader: stack.loader, start: start, rate: rate, loop: loop)
            let outcome = try await app.run(content)
            await stack.shutdown()
            try outcome.throwIfFailed()
            return
        }
        let session = try HeadlessSession(
            source: source, loader: stack.loader, start: start, rate: rate, frames: frames, fast: clock == .fast,
            tracePath: trace, audioOut: audioOut, loop: loop
        )
        let outcome = try await session.run()
        await stack.shutdown()
        try outcome.throwIfFailed()
    }
}

/// A headless playback run: the player, its sinks, the trace, and when to stop.
final class HeadlessSession: @unchecked Sendable {

    let player: Player
    private let manual: ManualClock?
    private let trace: TraceWriter
    private let wav: WAVAudioSink?
    private let item: PlayerItem
    private let rate: Double
    private let outcome = OneShot<SessionOutcome>()

    init(source: MediaSource, loader: any ResourceLoader, start: Double?, rate: Double, frames: Int?, fast: Bool,
         tracePath: String?, audioOut: String?, loop: Bool) throws {
        let manual = fast ? ManualClock() : nil
        let clock: any EngineClock = manual ?? HostClock.shared
        self.manual = manual
        let trace = try TraceWriter(path: tracePath)
        self.trace = trace
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
        let startTime = start.map { MediaTime(seconds: $0, preferredTimescale: 1_000_000) }
        item = PlayerItem(url: source.url, loader: loader, startTime: startTime)
        let openedAt = clock.now
        let counter = FrameCounter(limit: frames)
        let traceFrames = trace.isEnabled
        let sink = HeadlessVideoSink { frame, presentation in
            if traceFrames {
                trace.write([
                    "type": "frame", "pts": frame.pts.stringValue, "seconds": frame.pts.seconds,
                    "md5": frame.md5(), "presentedAt": (presentation.presentedAt - openedAt).seconds,
                    "dropped": presentation.droppedFrames,
                ])
            }
            counter.increment()
        }
        player = Player(clock: clock, videoSink: sink, audioSink: wav ?? NullAudioSink(), measurementClock: HostClock.shared)
        player.actionAtItemEnd = loop ? .loop : .pause
        counter.onLimit = { [weak self] in self?.finish(.finished) }
        player.addEventObserver { [weak self] event in
            guard let self else { return }
            switch event {
            case .framePresented, .statusChanged, .timeControlStatusChanged:
                break
            case .firstFrame(let report):
                trace.write(TraceWriter.firstFrame(report))
            case .seekCompleted(let target, let landed, let finished):
                var object: [String: Any] = ["type": "seek", "target": target.stringValue, "finished": finished]
                if let landed { object["landed"] = landed.stringValue }
                trace.write(object)
            case .rateChanged(let rate):
                trace.write(["type": "rate", "rate": rate, "at": (clock.now - openedAt).seconds])
            case .stall(let stalled):
                trace.write(["type": "stall", "stalled": stalled, "at": (clock.now - openedAt).seconds])
            case .ended(let looping):
                let stats = self.player.statistics
                trace.write(["type": "end", "at": (clock.now - openedAt).seconds, "looping": looping,
                             "presentedFrames": stats.presentedFrames, "droppedFrames": stats.droppedFrames])
                if !looping { self.finish(.finished) }
            case .failed(let error):
                trace.write(["type": "error", "message": error.description])
                self.finish(.failed(error.description))
            }
        }
    }

    private func finish(_ result: SessionOutcome) { outcome.fulfil(result) }

    func run() async throws -> SessionOutcome {
        player.replaceCurrentItem(with: item)
        player.defaultRate = rate
        player.play()
        let result: SessionOutcome
        if let manual {
            let outcome = self.outcome
            let stalled = await driveSimulatedClock(manual, player: player) { outcome.isFulfilled }
            result = stalled.map { .failed($0) } ?? outcome.value ?? .finished
        } else {
            result = await outcome.wait()
        }
        player.pause()
        player.replaceCurrentItem(with: nil)
        wav?.finish()
        trace.close()
        return result
    }
}

/// Counts presented frames and says when a limit is reached.
final class FrameCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private let limit: Int?
    var onLimit: (@Sendable () -> Void)?

    init(limit: Int?) { self.limit = limit }

    func increment() {
        let reached: Bool = lock.withLock {
            count += 1
            return limit.map { count == $0 } ?? false
        }
        if reached { onLimit?() }
    }
}

/// Runs blocking work on a thread of its own (never on the concurrency pool).
func onThread<T: Sendable>(named name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }
}
