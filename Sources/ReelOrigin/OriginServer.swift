import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import ReelThreads
import Synchronization

/// A loopback HTTP/1.1 server for a directory, with the behaviour of a real origin
/// (`GET`/`HEAD`, single byte ranges, strong `ETag`, `Last-Modified`, `If-Range`) and
/// the misbehaviour of a bad network: per-request latency, a bandwidth cap shared by
/// all connections, and one ``OriginFault`` at a time. Reel's tests, its benchmark and
/// its demo all fetch media from it.
///
/// ```swift
/// let server = OriginServer(configuration: .init(root: clipsDirectory, latency: .milliseconds(40)))
/// let port = try await server.start()         // port 0 asks for a free one
/// let url = server.url(for: "clip.mp4")      // http://127.0.0.1:<port>/clip.mp4
/// // ...
/// await server.stop()
/// ```
///
/// Everything runs on SwiftNIO event loops: the latency and the bandwidth cap are
/// scheduled tasks on the connection's loop, file reads run on NIO's thread pool.
public final class OriginServer: Sendable {
    /// How a server serves.
    public struct Configuration: Sendable {
        /// The directory whose files are served (`/a/b.mp4` is `root/a/b.mp4`).
        public var root: URL
        /// The address to listen on; loopback by default.
        public var host: String
        /// The port; 0 picks a free one (see ``OriginServer/start()``).
        public var port: Int
        /// Time from a request to its response head (a round trip, as a CDN far away adds).
        public var latency: Duration
        /// The cap on body bytes for all connections together, in kilobits per second; `nil` for none.
        public var bandwidthKbps: Int?
        /// A cap that changes over time, from the server's start (`bandwidthKbps` before its first step).
        public var link: LinkSchedule?
        /// The fault to inject into file responses, if any.
        public var fault: OriginFault?
        /// Handlers consulted before the files, in order.
        public var routes: [OriginRoute]
        /// More directories served under a path (`["/uploads": dataDirectory]` serves
        /// `/uploads/a.mp4` from `dataDirectory/a.mp4`), as the root is, faults included.
        public var mounts: [String: URL] = [:]

        public init(
            root: URL,
            host: String = "127.0.0.1",
            port: Int = 0,
            latency: Duration = .zero,
            bandwidthKbps: Int? = nil,
            fault: OriginFault? = nil,
            routes: [OriginRoute] = []
        ) {
            self.root = root
            self.host = host
            self.port = port
            self.latency = latency
            self.bandwidthKbps = bandwidthKbps
            self.fault = fault
            self.routes = routes
        }
    }

    /// Why a server could not start.
    public enum StartError: Error, CustomStringConvertible {
        case notADirectory(String)
        case alreadyStarted
        case bindFailed(host: String, port: Int, reason: String)

        public var description: String {
            switch self {
            case .notADirectory(let path): "\(path): not a directory"
            case .alreadyStarted: "the server is already running"
            case .bindFailed(let host, let port, let reason): "cannot listen on \(host):\(port): \(reason)"
            }
        }
    }

    public let configuration: Configuration
    let state: OriginState
    private let group: any EventLoopGroup

