import Foundation
import Testing
import ReelCaptions

@Suite struct CaptionFormatTests {
    private func utf16(_ text: String, bigEndian: Bool, bom: Bool = true) -> Data {
        var data = bom ? Data(bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : Data()
        for unit in text.utf16 {
            let bytes = [UInt8(unit >> 8), UInt8(unit & 0xFF)]
            data.append(contentsOf: bigEndian ? bytes : bytes.reversed())
        }
        return data
    }

    private let webvtt = "WEBVTT\n\n00:00.000 --> 00:01.000\nHi\n"
    private let subrip = "1\r\n00:00:01,000 --> 00:00:02,500\r\nHi\r\n\r\n"
    private let ass = "; made by hand\n[Script Info]\nScriptType: v4.00+\n"
    private let ttml = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- c -->\n<tt xmlns=\"http://www.w3.org/ns/ttml\"><body/></tt>"
    private let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n"

    @Test func eachFormatByItsBytes() {
        #expect(CaptionFormat.sniff(Data(webvtt.utf8)) == .webvtt)
        #expect(CaptionFormat.sniff(Data("WEBVTT - with a title\n".utf8)) == .webvtt)
        #expect(CaptionFormat.sniff(Data("WEBVTT".utf8)) == .webvtt)
        #expect(CaptionFormat.sniff(Data(subrip.utf8)) == .subrip)
        #expect(CaptionFormat.sniff(Data("\n\n00:00:01.000 --> 00:00:02.000 X1:10 X2:20\nhi".utf8)) == .subrip)
        #expect(CaptionFormat.sniff(Data(ass.utf8)) == .ass)
        #expect(CaptionFormat.sniff(Data(ttml.utf8)) == .ttml)
        #expect(CaptionFormat.sniff(Data("<tt:tt xmlns:tt=\"http://www.w3.org/ns/ttml\"/>".utf8)) == .ttml)
        #expect(CaptionFormat.sniff(Data(playlist.utf8)) == .hlsPlaylist)
    }

    @Test func nearMissesAreNotRecognised() {
        #expect(CaptionFormat.sniff(Data("WEBVTTX\n".utf8)) == .unknown)
        #expect(CaptionFormat.sniff(Data("<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\"/>".utf8)) == .unknown)
        #expect(CaptionFormat.sniff(Data("<ttx/>".utf8)) == .unknown)
        #expect(CaptionFormat.sniff(Data("1\n00:00:01 --> 00:00:02\n".utf8)) == .unknown)
        #expect(CaptionFormat.sniff(Data("a\nb\nc\n00:00:01,000 --> 00:00:02,000\n".utf8)) == .unknown)
        #expect(CaptionFormat.sniff(Data()) == .unknown)
    }

    @Test func byteOrderMarks() {
        #expect(CaptionFormat.sniff(Data([0xEF, 0xBB, 0xBF]) + Data(webvtt.utf8)) == .webvtt)
        #expect(CaptionFormat.sniff(utf16(subrip, bigEndian: false)) == .subrip)
        #expect(CaptionFormat.sniff(utf16(webvtt, bigEndian: true)) == .webvtt)
        #expect(CaptionFormat.sniff(utf16(ass, bigEndian: false)) == .ass)
        // XML in UTF-16 needs no mark: `<?` tells the byte order.
        #expect(CaptionFormat.sniff(utf16(ttml, bigEndian: false, bom: false)) == .ttml)
        #expect(CaptionFormat.sniff(utf16(ttml, bigEndian: true, bom: false)) == .ttml)
    }

    @Test func lyingHintsLoseToTheBytes() {
        #expect(CaptionFormat.sniff(Data(webvtt.utf8), contentType: "application/x-subrip", pathExtension: "srt") == .webvtt)
        #expect(CaptionFormat.sniff(Data(subrip.utf8), contentType: "text/vtt", pathExtension: "vtt") == .subrip)
        #expect(CaptionFormat.sniff(Data(ttml.utf8), contentType: "text/plain", pathExtension: "txt") == .ttml)
        #expect(CaptionFormat.sniff(Data(playlist.utf8), contentType: "text/vtt") == .hlsPlaylist)
    }

    @Test func hintsDecideOnlyTextTheBytesCannotPlace() {
        let vague = Data("Hello\nthere\n".utf8)
        #expect(CaptionFormat.sniff(vague) == .unknown)
        #expect(CaptionFormat.sniff(vague, contentType: "text/vtt; charset=utf-8") == .webvtt)
        #expect(CaptionFormat.sniff(vague, pathExtension: ".SRT") == .subrip)
        #expect(CaptionFormat.sniff(vague, pathExtension: "dfxp") == .ttml)
        // The Content-Type comes before the extension.
        #expect(CaptionFormat.sniff(vague, contentType: "application/ttml+xml", pathExtension: "vtt") == .ttml)
        // An unknown type leaves it to the extension.
        #expect(CaptionFormat.sniff(vague, contentType: "application/octet-stream", pathExtension: "ass") == .ass)
    }

    @Test func bytesThatAreNotTextIgnoreTheHints() {
        let binary = Data([0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70])  // an MP4's ftyp box
        #expect(CaptionFormat.sniff(binary, contentType: "text/vtt", pathExtension: "vtt") == .unknown)
        let invalidUTF8 = Data("WEBVTT\n".utf8) + Data([0xC3, 0x28])
        #expect(CaptionFormat.sniff(invalidUTF8, contentType: "text/vtt") == .unknown)
    }

    @Test func aCharacterCutAtTheSniffLimitIsNotInvalidText() {
        var data = Data(webvtt.utf8)
        while data.count < CaptionFormat.sniffLength - 1 { data.append(contentsOf: Array("字".utf8)) }
        data.append(contentsOf: Array("字".utf8))  // straddles the limit
        #expect(CaptionFormat.sniff(data) == .webvtt)
    }
}
