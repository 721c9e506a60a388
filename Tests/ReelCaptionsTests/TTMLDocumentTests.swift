import Foundation
import Testing
import ReelCore
import ReelCaptions

@Suite struct TTMLDocumentTests {
    private let track = CaptionTrackID("side:0")

    private func time(_ value: Int64, _ timescale: Int32 = 1) -> MediaTime { MediaTime(value: value, timescale: timescale) }

    private func document(_ body: String, head: String = "", parameters: String = "") throws -> TTMLDocument {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <tt xmlns="http://www.w3.org/ns/ttml" xmlns:tts="http://www.w3.org/ns/ttml#styling"
                xmlns:ttp="http://www.w3.org/ns/ttml#parameter" xml:lang="en" \(parameters)>
              <head>\(head)</head>
              <body>\(body)</body>
            </tt>
            """
        return try TTMLDocument(Data(text.utf8))
    }

    /// (start, end, ASS text) of every cue.
    private func cues(_ document: TTMLDocument) -> [(MediaTime, MediaTime, String)] {
        document.cues.map { ($0.start, $0.end, $0.dialogue.text) }
    }

    private func expectCues(_ document: TTMLDocument, _ expected: [(MediaTime, MediaTime, String)],
                            sourceLocation: SourceLocation = #_sourceLocation) {
        let actual = cues(document)
        #expect(actual.count == expected.count, sourceLocation: sourceLocation)
        for (a, e) in zip(actual, expected) {
            #expect(a.0 == e.0 && a.1 == e.1 && a.2 == e.2, "\(a) ≠ \(e)", sourceLocation: sourceLocation)
        }
    }

    // The expected cues are hand-written from TTML 1. The documents of tickRateTimes,
    // offsetTimes, timesAreSummedDownTheTreeAndClippedToTheParent and lineBreaksAndWhitespace
    // (and the frames case with a whole frame for the end) were also run through ttconv 1.2.3
    // (`tt convert` to WebVTT), which gave the same times (to its milliseconds) and text.

    @Test func tickRateTimes() throws {
        let document = try document("""
            <div><p begin="10000000t" end="25000000t">Hello</p><p begin="30000000t" dur="5000000t">again</p></div>
            """, parameters: #"ttp:tickRate="10000000""#)
        expectCues(document, [(time(1), time(5, 2), "Hello"), (time(3), time(7, 2), "again")])
        let events = document.events(track: track, offset: time(10))
        #expect(events.map(\.start) == [time(11), time(13)])
        #expect(events.allSatisfy { $0.track == track && $0.language == "en" })
        #expect(events.first?.plainText == "Hello")
    }

    @Test func framesWithAFrameRateMultiplier() throws {
        let document = try document("""
            <div><p begin="00:00:01:15" end="00:00:02:00.1">NTSC</p></div>
            """, parameters: #"ttp:frameRate="30" ttp:frameRateMultiplier="1000 1001" ttp:subFrameRate="2""#)
        // 1 s + 15 × 1001/30000 s; 2 s + one sub-frame (1001/60000 s).
        expectCues(document, [(time(45015, 30000), time(120_000 + 1001, 60000), "NTSC")])
    }

    @Test func offsetTimes() throws {
        let document = try document("""
            <div><p begin="1.5s" end="2500ms">a</p><p begin="0.001h" dur="45f">b</p><p begin="1m" end="1.5m">c</p></div>
            """)
        expectCues(document, [(time(3, 2), time(5, 2), "a"), (time(18, 5), time(18, 5) + time(3, 2), "b"), (time(60), time(90), "c")])
    }

    @Test func timesAreSummedDownTheTreeAndClippedToTheParent() throws {
        let document = try document("""
            <div begin="1s" end="20s">
              <p begin="2s" dur="3s">A <span begin="1s" dur="1s">B</span> C</p>
              <p begin="15s" end="30s">cut at the div's end</p>
              <p begin="25s">never: after the div</p>
            </div>
            """)
        // The body is untimed, so the div runs 1–20 s; the first p 3–6 s, its span 4–5 s; the
        // second p would end at 31 s but stops with the div.
        expectCues(document, [
            (time(3), time(4), "A C"), (time(4), time(5), "A B C"), (time(5), time(6), "A C"),
            (time(16), time(20), "cut at the div's end"),
        ])
    }

    // ttconv 1.2.3 differs here: it gives no cue for a timed body, and ends the p of a div with
    // begin 1s and no end at 5 s rather than 6 s. TTML 1 §10.4 (par: children's begin and end
    // count from the parent's begin; an untimed end lasts as its children do) gives these.
    @Test func theBodyCanBeTimedToo() throws {
        let text = """
            <tt xmlns="http://www.w3.org/ns/ttml"><body begin="10s"><div begin="1s"><p begin="2s" dur="3s">x</p></div></body></tt>
            """
        let document = try TTMLDocument(Data(text.utf8))
        expectCues(document, [(time(13), time(16), "x")])
        let divOnly = #"<tt xmlns="http://www.w3.org/ns/ttml"><body><div begin="1s"><p begin="2s" dur="3s">x</p></div></body></tt>"#
        expectCues(try TTMLDocument(Data(divOnly.utf8)), [(time(3), time(6), "x")])
    }

    @Test func aParagraphWithNoEndLastsToInfinity() throws {
        let document = try document(#"<div><p begin="1s">open</p></div>"#)
        expectCues(document, [(time(1), .positiveInfinity, "open")])
    }

    @Test func spanStylesBecomeASSOverrideTags() throws {
        let document = try document("""
            <div><p begin="0s" end="1s">Plain <span tts:fontStyle="italic">it</span> <span tts:fontWeight="bold" tts:color="#FF8000">bold</span></p>
            <p begin="1s" end="2s" tts:fontStyle="italic">all <span tts:textDecoration="underline" tts:color="rgba(0,255,0,128)">u</span></p></div>
            """)
        expectCues(document, [
            (time(0), time(1), "Plain {\\i1}it{\\i0} {\\b1\\c&H0080FF&}bold{\\b0}"),
            (time(1), time(2), "{\\i1}all {\\u1\\c&H00FF00&\\1a&H7F&}u{\\i0\\u0}"),
        ])
        #expect(document.cues[0].dialogue.plainText == "Plain it bold")
    }

    @Test func lineBreaksAndWhitespace() throws {
        let document = try document("""
            <div>
              <p begin="0s" end="1s">
                Line   one
                <br/>
                line two
              </p>
              <p begin="1s" end="2s" xml:space="preserve">keep  two spaces<br/>x</p>
            </div>
            """)
        expectCues(document, [(time(0), time(1), "Line one\\Nline two"), (time(1), time(2), "keep  two spaces\\Nx")])
        #expect(document.cues[0].dialogue.plainText == "Line one\nline two")
    }

    @Test func referentialStylesAndRegionsPlaceAndStyle() throws {
        let head = """
            <styling>
              <style xml:id="base" tts:color="yellow"/>
              <style xml:id="s1" style="base" tts:fontStyle="italic"/>
            </styling>
            <layout>
              <region xml:id="top" tts:origin="10% 5%" tts:extent="80% 20%" tts:textAlign="center"/>
              <region xml:id="bottomLeft" tts:displayAlign="after" tts:textAlign="left"/>
              <region xml:id="plain" tts:origin="10% 70%" tts:extent="80% 20%"/>
            </layout>
            """
        let document = try document("""
            <div><p region="top" style="s1" begin="0s" end="1s">Top</p>
            <p region="bottomLeft" begin="1s" end="2s">Left</p>
            <p region="plain" begin="2s" end="3s">Default place</p></div>
            """, head: head)
        expectCues(document, [
            (time(0), time(1), "{\\an8}{\\i1\\c&H00FFFF&}Top{\\i0}"),
            (time(1), time(2), "{\\an1}Left"),
            (time(2), time(3), "Default place"),
        ])
    }

    @Test func styleReferencesShareDefinitionsSurviveCyclesAndLongChains() throws {
        // a → b and c, both → d (bold); b says normal over d, c does not, and c comes last:
        // bold, which needs d resolved for c too, not only for b. x ↔ y is a cycle (an
        // error in TTML): resolved in document order, x keeps its own italic and y gets nothing
        // through the reference that closes the cycle — the same on every run.
        var head = """
            <styling>
              <style xml:id="d" tts:fontWeight="bold"/>
              <style xml:id="b" style="d" tts:fontWeight="normal"/><style xml:id="c" style="d" tts:color="red"/>
              <style xml:id="a" style="b c"/>
              <style xml:id="x" style="y" tts:fontStyle="italic"/><style xml:id="y" style="x"/>
            """
        // A chain of 5000 styles: each refers to the next.
        for index in 0..<5000 { head += "<style xml:id=\"n\(index)\" style=\"n\(index + 1)\"/>" }
        head += "</styling>"
        let document = try document("""
            <div><p style="a" begin="0s" end="1s">diamond</p><p style="x" begin="1s" end="2s">cycle</p>
            <p style="y" begin="1s" end="2s">cycle</p>
            <p style="n0" begin="2s" end="3s">chain</p></div>
            """, head: head)
        expectCues(document, [
            (time(0), time(1), "{\\b1\\c&H0000FF&}diamond{\\b0}"),
            (time(1), time(2), "{\\i1}cycle{\\i0}"),
            (time(1), time(2), "cycle"),
            (time(2), time(3), "chain"),
        ])
    }

    @Test func assSpecialCharactersAndEntitiesOfXMLItself() throws {
        let document = try document(#"<div><p begin="0s" end="1s">a{b}\c &amp; &#x4E2D;文 <![CDATA[<x>]]></p></div>"#)
        expectCues(document, [(time(0), time(1), "a\\{b\\}\\\\c & 中文 <x>")])
        #expect(document.cues[0].dialogue.plainText == "a{b}\\c & 中文 <x>")
    }

    @Test func otherPrefixesForTheTTMLNamespacesAndForeignElements() throws {
        let text = """
            <tt:tt xmlns:tt="http://www.w3.org/ns/ttml" xmlns:s="http://www.w3.org/ns/ttml#styling"
                   xmlns:p="http://www.w3.org/ns/ttml#parameter" xmlns:m="urn:example" p:tickRate="10">
              <tt:body><tt:div><tt:p begin="5t" end="20t"><m:note>hidden</m:note><tt:span s:fontWeight="bold">bold</tt:span></tt:p></tt:div></tt:body>
            </tt:tt>
            """
        let document = try TTMLDocument(Data(text.utf8))
        expectCues(document, [(time(1, 2), time(2), "{\\b1}bold{\\b0}")])
    }

    @Test func utf16WithByteOrderMark() throws {
        let text = #"<?xml version="1.0" encoding="UTF-16"?><tt xmlns="http://www.w3.org/ns/ttml"><body><p begin="1s" end="2s">字幕</p></body></tt>"#
        var data = Data([0xFF, 0xFE])
        for unit in text.utf16 { data.append(UInt8(unit & 0xFF)); data.append(UInt8(unit >> 8)) }
        expectCues(try TTMLDocument(data), [(time(1), time(2), "字幕")])
    }

    @Test func documentTypeAndEntityDeclarationsAreRefused() {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE tt [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
            <tt xmlns="http://www.w3.org/ns/ttml"><body><p begin="0s" end="1s">&lol2;</p></body></tt>
            """
        let external = """
            <?xml version="1.0"?><!doctype tt SYSTEM "file:///etc/passwd"><tt xmlns="http://www.w3.org/ns/ttml"><body/></tt>
            """
        let entityOnly = #"<tt xmlns="http://www.w3.org/ns/ttml"><!ENTITY x "y"><body/></tt>"#
        for text in [laughs, external, entityOnly] {
            #expect(throws: TTMLError.documentTypeDeclaration) { try TTMLDocument(Data(text.utf8)) }
        }
        // Also when the declaration hides in UTF-16.
        var data = Data([0xFE, 0xFF])
        for unit in laughs.utf16 { data.append(UInt8(unit >> 8)); data.append(UInt8(unit & 0xFF)) }
        #expect(throws: TTMLError.documentTypeDeclaration) { try TTMLDocument(data) }
        #expect(TTMLError.documentTypeDeclaration.description == "TTML: refused a document type or entity declaration")
    }

