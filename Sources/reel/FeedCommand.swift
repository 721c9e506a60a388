import ArgumentParser
import Foundation
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia

struct FeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed",
        abstract: "Play a feed: a directory of media, a manifest, or a feed API URL.",
        discussion: """
            --headless runs a scripted session: it swipes up --swipes times, dwelling --dwell \
            seconds on each page, and prints one JSON line per swipe: {"type":"swipe","index":…,\
            "swipeToFirstFrameMs":…,"preloadStage":"prerendered|prepared|bytes|none",\
            "livePlayers":…,"liveDecoders":…,"rssBytes":…}, then a summary line. Past the last \
            item of a fully loaded feed it wraps to the first. --trace also writes the players' \
            events there.
            """
    )

    @Argument(help: "A directory of media files, a manifest (.json file or URL), or a feed API base URL (http://host:port/api/).")
    var source: String

    @Option(help: "Swipes in a headless session.")
    var swipes: Int = 10

    @Option(help: "Seconds on each page before the next swipe.")
    var dwell: Double = 1

    @Option(help: "The category to play (its id), when the source has categories.")
    var category: String?

    @Option(help: "A bearer token for the feed API.")
    var token: String?

    @Option(help: "Write the swipe lines and the players' events here as JSON lines ('-' for standard output).")
    var trace: String?

    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var loading: LoadingOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard swipes >= 0 else { throw ValidationError("--swipes must be 0 or more") }
        guard dwell >= 0, dwell <= 3600 else { throw ValidationError("--dwell must be between 0 and 3600 seconds") }
        _ = try outputOptions.choose()
    }

    func run() async throws {
        global.apply()
        let stack = try await FeedStack.open(source, loading: loading, token: token)
        let output = try outputOptions.choose()
        if output != .headless {
            try await FeedFrontEnd.run(output, stack: stack, category: category, options: outputOptions)
            return
        }
        let writer: TraceWriter
        do {
            writer = try TraceWriter(path: trace)
        } catch {
            await stack.shutdown()
            throw error
        }
        let run = HeadlessFeedRun(stack: stack, category: category, swipes: swipes, dwell: dwell, trace: writer)
        let result = await run.run()
        writer.close()
        await stack.shutdown()
        try result.throwIfFailed()
    }
}

/// A scripted headless feed session: swipe, wait for the first frame, dwell, repeat.
final class HeadlessFeedRun: @unchecked Sendable {

    struct Swipe: Sendable {
        var index: Int
        var milliseconds: Double
        var stage: PreloadStage
        var livePlayers: Int
        var liveDecoders: Int
        var rssBytes: Int
    }

    let stack: FeedStack
    let category: String?
    let swipes: Int
    let dwell: Double
    let trace: TraceWriter
    private let lock = NSCondition()
    private var firstFrames: [Int: (Double, PreloadStage)] = [:]
    private var failures: [Int: String] = [:]
    private var pendingIndex: Int?
    private var authorizationRequired = false
    private(set) var results: [Swipe] = []
    /// Called after every swipe (the swipe benchmark prints its progress).
    var onSwipe: (@Sendable (Swipe) -> Void)?

    init(stack: FeedStack, category: String?, swipes: Int, dwell: Double, trace: TraceWriter) {
        self.stack = stack
        self.category = category
        self.swipes = swipes
        self.dwell = dwell
        self.trace = trace
    }

    func run() async -> SessionOutcome {
        let session = stack.makeSession(
            category: category,
            configuration: FeedSession.Configuration(wrapsAround: true),
            audioSink: { NullAudioSink() }
        )
        session.addObserver { [weak self] event in self?.observe(event) }
        defer { session.close() }
        do {
            try await session.start()
        } catch {
            if lock.withLock({ authorizationRequired }) { return .failed("the feed needs authorization (use --token)") }
            return .failed(describe(error))
        }
        let playerEvents = ObservedPlayers(trace: trace)
        playerEvents.observe(session)
        if case .failed(let message) = await waitForFirstFrame(of: 0) {
            return .failed(message)
        }
        emitSwipe(index: 0, session: session, isSwipe: false)
        for _ in 0..<swipes {
            await sleep(seconds: dwell)
            let before = session.currentIndex
            lock.withLock { firstFrames.removeAll(); failures.removeAll() }
            session.next()
            let index = session.currentIndex
            if index == before { break }  // the end of a feed that cannot wrap yet
            playerEvents.observe(session)
            if case .failed(let message) = await waitForFirstFrame(of: index) {
                trace.write(["type": "error", "index": index, "message": message])
                printError("reel: item \(index) failed: \(message)")
                continue
            }
            emitSwipe(index: index, session: session, isSwipe: true)
        }
        await sleep(seconds: min(dwell, 1))
        let summary = Self.summary(results)
        printLine(Self.json(summary))
        trace.write(summary)
        return .finished
    }

