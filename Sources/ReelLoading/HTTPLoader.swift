import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ReelCore
import Synchronization

/// Reads `http://` and `https://` resources with byte-range requests, through the
/// `ResourceLoader` contract.
///
/// Each read is one or more `GET`s with `Range: bytes=a-b` (or `bytes=a-`), answered
/// by the origin however it likes, and checked before a byte is delivered:
///
/// - `206` must carry a `Content-Range` starting at the offset asked for and ending
///   no later than asked; anything else is `ResourceLoaderError/invalidResponse(url:range:reason:)`
///   and no byte of it is delivered. A shorter answer is not an error: the rest is
///   asked for next.
/// - `200` to a range request (a server that ignores `Range`) is read from its start
///   and the bytes before the offset are skipped.
/// - `416` at the end of the resource is the end of input (an empty read); past the
///   end it is `ResourceLoaderError/rangeNotSatisfiable(url:range:length:)`.
/// - No `Content-Length` and a `*` complete length: the length is unknown and the
///   read ends when the body does.
/// - Redirects are followed (up to ``Configuration/maxRedirects``) and the final URL is
///   in `ContentInformation/finalURL`; later requests of the read go straight there.
/// - `ETag` and `Last-Modified` are recorded; a resumed request carries `If-Range`, and
///   a different entity on resume is `ResourceLoaderError/contentChanged(url:expected:found:)`.
/// - `5xx`, timeouts and dropped connections are retried with exponential backoff,
///   resuming from the last byte received; ``Configuration/maxAttemptsWithoutProgress``
///   consecutive failures with no new byte end the read with the last error.
/// - Cancelling a read cancels its request, which closes its connection.
///
/// There is no content-type whitelist: the loader delivers whatever bytes the origin has.
///
/// An `HTTPLoader` owns an `HTTPClient`; call ``shutdown()`` when done with it (it is
/// also shut down, without waiting, when the loader is released).
public final class HTTPLoader: ResourceLoader, Sendable {
    /// Timeouts, retries and request headers.
    public struct Configuration: Sendable {
        /// Time allowed to open a connection.
        public var connectTimeout: Duration
        /// Time allowed from sending a request to its response head.
        public var responseTimeout: Duration
        /// Time allowed without a byte while a body is being received.
        public var readTimeout: Duration
        /// How many failed attempts in a row, with no new byte between them, end a read.
        public var maxAttemptsWithoutProgress: Int
        /// The wait before the first retry; each further retry doubles it.
        public var initialBackoff: Duration
        /// The longest wait between retries.
        public var maxBackoff: Duration
        /// How many redirects a request may follow.
        public var maxRedirects: Int
        /// Sent as `Authorization: Bearer …` (not to other hosts after a redirect).
        public var bearerToken: String?
        /// When set, asked for the token at each request instead of ``bearerToken`` (an app
        /// that signs in or out while the loader lives); nil from it sends none.
        public var bearerTokenProvider: (@Sendable () -> String?)?
        /// Extra request headers, sent with every request.
        public var headers: [(name: String, value: String)]
        /// The `User-Agent` header.
        public var userAgent: String

        /// A configuration; each parameter sets the property of the same name. Defaults: 5 s
        /// to connect, 20 s to a response head, 15 s without a body byte, four attempts
        /// without progress (a value below 1 is taken as 1), backoff from 100 ms doubling to
        /// at most 2 s, eight redirects, no token, no extra headers, `User-Agent: Reel/<version>`.
        /// ``bearerTokenProvider`` is not a parameter: set it after.
        public init(
            connectTimeout: Duration = .seconds(5),
            responseTimeout: Duration = .seconds(20),
            readTimeout: Duration = .seconds(15),
            maxAttemptsWithoutProgress: Int = 4,
            initialBackoff: Duration = .milliseconds(100),
            maxBackoff: Duration = .seconds(2),
            maxRedirects: Int = 8,
            bearerToken: String? = nil,
            headers: [(name: String, value: String)] = [],
            userAgent: String = "Reel/\(ReelCore.version)"
        ) {
            self.connectTimeout = connectTimeout
            self.responseTimeout = responseTimeout
            self.readTimeout = readTimeout
            self.maxAttemptsWithoutProgress = max(1, maxAttemptsWithoutProgress)
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.maxRedirects = maxRedirects
            self.bearerToken = bearerToken
            self.headers = headers
            self.userAgent = userAgent
        }
    }

    /// What the loader has done so far.
    public struct Statistics: Sendable, Hashable {
        /// HTTP requests sent (redirects and retries included).
        public var requests = 0
        /// Body bytes received from the network (skipped ones included).
        public var bytesReceived: Int64 = 0
        /// Requests that were retries after a failure.
        public var retries = 0
        /// Redirects followed.
        public var redirects = 0
    }

