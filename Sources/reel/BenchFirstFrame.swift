import ArgumentParser
import Foundation
import Synchronization
import ReelCore
import ReelStreaming
import ReelFeed
import ReelLoading
import ReelMedia
import ReelMediaTools
import ReelOrigin
import ReelThreads

/// `reel bench first-frame`: time to the first frame, Reel against FFmpeg opening the
/// same URL itself, interleaved run by run on the same shaped origin.
struct BenchFirstFrameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "first-frame",
        abstract: "Time to first frame: cold, warm, pre-rendered and moov-at-end, against FFmpeg.",
        discussion: """
            Without inputs it encodes two clips (moov first and moov at the end) into a temporary \
            directory. A directory is served by an in-process origin with --rtt-ms and --kbps; a URL \
            is measured where it is. Reel's time runs from replaceCurrentItem to the first frame \
            presented; FFmpeg's from avformat_open_input to the first decoded frame.
            """
    )

    @Argument(help: "Directories of media to serve, or http(s) URLs (default: clips made for the run).")
    var inputs: [String] = []

    @Option(name: .customLong("rtt-ms"), help: "The origin's latency per request, in milliseconds.")
    var rttMilliseconds: Int = 40

    @Option(help: "The origin's bandwidth, in kilobits per second.")
    var kbps: Int = 20_000

    @Option(help: "Runs per scenario.")
    var runs: Int = 10

    @Option(name: .customLong("scenario"),
            help: "Measure only this scenario (cold, warm, preloaded, decode-floor, moov-at-end, hls, dash, or a row's full name); repeatable.")
    var onlyScenarios: [String] = []

    @Flag(help: "Print the results as JSON instead of tables.")
    var json = false

    @Option(help: "Write an SVG chart of the distributions here.")
    var plot: String?

    @Option(name: .customLong("clip-seconds"), help: "Length of the clips made when no input is given.")
    var clipSeconds: Double = 10

    @Option(name: .customLong("clip-size"), help: "WIDTHxHEIGHT of the clips made when no input is given.")
    var clipSize: String = "720x1280"

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        guard rttMilliseconds >= 0 else { throw ValidationError("--rtt-ms must not be negative") }
        guard kbps > 0 else { throw ValidationError("--kbps must be positive") }
        guard clipSeconds > 0, clipSeconds <= 120 else { throw ValidationError("--clip-seconds must be in (0, 120]") }
        guard parsedClipSize != nil else { throw ValidationError("--clip-size must look like 720x1280") }
    }

    var parsedClipSize: (Int, Int)? {
        let parts = clipSize.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 16, parts[1] >= 16, parts[0] % 2 == 0, parts[1] % 2 == 0 else { return nil }
        return (parts[0], parts[1])
    }

    func run() async throws {
        global.apply()
        let bench = FirstFrameBench(rttMilliseconds: rttMilliseconds, kbps: kbps, runs: runs, progress: !json)
        bench.verbose = global.verbose
        defer { bench.cleanUp() }
        do {
            try await bench.prepare(inputs: inputs, clipSeconds: clipSeconds, clipSize: parsedClipSize!, only: onlyScenarios)
            try await bench.measure()
        } catch {
            await bench.stop()
            throw error
        }
        await bench.stop()
        let report = bench.report()
        if json {
            print(report.json())
        } else {
            print(report.text(), terminator: "")
        }
        if let plot {
            do {
                try BenchPlot.svg(report).write(toFile: plot, atomically: true, encoding: .utf8)
            } catch {
                throw CommandFailure.usage("cannot write \(plot): \(error.localizedDescription)")
            }
            if !json { print("chart: \(plot)") }
        }
    }
}

/// One measured item: its URL, and the local file behind it when there is one.
struct BenchTarget {
    var label: String
    var url: URL
    var localFile: URL?
    var moovAtEnd: Bool
    /// An HLS playlist or DASH manifest: measured cold only, against FFmpeg opening it itself.
    var isStream = false
    /// `hls` or `dash` for a stream.
    var streamKind = "hls"
    var baseline: [FFmpegBaseline.FirstFrameTiming] = []
    var floorBaseline: [FFmpegBaseline.FirstFrameTiming] = []
    var warmCache: (directory: TemporaryDirectory, cache: RangeCache)?
}

/// A scenario's samples.
final class ScenarioRecord {
    enum Kind: String { case cold, warm, preloaded, decodeFloor = "decode-floor", moovAtEnd = "moov-at-end" }
    let name: String
    let kind: Kind
    let targetIndex: Int
    var reel: [Double] = []
    var reports: [FirstFrameReport] = []
    /// Preloaded: swipe until the player's clock runs.
    var playing: [Double] = []
    /// HTTP requests the origin received before the first frame.
    var originRequests: [Double] = []

    init(name: String, kind: Kind, targetIndex: Int) {
        self.name = name
        self.kind = kind
        self.targetIndex = targetIndex
    }
}