    private func emitSwipe(index: Int, session: FeedSession, isSwipe: Bool) {
        let (ms, stage) = lock.withLock { firstFrames[index] ?? (0, .none) }
        let swipe = Swipe(index: index, milliseconds: ms, stage: stage, livePlayers: session.livePlayers,
                          liveDecoders: max(session.liveDecoders, 0), rssBytes: residentBytes())
        let object: [String: Any] = [
            "type": isSwipe ? "swipe" : "open", "index": index,
            "swipeToFirstFrameMs": (ms * 1000).rounded() / 1000, "preloadStage": stage.rawValue,
            "livePlayers": swipe.livePlayers, "liveDecoders": swipe.liveDecoders, "rssBytes": swipe.rssBytes,
        ]
        if isSwipe { results.append(swipe) }
        printLine(Self.json(object))
        trace.write(object)
        onSwipe?(swipe)
    }

    static func summary(_ swipes: [Swipe]) -> [String: Any] {
        let times = swipes.map(\.milliseconds).sorted()
        func percentile(_ p: Double) -> Double {
            guard !times.isEmpty else { return 0 }
            let rank = Int((p * Double(times.count)).rounded(.up)) - 1
            return (times[min(max(rank, 0), times.count - 1)] * 1000).rounded() / 1000
        }
        var stages: [String: Int] = [:]
        for swipe in swipes { stages[swipe.stage.rawValue, default: 0] += 1 }
        return [
            "type": "summary", "swipes": swipes.count,
            "p50Ms": percentile(0.5), "p95Ms": percentile(0.95), "maxMs": times.last.map { ($0 * 1000).rounded() / 1000 } ?? 0,
            "stages": stages,
            "maxLivePlayers": swipes.map(\.livePlayers).max() ?? 0,
            "maxLiveDecoders": swipes.map(\.liveDecoders).max() ?? 0,
            "rssFirstBytes": swipes.first?.rssBytes ?? 0, "rssLastBytes": swipes.last?.rssBytes ?? 0,
        ]
    }

    static func json(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    private func observe(_ event: FeedEvent) {
        lock.withLock {
            switch event {
            case .firstFrame(let index, let ms, let stage):
                firstFrames[index] = (ms, stage)
            case .failed(let index, let message):
                failures[index] = message
            case .authorizationRequired:
                authorizationRequired = true
            default:
                break
            }
            lock.broadcast()
        }
        switch event {
        case .pageLoadFailed(let message): trace.write(["type": "pageLoadFailed", "message": message])
        case .noMoreData: trace.write(["type": "noMoreData"])
        case .authorizationRequired: trace.write(["type": "authorizationRequired"])
        default: break
        }
    }

    private enum Wait { case ready, failed(String) }

    private func waitForFirstFrame(of index: Int) async -> Wait {
        await onThread(named: "reel.feed.wait") {
            let deadline = Date().addingTimeInterval(30)
            self.lock.lock()
            defer { self.lock.unlock() }
            while true {
                if self.firstFrames[index] != nil { return .ready }
                if let message = self.failures[index] { return .failed(message) }
                if !self.lock.wait(until: deadline) { return .failed("no first frame after 30 s") }
            }
        }
    }

    private func sleep(seconds: Double) async {
        guard seconds > 0 else { return }
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
    }
}

/// Writes the events of the feed's current player to the trace (each player once).
final class ObservedPlayers: @unchecked Sendable {
    private let trace: TraceWriter
    private let lock = NSLock()
    private var seen: Set<ObjectIdentifier> = []

    init(trace: TraceWriter) { self.trace = trace }

    func observe(_ session: FeedSession) {
        guard trace.isEnabled else { return }
        for index in [session.currentIndex - 1, session.currentIndex, session.currentIndex + 1] {
            guard let player = session.player(at: index) else { continue }
            let fresh = lock.withLock { seen.insert(ObjectIdentifier(player)).inserted }
            guard fresh else { continue }
            let trace = self.trace
            player.addEventObserver { event in
                switch event {
                case .firstFrame(let report):
                    var object = TraceWriter.firstFrame(report)
                    object["url"] = player.currentItem?.url.absoluteString
                    trace.write(object)
                case .stall(let stalled):
                    trace.write(["type": "stall", "stalled": stalled, "url": player.currentItem?.url.absoluteString ?? ""])
                case .failed(let error):
                    trace.write(["type": "error", "message": error.description])
                case .ended(let looping):
                    trace.write(["type": "end", "looping": looping, "url": player.currentItem?.url.absoluteString ?? ""])
                default:
                    break
                }
            }
        }
    }
}

/// Writes a line to standard output at once (no buffering behind a pipe).
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Shows a feed in the window or the terminal until the user quits; shuts the stack down.
enum FeedFrontEnd {
    static func run(_ output: OutputChoice, stack: FeedStack, category: String?, options: OutputOptions) async throws {
        switch output {
        case .window:
            let audio = ProcessAudio()
            WindowAudio.makeSink = { audio.makeSink() }
            let outcome = await FeedWindowSession.run(stack: stack, category: category, renderer: options.renderer.kind, hud: options.terminal.hud)
            audio.close()
            await stack.shutdown()
            try outcome.throwIfFailed()
        case .terminal:
            let app = TerminalApp(options: options.terminal)
            let content = TerminalFeedContent(app: app, stack: stack, initialCategory: category)
            let outcome: SessionOutcome
            do {
                outcome = try await app.run(content)
            } catch {
                await stack.shutdown()
                throw error
            }
            await stack.shutdown()
            try outcome.throwIfFailed()
        case .headless:
            await stack.shutdown()
        }
    }
}
