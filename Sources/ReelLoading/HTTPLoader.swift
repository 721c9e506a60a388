import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ReelCore
import Synchronization

/// Reads `http://` and `https://` resources with byte-range requests, through the
/// ``ResourceLoader`` contract.
///
/// Each read is one or more `GET`s with `Range: bytes=a-b` (or `bytes=a-`), answered
/// by the origin however it likes, and checked before a byte is delivered:
///
/// - `206` must carry a `Content-Range` starting at the offset asked for and ending
///   no later than asked; anything else is ``ResourceLoaderError/invalidResponse(url:range:reason:)``
///   and no byte of it is delivered. A shorter answer is not an error: the rest is
///   asked for next.
/// - `200` to a range request (a server that ignores `Range`) is read from its start
///   and the bytes before the offset are skipped.
/// - `416` at the end of the resource is the end of input (an empty read); past the
///   end it is ``ResourceLoaderError/rangeNotSatisfiable(url:range:length:)``.
/// - No `Content-Length` and a `*` complete length: the length is unknown and the
///   read ends when the body does.
/// - Redirects are followed (up to ``Configuration/maxRedirects``) and the final URL is
///   in ``ContentInformation/finalURL``; later requests of the read go straight there.
/// - `ETag` and `Last-Modified` are recorded; a resumed request carries `If-Range`, and
///   a different entity on resume is ``ResourceLoaderError/contentChanged(url:expected:found:)``.
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

/// One read: the state carried across its requests (where it got to, what entity it
/// is reading, where the redirects led).
private final class HTTPRead: Sendable {
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

    /// Why an attempt ended without finishing the read.
    private enum AttemptFailure: Error {
        /// Worth another attempt (from where the read got to), after a backoff.
        case retryable(ResourceLoaderError)
        /// The read is over.
        case fatal(ResourceLoaderError)
    }

    /// The mutable state of the read; only `run()`'s task touches it.
    private struct Progress {
        var currentURL: URL
        var position: Int64
        /// One past the last byte to deliver, once known.
        var end: Int64?
        var information: ContentInformation?
        var redirects = 0
        var attemptsWithoutProgress = 0
        var lastError: ResourceLoaderError?
        var isFinished = false
    }