/// The first-frame benchmark's state: origin, targets, scenarios.
final class FirstFrameBench {
    let rttMilliseconds: Int
    let kbps: Int
    let runs: Int
    let progress: Bool
    var verbose = false
    var origin: OriginServer?
    var targets: [BenchTarget] = []
    var scenarios: [ScenarioRecord] = []
    var temporary: [TemporaryDirectory] = []
    var originDescription = ""
    /// The preload stage the session reported for each pre-rendered swipe.
    var stages: [PreloadStage] = []

    init(rttMilliseconds: Int, kbps: Int, runs: Int, progress: Bool) {
        self.rttMilliseconds = rttMilliseconds
        self.kbps = kbps
        self.runs = runs
        self.progress = progress
    }

    func status(_ text: String) {
        if progress { printError(text) }
    }

    // MARK: Measuring

    func measure() async throws {
        for run in 0..<runs {
            status("run \(run + 1)/\(runs)")
            for index in targets.indices where scenarios.contains(where: { $0.targetIndex == index }) {
                // Alternate which goes first so neither always meets a warmer origin.
                let baselineFirst = run % 2 == 0
                if baselineFirst { try await measureBaseline(index) }
                for scenario in scenarios where scenario.targetIndex == index {
                    try await measure(scenario)
                }
                if !baselineFirst { try await measureBaseline(index) }
            }
        }
    }

    private func measureBaseline(_ index: Int) async throws {
        let url = targets[index].url
        do {
            let timing = try await onOwnThread(named: "reel.baseline") { try FFmpegBaseline.firstFrame(url: url) }
            targets[index].baseline.append(timing)
        } catch {
            throw CommandFailure.media("FFmpeg baseline: \(describe(error))")
        }
        if let file = targets[index].localFile, scenarios.contains(where: { $0.targetIndex == index && $0.kind == .decodeFloor }) {
            do {
                let local = try await onOwnThread(named: "reel.baseline") { try FFmpegBaseline.firstFrame(url: file) }
                targets[index].floorBaseline.append(local)
            } catch {
                throw CommandFailure.media("FFmpeg baseline: \(describe(error))")
            }
        }
    }

    private func measure(_ scenario: ScenarioRecord) async throws {
        let target = targets[scenario.targetIndex]
        switch scenario.kind {
        case .cold, .moovAtEnd:
            let stack = try ColdStack()
            defer { stack.cache.close(); stack.directory.remove() }
            let counter = originCounter()
            let result = try await Self.firstFrame(url: target.url, loader: stack.loader, atFirstFrame: counter.mark)
            await stack.http.shutdown()
            scenario.reel.append(result.ms)
            scenario.reports.append(result.report)
            record(counter, in: scenario)
        case .warm:
            guard let warm = target.warmCache else { return }
            let http = HTTPLoader()
            let counter = originCounter()
            let result = try await Self.firstFrame(url: target.url, loader: CachingLoader(upstream: http, cache: warm.cache),
                                                   atFirstFrame: counter.mark)
            await http.shutdown()
            scenario.reel.append(result.ms)
            scenario.reports.append(result.report)
            record(counter, in: scenario)
        case .decodeFloor:
            guard let file = target.localFile else { return }
            let result = try await Self.firstFrame(url: file, loader: FileLoader())
            scenario.reel.append(result.ms)
            scenario.reports.append(result.report)
        case .preloaded:
            let (shown, playing, report) = try await swipeToPrerendered(target)
            scenario.reel.append(shown)
            scenario.playing.append(playing)
            if let report { scenario.reports.append(report) }
        }
    }

