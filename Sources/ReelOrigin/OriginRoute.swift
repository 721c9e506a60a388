import Foundation
import NIOCore

/// A request handed to an ``OriginRoute``.
public struct OriginRequest: Sendable {
    /// `GET`, `HEAD`, `POST`, …
    public var method: String
    /// The path, percent-decoded, without the query (`/api/feed`).
    public var path: String
    /// The raw query string after `?`, if any.
    public var query: String?
    /// The request headers, in order, as received.
    public var headers: [(name: String, value: String)]
    /// The request body (empty for GET and HEAD).
    public var body: Data

    public init(method: String, path: String, query: String? = nil, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The query parameters, decoded (`?a=1&b=x%20y` → `["a": "1", "b": "x y"]`).
    public var queryItems: [String: String] {
        guard let query, let components = URLComponents(string: "?" + query) else { return [:] }
        var items: [String: String] = [:]
        for item in components.queryItems ?? [] { items[item.name] = item.value ?? "" }
        return items
    }
}

/// What an ``OriginRoute`` answers.
public struct OriginResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Response headers (`Content-Length` is set by the server).
    public var headers: [(name: String, value: String)]
    /// The body (not sent for HEAD).
    public var body: Data

    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `200` JSON response.
    public static func json(_ body: Data, status: Int = 200) -> OriginResponse {
        OriginResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200) -> OriginResponse {
        OriginResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8))
    }
}

/// An extra handler an ``OriginServer`` consults before its files: a JSON feed API, a
/// redirect, a page. The first route whose prefix matches the request's path (and
/// whose methods include the request's) answers it; the server's latency applies, its
/// fault and bandwidth cap do not.
///
/// ```swift
/// let feed = OriginRoute(pathPrefix: "/api/feed") { request in
///     .json(Data(#"{"items":[]}"#.utf8))
/// }
/// ```
public struct OriginRoute: Sendable {
    /// The path the route answers: exactly this path, or anything under it (`/api/feed`
    /// matches `/api/feed` and `/api/feed/2`, not `/api/feeds`).
    public var pathPrefix: String
    /// The methods the route answers (upper case); empty means any.
    public var methods: Set<String>
    /// Makes the response. A thrown error becomes a `500`.
    public var handler: @Sendable (OriginRequest) async throws -> OriginResponse
    /// For a streaming route: makes the response while the body arrives (the request's
    /// `body` is then empty). `nil` for a route that gets the body whole (at most 1 MiB).
    public var streamingHandler: (@Sendable (OriginRequest, OriginRequestBody) async throws -> OriginResponse)?

    public init(
        pathPrefix: String,
        methods: Set<String> = [],
        handler: @escaping @Sendable (OriginRequest) async throws -> OriginResponse
    ) {
        self.pathPrefix = pathPrefix
        self.methods = Set(methods.map { $0.uppercased() })
        self.handler = handler
        self.streamingHandler = nil
    }

    /// A route that reads the request body as it arrives (an upload), with backpressure:
    /// the connection stops reading while `body` is not consumed. It starts as soon as the
    /// request head arrives (the server's latency does not apply). If the response is ready
    /// before the body has ended, the server sends it and closes the connection. When the
    /// client goes away before the end, `body` throws ``OriginRequestBody/Truncated``.
    public init(
        pathPrefix: String,
        methods: Set<String> = [],
        streamingHandler: @escaping @Sendable (OriginRequest, OriginRequestBody) async throws -> OriginResponse
    ) {
        self.pathPrefix = pathPrefix
        self.methods = Set(methods.map { $0.uppercased() })
        self.streamingHandler = streamingHandler
        self.handler = { request in try await streamingHandler(request, .empty) }
    }

    /// A route answering `path` (and everything under it) with a redirect to `location`.
    public static func redirect(_ path: String, to location: String, status: Int = 302) -> OriginRoute {
        OriginRoute(pathPrefix: path) { _ in
            OriginResponse(status: status, headers: [("Location", location)])
        }
    }

    func matches(_ request: OriginRequest) -> Bool {
        if !methods.isEmpty, !methods.contains(request.method.uppercased()) { return false }
        if request.path == pathPrefix { return true }
        let prefix = pathPrefix.hasSuffix("/") ? pathPrefix : pathPrefix + "/"
        return request.path.hasPrefix(prefix)
    }
}

/// The body of a request to a streaming ``OriginRoute``, in pieces as they arrive.
public struct OriginRequestBody: AsyncSequence, Sendable {
    public typealias Element = Data

    /// The client closed the connection (or sent a malformed body) before the body ended.
    public struct Truncated: Error, CustomStringConvertible, Sendable {
        public var description: String { "the request body ended early" }
    }

    typealias Producer = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, OriginBodyDelegate
    >

    let producer: Producer?

    static let empty = OriginRequestBody(producer: nil)

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Producer.AsyncIterator?

        public mutating func next() async throws -> Data? {
            guard let buffer = try await base?.next() else { return nil }
            return Data(buffer.readableBytesView)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: producer?.makeAsyncIterator()) }
}

/// Tells the connection's handler to read again (called from the consumer's thread).
struct OriginBodyDelegate: NIOAsyncSequenceProducerDelegate {
    let resume: @Sendable () -> Void

    func produceMore() { resume() }
    func didTerminate() { resume() }
}
