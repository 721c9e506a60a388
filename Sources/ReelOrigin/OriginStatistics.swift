/// What an ``OriginServer`` has served since it started (or since ``OriginServer/resetStatistics()``).
public struct OriginStatistics: Sendable, Hashable {
    /// One request as the server saw it.
    public struct Request: Sendable, Hashable {
        public var method: String
        public var path: String
        /// The `Range` header, if any.
        public var range: String?
        /// The `If-Range` header, if any.
        public var ifRange: String?
        /// The status answered (0 when the connection closed before an answer).
        public var status: Int
    }

    /// Requests received, routes included.
    public var requestCount: Int = 0
    /// Body bytes written to sockets (headers not counted), routes included.
    public var bytesServed: Int64 = 0
    /// Connections accepted.
    public var connectionsAccepted: Int = 0
    /// Connections open right now.
    public var openConnections: Int = 0
    /// Every request, in arrival order.
    public var requests: [Request] = []

    /// Requests for `path`.
    public func requests(for path: String) -> [Request] { requests.filter { $0.path == path } }
}