    /// Reel's time from `replaceCurrentItem` to the first frame presented.
    static func firstFrame(url: URL, loader: any ResourceLoader,
                           atFirstFrame: (@Sendable () -> Void)? = nil) async throws -> (ms: Double, report: FirstFrameReport) {
        let player = Player(clock: HostClock.shared, videoSink: HeadlessVideoSink(), audioSink: NullAudioSink())
        let shot = OneShot<Result<FirstFrameReport, MediaError>>()
        player.addEventObserver { event in
            switch event {
            case .firstFrame(let report):
                atFirstFrame?()
                shot.fulfil(.success(report))
            case .failed(let error): shot.fulfil(.failure(error))
            default: break
            }
        }
        let start = monotonicMs()
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader))
        player.play()
        let outcome = await shot.wait(timeout: 60)
        player.pause()
        player.replaceCurrentItem(with: nil)
        guard let (result, at) = outcome else { throw CommandFailure.media("\(url.absoluteString): no first frame within 60 s") }
        switch result {
        case .success(let report): return (at - start, report)
        case .failure(let error): throw CommandFailure.media(error.description)
        }
    }

    /// A two-item FeedSession (the item on screen, then the measured URL) over a cold
    /// cache: once the session holds the next item pre-rendered, swipe to it; the time
    /// is the session's own swipe-to-first-frame, and the swipe until the player runs.
    private func swipeToPrerendered(_ target: BenchTarget) async throws -> (shown: Double, playing: Double, report: FirstFrameReport?) {
        let stack = try ColdStack()
        // Players still releasing may write to the cache after the session closes: removed again at the end.
        temporary.append(stack.directory)
        defer { stack.cache.close(); stack.directory.remove() }
        let first = target.localFile ?? target.url
        let manifest = """
            {"items":[{"id":"on-screen","title":"on screen","video":\(jsonString(first.absoluteString))},
                      {"id":"next","title":"next","video":\(jsonString(target.url.absoluteString))}]}
            """
        let source = try ManifestFeedSource(manifest: Data(manifest.utf8), baseURL: URL(fileURLWithPath: "/"))
        let session = FeedSession(source: source, loader: SchemeRoutingLoader(files: FileLoader(), remote: stack.loader),
                                  audioSink: { NullAudioSink() })
        let firstFrames = LockedDictionary<Int, (Double, PreloadStage)>()
        let failure = OneShot<String>()
        session.addObserver { event in
            switch event {
            case .firstFrame(let index, let ms, let stage): firstFrames.set(index, (ms, stage))
            case .failed(_, let message): failure.fulfil(message)
            default: break
            }
        }
        defer { session.close() }
        do { try await session.start() } catch { throw CommandFailure.media("feed: \(describe(error))") }
        // Wait (30 s at most) until the first item shows and the next one is pre-rendered.
        let deadline = monotonicMs() + 30_000
        while firstFrames.get(0) == nil || session.preloadStage(at: 1) != .prerendered {
            if failure.isFulfilled { throw CommandFailure.media("feed item failed to open") }
            if monotonicMs() > deadline { throw CommandFailure.media("\(target.url.absoluteString): not pre-rendered within 30 s") }
            try? await Task.sleep(for: .milliseconds(5))
        }
        let report = session.player(at: 1)?.statistics.firstFrame
        // Settle as while the user watches the item on screen.
        try? await Task.sleep(for: .milliseconds(200))
        let playing = OneShot<Bool>()
        let player = session.player(at: 1)
        let token = player?.addEventObserver { if case .timeControlStatusChanged(.playing) = $0 { playing.fulfil(true) } }
        let swipe = monotonicMs()
        session.next()
        while firstFrames.get(1) == nil {
            if monotonicMs() - swipe > 30_000 { throw CommandFailure.media("\(target.url.absoluteString): no frame 30 s after the swipe") }
            try? await Task.sleep(for: .milliseconds(1))
        }
        let playingAt = await playing.wait(timeout: 10)?.1 ?? .nan
        if let token { player?.removeEventObserver(token) }
        let (shown, stage) = firstFrames.get(1)!
        stages.append(stage)
        await stack.http.shutdown()
        return (shown, playingAt - swipe, report)
    }

    /// Counts the requests the origin receives from now until `mark()` (the first frame).
    private func originCounter() -> OriginCounter { OriginCounter(origin: origin) }

    private func record(_ counter: OriginCounter, in scenario: ScenarioRecord) {
        guard let requests = counter.requests else { return }
        scenario.originRequests.append(Double(requests.count))
        if verbose {
            let lines = requests.map { "\($0.method) \($0.path) \($0.range ?? "-") → \($0.status)" }
            printError("\(scenario.name): origin requests before the first frame: " + lines.joined(separator: "; "))
        }
    }

    func stop() async {
        if let origin { await origin.stop() }
        origin = nil
    }

    func cleanUp() {
        for index in targets.indices { targets[index].warmCache?.cache.close() }
        for directory in temporary { directory.remove() }
    }

    // MARK: Reporting

    func report() -> FirstFrameReportTable {
        FirstFrameReportTable(bench: self)
    }
}

/// A fresh cache in a temporary directory, over a fresh HTTP client: what `reel play URL` starts with.
struct ColdStack {
    let directory: TemporaryDirectory
    let cache: RangeCache
    let http: HTTPLoader
    /// The cache, behind the variant choice (an HLS master starts on one variant).
    let loader: any ResourceLoader

    init() throws {
        directory = try TemporaryDirectory("bench-cold")
        cache = try RangeCache(configuration: .init(directory: directory.url))
        let meter = BandwidthMeter()
        http = HTTPLoader(transferListener: meter)
        loader = VariantSelectingLoader(upstream: CachingLoader(upstream: http, cache: cache), bandwidth: meter)
    }
}

/// The origin's requests between its creation and `mark()`.
final class OriginCounter: Sendable {
    private let origin: OriginServer?
    private let start: Int
    private let marked = Mutex<[OriginStatistics.Request]?>(nil)

    init(origin: OriginServer?) {
        self.origin = origin
        start = origin?.statistics.requests.count ?? 0
    }

    func mark() {
        guard let origin else { return }
        let all = origin.statistics.requests
        marked.withTrackedLock { if $0 == nil { $0 = Array(all.dropFirst(start)) } }
    }

    var requests: [OriginStatistics.Request]? { marked.withTrackedLock { $0 } }
}
