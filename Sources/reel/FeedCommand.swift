import ArgumentParser
import Foundation
import ReelTerminal
import ReelAccountClient
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia
import Synchronization

struct FeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed",
        abstract: "Play a feed: a directory of media, a manifest, or a feed API URL.",
        discussion: """
            --headless runs a scripted session: it swipes up --swipes times, dwelling --dwell \
            seconds on each page (with --settle, also until the next page is pre-rendered or \
            has failed, up to 10 s), and prints one JSON line per swipe: {"type":"swipe","index":…,\
            "swipeToFirstFrameMs":…,"preloadStage":"prerendered|prepared|bytes|none",\
            "livePlayers":…,"liveDecoders":…,"rssBytes":…}, then a summary line. Past the last \
            item of a fully loaded feed it wraps to the first. --trace also writes the players' \
            events there. A page whose item cannot be played prints \
            {"type":"failed","index":…,"message":…} instead, as soon as its player fails, and the \
            feed goes on. The exit status is 0 when the feed ran, failed pages or not; 3 when the \
            feed cannot be read (no such directory, no items, the API fails) or no page it \
            visited could be shown. With --terminal, --trace writes the output the terminal \
            gets and why: {"type":"graphics","output":"cells|sixel|kitty","why":…}, as reel play does.
            """
    )

    @Argument(help: "A directory of media files, a manifest (.json file or URL), or a feed API base URL (http://host:port/api/).")
    var source: String

    @Option(help: "Swipes in a headless session.")
    var swipes: Int = 10

    @Option(help: "Seconds on each page before the next swipe.")
    var dwell: Double = 1

    @Flag(help: "Headless: before each swipe, also wait (up to 10 s) until the next page is pre-rendered or has failed, so every swipe measures a warm page however busy the machine is.")
    var settle = false

    @Option(help: "The category to play (its id), when the source has categories.")
    var category: String?

    @Option(help: "A bearer token for the feed API.")
    var token: String?

    @Option(help: "Write the swipe lines and the players' events here as JSON lines ('-' for standard output).")
    var trace: String?

    @OptionGroup(title: "HDR") var toneMapping: ToneMappingFlags
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var loading: LoadingOptions
    @OptionGroup var global: GlobalOptions
    @OptionGroup(title: "Loudness") var loudness: LoudnessOptions<FeedLoudness>
    @OptionGroup(title: "Audio tracks") var audioTracks: AudioTrackOptions

    func validate() throws {
        guard swipes >= 0 else { throw ValidationError("--swipes must be 0 or more") }
        guard dwell >= 0, dwell <= 3600 else { throw ValidationError("--dwell must be between 0 and 3600 seconds") }
        _ = try outputOptions.choose()
    }

    func run() async throws {
        global.apply()
        // A feed API URL is a `reel serve`: its accounts are at the same address, and the
        // token kept for it (`reel login`, or signing in in the window) is used unless --token.
        let accounts = FeedAccounts(feedArgument: source, token: token)
        let stack = try await FeedStack.open(source, loading: loading, token: token ?? accounts?.keptEntry?.token)
        let output = try outputOptions.choose()
        let writer: TraceWriter
        do {
            writer = try TraceWriter(path: trace)
        } catch {
            await stack.shutdown()
            throw error
        }
        if output != .headless {
            // The terminal's graphics choice (and why) goes to the trace, as in `reel play`.
            defer { writer.close() }
            try await FeedFrontEnd.run(output, stack: stack, category: category, options: outputOptions, accounts: accounts,
                                       trace: writer)
            return
        }
        let run = HeadlessFeedRun(stack: stack, category: category, swipes: swipes, dwell: dwell, settle: settle, trace: writer)
        let result = await run.run()
        writer.close()
        await stack.shutdown()
        try result.throwIfFailed()
    }
}

/// A scripted headless feed session: swipe, wait for the page's outcome (its first
/// frame, or its failure), dwell, repeat. A page that fails prints a `failed` line and
/// the run goes on; the run fails (exit 3) only when the feed cannot be read or no page
/// it visited could be shown.
final class HeadlessFeedRun: Sendable {

