import Foundation
import ReelCore

/// One resource held in memory, served by byte range: what a caption file's bytes are handed
/// to FFmpeg through once they were read (whole and capped) through the item's loader.
struct MemoryLoader: ResourceLoader {
    let url: URL
    let data: Data

    func read(_ url: URL, range: ByteRange) -> ByteStream {
        guard url == self.url else { return ByteStream.failed(ResourceLoaderError.notFound(url: url)) }
        return Self.serve(data, url: url, range: range, contentType: nil)
    }

    /// A stream of `range` of `data` (the resource at `url`), delivered at once; a range that
    /// starts past the end fails as HTTP's 416 does. DASH as HLS serves its playlists this way.
    static func serve(_ data: Data, url: URL, range: ByteRange, contentType: String?) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: max(1 << 20, data.count))
        deliver(data, url: url, range: range, contentType: contentType, to: continuation)
        return stream
    }

    /// ``serve(_:url:range:contentType:)`` into a stream made earlier (the data was not known yet).
    static func deliver(_ data: Data, url: URL, range: ByteRange, contentType: String?,
                        to continuation: ByteStream.Continuation) {
        let length = Int64(data.count)
        continuation.respond(with: ContentInformation(length: length, contentType: contentType))
        guard range.offset <= length else {
            continuation.finish(throwing: ResourceLoaderError.rangeNotSatisfiable(url: url, range: range, length: length))
            return
        }
        let end = min(range.end ?? length, length)
        if end > range.offset { continuation.yield(data.subdata(in: Int(range.offset)..<Int(end))) }
        continuation.finish()
    }
}
