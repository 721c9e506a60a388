import ArgumentParser
import Foundation
import ReelCore
import ReelDemo
import ReelFeed
import ReelLoading
import ReelMedia
import ReelOrigin

/// `reel demo`: the built-in demo feed, made on first run and served by a shaped
/// loopback origin with the feed API.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Play the built-in demo feed (made on first run) from a loopback origin.",
        discussion: """
            The first run encodes the demo clips into the cache directory (a progress bar shows \
            on a terminal); later runs reuse them. The origin adds 40 ms per request and caps \
            bandwidth at 20 Mbit/s, like a mobile network to a CDN.
            """
    )

    @Flag(name: .customLong("prepare-only"), help: "Make the demo feed if needed, print where it is, and exit.")
    var prepareOnly = false

    @Flag(help: "Play the feed without output and print what happened.")
    var headless = false

    @Option(help: "With --headless: how many items to play (swipes).")
    var swipes: Int = 3

    @Option(help: "With --headless: frames to play per item before swiping.")
    var frames: Int = 45

    @Option(name: .customLong("demo-dir"), help: "Where the demo feed lives (default <cache>/demo-feed).")
    var demoDirectory: String?

    @Option(name: .customLong("rtt-ms"), help: "The origin's latency per request, in milliseconds.")
    var rttMilliseconds: Int = 40

    @Option(help: "The origin's bandwidth, in kilobits per second.")
    var kbps: Int = 20_000

    @Flag(help: .hidden)
    var tiny = false

    @OptionGroup var global: GlobalOptions

    /// The library to make: the full catalogue, or a tiny one for tests (`--tiny`).
    var libraryConfiguration: DemoLibrary.Configuration {
        tiny ? DemoLibrary.Configuration(count: 4, shortSide: 64, maxDuration: 1, frameRate: 10) : DemoLibrary.Configuration()
    }

    func validate() throws {
        guard swipes >= 1 else { throw ValidationError("--swipes must be at least 1") }
        guard frames >= 1 else { throw ValidationError("--frames must be at least 1") }
        guard rttMilliseconds >= 0 else { throw ValidationError("--rtt-ms must not be negative") }
        guard kbps > 0 else { throw ValidationError("--kbps must be positive") }
    }

    var directory: URL {
        demoDirectory.map { URL(fileURLWithPath: ($0 as NSString).expandingTildeInPath, isDirectory: true) }
            ?? DemoLibrary.defaultDirectory()
    }

    func run() async throws {
        global.apply()
        let manifest = try await Self.prepareLibrary(in: directory, configuration: libraryConfiguration)
        if prepareOnly {
            print(manifest.path)
            return
        }
        guard headless else {
            throw CommandFailure.usage("this build runs the demo with --headless or --prepare-only (the window and terminal come with their own options)")
        }
        let origin = try await DemoOrigin.start(directory: directory, rttMilliseconds: rttMilliseconds, kbps: kbps)
        do {
            try await playHeadless(origin: origin)
        } catch {
            await origin.loader.shutdown()
            await origin.server.stop()
            throw error
        }
        await origin.loader.shutdown()
        await origin.server.stop()
    }

    /// Makes the library when needed, with a progress bar on a terminal.
    static func prepareLibrary(in directory: URL, configuration: DemoLibrary.Configuration = .init()) async throws -> URL {
        let bar = ProgressBar(enabled: isatty(STDERR_FILENO) == 1)
        do {
            let manifest = try await DemoLibrary.prepare(directory: directory, configuration: configuration) { progress in
                bar.update(progress.fraction, label: progress.title.isEmpty ? "done" : "making “\(progress.title)” (\(progress.completed + 1)/\(progress.total))")
            }
            bar.finish()
            return manifest
        } catch {
            bar.finish()
            throw CommandFailure.media("cannot make the demo feed in \(directory.path): \(describe(error))")
        }
    }

    /// Plays the first items of the feed in turn through the same loader stack as `reel play URL`.
    private func playHeadless(origin: DemoOrigin) async throws {
        let source = HTTPFeedSource(baseURL: origin.apiURL, loader: origin.loader.loader)
        let page: FeedPage
        do { page = try await source.page(category: nil, page: 1, size: 50) } catch {
            throw CommandFailure.media("feed API: \(error)")
        }
        let videos = page.items.filter { $0.videoURL != nil }
        guard !videos.isEmpty else { throw CommandFailure.media("the demo feed has no videos") }
        print("demo feed: \(page.items.count) items from \(origin.server.baseURL!.absoluteString) (rtt \(rttMilliseconds) ms, \(kbps) kbit/s)")
        for swipe in 0..<swipes {
            let item = videos[swipe % videos.count]
            let sink = HeadlessVideoSink()
            let player = Player(clock: HostClock.shared, videoSink: sink, audioSink: NullAudioSink())
            let first = OneShot<Result<FirstFrameReport, MediaError>>()
            let enough = OneShot<Bool>()
            let target = frames
            player.addEventObserver { event in
                switch event {
                case .firstFrame(let report): first.fulfil(.success(report))
                case .failed(let error): first.fulfil(.failure(error)); enough.fulfil(false)
                case .ended: enough.fulfil(true)
                case .framePresented: if sink.presentedCount >= target { enough.fulfil(true) }
                default: break
                }
            }
            let start = monotonicMs()
            player.replaceCurrentItem(with: PlayerItem(url: item.videoURL!, loader: origin.loader.loader))
            player.play()
            let opened = await first.wait(timeout: 30)
            _ = await enough.wait(timeout: 60)
            let stats = player.statistics
            player.pause()
            player.replaceCurrentItem(with: nil)
            guard let (result, at) = opened else { throw CommandFailure.media("\(item.title): no first frame within 30 s") }
            if case .failure(let error) = result { throw CommandFailure.media(error.description) }
            print(String(format: "%2d  ", swipe + 1) + TerminalSafe.clean(item.title)
                + String(format: "  first frame %.1f ms, %d frames, %d dropped", at - start, stats.presentedFrames, stats.droppedFrames))
        }
    }
}