    /// A server for `configuration`; nothing listens until ``start()``.
    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.state = OriginState(configuration: configuration)
        self.group = group
    }

    /// Starts listening and returns the bound port (the real one when the configuration said 0).
    @discardableResult
    public func start() async throws -> Int {
        var isDirectory: ObjCBool = false
        let rootPath = configuration.root.standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: rootPath, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw StartError.notADirectory(rootPath)
        }
        guard state.beginStarting() else { throw StartError.alreadyStarted }
        let state = self.state
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                state.connectionOpened(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(OriginHandler(state: state))
                }
            }
        do {
            let channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
            guard let port = channel.localAddress?.port else {
                try? await channel.close()
                throw StartError.bindFailed(host: configuration.host, port: configuration.port, reason: "no local address")
            }
            state.started(channel: channel, port: port)
            return port
        } catch let error as StartError {
            state.failedToStart()
            throw error
        } catch {
            state.failedToStart()
            throw StartError.bindFailed(host: configuration.host, port: configuration.port, reason: "\(error)")
        }
    }

    /// Stops listening and closes every open connection; returns once each is closed
    /// and counted as closed. Safe to call more than once.
    public func stop() async {
        defer { state.routeExecutor?.shutDown() }
        let (listener, connections) = state.stopping()
        if let listener { try? await listener.close() }
        for connection in connections {
            try? await connection.close()
            // The bookkeeping callback was registered on the close future first, so it
            // has run once this (later) wait on the same future returns.
            try? await connection.closeFuture.get()
        }
    }

    /// The bound port, once started.
    public var port: Int? { state.boundPort }

    /// `http://host:port/`, once started.
    public var baseURL: URL? {
        port.map { URL(string: "http://\(Self.hostForURL(configuration.host)):\($0)/")! }
    }

    /// The URL of the file at `path` (relative to the root), once started.
    public func url(for path: String) -> URL {
        let base = baseURL ?? URL(string: "http://\(Self.hostForURL(configuration.host)):\(configuration.port)/")!
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        let encoded = trimmed.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? String($0) }
            .joined(separator: "/")
        return URL(string: encoded, relativeTo: base)!.absoluteURL
    }

    /// Counts of what was served.
    public var statistics: OriginStatistics { state.statistics }

    /// Forgets the counts (and which paths were already requested, for the `-first` faults).
    public func resetStatistics() { state.resetStatistics() }

    private static func hostForURL(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }
}

/// The server's shared state: counters, open connections, the per-path request
/// numbers the faults key on, and the bandwidth pacer. Every mutable field is in
/// ``Fields``, guarded by one `Mutex`; it is taken briefly from event loops, the
/// thread pool and callers, never across a wait.
final class OriginState: Sendable {
    // Immutable.
    let configuration: OriginServer.Configuration
    let rootPath: String
    let mounts: [(String, String)]
    /// Where route handlers run: a thread of the server's own, so that a client in the same
    /// process is answered while CPU-bound work holds every thread of the concurrency pool
    /// (on one core the pool has one). `nil` when there are no routes.
    let routeExecutor: ThreadExecutor?

    private struct Fields {
        var stats = OriginStatistics()
        var requestsPerPath: [String: Int] = [:]
        var connections: [ObjectIdentifier: any Channel] = [:]
        var listener: (any Channel)?
        var port: Int?
        var phase = Phase.idle
        var linkFreeAt = NIODeadline.uptimeNanoseconds(0)
        /// When the server started: time zero of the link schedule.
        var startedAt = NIODeadline.now()
    }

    private enum Phase { case idle, starting, running, stopped }

    private let fields = Mutex(Fields())

    init(configuration: OriginServer.Configuration) {
        self.configuration = configuration
        self.rootPath = configuration.root.standardizedFileURL.resolvingSymlinksInPath().path
        self.mounts = configuration.mounts.map { ($0.key, $0.value.standardizedFileURL.resolvingSymlinksInPath().path) }
        self.routeExecutor = configuration.routes.isEmpty ? nil : ThreadExecutor(named: "reel.origin.routes")
    }

    deinit { routeExecutor?.shutDown() }

    var statistics: OriginStatistics { fields.withTrackedLock { $0.stats } }
    var boundPort: Int? { fields.withTrackedLock { $0.port } }

    func resetStatistics() {
        fields.withTrackedLock { fields in
            let open = fields.stats.openConnections
            fields.stats = OriginStatistics()
            fields.stats.openConnections = open
            fields.requestsPerPath = [:]
        }
    }

    func beginStarting() -> Bool {
        fields.withTrackedLock { fields in
            guard fields.phase == .idle else { return false }
            fields.phase = .starting
            return true
        }
    }

    func started(channel: any Channel, port: Int) {
        fields.withTrackedLock { fields in
            fields.listener = channel
            fields.port = port
            fields.phase = .running
            fields.startedAt = .now()
        }
    }

    func failedToStart() { fields.withTrackedLock { $0.phase = .idle } }

    /// Runs a route's handler on the route executor and completes `promise` with its answer.
    func runRoute(
        _ promise: EventLoopPromise<OriginResponse>,
        _ handler: @escaping @Sendable () async throws -> OriginResponse
    ) {
        Task(executorPreference: routeExecutor ?? globalConcurrentExecutor) {
            do { promise.succeed(try await handler()) } catch { promise.fail(error) }
        }
    }