    func run() async {
        var progress = Progress(currentURL: url, position: range.offset, end: range.end)
        do {
            while !progress.isFinished {
                try Task.checkCancellation()
                if let end = progress.end, progress.information != nil, progress.position >= end {
                    break
                }
                let before = progress.position
                do {
                    try await attempt(&progress)
                } catch AttemptFailure.fatal(let error) {
                    throw error
                } catch AttemptFailure.retryable(let error) {
                    if progress.position > before { progress.attemptsWithoutProgress = 0 }
                    progress.attemptsWithoutProgress += 1
                    progress.lastError = error
                    guard progress.attemptsWithoutProgress < loader.configuration.maxAttemptsWithoutProgress else {
                        throw error
                    }
                    let delay = backoff(attempt: progress.attemptsWithoutProgress)
                    loader.log.debug("retrying \(url) from byte \(progress.position) in \(delay): \(error)")
                    loader.countRetry()
                    try await loader.backoffClock.sleep(for: MediaTime(delay))
                }
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

    private func backoff(attempt: Int) -> Duration {
        let configuration = loader.configuration
        var delay = configuration.initialBackoff
        for _ in 1..<max(1, attempt) {
            delay *= 2
            if delay >= configuration.maxBackoff { return configuration.maxBackoff }
        }
        return min(delay, configuration.maxBackoff)
    }

    /// One request and as much of its body as it delivers. Returns normally when the
    /// read is finished or must simply go on with a new request (a short `206`).
    private func attempt(_ progress: inout Progress) async throws {
        let request = makeRequest(progress)
        let response: HTTPClientResponse
        do {
            response = try await loader.execute(request)
        } catch {
            throw classify(error, progress)
        }
        let status = Int(response.status.code)
        let headers = response.headers

        if (300...399).contains(status), status != 304 {
            try await follow(response: response, progress: &progress)
            return
        }
        switch status {
        case 404, 410:
            await discard(response)
            throw AttemptFailure.fatal(.notFound(url: url))
        case 401, 403:
            await discard(response)
            throw AttemptFailure.fatal(.unauthorized(url: url, status: status))
        case 416:
            await discard(response)
            try unsatisfiable(headers: headers, progress: &progress)
            return
        case 500...599:
            await discard(response)
            throw AttemptFailure.retryable(.httpStatus(url: url, range: range, status: status))
        case 200, 206:
            break
        default:
            await discard(response)
            throw AttemptFailure.fatal(.httpStatus(url: url, range: range, status: status))
        }

        // Work out which bytes this body holds, and check them against what was asked.
        let entityTag = headers.first(name: "etag")
        let lastModified = headers.first(name: "last-modified")
        let contentLength = headers.first(name: "content-length").flatMap { Int64($0) }
        let bodyStart: Int64
        let bodyLength: Int64?
        let completeLength: Int64?
        if status == 206 {
            guard let header = headers.first(name: "content-range") else {
                throw AttemptFailure.fatal(.invalidResponse(url: url, range: range, reason: "206 without Content-Range"))
            }
            guard let contentRange = ContentRangeValue.parse(header), let first = contentRange.first, let last = contentRange.last else {
                throw AttemptFailure.fatal(.invalidResponse(url: url, range: range, reason: "unreadable Content-Range \"\(header)\""))
            }
            let askedLast = progress.end.map { max($0, progress.position + 1) - 1 }
            if first != progress.position || (askedLast.map { last > $0 } ?? false) {
                let asked = askedLast.map { "\(progress.position)-\($0)" } ?? "\(progress.position)-"
                throw AttemptFailure.fatal(.invalidResponse(
                    url: url, range: range,
                    reason: "asked for bytes \(asked), Content-Range says \(first)-\(last)"
                ))
            }
            if let contentLength, contentLength != last - first + 1 {
                throw AttemptFailure.fatal(.invalidResponse(
                    url: url, range: range,
                    reason: "Content-Length \(contentLength) does not match Content-Range \(first)-\(last)"
                ))
            }
            if let known = progress.information?.length, let total = contentRange.completeLength, known != total {
                throw AttemptFailure.fatal(.contentChanged(url: url, expected: progress.information?.entityTag, found: entityTag))
            }
            bodyStart = first
            bodyLength = last - first + 1
            completeLength = contentRange.completeLength ?? progress.information?.length
        } else {
            bodyStart = 0
            bodyLength = contentLength
            completeLength = contentLength
        }

        if let previous = progress.information {
            // A resumed request: it must be the same entity.
            if Self.entityChanged(previous: previous, entityTag: entityTag, lastModified: lastModified) {
                await discard(response)
                throw AttemptFailure.fatal(.contentChanged(url: url, expected: previous.entityTag, found: entityTag))
            }
            if let known = previous.length, let now = completeLength, known != now {
                await discard(response)
                throw AttemptFailure.fatal(.contentChanged(url: url, expected: previous.entityTag, found: entityTag))
            }
        } else {
            let acceptRanges = headers.first(name: "accept-ranges")?.lowercased()
            let info = ContentInformation(
                length: completeLength,
                contentType: headers.first(name: "content-type"),
                isByteRangeAccessSupported: status == 206 || (acceptRanges == "bytes" && range.offset == 0),
                entityTag: entityTag,
                lastModified: lastModified,
                finalURL: progress.currentURL
            )
            if let length = completeLength, range.offset > length {
                await discard(response)
                continuation.respond(with: info)
                throw AttemptFailure.fatal(.rangeNotSatisfiable(url: url, range: range, length: length))
            }
            progress.information = info
            if let length = completeLength {
                progress.end = min(progress.end ?? length, length)
            }
            continuation.respond(with: info)
        }
        if let end = progress.end, progress.position >= end {
            progress.isFinished = true
            await discard(response)
            return
        }

        // Stream the body: skip what comes before the position, stop at the end.
        // The body is one transfer for the bandwidth meter, from here to however it ends.
        let listener = loader.transferListener
        listener?.transferStarted(url)
        defer { listener?.transferEnded(url) }
        var skip = progress.position - bodyStart
        var received: Int64 = 0
        do {
            for try await buffer in response.body {
                received += Int64(buffer.readableBytes)
                loader.count(received: buffer.readableBytes)
                listener?.bytesTransferred(buffer.readableBytes, url: url)
                var data = buffer.readableBytesView[...]
                if skip > 0 {
                    let dropped = Int(min(Int64(data.count), skip))
                    data = data.dropFirst(dropped)
                    skip -= Int64(dropped)
                }
                if data.isEmpty { continue }
                var done = false
                if let end = progress.end, Int64(data.count) >= end - progress.position {
                    data = data.prefix(Int(end - progress.position))
                    done = true
                }
                progress.position += Int64(data.count)
                progress.attemptsWithoutProgress = 0
                try await continuation.send(Data(data))
                if done {
                    // Leaving the loop drops the body, which cancels the request and closes
                    // its connection: nothing of a longer answer is left to mislead the next one.
                    progress.isFinished = true
                    return
                }
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            if continuation.isCancelled { throw CancellationError() }
            throw classify(error, progress)
        }
        if let bodyLength, received < bodyLength {
            throw AttemptFailure.retryable(.network(
                url: url, range: range,
                reason: "connection closed after \(received) of \(bodyLength) bytes"
            ))
        }
        if bodyLength == nil && progress.end == nil {
            // A body of unknown length ended: that is the end of the resource.
            progress.isFinished = true
            return
        }
        if status == 200 {
            // A whole body was read; whatever is left is past the end of the resource.
            progress.isFinished = true
        }
        // A 206 shorter than asked: the loop asks for the rest.
    }

    private func makeRequest(_ progress: Progress) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: progress.currentURL.absoluteString)
        request.method = .GET
        let configuration = loader.configuration
        request.headers.add(name: "User-Agent", value: configuration.userAgent)
        request.headers.add(name: "Accept-Encoding", value: "identity")
        for header in configuration.headers {
            request.headers.replaceOrAdd(name: header.name, value: header.value)
        }
        let token = configuration.bearerTokenProvider.map { $0() } ?? configuration.bearerToken
        if let token, Self.sameOrigin(url, progress.currentURL) {
            request.headers.replaceOrAdd(name: "Authorization", value: "Bearer \(token)")
        }
        let first = progress.position
        if let end = progress.end {
            // An empty range still needs an answer for its information: ask for one byte.
            let last = max(end, first + 1) - 1
            request.headers.add(name: "Range", value: "bytes=\(first)-\(last)")
        } else {
            request.headers.add(name: "Range", value: "bytes=\(first)-")
        }
        if let info = progress.information {
            if let tag = info.entityTag, !tag.hasPrefix("W/") {
                request.headers.add(name: "If-Range", value: tag)
            } else if info.entityTag == nil, let modified = info.lastModified {
                request.headers.add(name: "If-Range", value: modified)
            }
        }
        return request
    }

    private func follow(response: HTTPClientResponse, progress: inout Progress) async throws {
        await discard(response)
        guard let location = response.headers.first(name: "location"),
              let target = URL(string: location, relativeTo: progress.currentURL)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw AttemptFailure.fatal(.invalidResponse(
                url: url, range: range, reason: "HTTP \(response.status.code) without a usable Location"
            ))
        }
        progress.redirects += 1
        guard progress.redirects <= loader.configuration.maxRedirects else {
            throw AttemptFailure.fatal(.invalidResponse(url: url, range: range, reason: "more than \(loader.configuration.maxRedirects) redirects"))
        }
        loader.countRedirect()
        progress.currentURL = target
    }

    private func unsatisfiable(headers: HTTPHeaders, progress: inout Progress) throws {
        let length = headers.first(name: "content-range").flatMap(ContentRangeValue.parse)?.completeLength
            ?? progress.information?.length
        let position = progress.position
        if let length, position > length {
            if progress.information == nil {
                continuation.respond(with: information(headers: headers, length: length, progress: progress))
            }
            throw AttemptFailure.fatal(.rangeNotSatisfiable(url: url, range: range, length: length))
        }
        if let length, position < length {
            throw AttemptFailure.fatal(.invalidResponse(
                url: url, range: range, reason: "416 for byte \(position) of a \(length)-byte resource"
            ))
        }
        // At the end (or the length is unknown): the end of input.
        if progress.information == nil {
            let info = information(headers: headers, length: length, progress: progress)
            progress.information = info
            continuation.respond(with: info)
        }
        progress.isFinished = true
    }

    private func information(headers: HTTPHeaders, length: Int64?, progress: Progress) -> ContentInformation {
        ContentInformation(
            length: length,
            contentType: nil,
            isByteRangeAccessSupported: true,
            entityTag: headers.first(name: "etag"),
            lastModified: headers.first(name: "last-modified"),
            finalURL: progress.currentURL
        )
    }

    private func classify(_ error: any Error, _ progress: Progress) -> any Error {
        if error is CancellationError || Task.isCancelled || continuation.isCancelled {
            return CancellationError()
        }
        if let error = error as? AttemptFailure { return error }
        if let client = error as? HTTPClientError {
            switch client {
            case .cancelled:
                return CancellationError()
            case .invalidURL, .emptyHost, .emptyScheme, .alreadyShutdown:
                return AttemptFailure.fatal(.network(url: url, range: range, reason: client.shortDescription))
            default:
                if client.description.contains("unsupportedScheme") {
                    return AttemptFailure.fatal(.notFound(url: url))
                }
                return AttemptFailure.retryable(.network(url: url, range: range, reason: client.shortDescription.lowercased()))
            }
        }
        if let io = error as? IOError {
            return AttemptFailure.retryable(.network(url: url, range: range, reason: String(cString: strerror(io.errnoCode)).lowercased()))
        }
        return AttemptFailure.retryable(.network(url: url, range: range, reason: "\(error)"))
    }

    private func discard(_ response: HTTPClientResponse) async {
        // Small bodies (errors, redirects) are read so the connection can be reused;
        // anything bigger is dropped, which closes the connection.
        _ = try? await response.body.collect(upTo: 64 * 1024)
    }

    static func entityChanged(previous: ContentInformation, entityTag: String?, lastModified: String?) -> Bool {
        if let old = previous.entityTag, let new = entityTag { return old != new }
        if let old = previous.lastModified, let new = lastModified { return old != new }
        return false
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
