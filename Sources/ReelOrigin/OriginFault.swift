/// A way for ``OriginServer`` to misbehave on purpose, so loaders and caches can be
/// tested against the failures real CDNs and proxies produce. A server runs with at
/// most one fault; it applies to file responses, never to extra routes.
public enum OriginFault: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Range requests are answered `200` with the whole body, as if `Range` were unknown.
    case ignoreRange = "ignore-range"
    /// Every body of more than one byte is cut after half of it: the headers promise the
    /// whole body, half arrives, and the connection is closed.
    case dropMidBody = "drop-mid-body"
    /// The first request for each path is answered `500`; later ones are served normally.
    case fiveHundredFirst = "500-first"
    /// `206` responses carry a `Content-Range` one byte off from the bytes sent
    /// (the body is what was asked for; the header lies).
    case wrongContentRange = "wrong-content-range"
    /// The first GET for each path gets its headers and then nothing: the connection
    /// stays open and silent until the client gives up.
    case stallAfterHeaders = "stall-after-headers"
    /// No `Content-Length`: bodies are chunked (close-delimited for HTTP/1.0), and
    /// `Content-Range` gives `*` for the complete length, so the length is unknown.
    case noContentLength = "no-content-length"
    /// Every request sees a new version of every file: a new `ETag` and different bytes
    /// (the file's bytes XOR a per-version value; the first request sees the file).
    case contentChanged = "content-changed"

    public var description: String { rawValue }

    /// The fault named `name` (`ignore-range`, `drop-mid-body`, …), if there is one.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// Every fault's name, for help texts and error messages.
    public static var names: [String] { allCases.map(\.rawValue) }
}
