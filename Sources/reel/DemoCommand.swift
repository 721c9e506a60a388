import ArgumentParser
import Foundation
import ReelAccounts
import ReelCore
import ReelDemo
import ReelFeed
import ReelLoading
import ReelMedia
import ReelOrigin
import Synchronization

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

    @Option(help: "With --headless (or without a display or a terminal): how many swipes.")
    var swipes: Int = 5

    @Option(help: "With --headless: seconds on each page before the next swipe.")
    var dwell: Double = 1

    @Option(name: .customLong("cache-dir"), help: "The range cache directory (default $XDG_CACHE_HOME/reel).")
    var loadingCacheDirectory: String?

    @Option(name: .customLong("demo-dir"), help: "Where the demo feed lives (default <cache>/demo-feed).")
    var demoDirectory: String?

    @Option(name: .customLong("rtt-ms"), help: "The origin's latency per request, in milliseconds.")
    var rttMilliseconds: Int = 40

    @Option(help: "The origin's bandwidth, in kilobits per second.")
    var kbps: Int = 20_000

    @Flag(help: .hidden)
    var tiny = false

    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var global: GlobalOptions
    @OptionGroup(title: "Loudness") var loudness: LoudnessOptions<FeedLoudness>

    /// The library to make: the full catalogue, or a tiny one for tests (`--tiny`: the first six
    /// entries, through the adaptive stream and the live one).
    var libraryConfiguration: DemoLibrary.Configuration {
        tiny ? DemoLibrary.Configuration(count: 6, shortSide: 64, maxDuration: 1, frameRate: 10) : DemoLibrary.Configuration()
    }

    func validate() throws {
        guard swipes >= 1 else { throw ValidationError("--swipes must be at least 1") }
        guard dwell >= 0, dwell <= 3600 else { throw ValidationError("--dwell must be between 0 and 3600 seconds") }
        guard rttMilliseconds >= 0 else { throw ValidationError("--rtt-ms must not be negative") }
        guard kbps > 0 else { throw ValidationError("--kbps must be positive") }
        if !prepareOnly { _ = try chooseOutput() }
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
        let output = try chooseOutput()
        if output == .headless && !outputOptions.headless {
            printError("reel: no display and no terminal: playing the demo headless (choose with --window or --terminal)")
        }
        let origin = try await DemoOrigin.start(directory: directory, rttMilliseconds: rttMilliseconds, kbps: kbps)
        do {
            if output == .headless {
                try await playHeadless(origin: origin)
            } else {
                // Everything it started stops when the user quits: the front-end, the
                // loaders and cache, then the origin.
                let stack = try await FeedStack.open(origin.apiURL.absoluteString + "/", loading: try loadingOptions(), token: nil)
                try await FeedFrontEnd.run(output, stack: stack, category: nil, options: outputOptions,
                                           accounts: FeedAccounts(server: origin.server.baseURL!, token: nil))
            }
        } catch {
            await origin.server.stop()
            throw error
        }
        await origin.server.stop()
    }

    /// Where the demo shows: as asked, else the window or the terminal when there is one,
    /// else headless — the demo is the default command and runs anywhere.
    private func chooseOutput() throws -> OutputChoice {
        do {
            return try outputOptions.choose()
        } catch where !outputOptions.isExplicit {
            return .headless
        }
    }

    private func loadingOptions() throws -> LoadingOptions {
        var arguments: [String] = []
        if let cacheDirectory = loadingCacheDirectory { arguments += ["--cache-dir", cacheDirectory] }
        return try LoadingOptions.parse(arguments)
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

    /// Plays the feed from the origin's feed API, as `reel feed URL --headless` does:
    /// one JSON line per swipe, then a summary.
    private func playHeadless(origin: DemoOrigin) async throws {
        printError("demo feed at \(origin.server.baseURL!.absoluteString) (rtt \(rttMilliseconds) ms, \(kbps) kbit/s)")
        let stack = try await FeedStack.open(origin.apiURL.absoluteString + "/", loading: try loadingOptions(), token: nil)
        let run = HeadlessFeedRun(stack: stack, category: nil, swipes: swipes, dwell: dwell, trace: try TraceWriter(path: nil))
        let result = await run.run()
        await stack.shutdown()
        try result.throwIfFailed()
    }
}

/// The demo's origin: the library directory served with the feed API from its manifest.
struct DemoOrigin {
    let server: OriginServer

    /// `/api/` on the server.
    var apiURL: URL { server.url(for: "/api") }
    /// The manifest, served as a file.
    var manifestURL: URL { server.url(for: "/" + DemoLibrary.manifestName) }

