import ArgumentParser
import Foundation
import ReelCore
import ReelDemo
import ReelFeed
import ReelLoading
import ReelMedia
import ReelOrigin

/// `reel bench swipe`: a feed over the shaped origin, swiped N times with a dwell on each
/// page: swipe-to-first-frame, the preload stage each swipe found, live decoders and players
/// against the pool's cap, and resident memory after every swipe — held when the run's second
/// half peaks no higher than its first.
struct BenchSwipeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swipe",
        abstract: "Swipe through a feed: swipe-to-first-frame, preload stages, decoders, memory.",
        discussion: """
            Without DIR it uses the demo feed (made on first run), its live item published as \
            `reel demo` publishes it. The feed is served by an in-process origin with --rtt-ms \
            and --kbps and read through a fresh cache, as `reel feed` reads it; past the last \
            item it wraps to the first. Memory is held when the second half of the swipes peaks \
            no higher than the first (the pool's and caches' caps bound it once they are full).
            """
    )

    @Argument(help: "A directory of media served as the feed (default: the demo feed).")
    var directory: String?

    @Option(help: "How many swipes.")
    var swipes: Int = 200

    @Option(help: "Seconds on each page before the next swipe.")
    var dwell: Double = 0.5

    @Option(name: .customLong("rtt-ms"), help: "The origin's latency per request, in milliseconds.")
    var rttMilliseconds: Int = 40

    @Option(help: "The origin's bandwidth, in kilobits per second.")
    var kbps: Int = 20_000

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Flag(name: .customLong("no-captions"),
          help: "Players look up no captions (their files are still read with each page), to compare with captions on.")
    var noCaptions = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard swipes >= 1 else { throw ValidationError("--swipes must be at least 1") }
        guard dwell >= 0, dwell <= 60 else { throw ValidationError("--dwell must be between 0 and 60 seconds") }
        guard rttMilliseconds >= 0 else { throw ValidationError("--rtt-ms must not be negative") }
        guard kbps > 0 else { throw ValidationError("--kbps must be positive") }
    }

    func run() async throws {
        global.apply()
        let root: URL
        let routes: [OriginRoute]
        if let directory {
            let path = (directory as NSString).expandingTildeInPath
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CommandFailure.usage("\(directory): not a directory")
            }
            root = URL(fileURLWithPath: path, isDirectory: true)
            do { routes = try FeedAPIRoutes.routes(serving: root) } catch { throw CommandFailure.usage("\(directory): \(error)") }
        } else {
            root = DemoLibrary.defaultDirectory()
            let manifest = try await DemoCommand.prepareLibrary(in: root)
            do {
                // The live item published as `reel demo` publishes it (looping for ever), so a
                // swipe onto it plays it instead of finding nothing.
                let live = try ServeLive.routes(root: root, paths: DemoLibrary.livePlaylists(in: root), window: 6,
                                                stallsAfter: nil, loops: true)
                routes = live + FeedAPIRoutes.routes(source: try await ManifestFeedSource(url: manifest, loader: FileLoader()), root: root)
            } catch {
                throw CommandFailure.media("demo feed: \(error)")
            }
        }
        let server = OriginServer(configuration: .init(
            root: root, latency: .milliseconds(rttMilliseconds), bandwidthKbps: kbps, routes: routes
        ))
        do { _ = try await server.start() } catch { throw CommandFailure.media("origin: \(error)") }
        let cache = try TemporaryDirectory("bench-swipe-cache")
        defer { cache.remove() }
        let outcome: Result<SwipeBenchResult, any Error>
        do {
            let loading = try LoadingOptions.parse(["--cache-dir", cache.url.path])
            let stack = try await FeedStack.open(server.url(for: "/api/").absoluteString, loading: loading, token: nil)
            do { outcome = .success(try await measure(stack)) } catch { outcome = .failure(error) }
            await stack.shutdown()
        } catch {
            outcome = .failure(error)
        }
        await server.stop()
        let result = try outcome.get()
        print(json ? result.json() : result.text(origin: "rtt \(rttMilliseconds) ms, \(kbps) kbit/s, dwell \(dwell) s"),
              terminator: json ? "\n" : "")
    }

    private func measure(_ stack: FeedStack) async throws -> SwipeBenchResult {
        let session = stack.makeSession(configuration: FeedSession.Configuration(wrapsAround: true), audioSink: { NullAudioSink() })
        defer { session.close() }
        session.captionSelection.isEnabled = !noCaptions
        let firstFrames = LockedDictionary<Int, (Double, PreloadStage)>()
        let failures = LockedDictionary<Int, String>()
        session.addObserver { event in
            switch event {
            case .firstFrame(let index, let ms, let stage): firstFrames.set(index, (ms, stage))
            case .failed(let index, let message): failures.set(index, message)
            default: break
            }
        }
        do { try await session.start() } catch { throw CommandFailure.media("feed: \(describe(error))") }
        guard await waitForFirstFrame(0, firstFrames, failures) else { throw CommandFailure.media("the first item shows no frame") }
        var result = SwipeBenchResult(items: session.items.count)
        result.rssStart = residentBytes()
        for number in 1...swipes {
            if dwell > 0 { try? await Task.sleep(for: .seconds(dwell)) }
            let target = (session.currentIndex + 1) % max(1, session.items.count)
            firstFrames.remove(target)
            failures.remove(target)
            session.next()
            let index = session.currentIndex
            if await waitForFirstFrame(index, firstFrames, failures), let (ms, stage) = firstFrames.get(index) {
                result.swipes.append(.init(index: index, milliseconds: ms, stage: stage, isImage: session.items[index].isImagePost,
                                           liveDecoders: session.liveDecoders, livePlayers: session.livePlayers))
            } else {
                result.failures += 1
            }
            if number == 5 { result.rssAfterFive = residentBytes() }
            result.rssSamples.append(residentBytes())
            if !json && number % 20 == 0 { printError("swipe \(number)/\(swipes), resident \(formatBytes(Double(residentBytes())))") }
        }
        result.rssEnd = residentBytes()
        result.items = session.items.count
        return result
    }

    private func waitForFirstFrame(_ index: Int, _ frames: LockedDictionary<Int, (Double, PreloadStage)>,
                                   _ failures: LockedDictionary<Int, String>) async -> Bool {
        let deadline = monotonicMs() + 30_000
        while monotonicMs() < deadline {
            if frames.get(index) != nil { return true }
            if failures.get(index) != nil { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }
}

/// The swipe benchmark's figures.
struct SwipeBenchResult {
    struct Swipe {
        var index: Int
        var milliseconds: Double
        var stage: PreloadStage
        var isImage: Bool
        var liveDecoders: Int
        var livePlayers: Int
    }

    var items: Int
    var swipes: [Swipe] = []
    var failures = 0
    var rssStart = 0
    var rssAfterFive = 0
    var rssEnd = 0
    /// Resident memory after each swipe.
    var rssSamples: [Int] = []

    var videoSwipes: [Swipe] { swipes.filter { !$0.isImage } }
    var distribution: Distribution { Distribution(videoSwipes.map(\.milliseconds)) }
    var stages: [(PreloadStage, Int)] {
        [PreloadStage.prerendered, .prepared, .bytes, .none].map { stage in (stage, videoSwipes.filter { $0.stage == stage }.count) }
    }
    /// The pool's caps: at most this many players and video decoders alive at once.
    static let poolCap = 3
    /// Fewer swipes than this say nothing about memory held over a run.
    static let heldMinimumSwipes = 40
    /// How far the second half's peak may rise above the first half's.
    static let heldTolerance = 1.1
    var maxDecoders: Int { swipes.map(\.liveDecoders).max() ?? 0 }
    var maxPlayers: Int { swipes.map(\.livePlayers).max() ?? 0 }
    var peak: Int { rssSamples.max() ?? rssEnd }
    var firstHalfPeak: Int { rssSamples.prefix(rssSamples.count / 2).max() ?? 0 }
    var secondHalfPeak: Int { rssSamples.dropFirst(rssSamples.count / 2).max() ?? 0 }
    /// What bounds memory is the pool's and the caches' caps, so once they are full resident
    /// memory stops rising: the second half of the run peaks no higher than the first (whose
    /// warm-up, the pool and caches filling, is allowed to rise). Nil for a run too short to tell.
    var heldRatio: Double? {
        guard rssSamples.count >= Self.heldMinimumSwipes, firstHalfPeak > 0 else { return nil }
        return Double(secondHalfPeak) / Double(firstHalfPeak)
    }

    func text(origin: String) -> String {
        let d = distribution
        var out = "Reel swipe benchmark — \(swipes.count) swipes over a feed of \(items) items (\(origin))\n\n"
        out += "swipe → first frame (video pages, \(d.count)):  p50 \(formatMs(d.p50, width: 0)) ms   p95 \(formatMs(d.p95, width: 0)) ms   max \(formatMs(d.max, width: 0)) ms"
        out += d.p95 <= 16.7 ? "   ✓ goal p95 ≤ 16.7 ms\n" : "   ✗ goal p95 ≤ 16.7 ms\n"
        let images = swipes.filter(\.isImage)
        if !images.isEmpty {
            out += "swipe → first picture (image posts, \(images.count)): p50 \(formatMs(Distribution(images.map(\.milliseconds)).p50, width: 0)) ms\n"
        }
        out += "preload stage at the swipe: " + stages.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ") + "\n"
        let capped = maxDecoders <= Self.poolCap && maxPlayers <= Self.poolCap
        out += "live decoders: max \(maxDecoders), live players: max \(maxPlayers)   \(capped ? "✓" : "✗") goal ≤ \(Self.poolCap) each (the pool's cap)\n"
        out += "resident memory: start \(formatBytes(Double(rssStart))), after 5 swipes \(formatBytes(Double(rssAfterFive))), "
        out += "peak \(formatBytes(Double(peak))), end \(formatBytes(Double(rssEnd)))\n"
        out += heldLine()
        out += "failed swipes: \(failures)   \(failures == 0 ? "✓" : "✗") goal 0\n"
        if out.contains("✗"), let note = benchConditions(ownLoad: 1) { out += note }
        return out
    }

    /// Whether memory stayed within what the pool's and caches' caps hold, in one line.
    func heldLine() -> String {
        guard let ratio = heldRatio else {
            return "memory held by the pool's and caches' caps: \(swipes.count) swipes are too few to tell "
                + "(\(Self.heldMinimumSwipes) or more compare the run's two halves)\n"
        }
        let half = rssSamples.count / 2
        var line = "memory held by the pool's and caches' caps: peak of swipes \(half + 1)–\(rssSamples.count) "
        line += "\(formatBytes(Double(secondHalfPeak))) vs 1–\(half) \(formatBytes(Double(firstHalfPeak)))"
        line += String(format: ", %.2f×   ", ratio) + (ratio <= Self.heldTolerance ? "✓" : "✗")
        line += String(format: " goal ≤ %.2f× (it rises while they fill, then holds)\n", Self.heldTolerance)
        return line
    }

    func json() -> String {
        let d = distribution
        var text = "{\"items\":\(items),\"swipes\":\(swipes.count),\"failures\":\(failures),"
        text += "\"p50Ms\":\(jsonNumber(d.p50)),\"p95Ms\":\(jsonNumber(d.p95)),\"maxMs\":\(jsonNumber(d.max)),"
        text += "\"stages\":{" + stages.map { "\"\($0.0.rawValue)\":\($0.1)" }.joined(separator: ",") + "},"
        text += "\"maxLiveDecoders\":\(swipes.map(\.liveDecoders).max() ?? 0),\"maxLivePlayers\":\(swipes.map(\.livePlayers).max() ?? 0),"
        text += "\"rssStartBytes\":\(rssStart),\"rssAfterFiveBytes\":\(rssAfterFive),\"rssEndBytes\":\(rssEnd),\"rssPeakBytes\":\(peak),"
        text += "\"rssFirstHalfPeakBytes\":\(firstHalfPeak),\"rssSecondHalfPeakBytes\":\(secondHalfPeak),"
        text += "\"rssHeldRatio\":\(jsonNumber(heldRatio))}"
        return text
    }
}
