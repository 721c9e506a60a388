import Foundation
import ReelCore

/// Reads `file:` URLs through one loader and everything else through another: a
/// feed whose manifest is local but whose media is on a server (or the reverse)
/// goes through one loader.
public struct SchemeRoutingLoader: StoringResourceLoader {
    /// Reads `file:` URLs (a ``FileLoader`` by default).
    public let files: any ResourceLoader
    /// Reads every other URL (an ``HTTPLoader``, or a ``CachingLoader`` over one).
    public let remote: any ResourceLoader

    /// A loader sending `file:` URLs to `files` and all others to `remote`.
    public init(files: any ResourceLoader = FileLoader(), remote: any ResourceLoader) {
        self.files = files
        self.remote = remote
    }

    /// Both routes without their stored copies.
    public var unstored: any ResourceLoader {
        SchemeRoutingLoader(files: files.unstoredLoader, remote: remote.unstoredLoader)
    }

    private func route(_ url: URL) -> any ResourceLoader { url.isFileURL ? files : remote }

    /// `files`' or `remote`'s read of `range` of `url`, by the URL's scheme; it behaves and
    /// fails as that loader's does.
    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        route(url).read(url, range: range)
    }

    /// `files`' or `remote`'s answer for `url`, by the URL's scheme; it throws what that
    /// loader throws.
    public func contentInformation(for url: URL) async throws -> ContentInformation {
        try await route(url).contentInformation(for: url)
    }
}