/// The demo's origin: the library directory served with the feed API from its manifest,
/// and the loader stack a client of it reads through.
struct DemoOrigin {
    let server: OriginServer
    let loader: LoaderStack

    /// `/api/` on the server.
    var apiURL: URL { server.url(for: "/api") }
    /// The manifest, served as a file.
    var manifestURL: URL { server.url(for: "/" + DemoLibrary.manifestName) }

    /// Starts serving `directory` (a prepared library) at 40 ms and 20 Mbit/s unless told otherwise.
    static func start(directory: URL, rttMilliseconds: Int = 40, kbps: Int? = 20_000, cacheDirectory: URL? = nil) async throws -> DemoOrigin {
        let manifest = directory.appendingPathComponent(DemoLibrary.manifestName)
        let source: ManifestFeedSource
        do {
            source = try await ManifestFeedSource(url: manifest, loader: FileLoader())
        } catch {
            throw CommandFailure.media("demo feed: \(error)")
        }
        let server = OriginServer(configuration: .init(
            root: directory, latency: .milliseconds(rttMilliseconds), bandwidthKbps: kbps,
            routes: FeedAPIRoutes.routes(source: source, root: directory)
        ))
        do { _ = try await server.start() } catch { throw CommandFailure.media("origin: \(error)") }
        let http = HTTPLoader()
        let stack: LoaderStack
        do {
            let cache = try RangeCache(configuration: .init(directory: cacheDirectory ?? RangeCache.defaultDirectory()))
            let caching = CachingLoader(upstream: http, cache: cache)
            stack = LoaderStack(loader: caching, http: http, caching: caching)
        } catch {
            stack = LoaderStack(loader: http, http: http, caching: nil)
        }
        return DemoOrigin(server: server, loader: stack)
    }
}

/// Titles printed to a terminal: control characters removed.
enum TerminalSafe {
    static func clean(_ text: String) -> String {
        String(text.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }.map(Character.init))
    }
}

/// A one-line progress bar on stderr, drawn only on a terminal.
final class ProgressBar: @unchecked Sendable {
    private let enabled: Bool
    private let lock = NSLock()
    private var lastDrawn = -1.0
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    func update(_ fraction: Double, label: String) {
        guard enabled else { return }
        lock.withLock {
            guard fraction - lastDrawn >= 0.005 || fraction >= 1 || lastDrawn < 0 else { return }
            lastDrawn = fraction
            drawn = true
            let width = 30
            let filled = Int((fraction * Double(width)).rounded(.down))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let line = "\r\u{1B}[2Kdemo feed [\(bar)] \(String(format: "%3.0f", fraction * 100))% \(TerminalSafe.clean(label))"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    func finish() {
        guard enabled else { return }
        lock.withLock {
            if drawn { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
            drawn = false
        }
    }
}
