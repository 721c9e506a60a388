import Foundation
import ReelCore

/// One resource held in memory, served by byte range: what a caption file's bytes are handed
/// to FFmpeg through once they were read (whole and capped) through the item's loader.
struct MemoryLoader: ResourceLoader {
    let url: URL
    let data: Data

    func read(_ url: URL, range: ByteRange) -> ByteStream {
        guard url == self.url else { return ByteStream.failed(ResourceLoaderError.notFound(url: url)) }
        return ByteStream.serving(data, url: url, range: range, contentType: nil)
    }
}
