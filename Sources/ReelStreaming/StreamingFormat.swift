import Foundation
import ReelCore

/// Which path an item takes: Reel's HLS path, its DASH path (the manifest read by Reel and
/// played as HLS), or anything else (a media file FFmpeg probes).
///
/// Decided the way Media3's `inferContentType` and sniffing extractors and FFmpeg's probe do,
/// never by the name alone. In order:
///
/// 1. **The first bytes**: `#EXTM3U` (after an optional UTF-8 BOM and white space) is HLS; an
///    XML document whose first element is `MPD` (or `prefix:MPD`), after any XML declaration,
///    processing instructions, comments, a document type declaration, BOM and white space, is
///    DASH; any other bytes are something else.
/// 2. **The server's `Content-Type`**, when the bytes cannot tell (none, only white space, a
///    prolog longer than ``sniffLimit``, a UTF-16 document): the HLS and DASH types (parameters
///    and case ignored) and audio, video and image types. A generic type
///    (`application/octet-stream`, `text/plain`, `application/xml`…) says nothing.
/// 3. **The name's extension**, last: `.m3u8`/`.m3u`, `.mpd`.
/// 4. Otherwise: something else.
///
/// Pure value code: no I/O.
public enum StreamingFormat: String, Sendable, Hashable, CaseIterable {
    case hls
    case dash
    /// Not a streaming document: a media file (or anything else) that FFmpeg probes.
    case other

    /// How many bytes at most are looked at.
    public static let sniffLimit = 16 * 1024

    /// What the first bytes of a resource say.
    public enum Evidence: Sendable, Hashable {
        /// The bytes say which.
        case format(StreamingFormat)
        /// These bytes cannot tell, and more bytes would not either (a UTF-16 BOM).
        case silent
        /// These bytes cannot tell yet (empty, white space, an unfinished XML prolog or name).
        case needsMore
    }

    /// The decision for a resource whose first bytes are `head` (all of them, or the first
    /// ``sniffLimit``, or as many as arrived), whose server said `contentType`, named `name`.
    public static func decide(contentType: String?, head: Data, name: URL?) -> StreamingFormat {
        if case .format(let format) = evidence(head) { return format }
        if let declared = fromContentType(contentType) { return declared }
        return name.flatMap(fromName) ?? .other
    }

    /// Asks `peek` for the first bytes until they decide (or ``sniffLimit`` bytes, or the end),
    /// then ``decide(contentType:head:name:)``. `peek(n)` returns the resource's first bytes,
    /// at least `n` unless it ended, at most ``sniffLimit``, without consuming them.
    public static func detect(contentType: String?, name: URL?,
                              peek: (_ atLeast: Int) throws -> Data) rethrows -> StreamingFormat {
        var head = try peek(1)
        while evidence(head) == .needsMore, head.count < sniffLimit {
            let more = try peek(head.count + 1)
            if more.count <= head.count { break }
            head = more
        }
        return decide(contentType: contentType, head: head, name: name)
    }

    /// The same for async readers.
    public static func detect(contentType: String?, name: URL?,
                              peek: (_ atLeast: Int) async throws -> Data) async rethrows -> StreamingFormat {
        var head = try await peek(1)
        while evidence(head) == .needsMore, head.count < sniffLimit {
            let more = try await peek(head.count + 1)
            if more.count <= head.count { break }
            head = more
        }
        return decide(contentType: contentType, head: head, name: name)
    }

    // MARK: The server's type

    /// What a `Content-Type` value says, or `nil` for a generic type (or none).
    public static func fromContentType(_ value: String?) -> StreamingFormat? {
        guard let value else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch type {
        case "application/vnd.apple.mpegurl", "application/vnd.apple.mpegurl.audio", "application/x-mpegurl",
             "application/mpegurl", "audio/mpegurl", "audio/x-mpegurl", "vnd.apple.mpegurl":
            return .hls
        case "application/dash+xml", "video/vnd.mpeg.dash.mpd":
            return .dash
        case "application/mp4", "application/ogg", "application/x-matroska", "application/vnd.rn-realmedia":
            return .other
        default:
            for media in ["video/", "audio/", "image/"] where type.hasPrefix(media) && type.count > media.count {
                return .other
            }
            return nil
        }
    }

    // MARK: The name

    /// What a URL's extension hints: `.m3u8`/`.m3u` HLS, `.mpd` DASH, a media file's extension
    /// ``other``; `nil` for no extension or one that says nothing.
    public static func fromName(_ url: URL) -> StreamingFormat? {
        let ext = url.pathExtension.lowercased()
        guard !ext.isEmpty else { return nil }
        switch ext {
        case "m3u8", "m3u": return .hls
        case "mpd": return .dash
        default: return ContentInformation.contentType(forPathExtension: ext).flatMap(fromContentType)
        }
    }