    @Test func truncatedAndMalformedXMLAreErrors() throws {
        let whole = """
            <tt xmlns="http://www.w3.org/ns/ttml">
            <body><div><p begin="0s" end="1s">one</p>
            <p begin="1s" end="2s">two</p></div></body></tt>
            """
        _ = try TTMLDocument(Data(whole.utf8))
        let truncated = Data(whole.utf8.prefix(whole.utf8.count - 20))
        #expect {
            try TTMLDocument(truncated)
        } throws: { error in
            guard case TTMLError.malformed(let line) = error else { return false }
            return line >= 1 && !"\(error)".contains("\n")
        }
        #expect(throws: TTMLError.self) { try TTMLDocument(Data("<tt><body></tt>".utf8)) }
        #expect(throws: TTMLError.notText) { try TTMLDocument(Data([0x3C, 0x74, 0x74, 0x3E, 0xFF, 0xFE, 0xFD])) }
    }

    @Test func otherDocumentsAndUnsupportedFeaturesSaySo() {
        #expect(throws: TTMLError.notTTML(root: "MPD")) { try TTMLDocument(Data("<MPD><Period/></MPD>".utf8)) }
        #expect(throws: TTMLError.unsupported("ttp:timeBase=\"smpte\"")) {
            try TTMLDocument(Data(#"<tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:timeBase="smpte"><body/></tt>"#.utf8))
        }
        #expect(throws: TTMLError.unsupported("timeContainer=\"seq\"")) {
            try TTMLDocument(Data(#"<tt xmlns="http://www.w3.org/ns/ttml"><body timeContainer="seq"/></tt>"#.utf8))
        }
        #expect(throws: TTMLError.invalidValue(attribute: "begin", value: "soon")) {
            try TTMLDocument(Data(#"<tt xmlns="http://www.w3.org/ns/ttml"><body><p begin="soon">x</p></body></tt>"#.utf8))
        }
        #expect(throws: TTMLError.invalidValue(attribute: "ttp:frameRate", value: "0")) {
            try TTMLDocument(Data(#"<tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:frameRate="0"><body/></tt>"#.utf8))
        }
    }

    @Test func sizeAndCueCaps() throws {
        let big = Data(count: TTMLDocument.maximumBytes + 1)
        #expect(throws: TTMLError.tooLarge(bytes: big.count, limit: TTMLDocument.maximumBytes)) { try TTMLDocument(big) }
        #expect(TTMLDocument.maximumCues == 50_000)
        // The cap at a small size (the full one takes seconds to reach in a debug build).
        func document(cues: Int) -> Data {
            var paragraphs = ""
            for index in 0..<cues { paragraphs += "<p begin=\"\(index)s\" dur=\"1s\">c</p>" }
            return Data((#"<tt xmlns="http://www.w3.org/ns/ttml"><body><div>"# + paragraphs + "</div></body></tt>").utf8)
        }
        #expect(try TTMLDocument(document(cues: 20), maximumCues: 20).cues.count == 20)
        #expect(throws: TTMLError.tooManyCues(limit: 20)) { try TTMLDocument(document(cues: 21), maximumCues: 20) }
    }

    @Test func thousandsOfTimedSpansInOneParagraphAreRefused() {
        var spans = ""
        for index in 0..<5000 { spans += "<span begin=\"\(index)s\" dur=\"1s\">w</span>" }
        let text = #"<tt xmlns="http://www.w3.org/ns/ttml"><body><div><p>"# + spans + "</p></div></body></tt>"
        #expect(throws: TTMLError.unsupported("timing this complex (a paragraph with 5000 timed pieces)")) {
            try TTMLDocument(Data(text.utf8))
        }
    }

    @Test func deepNestingIsRefused() {
        let depth = TTMLDocument.maximumDepth + 10
        let text = #"<tt xmlns="http://www.w3.org/ns/ttml"><body><div><p>"#
            + String(repeating: "<span>", count: depth) + "x" + String(repeating: "</span>", count: depth) + "</p></div></body></tt>"
        #expect(throws: TTMLError.tooDeep(limit: TTMLDocument.maximumDepth)) { try TTMLDocument(Data(text.utf8)) }
    }
}
