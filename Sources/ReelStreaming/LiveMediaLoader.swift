import Foundation
import ReelCore
import Synchronization

/// A loader that serves a live HLS media playlist's media, read by ``LiveSegmentReader``, as
/// one resource at a URL of its own (`reel-live://N`), and passes every other URL to the
/// loader below. What lets the engine play a live stream with FFmpeg's mov or mpegts demuxer
/// while Reel decides what is fetched and when.
///
/// A read from offset 0 starts a reader at the live edge; the resource cannot seek (a read
/// from elsewhere fails). Reads of the segments and playlists go through `upstream`.
public final class LiveMediaLoader: StoringResourceLoader, Sendable {
    public static let scheme = "reel-live"

    /// Why a read was refused.
    public struct Refused: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    private struct Registered: Sendable {
        var playlist: URL
        var observer: (@Sendable (LiveSegmentReader.Event) -> Void)?
    }

    public let upstream: any ResourceLoader
    private let registry: Mutex<[String: Registered]>
    private let tracker: LivePlaylistTracker

    public init(upstream: any ResourceLoader, tracker: LivePlaylistTracker = LivePlaylistTracker()) {
        self.upstream = upstream
        self.registry = Mutex([:])
        self.tracker = tracker
    }

    /// The URL at which `playlist`'s media is served.
    public func register(playlist: URL, observer: (@Sendable (LiveSegmentReader.Event) -> Void)? = nil) -> URL {
        registry.withTrackedLock { registry in
            let key = String(registry.count + 1)
            registry[key] = Registered(playlist: playlist, observer: observer)
            return URL(string: "\(Self.scheme)://\(key)/media")!
        }
    }

    public var unstored: any ResourceLoader { upstream.unstoredLoader }

    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        guard url.scheme == Self.scheme else { return upstream.read(url, range: range) }
        guard let registered = registry.withTrackedLock({ $0[url.host ?? ""] }) else {
            return .failed(Refused(description: "\(url): not a live stream of this loader"))
        }
        guard range.offset == 0 else {
            return .failed(Refused(description: "a live stream cannot seek (a read from byte \(range.offset))"))
        }
        let reader = LiveSegmentReader(playlist: registered.playlist, loader: upstream, tracker: tracker,
                                       observer: registered.observer)
        // The reader's own failures (a stale playlist, …) reach the engine as the loader's
        // errors, which fail the item, rather than as a read that stopped.
        return reader.stream(failingAs: { error in
            .invalidResponse(url: registered.playlist, range: .all, reason: "\(error)")
        })
    }

    public func contentInformation(for url: URL) async throws -> ContentInformation {
        guard url.scheme == Self.scheme else { return try await upstream.contentInformation(for: url) }
        return ContentInformation(length: nil, isByteRangeAccessSupported: false, finalURL: url)
    }
}
