import ArgumentParser
import Foundation
import ReelThreads
import ReelOrigin
import ReelAccounts
import ReelFeed
import ReelLoading
import ReelMedia

/// `reel serve DIR`: the loopback origin, for demos, benchmarks and manual testing.
struct ServeCommand: AsyncParsableCommand {
    /// How the accounts server (of `reel serve` and `reel demo`) tells an upload is a playable
    /// video: ReelMedia's probe, through the file loader (the server does not link the player).
    static let playabilityProblem: AccountsService.PlayabilityCheck = {
        await MediaProbe.playabilityProblem(of: $0, size: $1, loader: FileLoader())
    }

    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a directory over HTTP, with latency, a bandwidth cap and a fault.",
        discussion: """
            Prints the server's URL, then serves until interrupted (SIGINT or SIGTERM).
            The directory is also a feed: /api/categories, /api/feed?category=&current=&size=
            and /api/search?text=&current=&size= answer in JSON.
            Accounts and uploads (/api/register, /api/login, /api/logout, /api/me,
            /api/me/avatar, /api/users/ID, /api/users/ID/items, /api/upload) are kept
            in --data DIR (a SQLite file and the uploaded media); uploads join the feed.
            --live PLAYLIST publishes an HLS stream of the directory again at /live/PLAYLIST
            as a live one: its segments appear in real time and it ends after one pass
            (--live-loop: for ever, a discontinuity at each pass); a reload with _HLS_msn
            waits for the segment it asks for.
            Faults: \(OriginFault.names.joined(separator: ", ")).
            """
    )

    @Argument(help: "The directory to serve.")
    var directory: String

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 0

    @Option(help: "The address to listen on.")
    var host: String = "127.0.0.1"

    @Option(name: .customLong("rtt-ms"), help: "Latency added to every response, in milliseconds.")
    var rttMilliseconds: Int = 0

    @Option(help: "Bandwidth cap for all connections together, in kilobits per second.")
    var kbps: Int?

    @Option(help: "A link whose bandwidth changes: SECONDS:KBPS,… from the server's start (e.g. 0:3000,5:500,15:8000); --kbps applies before the first step.")
    var link: String?

    @Option(name: .customLong("live"), help: ArgumentHelp(
        "An HLS playlist under DIRECTORY (a master or a media playlist) to publish again as a live stream at /live/PLAYLIST, growing in real time and looping.",
        valueName: "PLAYLIST"))
    var live: [String] = []

    @Option(name: .customLong("live-window"), help: "How many segments a live playlist lists.")
    var liveWindow: Int = 6

    @Flag(name: .customLong("live-loop"), help: "Loop the live streams for ever (a discontinuity at each pass) instead of ending them after one pass.")
    var liveLoop = false

    @Option(name: .customLong("live-stall-after"), help: "Seconds after which the live playlists stop growing (a stalled encoder).")
    var liveStallAfter: Double?

    @Option(help: "A fault to inject into file responses.")
    var fault: String?

    @Option(help: "Where accounts and uploads are kept (default: DIRECTORY.reel-data beside the served directory).")
    var data: String?

    @Option(name: .customLong("token-lifetime"), help: "How long a sign-in token stays valid, in seconds (default 7 days).")
    var tokenLifetime: Int = 7 * 24 * 3600

    @Option(name: .customLong("upload-limit-mb"), help: "The largest upload accepted, in MiB.")
    var uploadLimitMB: Int = 512

    @Flag(help: "Log what happens.")
    var verbose = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard rttMilliseconds >= 0 else { throw ValidationError("--rtt-ms must not be negative") }
        if let kbps, kbps <= 0 { throw ValidationError("--kbps must be positive") }
        if let link {
            do { _ = try LinkSchedule(parsing: link) } catch { throw ValidationError("--link: \(error)") }
        }
        guard (1...1000).contains(liveWindow) else { throw ValidationError("--live-window must be between 1 and 1000") }
        if let liveStallAfter, !(liveStallAfter.isFinite && liveStallAfter >= 0) {
            throw ValidationError("--live-stall-after must be a number of seconds")
        }
        guard tokenLifetime > 0 else { throw ValidationError("--token-lifetime must be positive") }
        guard uploadLimitMB > 0 else { throw ValidationError("--upload-limit-mb must be positive") }
        if let fault, OriginFault(name: fault) == nil {
            throw ValidationError("unknown fault '\(fault)'; faults: \(OriginFault.names.joined(separator: ", "))")
        }
    }

    func run() async throws {
        CommandLogging.bootstrap(verbose: verbose)
        let root = URL(fileURLWithPath: directory, isDirectory: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure.usage("\(directory): not a directory")
        }
        let dataDirectory = data.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? root.standardizedFileURL.deletingLastPathComponent()
                .appendingPathComponent(root.standardizedFileURL.lastPathComponent + ".reel-data", isDirectory: true)
        let rootPath = root.standardizedFileURL.resolvingSymlinksInPath().path + "/"
        let dataPath = dataDirectory.standardizedFileURL.resolvingSymlinksInPath().path + "/"
        if dataPath.hasPrefix(rootPath) || rootPath.hasPrefix(dataPath) {
            throw CommandFailure.usage("--data \(dataDirectory.path) must be outside the served directory (it holds the accounts database)")
        }
        let accounts: AccountsService
        do {
            accounts = try await AccountsService.open(configuration: .init(
                dataDirectory: dataDirectory,
                playabilityProblem: Self.playabilityProblem,
                tokenLifetime: .seconds(tokenLifetime),
                uploadLimit: Int64(uploadLimitMB) << 20
            ))
        } catch {
            throw CommandFailure.usage("\(dataDirectory.path): cannot open the accounts data: \(error)")
        }
        let routes: [OriginRoute]
        do {
            let feed = AccountsFeedSource(base: try DirectoryFeedSource(directory: root), service: accounts)
            routes = try ServeLive.routes(root: root, paths: live, window: liveWindow, stallsAfter: liveStallAfter, loops: liveLoop)
                + accounts.routes() + FeedAPIRoutes.routes(source: feed, root: root)
        } catch let failure as ServeLive.Failure {
            throw CommandFailure.usage("--live \(failure)")
        } catch {
            throw CommandFailure.usage("\(directory): \(error)")
        }
        var configuration = OriginServer.Configuration(
            root: root, host: host, port: port,
            latency: .milliseconds(rttMilliseconds),
            bandwidthKbps: kbps,
            fault: fault.flatMap(OriginFault.init(name:)),
            routes: routes
        )
        configuration.mounts[AccountsService.mediaPathPrefix] = accounts.mediaDirectory
        configuration.link = try link.map { try LinkSchedule(parsing: $0) }
        let server = OriginServer(configuration: configuration)
        do {
            try await server.start()
        } catch {
            throw CommandFailure.media("\(error)")
        }
        // Written straight to the descriptor so a script reading a pipe sees it at once.
        FileHandle.standardOutput.write(Data((server.baseURL!.absoluteString + "\n").utf8))
        await waitForTerminationSignal()
        await server.stop()
    }
}

/// Suspends until SIGINT or SIGTERM arrives (they no longer kill the process meanwhile).
func waitForTerminationSignal() async {
    let signalled = OneShot<Void>()
    // The dispatch sources stay in this function (not Sendable, never shared); their handlers
    // share only the `OneShot`.
    var sources: [any DispatchSourceSignal] = []
    for number in [SIGINT, SIGTERM] {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { signalled.fulfil(()) }
        source.resume()
        sources.append(source)
    }
    await signalled.wait()
    // The signals stay ignored; their sources are done.
    for source in sources { source.cancel() }
}