    /// Starts serving `directory` (a prepared library) at 40 ms and 20 Mbit/s unless told otherwise.
    static func start(directory: URL, rttMilliseconds: Int = 40, kbps: Int? = 20_000) async throws -> DemoOrigin {
        let manifest = directory.appendingPathComponent(DemoLibrary.manifestName)
        let source: ManifestFeedSource
        do {
            source = try await ManifestFeedSource(url: manifest, loader: FileLoader())
        } catch {
            throw CommandFailure.media("demo feed: \(error)")
        }
        let accounts: AccountsService
        do {
            accounts = try await DemoAccounts.open(beside: directory, library: source)
        } catch {
            throw CommandFailure.media("demo accounts: \(error)")
        }
        let feed = AccountsFeedSource(base: source, service: accounts, uploadsFirst: false)
        // The live item: its stream published again as a live one that loops for ever.
        let live: [OriginRoute]
        do {
            live = try ServeLive.routes(root: directory, paths: DemoLibrary.livePlaylists(in: directory), window: 6,
                                        stallsAfter: nil, loops: true)
        } catch {
            throw CommandFailure.media("demo feed: \(error)")
        }
        var configuration = OriginServer.Configuration(
            root: directory, latency: .milliseconds(rttMilliseconds), bandwidthKbps: kbps,
            routes: live + accounts.routes() + FeedAPIRoutes.routes(source: feed, root: directory)
        )
        configuration.mounts[AccountsService.mediaPathPrefix] = accounts.mediaDirectory
        let server = OriginServer(configuration: configuration)
        do { _ = try await server.start() } catch { throw CommandFailure.media("origin: \(error)") }
        printError("demo account: \(DemoAccounts.name) / \(DemoAccounts.password) (reel login \(server.baseURL!.absoluteString) --name \(DemoAccounts.name))")
        return DemoOrigin(server: server)
    }
}

/// The demo's accounts, kept beside the library (`<library>.accounts/`, never inside the
/// served directory): a demo account to sign in with, and two uploaders with a few of the
/// library's clips each, so profiles and "my videos" show something on first run.
/// Seeding is idempotent.
enum DemoAccounts {
    static let name = "demo"
    static let password = "reel-demo"

    static func open(beside library: URL, library source: any FeedSource) async throws -> AccountsService {
        let data = library.standardizedFileURL.deletingLastPathComponent()
            .appendingPathComponent(library.standardizedFileURL.lastPathComponent + ".accounts", isDirectory: true)
        let accounts = try await AccountsService.open(configuration: .init(
            dataDirectory: data,
            playabilityProblem: ServeCommand.playabilityProblem
        ))
        _ = try await accounts.seedAccount(name: name, email: "demo@reel.invalid", password: password, nickname: "Demo",
                                           bio: "Sign in with reel login to see your profile.")
        let clips = try await source.page(category: nil, page: 1, size: 4).items.filter { $0.videoURL?.isFileURL == true }
        let uploaders = [("mira", "Mira", "Harbours, trains and long walks."), ("theo", "Theo", "Anything that moves fast.")]
        for (index, (uploader, nickname, bio)) in uploaders.enumerated() {
            let id = try await accounts.seedAccount(name: uploader, email: "\(uploader)@reel.invalid",
                                                    password: "\(uploader)-\(password)", nickname: nickname, bio: bio)
            for clip in clips.enumerated().filter({ $0.offset % uploaders.count == index }).map(\.element) {
                guard let file = clip.videoURL else { continue }
                try await accounts.seedUpload(file: file, title: "\(nickname): \(clip.title)", category: clip.category ?? "uploads", userID: id)
            }
        }
        return accounts
    }
}

/// Titles printed to a terminal: control characters removed.
enum TerminalSafe {
    static func clean(_ text: String) -> String {
        String(text.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }.map(Character.init))
    }
}

/// A one-line progress bar on stderr, drawn only on a terminal.
final class ProgressBar: Sendable {
    private let enabled: Bool
    /// What is drawn now, protected by its mutex (progress comes from the encoder's thread).
    private struct Drawn {
        var fraction = -1.0
        var visible = false
    }
    private let drawn = Mutex(Drawn())

    init(enabled: Bool) { self.enabled = enabled }

    func update(_ fraction: Double, label: String) {
        guard enabled else { return }
        drawn.withTrackedLock { d in
            guard fraction - d.fraction >= 0.005 || fraction >= 1 || d.fraction < 0 else { return }
            d.fraction = fraction
            d.visible = true
            let width = 30
            let filled = Int((fraction * Double(width)).rounded(.down))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let line = "\r\u{1B}[2Kdemo feed [\(bar)] \(String(format: "%3.0f", fraction * 100))% \(TerminalSafe.clean(label))"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    func finish() {
        guard enabled else { return }
        drawn.withTrackedLock { d in
            if d.visible { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
            d.visible = false
        }
    }
}