    struct Swipe: Sendable {
        var index: Int
        var milliseconds: Double
        var stage: PreloadStage
        var livePlayers: Int
        var liveDecoders: Int
        var rssBytes: Int
    }

    /// How long a page may take to show a frame or fail before the run gives up on it
    /// and moves on: a watchdog against a player that hangs. A page whose media cannot
    /// be played fails as fast as its player notices (well under a second for a file
    /// FFmpeg rejects at open), not after this.
    static let watchdogSeconds = 30
    /// How long `--settle` waits for the next page before swiping anyway.
    static let settleSeconds = 10.0

    // Immutable.
    let stack: FeedStack
    let category: String?
    let swipes: Int
    let dwell: Double
    let settle: Bool
    let trace: TraceWriter
    private let outcomes = PageOutcomes()
    private let authorizationRequired = Mutex(false)

    init(stack: FeedStack, category: String?, swipes: Int, dwell: Double, settle: Bool = false, trace: TraceWriter) {
        self.stack = stack
        self.category = category
        self.swipes = swipes
        self.dwell = dwell
        self.settle = settle
        self.trace = trace
    }

    func run() async -> SessionOutcome {
        let session = stack.makeSession(
            category: category,
            configuration: FeedSession.Configuration(wrapsAround: true),
            audioSink: { NullAudioSink() }
        )
        // Before the session starts: no event is missed.
        session.addObserver { [weak self] event in self?.observe(event) }
        do {
            try await session.start()
        } catch {
            await session.shutdown()
            if authorizationRequired.withTrackedLock({ $0 }) { return .failed("the feed needs authorization (use --token)") }
            return .failed(describe(error))
        }
        let playerEvents = ObservedPlayers(trace: trace)
        playerEvents.observe(session)
        var results: [Swipe] = []
        var failures: [(index: Int, message: String)] = []
        var shown = 0
        switch await outcomes.wait(for: 0, watchdogSeconds: Self.watchdogSeconds) {
        case .ready(let ms, let stage):
            emitSwipe(index: 0, ms: ms, stage: stage, session: session, isSwipe: false)
            shown += 1
        case .failed(let message):
            emitFailure(index: 0, message: message)
            failures.append((0, message))
        }
        for _ in 0..<swipes {
            await sleep(seconds: dwell)
            if settle { await settleNextPage(of: session) }
            let before = session.currentIndex
            outcomes.reset()
            session.next()
            let index = session.currentIndex
            if index == before { break }  // the end of a feed that cannot wrap yet
            playerEvents.observe(session)
            switch await outcomes.wait(for: index, watchdogSeconds: Self.watchdogSeconds) {
            case .ready(let ms, let stage):
                results.append(emitSwipe(index: index, ms: ms, stage: stage, session: session, isSwipe: true))
                shown += 1
            case .failed(let message):
                emitFailure(index: index, message: message)
                failures.append((index, message))
            }
        }
        await sleep(seconds: min(dwell, 1))
        let summary = Self.summary(results, failed: failures.count)
        printLine(Self.json(summary))
        trace.write(summary)
        await session.shutdown()
        if shown == 0, let last = failures.last {
            let pages = failures.count == 1 ? "the only page visited" : "all \(failures.count) pages visited"
            return .failed("\(pages) failed; item \(last.index): \(last.message)")
        }
        return .finished
    }

    @discardableResult
    private func emitSwipe(index: Int, ms: Double, stage: PreloadStage, session: FeedSession, isSwipe: Bool) -> Swipe {
        let swipe = Swipe(index: index, milliseconds: ms, stage: stage, livePlayers: session.livePlayers,
                          liveDecoders: max(session.liveDecoders, 0), rssBytes: residentBytes())
        let object: [String: Any] = [
            "type": isSwipe ? "swipe" : "open", "index": index,
            "swipeToFirstFrameMs": (ms * 1000).rounded() / 1000, "preloadStage": stage.rawValue,
            "livePlayers": swipe.livePlayers, "liveDecoders": swipe.liveDecoders, "rssBytes": swipe.rssBytes,
        ]
        printLine(Self.json(object))
        trace.write(object)
        return swipe
    }