    /// The configuration given at init.
    public let configuration: Configuration
    private let client: HTTPClient
    private let clock: any EngineClock
    private let logger: Logger
    /// Hears every response body as it arrives (a ``BandwidthMeter``).
    public let transferListener: (any TransferListener)?
    /// Counts, guarded by their mutex; updated by every read's task.
    private let counters = Mutex(Statistics())
    /// Whether ``shutdown()`` ran (or began), guarded by its mutex.
    private let isShutDown = Mutex(false)

    /// A loader with its own `HTTPClient`, timing its retry backoff on `clock`.
    public init(
        configuration: Configuration = Configuration(),
        clock: any EngineClock = HostClock.shared,
        logger: Logger = Logger(label: "reel.http"),
        transferListener: (any TransferListener)? = nil
    ) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.transferListener = transferListener
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(
                connect: TimeAmount(configuration.connectTimeout),
                read: TimeAmount(configuration.readTimeout)
            ),
            decompression: .disabled
        )
        clientConfiguration.httpVersion = .http1Only
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(30))
        // A refused connection fails the attempt at once; this loader's own backoff
        // decides about retrying, instead of the pool retrying until the connect timeout.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        self.client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
    }

    deinit {
        if !isShutDown.withTrackedLock({ $0 }) {
            client.shutdown { _ in }
        }
    }

    /// Closes every connection and stops the client. Reads after this fail.
    public func shutdown() async {
        let first = isShutDown.withTrackedLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        try? await client.shutdown()
    }

    /// Counts of what this loader has done.
    public var statistics: Statistics { counters.withTrackedLock { $0 } }

    /// Starts a read of `range` of an `http` or `https` URL (anything else is `notFound`).
    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream()
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            continuation.finish(throwing: ResourceLoaderError.notFound(url: url))
            return stream
        }
        let read = HTTPRead(loader: self, url: url, range: range, continuation: continuation)
        let task = Task { await read.run() }
        continuation.onCancel { task.cancel() }
        return stream
    }

    // MARK: - Internals used by HTTPRead

    fileprivate func execute(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        counters.withTrackedLock { $0.requests += 1 }
        return try await client.execute(request, timeout: TimeAmount(configuration.responseTimeout), logger: nil)
    }

    fileprivate func count(received: Int) { counters.withTrackedLock { $0.bytesReceived += Int64(received) } }
    fileprivate func countRetry() { counters.withTrackedLock { $0.retries += 1 } }
    fileprivate func countRedirect() { counters.withTrackedLock { $0.redirects += 1 } }
    fileprivate var backoffClock: any EngineClock { clock }
    fileprivate var log: Logger { logger }
}

/// One read: a ``RangeResponseMachine`` that decides, and the task that carries out what it
/// decides — sends its requests, hands it each response head and body buffer, delivers,
/// waits out its backoffs.
private final class HTTPRead: Sendable {
    typealias Machine = RangeResponseMachine

    let loader: HTTPLoader
    let url: URL
    let range: ByteRange
    let continuation: ByteStream.Continuation

    init(loader: HTTPLoader, url: URL, range: ByteRange, continuation: ByteStream.Continuation) {
        self.loader = loader
        self.url = url
        self.range = range
        self.continuation = continuation
    }

    func run() async {
        let configuration = loader.configuration
        // The read's state: owned by this task alone.
        var machine = Machine(url: url, range: range, configuration: .init(
            maxAttemptsWithoutProgress: configuration.maxAttemptsWithoutProgress,
            initialBackoff: configuration.initialBackoff,
            maxBackoff: configuration.maxBackoff,
            maxRedirects: configuration.maxRedirects
        ))
        do {
            while true {
                try Task.checkCancellation()
                guard case .send(let request) = machine.startAttempt() else { break }
                let outcome = try await attempt(request, &machine)
                guard try await carryOut(outcome) else { break }
            }
            continuation.finish()
        } catch let error as ResourceLoaderError {
            continuation.finish(throwing: error)
        } catch {
            if continuation.isCancelled || error is CancellationError {
                continuation.finish(throwing: CancellationError())
            } else {
                continuation.finish(throwing: ResourceLoaderError.network(url: url, range: range, reason: "\(error)"))
            }
        }
    }

    /// Carries out how an attempt ended: true when another attempt follows, false when the
    /// read is finished; a failure is thrown.
    private func carryOut(_ outcome: Machine.Outcome) async throws -> Bool {
        switch outcome {
        case .nextRequest:
            return true
        case .redirect:
            loader.countRedirect()
            return true
        case .retry(let delay, let position, let error):
            loader.log.debug("retrying \(url) from byte \(position) in \(delay): \(error)")
            loader.countRetry()
            try await loader.backoffClock.sleep(for: MediaTime(delay))
            return true
        case .finish(let information):
            if let information { continuation.respond(with: information) }
            return false
        case .fail(let error, let information):
            if let information { continuation.respond(with: information) }
            throw error
        }
    }

