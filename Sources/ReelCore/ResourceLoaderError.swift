import Foundation

/// Why a loader could not deliver bytes. Every case names the resource, and the
/// range when a read was under way, so a one-line message tells the user what failed.
public enum ResourceLoaderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing exists at `url` (a missing file, HTTP 404 or 410).
    case notFound(url: URL)
    /// The read starts past the end of the resource (offset > length).
    case rangeNotSatisfiable(url: URL, range: ByteRange, length: Int64?)
    /// The origin answered in a way that cannot be trusted (a `Content-Range`
    /// other than the one asked for, a short body that claims to be whole).
    case invalidResponse(url: URL, range: ByteRange, reason: String)
    /// The origin answered with an HTTP status that is an error.
    case httpStatus(url: URL, range: ByteRange, status: Int)
    /// The network failed (refused, reset, timed out) and retries did not help.
    case network(url: URL, range: ByteRange, reason: String)
    /// Reading a local file failed.
    case io(url: URL, range: ByteRange, reason: String)
    /// The resource changed while it was being read (a new entity tag).
    case contentChanged(url: URL, expected: String?, found: String?)
    /// The origin wants credentials (HTTP 401 / 403).
    case unauthorized(url: URL, status: Int)
    /// The read was cancelled.
    case cancelled(url: URL, range: ByteRange)

    /// The resource the error is about.
    public var url: URL {
        switch self {
        case .notFound(let url), .rangeNotSatisfiable(let url, _, _), .invalidResponse(let url, _, _),
             .httpStatus(let url, _, _), .network(let url, _, _), .io(let url, _, _),
             .contentChanged(let url, _, _), .unauthorized(let url, _), .cancelled(let url, _):
            url
        }
    }

    /// The range being read when it failed, when there was one.
    public var range: ByteRange? {
        switch self {
        case .rangeNotSatisfiable(_, let range, _), .invalidResponse(_, let range, _),
             .httpStatus(_, let range, _), .network(_, let range, _), .io(_, let range, _),
             .cancelled(_, let range):
            range
        case .notFound, .contentChanged, .unauthorized:
            nil
        }
    }

    public var description: String {
        let where_ = Self.display(url)
        switch self {
        case .notFound:
            return "\(where_): not found"
        case .rangeNotSatisfiable(_, let range, let length):
            return "\(where_): \(range) is past the end (length \(length.map(String.init) ?? "unknown"))"
        case .invalidResponse(_, let range, let reason):
            return "\(where_) \(range): invalid response: \(reason)"
        case .httpStatus(_, let range, let status):
            return "\(where_) \(range): HTTP \(status)"
        case .network(_, let range, let reason):
            return "\(where_) \(range): network error: \(reason)"
        case .io(_, let range, let reason):
            return "\(where_) \(range): \(reason)"
        case .contentChanged(_, let expected, let found):
            return "\(where_): content changed (entity tag \(expected ?? "none") → \(found ?? "none"))"
        case .unauthorized(_, let status):
            return "\(where_): authorization required (HTTP \(status))"
        case .cancelled(_, let range):
            return "\(where_) \(range): cancelled"
        }
    }

    private static func display(_ url: URL) -> String {
        url.isFileURL ? url.path : url.absoluteString
    }
}