    private func emitFailure(index: Int, message: String) {
        let object: [String: Any] = ["type": "failed", "index": index, "message": message]
        printLine(Self.json(object))
        trace.write(object)
    }

    static func summary(_ swipes: [Swipe], failed: Int) -> [String: Any] {
        let times = swipes.map(\.milliseconds).sorted()
        func percentile(_ p: Double) -> Double {
            guard !times.isEmpty else { return 0 }
            let rank = Int((p * Double(times.count)).rounded(.up)) - 1
            return (times[min(max(rank, 0), times.count - 1)] * 1000).rounded() / 1000
        }
        var stages: [String: Int] = [:]
        for swipe in swipes { stages[swipe.stage.rawValue, default: 0] += 1 }
        return [
            "type": "summary", "swipes": swipes.count, "failed": failed,
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
        switch event {
        case .firstFrame(let index, let ms, let stage):
            outcomes.record(index, .ready(ms, stage))
        case .failed(let index, let message):
            outcomes.record(index, .failed(message))
        case .authorizationRequired:
            authorizationRequired.withTrackedLock { $0 = true }
            trace.write(["type": "authorizationRequired"])
        case .pageLoadFailed(let message):
            trace.write(["type": "pageLoadFailed", "message": message])
        case .noMoreData:
            trace.write(["type": "noMoreData"])
        default:
            break
        }
    }

    /// Waits until the page after the current one is pre-rendered or has failed (polling:
    /// the session tells no event for it), or `settleSeconds` have passed.
    private func settleNextPage(of session: FeedSession) async {
        let count = session.items.count
        guard count > 1 else { return }
        let next = (session.currentIndex + 1) % count
        let deadline = ContinuousClock.now + .seconds(Self.settleSeconds)
        while ContinuousClock.now < deadline {
            if session.preloadStage(at: next) == .prerendered || session.failure(at: next) != nil { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func sleep(seconds: Double) async {
        guard seconds > 0 else { return }
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
    }
}

/// The outcome of each page since the last swipe (its first frame or its failure, the
/// first that came), awaited without blocking a thread.
final class PageOutcomes: Sendable {
    enum Outcome: Sendable {
        case ready(Double, PreloadStage)
        case failed(String)
    }

    private struct State {
        var outcomes: [Int: Outcome] = [:]
        var waiter: (index: Int, continuation: CheckedContinuation<Outcome, Never>)?
    }
    private let state = Mutex(State())

    /// Records `outcome` for page `index` unless it has one, and wakes its waiter.
    func record(_ index: Int, _ outcome: Outcome) {
        let waiter: CheckedContinuation<Outcome, Never>? = state.withTrackedLock { s in
            guard s.outcomes[index] == nil else { return nil }
            s.outcomes[index] = outcome
            guard let waiter = s.waiter, waiter.index == index else { return nil }
            s.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: outcome)
    }

    /// Forgets every outcome (a swipe is about to land).
    func reset() { state.withTrackedLock { $0.outcomes = [:] } }

    /// Page `index`'s outcome; a failure after `watchdogSeconds` if none came.
    func wait(for index: Int, watchdogSeconds: Int) async -> Outcome {
        let watchdog = Task {
            do { try await Task.sleep(for: .seconds(watchdogSeconds)) } catch { return }
            self.record(index, .failed("nothing to show after \(watchdogSeconds) s (the player is stuck)"))
        }
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            let known: Outcome? = state.withTrackedLock { s in
                if let outcome = s.outcomes[index] { return outcome }
                s.waiter = (index, continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}

/// Writes the events of the feed's current player to the trace (each player once).
final class ObservedPlayers: Sendable {
    private let trace: TraceWriter
    /// Players already observed.
    private let seen = Mutex<Set<ObjectIdentifier>>([])

    init(trace: TraceWriter) { self.trace = trace }

    func observe(_ session: FeedSession) {
        guard trace.isEnabled else { return }
        for index in [session.currentIndex - 1, session.currentIndex, session.currentIndex + 1] {
            guard let player = session.player(at: index) else { continue }
            let fresh = seen.withTrackedLock { $0.insert(ObjectIdentifier(player)).inserted }
            guard fresh else { continue }
            let trace = self.trace
            // A page pre-rendered before it was observed decided its gain already.
            if let report = player.loudness { Self.write(report, of: player, to: trace) }
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
                case .loudness(let report):
                    Self.write(report, of: player, to: trace)
                default:
                    break
                }
            }
        }
    }
}

extension ObservedPlayers {
    /// A `loudness` line naming the item.
    static func write(_ report: LoudnessReport, of player: Player, to trace: TraceWriter) {
        var object = TraceWriter.loudness(report, at: 0)
        object["at"] = nil
        object["url"] = player.currentItem?.url.absoluteString ?? ""
        trace.write(object)
    }
}

/// Writes a line to standard output at once (no buffering behind a pipe).
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Shows a feed in the window or the terminal until the user quits; shuts the stack down.
enum FeedFrontEnd {
    /// - Parameter trace: where the terminal writes its `graphics` event (the output chosen
    ///   and why), as `reel play --trace` does; nil for none.
    static func run(_ output: OutputChoice, stack: FeedStack, category: String?, options: OutputOptions,
                    accounts: FeedAccounts? = nil, trace: TraceWriter? = nil) async throws {
        switch output {
        case .window:
            let audio = ProcessAudio()
            WindowAudio.makeSink = { audio.makeSink() }
            let outcome = await FeedWindowSession.run(stack: stack, category: category, renderer: options.renderer.kind, hud: options.terminal.hud,
                                                      accounts: accounts)
            audio.close()
            await stack.shutdown()
            try outcome.throwIfFailed()
        case .terminal:
            let audio = ProcessAudio()
            let app = TerminalApp(configuration: options.terminal.appConfiguration(trace: trace), audio: audio)
            let feed = TerminalFeedContent.Feed(source: stack.source) { source, category in
                stack.makeSession(source: source, category: category, configuration: FeedSession.Configuration(wrapsAround: true),
                                  audioSink: { audio.makeSink() })
            }
            let content = TerminalFeedContent(
                app: app, feed: feed, initialCategory: category,
                accounts: accounts.map { .init(server: $0.server, signedInName: $0.signedInName) })
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

/// The accounts of the `reel serve` a feed comes from: its address (scheme, host, port of
/// the feed API URL), the token given with --token, and the one kept for it.
struct FeedAccounts: Sendable {
    let server: URL
    let token: String?
    let store: TokenStore

    /// nil unless `feedArgument` is an http(s) feed API URL (not a manifest).
    init?(feedArgument: String, token: String?, store: TokenStore = TokenStore(directory: TokenStore.defaultDirectory())) {
        guard let url = URL(string: feedArgument), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              url.pathExtension.lowercased() != "json", let host = url.host else { return nil }
        var components = URLComponents()
        components.scheme = scheme
        components.host = host
        components.port = url.port
        guard let server = components.url else { return nil }
        self.init(server: server, token: token, store: store)
    }

    init(server: URL, token: String?, store: TokenStore = TokenStore(directory: TokenStore.defaultDirectory())) {
        self.server = server
        self.token = token
        self.store = store
    }

    /// The token kept for the server, if it has not expired (an unreadable file counts as none).
    var keptEntry: TokenStore.Entry? { (try? store.entry(for: server)) ?? nil }

    /// Who is signed in: the kept entry's name, "token" for --token, nil when signed out.
    var signedInName: String? { token != nil ? "--token" : keptEntry?.name }
}