    /// One request and as much of its body as it delivers.
    private func attempt(_ request: Machine.Request, _ machine: inout Machine) async throws -> Machine.Outcome {
        let response: HTTPClientResponse
        do {
            response = try await loader.execute(makeRequest(request))
        } catch {
            return machine.attemptFailed(try classify(error))
        }
        switch machine.headReceived(Self.head(of: response)) {
        case .readBody(let information):
            if let information { continuation.respond(with: information) }
            return try await readBody(of: response, &machine)
        case .discardBody(let outcome):
            await discard(response)
            return outcome
        case .respondAndFinish(let information):
            continuation.respond(with: information)
            await discard(response)
            return .finish(respond: nil)
        case .dropBody(let error):
            return .fail(error, respond: nil)
        }
    }

    /// Streams the body: the machine says which bytes of each buffer to deliver. The body is
    /// one transfer for the bandwidth meter, from here to however it ends.
    private func readBody(of response: HTTPClientResponse, _ machine: inout Machine) async throws -> Machine.Outcome {
        let listener = loader.transferListener
        listener?.transferStarted(url)
        defer { listener?.transferEnded(url) }
        do {
            for try await buffer in response.body {
                loader.count(received: buffer.readableBytes)
                listener?.bytesTransferred(buffer.readableBytes, url: url)
                let action = machine.bodyReceived(byteCount: buffer.readableBytes)
                let bytes: Range<Int>
                switch action {
                case .skip: continue
                case .deliver(let range), .deliverAndFinish(let range): bytes = range
                }
                let data = buffer.readableBytesView[...].dropFirst(bytes.lowerBound).prefix(bytes.count)
                try await continuation.send(Data(data))
                if case .deliverAndFinish = action {
                    // Leaving the loop drops the body, which cancels the request and closes
                    // its connection: nothing of a longer answer is left to mislead the next one.
                    return .finish(respond: nil)
                }
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            if continuation.isCancelled { throw CancellationError() }
            return machine.attemptFailed(try classify(error))
        }
        return machine.bodyEnded()
    }

    private func makeRequest(_ wanted: Machine.Request) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: wanted.url.absoluteString)
        request.method = .GET
        let configuration = loader.configuration
        request.headers.add(name: "User-Agent", value: configuration.userAgent)
        request.headers.add(name: "Accept-Encoding", value: "identity")
        for header in configuration.headers {
            request.headers.replaceOrAdd(name: header.name, value: header.value)
        }
        let token = configuration.bearerTokenProvider.map { $0() } ?? configuration.bearerToken
        if let token, Self.sameOrigin(url, wanted.url) {
            request.headers.replaceOrAdd(name: "Authorization", value: "Bearer \(token)")
        }
        request.headers.add(name: "Range", value: wanted.range)
        if let ifRange = wanted.ifRange {
            request.headers.add(name: "If-Range", value: ifRange)
        }
        return request
    }

    /// The head as the machine reads it.
    private static func head(of response: HTTPClientResponse) -> Machine.Head {
        let headers = response.headers
        return Machine.Head(
            status: Int(response.status.code),
            contentRange: headers.first(name: "content-range"),
            contentLength: headers.first(name: "content-length"),
            entityTag: headers.first(name: "etag"),
            lastModified: headers.first(name: "last-modified"),
            contentType: headers.first(name: "content-type"),
            acceptRanges: headers.first(name: "accept-ranges"),
            location: headers.first(name: "location")
        )
    }

    /// What the transport's error means for the read: retryable or fatal, or thrown as a
    /// cancellation.
    private func classify(_ error: any Error) throws -> Machine.Failure {
        if error is CancellationError || Task.isCancelled || continuation.isCancelled {
            throw CancellationError()
        }
        if let client = error as? HTTPClientError {
            switch client {
            case .cancelled:
                throw CancellationError()
            case .invalidURL, .emptyHost, .emptyScheme, .alreadyShutdown:
                return .fatal(.network(url: url, range: range, reason: client.shortDescription))
            default:
                if client.description.contains("unsupportedScheme") {
                    return .fatal(.notFound(url: url))
                }
                return .retryable(.network(url: url, range: range, reason: client.shortDescription.lowercased()))
            }
        }
        if let io = error as? IOError {
            return .retryable(.network(url: url, range: range, reason: String(cString: strerror(io.errnoCode)).lowercased()))
        }
        return .retryable(.network(url: url, range: range, reason: "\(error)"))
    }

    private func discard(_ response: HTTPClientResponse) async {
        // Small bodies (errors, redirects) are read so the connection can be reused;
        // anything bigger is dropped, which closes the connection.
        _ = try? await response.body.collect(upTo: 64 * 1024)
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && a.port == b.port
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

extension MediaTime {
    /// The same span of time as `duration`, in nanoseconds.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
