import Foundation

/// What a caption resource is, told by its bytes: the byte order mark and the first lines
/// decide; a Content-Type, then a file extension, are consulted only when the bytes are text
/// that says nothing recognisable (a server's or a file name's word never overrides the bytes).
public enum CaptionFormat: String, Sendable, Hashable, CaseIterable {
    /// SubRip (`.srt`): numbered cues with `00:00:01,000 --> 00:00:02,500` timings.
    case subrip
    /// WebVTT (`.vtt`): text that starts with `WEBVTT`.
    case webvtt
    /// Advanced SubStation Alpha or SubStation Alpha (`.ass`, `.ssa`): a script whose first
    /// section is `[Script Info]`.
    case ass
    /// TTML, DFXP or IMSC: an XML document whose root element is `tt`. FFmpeg has no decoder
    /// for it; ``TTMLDocument`` reads it.
    case ttml
    /// An HLS playlist (`#EXTM3U`): a subtitle rendition's media playlist, whose segments hold
    /// the cues, not cues itself.
    case hlsPlaylist
    /// Bytes no caption reader here recognises (or that are not text at all).
    case unknown

    /// How many bytes of the head are looked at.
    public static let sniffLength = 64 << 10

    /// The format of `data`. `contentType` (a MIME type, parameters allowed) and `pathExtension`
    /// (with or without the dot) are hints for text the bytes cannot place; bytes that are not
    /// text at all (not UTF-8 or UTF-16, or holding NUL characters) are `.unknown` whatever the hints.
    public static func sniff(_ data: Data, contentType: String? = nil, pathExtension: String? = nil) -> CaptionFormat {
        guard let head = CaptionText.decode(data.prefix(sniffLength), truncated: data.count > sniffLength),
              !head.contains("\u{0}") else {
            return .unknown
        }
        if let format = byContent(head) { return format }
        if let contentType, let format = byContentType(contentType) { return format }
        if let pathExtension, let format = byExtension(pathExtension) { return format }
        return .unknown
    }

    /// The format the text itself declares, if any.
    static func byContent(_ text: String) -> CaptionFormat? {
        let body = text.drop { $0.isWhitespace }
        if body.hasPrefix("WEBVTT") {
            let after = body.dropFirst(6).first
            if after == nil || after == " " || after == "\t" || after == "\n" || after == "\r" || after == "\r\n" {
                return .webvtt
            }
        }
        if body.hasPrefix("#EXTM3U") { return .hlsPlaylist }
        if body.hasPrefix("<"), rootElementName(body).map({ $0 == "tt" || $0.hasSuffix(":tt") }) == true {
            return .ttml
        }
        // ASS/SSA: the first line that is not a comment is the script's first section.
        for line in body.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix(";") || trimmed.hasPrefix("!:") { continue }
            if trimmed.lowercased() == "[script info]" { return .ass }
            break
        }
        // SubRip: a timing line among the first non-empty lines (a cue number may come first).
        var lines = 0
        for line in body.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            if isSubRipTiming(trimmed) { return .subrip }
            lines += 1
            if lines >= 3 { break }
        }
        return nil
    }

    /// `00:00:01,000 --> 00:00:02,500` (a `.` for the comma, and one-digit hours, accepted as
    /// FFmpeg's SubRip reader accepts them).
    static func isSubRipTiming(_ line: String) -> Bool {
        let parts = line.components(separatedBy: "-->")
        guard parts.count == 2 else { return false }
        func isTimestamp(_ text: Substring) -> Bool {
            let fields = text.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 3, !fields[0].isEmpty, fields[0].allSatisfy(\.isASCIIDigit),
                  fields[1].count == 2, fields[1].allSatisfy(\.isASCIIDigit) else { return false }
            let seconds = fields[2].split(omittingEmptySubsequences: false) { $0 == "," || $0 == "." }
            return seconds.count == 2 && seconds[0].count == 2 && seconds[0].allSatisfy(\.isASCIIDigit)
                && (1...3).contains(seconds[1].count) && seconds[1].allSatisfy(\.isASCIIDigit)
        }
        let start = parts[0].trimmingCharacters(in: .whitespaces)
        // The end may be followed by position settings (`X1:… Y1:…`).
        let end = parts[1].trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? ""
        return isTimestamp(Substring(start)) && isTimestamp(end)
    }

    /// The name of the first element of an XML text, skipping its declaration, processing
    /// instructions, comments and a document type declaration.
    static func rootElementName(_ text: Substring) -> String? {
        var rest = text
        while true {
            rest = rest.drop { $0.isWhitespace }
            guard rest.hasPrefix("<") else { return nil }
            if rest.hasPrefix("<?") {
                guard let end = rest.range(of: "?>") else { return nil }
                rest = rest[end.upperBound...]
            } else if rest.hasPrefix("<!--") {
                guard let end = rest.range(of: "-->") else { return nil }
                rest = rest[end.upperBound...]
            } else if rest.hasPrefix("<!") {
                guard let end = rest.firstIndex(of: ">") else { return nil }
                rest = rest[rest.index(after: end)...]
            } else {
                let name = rest.dropFirst().prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" }
                return name.isEmpty ? nil : String(name)
            }
        }
    }

    static func byContentType(_ contentType: String) -> CaptionFormat? {
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch type {
        case "text/vtt": return .webvtt
        case "application/x-subrip", "text/srt", "application/srt", "text/x-srt": return .subrip
        case "text/x-ssa", "text/x-ass", "application/x-ass", "application/x-ssa": return .ass
        case "application/ttml+xml", "application/ttaf+xml": return .ttml
        case "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl": return .hlsPlaylist
        default: return nil
        }
    }

    static func byExtension(_ pathExtension: String) -> CaptionFormat? {
        let name = pathExtension.hasPrefix(".") ? String(pathExtension.dropFirst()) : pathExtension
        switch name.lowercased() {
        case "vtt", "webvtt": return .webvtt
        case "srt": return .subrip
        case "ass", "ssa": return .ass
        case "ttml", "dfxp", "xml": return .ttml
        case "m3u8", "m3u": return .hlsPlaylist
        default: return nil
        }
    }
}

