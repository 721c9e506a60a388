import Foundation
import ReelCore

/// Reads `file:` URLs through one loader and everything else through another: a
/// feed whose manifest is local but whose media is on a server (or the reverse)
/// goes through one loader.
public struct SchemeRoutingLoader: StoringResourceLoader {
    public let files: any ResourceLoader
    public let remote: any ResourceLoader

    public init(files: any ResourceLoader = FileLoader(), remote: any ResourceLoader) {
        self.files = files
        self.remote = remote
    }

    /// Both routes without their stored copies.
    public var unstored: any ResourceLoader {
        SchemeRoutingLoader(files: files.unstoredLoader, remote: remote.unstoredLoader)
    }

    private func route(_ url: URL) -> any ResourceLoader { url.isFileURL ? files : remote }

    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        route(url).read(url, range: range)
    }

    public func contentInformation(for url: URL) async throws -> ContentInformation {
        try await route(url).contentInformation(for: url)
    }
}
