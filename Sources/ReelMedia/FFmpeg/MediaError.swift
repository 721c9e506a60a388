import Foundation
import ReelCore
internal import CFFmpeg

/// Why media could not be opened, demuxed or decoded. Each case carries what a
/// user needs to act: the URL, the operation, and FFmpeg's own words.
public enum MediaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An FFmpeg call failed: which one, its error code, and FFmpeg's message.
    case ffmpeg(operation: String, code: Int32, message: String, url: URL?)
    /// The loader could not deliver the bytes.
    case loading(ResourceLoaderError)
    /// The file holds nothing Reel can play (no audio or video stream).
    case noPlayableStreams(url: URL)
    /// A stream's codec has no decoder in this FFmpeg build.
    case unsupportedCodec(name: String, url: URL)
    /// The input is not media FFmpeg recognises.
    case unrecognizedFormat(url: URL, message: String)
    /// Encoding (fixtures, the demo feed) failed.
    case encoding(String)
    /// A stream's decoder took packet after packet and gave no picture or sound.
    case undecodable(stream: String, codec: String, url: URL)
    /// The input ended, or failed, and nothing could be decoded from it.
    case nothingDecoded(url: URL)
    /// A streaming document (HLS playlist, DASH manifest) of the item at `item` named `url`,
    /// which the item may not open: another protocol, a local file for a remote item, a file
    /// outside a local item's directory (see ``NestedAccessPolicy``).
    case refusedURL(url: String, item: URL, reason: String)
    /// A streaming document went past one of the limits against hostile documents
    /// (nesting depth, renditions, playlist entries or bytes).
    case streamLimit(what: String, limit: Int, url: URL)
    /// A streaming format Reel cannot play through its loader (and so does not play at all).
    case unsupportedStream(url: URL, reason: String)
    /// The operation was cancelled (the item was replaced or the player released).
    case cancelled

    /// One line for the user, naming the resource (a file by its path, any other URL as
    /// written): `/clips/a.mp4: no audio or video stream`.
    public var description: String {
        switch self {
        case .ffmpeg(let operation, let code, let message, let url):
            let place = url.map { "\(Self.display($0)): " } ?? ""
            return "\(place)\(operation) failed: \(message) (\(code))"
        case .loading(let error):
            return error.description
        case .noPlayableStreams(let url):
            return "\(Self.display(url)): no audio or video stream"
        case .unsupportedCodec(let name, let url):
            return "\(Self.display(url)): no decoder for codec \(name)"
        case .unrecognizedFormat(let url, let message):
            return "\(Self.display(url)): not a media file Reel can read (\(message))"
        case .encoding(let message):
            return "encoding failed: \(message)"
        case .undecodable(let stream, let codec, let url):
            return "\(Self.display(url)): the \(stream) stream (\(codec)) cannot be decoded"
        case .nothingDecoded(let url):
            return "\(Self.display(url)): nothing in it could be decoded"
        case .refusedURL(let url, let item, let reason):
            return "\(Self.display(item)): refused to open \(url): \(reason)"
        case .streamLimit(let what, let limit, let url):
            return "\(Self.display(url)): \(what) exceeds the limit of \(limit)"
        case .unsupportedStream(let url, let reason):
            return "\(Self.display(url)): \(reason)"
        case .cancelled:
            return "cancelled"
        }
    }

    static func display(_ url: URL) -> String { url.isFileURL ? url.path : url.absoluteString }
}

/// FFmpeg's text for an error code.
package func ffmpegErrorString(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    av_strerror(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Runs an FFmpeg call and turns a negative return into a thrown ``MediaError``
/// (the NIO pattern of one helper for every C call).
@discardableResult
package func ffcall(_ operation: @autoclosure () -> String, url: URL? = nil, _ body: () -> Int32) throws -> Int32 {
    let code = body()
    if code < 0 {
        throw MediaError.ffmpeg(operation: operation(), code: code, message: ffmpegErrorString(code), url: url)
    }
    return code
}

package let AVERROR_EOF_CODE: Int32 = reel_averror_eof()
package let AVERROR_EAGAIN_CODE: Int32 = reel_averror_eagain()
package let AVERROR_EXIT_CODE: Int32 = reel_averror_exit()
package let AV_NOPTS: Int64 = reel_av_nopts_value()