/// Caption text as bytes arrive: UTF-8 (with or without its byte order mark) or UTF-16 with a
/// byte order mark (or, for XML, without one when it starts with `<`, as XML 1.0 Appendix F
/// detects it).
public enum CaptionText {
    /// A text encoding caption bytes come in.
    public enum Encoding: Sendable, Hashable {
        /// UTF-8, with or without the byte order mark `EF BB BF` (the encoding assumed when
        /// nothing says otherwise).
        case utf8
        /// UTF-16 with the least significant byte first (byte order mark `FF FE`).
        case utf16LittleEndian
        /// UTF-16 with the most significant byte first (byte order mark `FE FF`).
        case utf16BigEndian
    }

    /// The encoding `data` starts with, and how many bytes its byte order mark takes.
    public static func encoding(of data: Data) -> (Encoding, bomLength: Int) {
        let bytes = Array(data.prefix(4))
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8, 3) }
        if bytes.starts(with: [0xFF, 0xFE]) { return (.utf16LittleEndian, 2) }
        if bytes.starts(with: [0xFE, 0xFF]) { return (.utf16BigEndian, 2) }
        if bytes.starts(with: [0x3C, 0x00, 0x3F, 0x00]) || bytes.starts(with: [0x3C, 0x00, 0x74, 0x00]) {
            return (.utf16LittleEndian, 0)
        }
        if bytes.starts(with: [0x00, 0x3C, 0x00, 0x3F]) || bytes.starts(with: [0x00, 0x3C, 0x00, 0x74]) {
            return (.utf16BigEndian, 0)
        }
        return (.utf8, 0)
    }

    /// The text of `data` without its byte order mark; `nil` when it is not valid in the
    /// encoding it announces. `truncated` says `data` is a head cut from a longer resource: a
    /// character cut at its end is then dropped rather than refused.
    public static func decode(_ data: Data, truncated: Bool = false) -> String? {
        let (encoding, bom) = encoding(of: data)
        var body = data.dropFirst(bom)
        switch encoding {
        case .utf8:
            if truncated {
                // Drop a character cut at the end (at most three continuation bytes back).
                var cut = body.endIndex
                var back = 0
                while back < 3, cut > body.startIndex, body[cut - 1] & 0xC0 == 0x80 { cut -= 1; back += 1 }
                if cut > body.startIndex, body[cut - 1] & 0xC0 == 0xC0 { body = body[..<(cut - 1)] }
            }
            return String(validating: body, as: UTF8.self)
        case .utf16LittleEndian, .utf16BigEndian:
            if body.count % 2 == 1 {
                guard truncated else { return nil }
                body = body.dropLast()
            }
            var units: [UInt16] = []
            units.reserveCapacity(body.count / 2)
            var index = body.startIndex
            while index < body.endIndex {
                let first = UInt16(body[index]), second = UInt16(body[index + 1])
                units.append(encoding == .utf16LittleEndian ? first | second << 8 : first << 8 | second)
                index += 2
            }
            if truncated, let last = units.last, (0xD800...0xDBFF).contains(last) { units.removeLast() }
            return String(validating: units, as: UTF16.self)
        }
    }
}

extension Character {
    /// `0`…`9` only (not other scripts' digits, as `isNumber` would allow).
    var isASCIIDigit: Bool { ("0"..."9").contains(self) && unicodeScalars.count == 1 }
}