    // MARK: The bytes

    /// What `head`, a resource's first bytes, says.
    public static func evidence(_ head: Data) -> Evidence {
        let bytes = [UInt8](head.prefix(sniffLimit))
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        var i = 0
        if bytes.starts(with: bom) {
            i = 3
        } else if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            // UTF-16 (or UTF-32): not read here; the type or the name decides.
            return .silent
        } else if !bytes.isEmpty, bytes.count < bom.count, bom.starts(with: bytes) {
            return .needsMore
        }
        i = skipSpace(bytes, from: i)
        guard i < bytes.count else { return .needsMore }
        if bytes[i] == UInt8(ascii: "#") {
            return matchOrMore(bytes, at: i, "#EXTM3U", then: .hls)
        }
        guard bytes[i] == UInt8(ascii: "<") else { return .format(.other) }
        return xmlRoot(bytes, from: i)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func skipSpace(_ bytes: [UInt8], from start: Int) -> Int {
        var i = start
        while i < bytes.count, isSpace(bytes[i]) { i += 1 }
        return i
    }

    /// `.format(then)` when `word` is at `i`; `.needsMore` when the bytes end inside it.
    private static func matchOrMore(_ bytes: [UInt8], at i: Int, _ word: String, then: StreamingFormat) -> Evidence {
        let expected = Array(word.utf8)
        let available = bytes[i...].prefix(expected.count)
        guard available.elementsEqual(expected.prefix(available.count)) else { return .format(.other) }
        return available.count == expected.count ? .format(then) : .needsMore
    }

    /// The first element's name decides: `MPD` (with or without a prefix) is DASH.
    private static func xmlRoot(_ bytes: [UInt8], from start: Int) -> Evidence {
        var i = start
        while true {
            i = skipSpace(bytes, from: i)
            guard i < bytes.count else { return .needsMore }
            guard bytes[i] == UInt8(ascii: "<") else { return .format(.other) }
            guard i + 1 < bytes.count else { return .needsMore }
            let rest = bytes[(i + 1)...]
            if rest.first == UInt8(ascii: "?") {
                // The XML declaration or a processing instruction.
                guard let end = find(bytes, "?>", from: i + 2) else { return .needsMore }
                i = end
            } else if rest.first == UInt8(ascii: "!") {
                if rest.starts(with: Array("!--".utf8)) {
                    guard let end = find(bytes, "-->", from: i + 4) else { return .needsMore }
                    i = end
                } else if rest.starts(with: Array("!DOCTYPE".utf8)) {
                    // Its internal subset may hold `>`: it ends at `]>` when it has one.
                    let close = firstIndex(of: UInt8(ascii: ">"), in: bytes, from: i)
                    let open = firstIndex(of: UInt8(ascii: "["), in: bytes, from: i)
                    if let open, close == nil || open < close! {
                        guard let end = find(bytes, "]", from: open),
                              let after = firstIndex(of: UInt8(ascii: ">"), in: bytes, from: end) else { return .needsMore }
                        i = after + 1
                    } else {
                        guard let close else { return .needsMore }
                        i = close + 1
                    }
                } else if Array("!DOCTYPE".utf8).starts(with: rest.prefix(8)) || Array("!--".utf8).starts(with: rest.prefix(3)) {
                    return .needsMore
                } else {
                    return .format(.other)
                }
            } else {
                var j = i + 1
                while j < bytes.count, !isSpace(bytes[j]), bytes[j] != UInt8(ascii: ">"), bytes[j] != UInt8(ascii: "/") { j += 1 }
                guard j < bytes.count else { return .needsMore }
                let name = String(decoding: bytes[(i + 1)..<j], as: UTF8.self)
                let local = name.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? name
                return .format(local == "MPD" ? .dash : .other)
            }
        }
    }

    /// The index just past `needle` found at or after `start`.
    private static func find(_ bytes: [UInt8], _ needle: String, from start: Int) -> Int? {
        let pattern = Array(needle.utf8)
        guard start <= bytes.count, bytes.count - start >= pattern.count else { return nil }
        var i = start
        while i + pattern.count <= bytes.count {
            if bytes[i..<(i + pattern.count)].elementsEqual(pattern) { return i + pattern.count }
            i += 1
        }
        return nil
    }

    private static func firstIndex(of byte: UInt8, in bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes[start...].firstIndex(of: byte)
    }
}
