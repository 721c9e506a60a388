import Foundation
import ReelCore
import ReelStreaming
import Testing

/// The format decision, as a table: what the bytes say wins, then the server's type, then the
/// name; a generic type never stops the sniffing.
@Suite struct StreamingFormatTests {
    static let bom = "\u{FEFF}"
    static let mpd = #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static"><Period/></MPD>"#
    static let media = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nseg-0.ts\n#EXT-X-ENDLIST\n"
    static let mp4 = Data([0, 0, 0, 0x20]) + Data("ftypisom".utf8) + Data(repeating: 0, count: 24)

    struct Row: Sendable, CustomTestStringConvertible {
        var head: Data
        var contentType: String?
        var url: String
        var expected: StreamingFormat
        var testDescription: String {
            "\(String(decoding: head.prefix(40), as: UTF8.self).debugDescription) \(contentType ?? "no type") \(url) → \(expected)"
        }

        init(_ head: String, _ contentType: String?, _ url: String, _ expected: StreamingFormat) {
            self.init(Data(head.utf8), contentType, url, expected)
        }

        init(_ head: Data, _ contentType: String?, _ url: String, _ expected: StreamingFormat) {
            self.head = head
            self.contentType = contentType
            self.url = url
            self.expected = expected
        }
    }

    static let rows: [Row] = [
        // The bytes decide, whatever the name and a generic (or no) type.
        Row(media, nil, "https://cdn.example/play/123", .hls),
        Row(media, "application/octet-stream", "https://cdn.example/play/123", .hls),
        Row(media, "text/plain; charset=utf-8", "https://cdn.example/stream", .hls),
        Row(bom + "\r\n \t" + media, nil, "file:///tmp/noname", .hls),
        Row(mpd, nil, "https://cdn.example/manifest", .dash),
        Row(mpd, "application/octet-stream", "https://cdn.example/api/dash?id=7", .dash),
        Row(#"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<!-- made by a packager -->\n" + mpd, "text/xml", "https://cdn.example/x", .dash),
        Row(bom + #"<?xml version="1.0"?><?xml-stylesheet href="a.xsl"?>"# + "\n" + mpd, nil, "file:///m", .dash),
        Row(#"<mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011"><mpd:Period/></mpd:MPD>"#, nil, "https://cdn.example/m", .dash),
        Row("<!DOCTYPE MPD [ <!ENTITY a \"b>\"> ]>\n" + mpd, nil, "https://cdn.example/m", .dash),
        Row("<!DOCTYPE MPD>" + mpd, nil, "https://cdn.example/m", .dash),
        // The bytes win over the name and the type.
        Row(media, "application/dash+xml", "https://cdn.example/manifest.mpd", .hls),
        Row(mpd, "application/vnd.apple.mpegurl", "https://cdn.example/index.m3u8", .dash),
        Row(mp4, "application/vnd.apple.mpegurl", "https://cdn.example/index.m3u8", .other),
        Row(mp4, "application/dash+xml", "https://cdn.example/manifest.mpd", .other),
        Row("<html><body>404</body></html>", "application/dash+xml", "https://cdn.example/manifest.mpd", .other),
        Row("<MPDX/>", nil, "https://cdn.example/manifest.mpd", .other),
        Row("# not a playlist", "application/vnd.apple.mpegurl", "https://cdn.example/a.m3u8", .other),
        // Bytes that cannot tell: the type, then the name.
        Row("", "application/vnd.apple.mpegurl", "https://cdn.example/x", .hls),
        Row("  \n", "Application/X-MpegURL; charset=utf-8", "https://cdn.example/x", .hls),
        Row("", "AUDIO/MPEGURL", "https://cdn.example/x", .hls),
        Row("", "audio/x-mpegurl", "https://cdn.example/x", .hls),
        Row("", " application/dash+xml ;profile=x", "https://cdn.example/x.m3u8", .dash),
        Row("", "video/vnd.mpeg.dash.mpd", "https://cdn.example/x", .dash),
        Row("", "video/mp4", "https://cdn.example/x.mpd", .other),
        Row("", "application/octet-stream", "https://cdn.example/x.mpd", .dash),
        Row("", "text/plain", "https://cdn.example/x.M3U8", .hls),
        Row("", nil, "https://cdn.example/x.m3u", .hls),
        Row("", nil, "https://cdn.example/x", .other),
        Row("<?xml version=\"1.0\"?>", "application/dash+xml", "https://cdn.example/x", .dash),
        Row("<!-- unfinished comment", nil, "https://cdn.example/x.mpd", .dash),
        Row(Data([0xFF, 0xFE, 0x3C, 0x00]), "application/dash+xml", "https://cdn.example/x", .dash),
        Row(Data([0xFF, 0xFE, 0x3C, 0x00]), nil, "https://cdn.example/x", .other),
        // Media stays media.
        Row(mp4, nil, "https://cdn.example/video/1", .other),
        Row(mp4, "video/mp4", "https://cdn.example/a.mp4", .other),
        Row(Data([0x1A, 0x45, 0xDF, 0xA3]), "application/octet-stream", "https://cdn.example/a", .other),
    ]

    @Test(arguments: rows)
    func decides(_ row: Row) {
        #expect(StreamingFormat.decide(contentType: row.contentType, head: row.head, name: URL(string: row.url)!) == row.expected)
    }

    @Test(arguments: [
        ("application/vnd.apple.mpegurl", StreamingFormat.hls), ("application/x-mpegURL", .hls), ("audio/mpegurl", .hls),
        ("application/dash+xml; charset=UTF-8", .dash), ("VIDEO/MP4", .other), ("audio/mp4", .other),
        ("application/octet-stream", nil), ("text/plain", nil), ("application/xml", nil), ("text/html", nil), ("", nil), ("video/", nil),
    ] as [(String, StreamingFormat?)])
    func theServersType(_ type: String, _ expected: StreamingFormat?) {
        #expect(StreamingFormat.fromContentType(type) == expected)
    }

    @Test(arguments: [
        ("https://a.example/index.m3u8?token=1", StreamingFormat.hls), ("https://a.example/m.MPD", .dash),
        ("https://a.example/a.mp4", .other), ("https://a.example/play/123", nil), ("https://a.example/a.bin", nil),
        ("file:///tmp/manifest", nil),
    ] as [(String, StreamingFormat?)])
    func theName(_ url: String, _ expected: StreamingFormat?) {
        #expect(StreamingFormat.fromName(URL(string: url)!) == expected)
    }

    /// Bytes cut anywhere inside what decides ask for more; once there, they decide.
    @Test func aPrefixCutShortAsksForMore() {
        let document = Data((Self.bom + "\n<?xml version=\"1.0\"?>\n<!-- c -->\n<!DOCTYPE MPD>\n" + Self.mpd).utf8)
        let decidedAt = document.count - Self.mpd.utf8.count + "<MPD ".utf8.count
        for cut in 0..<decidedAt {
            #expect(StreamingFormat.evidence(document.prefix(cut)) == .needsMore, "cut at \(cut)")
        }
        #expect(StreamingFormat.evidence(document.prefix(decidedAt)) == .format(.dash))
        let playlist = Data(("\n\n" + Self.media).utf8)
        for cut in 0..<9 { #expect(StreamingFormat.evidence(playlist.prefix(cut)) == .needsMore, "cut at \(cut)") }
        #expect(StreamingFormat.evidence(playlist.prefix(9)) == .format(.hls))
    }

    /// `detect` asks for more bytes only while they could decide, and stops at the limit or the end.
    @Test func detectAsksForMoreOnlyWhileUndecided() throws {
        let document = Data(("<?xml version=\"1.0\"?>\n" + Self.mpd).utf8)
        var asked: [Int] = []
        // A reader that has 5 bytes, then 24 (`…?>\n<M`), then everything.
        let format = StreamingFormat.detect(contentType: nil, name: URL(string: "https://a.example/m")) { atLeast in
            asked.append(atLeast)
            let available = asked.count == 1 ? 5 : asked.count == 2 ? 24 : document.count
            return document.prefix(max(atLeast, available))
        }
        #expect(format == .dash)
        #expect(asked == [1, 6, 25])

        var calls = 0
        let endless = StreamingFormat.detect(contentType: "application/vnd.apple.mpegurl", name: nil) { atLeast in
            calls += 1
            return Data(repeating: 0x20, count: min(StreamingFormat.sniffLimit, atLeast + 4000))
        }
        #expect(endless == .hls, "white space up to the limit: the type decides")
        #expect(calls <= 6)

        let ended = StreamingFormat.detect(contentType: nil, name: URL(string: "https://a.example/x.mpd")) { _ in Data("<?xml".utf8) }
        #expect(ended == .dash, "the resource ended undecided: the name decides")
    }
}