    func stopping() -> ((any Channel)?, [any Channel]) {
        fields.withTrackedLock { fields in
            fields.phase = .stopped
            defer { fields.listener = nil }
            return (fields.listener, Array(fields.connections.values))
        }
    }

    func connectionOpened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        // Registered and checked against `stopping()` in one critical section: a
        // connection is either in the list `stop()` closes, or refused here.
        let refuse = fields.withTrackedLock { fields -> Bool in
            guard fields.phase != .stopped else { return true }
            fields.connections[id] = channel
            fields.stats.connectionsAccepted += 1
            fields.stats.openConnections += 1
            return false
        }
        if refuse {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.fields.withTrackedLock { fields in
                if fields.connections.removeValue(forKey: id) != nil { fields.stats.openConnections -= 1 }
            }
        }
    }

    /// Records a request; returns its number among the requests for its path (1 for the first).
    func recordRequest(method: String, path: String, range: String?, ifRange: String?) -> (index: Int, number: Int) {
        fields.withTrackedLock { fields in
            fields.stats.requestCount += 1
            fields.stats.requests.append(.init(method: method, path: path, range: range, ifRange: ifRange, status: 0))
            let number = (fields.requestsPerPath[path] ?? 0) + 1
            fields.requestsPerPath[path] = number
            return (fields.stats.requests.count - 1, number)
        }
    }

    func recordStatus(_ status: Int, at index: Int) {
        fields.withTrackedLock { fields in
            if index < fields.stats.requests.count { fields.stats.requests[index].status = status }
        }
    }

    func recordBytes(_ count: Int) {
        fields.withTrackedLock { $0.stats.bytesServed += Int64(count) }
    }

    /// Bytes per second of the fixed bandwidth cap, if there is one.
    var fixedBytesPerSecond: Int64? {
        configuration.bandwidthKbps.map { max(1, Int64($0) * 1000 / 8) }
    }

    /// Bytes per second of the cap now (the link schedule's step, else the fixed cap).
    var bytesPerSecond: Int64? {
        guard let link = configuration.link else { return fixedBytesPerSecond }
        let elapsed = fields.withTrackedLock { NIODeadline.now() - $0.startedAt }.nanoseconds
        return link.bytesPerSecond(at: elapsed, base: fixedBytesPerSecond)
    }

    /// The size of paced body writes: 5 ms of the link (200 a second), between 1 KiB
    /// and 64 KiB. Concurrent responses take turns on the link slice by slice, as
    /// packets of concurrent flows interleave on a real link; coarser slices would
    /// make a new request wait behind a long burst of an earlier one.
    var chunkSize: Int {
        guard let rate = bytesPerSecond else { return 64 * 1024 }
        return Int(min(64 * 1024, max(1024, rate / 200)))
    }

    /// Reserves the shared link for `count` bytes; returns how long to wait before writing them.
    func reserveLink(_ count: Int) -> TimeAmount {
        let fixed = fixedBytesPerSecond
        let link = configuration.link
        guard fixed != nil || link != nil else { return .zero }
        return fields.withTrackedLock { fields in
            let now = NIODeadline.now()
            let start = max(now, fields.linkFreeAt)
            let duration: Int64
            if let link {
                duration = link.transmissionNanoseconds(Int64(count), from: (start - fields.startedAt).nanoseconds, base: fixed)
            } else if let fixed {
                let nanos = Int64(count).multipliedFullWidth(by: 1_000_000_000)
                duration = fixed.dividingFullWidth(nanos).quotient
            } else {
                duration = 0
            }
            fields.linkFreeAt = start + .nanoseconds(duration)
            return start - now
        }
    }

    /// The file system path for a request path, if it stays inside the root.
    func filePath(for requestPath: String) -> String? {
        guard requestPath.hasPrefix("/"), !requestPath.contains("\0") else { return nil }
        let components = requestPath.split(separator: "/")
        guard !components.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        guard !components.isEmpty else { return nil }
        for (prefix, directory) in mounts {
            let prefixComponents = prefix.split(separator: "/")
            if components.count > prefixComponents.count, Array(components.prefix(prefixComponents.count)) == prefixComponents {
                return directory + "/" + components.dropFirst(prefixComponents.count).joined(separator: "/")
            }
        }
        return rootPath + "/" + components.joined(separator: "/")
    }
}
