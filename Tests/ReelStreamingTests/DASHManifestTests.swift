import Foundation
@testable import ReelStreaming
import ReelCore
import Testing

/// The MPD subset Reel reads: BaseURLs, SegmentTemplate (number, time, timeline), SegmentList,
/// single files, and the rewrite that keeps one video Representation.
@Suite struct DASHManifestTests {
    static let url = URL(string: "https://origin.example/a/manifest.mpd")!

    static func mpd(_ period: String, attributes: String = "type=\"static\" mediaPresentationDuration=\"PT4S\"") -> Data {
        Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" \(attributes)>
          <Period id="0">\(period)</Period>
        </MPD>
        """.utf8)
    }

    @Test func templatesExpandNumbersTimesAndWidths() throws {
        #expect(try DASHManifest.expand("chunk-$RepresentationID$-$Number%05d$.m4s", id: "v1", bandwidth: 9, number: 7, time: nil)
                == "chunk-v1-00007.m4s")
        #expect(try DASHManifest.expand("$Time$_$Bandwidth$$$.m4s", id: "x", bandwidth: 500, number: 1, time: 3000) == "3000_500$.m4s")
        #expect(throws: DASHManifest.Failure.self) { try DASHManifest.expand("$Nope$", id: "x", bandwidth: 1, number: 1, time: 1) }
        #expect(throws: DASHManifest.Failure.self) { try DASHManifest.expand("$Number", id: "x", bandwidth: 1, number: 1, time: 1) }
        #expect(throws: DASHManifest.Failure.self) { try DASHManifest.expand("$Number$", id: "x", bandwidth: 1, number: nil, time: nil) }
    }

    @Test func isoDurations() {
        #expect(DASHManifest.seconds("PT2.5S") == 2.5)
        #expect(DASHManifest.seconds("PT1M30S") == 90)
        #expect(DASHManifest.seconds("P1DT1H") == 90_000)
        #expect(DASHManifest.seconds("2S") == nil)
        #expect(DASHManifest.seconds("PT2") == nil)
    }

    @Test func aTimelineTemplateWithBaseURLsAtEveryLevel() throws {
        let data = Self.mpd("""
            <BaseURL>media/</BaseURL>
            <AdaptationSet contentType="video">
              <BaseURL>video/</BaseURL>
              <SegmentTemplate timescale="1000" initialization="init-$RepresentationID$.mp4" media="$RepresentationID$/$Time$.m4s"/>
              <Representation id="lo" bandwidth="200000" width="128" height="72" mimeType="video/mp4">
                <SegmentTemplate><SegmentTimeline><S t="0" d="1500" r="1"/><S d="1000"/></SegmentTimeline></SegmentTemplate>
              </Representation>
              <Representation id="hi" bandwidth="900000" width="512" height="288">
                <BaseURL>https://cdn.example/hi/</BaseURL>
                <SegmentTemplate><SegmentTimeline><S t="0" d="2000" r="-1"/></SegmentTimeline></SegmentTemplate>
              </Representation>
            </AdaptationSet>
            <AdaptationSet mimeType="audio/mp4">
              <Representation id="a2" bandwidth="128000"><SegmentTemplate duration="2" initialization="a-init.mp4" media="a-$Number$.m4s" startNumber="5"/></Representation>
              <Representation id="a1" bandwidth="64000"><SegmentTemplate duration="2" initialization="a-init.mp4" media="a-$Number$.m4s"/></Representation>
            </AdaptationSet>
            """)
        let manifest = try DASHManifest(data, url: Self.url)
        #expect(manifest.representations.map(\.id) == ["lo", "hi", "a2", "a1"])
        #expect(manifest.videos.map(\.resolution) == ["128x72", "512x288"])
        let lo = manifest.representations[0]
        #expect(lo.initialization?.url.absoluteString == "https://origin.example/a/media/video/init-lo.mp4")
        #expect(lo.segments.map(\.url.lastPathComponent) == ["0.m4s", "1500.m4s", "3000.m4s"])
        #expect(lo.segments.map(\.duration) == [1.5, 1.5, 1])
        let hi = manifest.representations[1]
        #expect(hi.segments.map(\.url.absoluteString) == ["https://cdn.example/hi/hi/0.m4s", "https://cdn.example/hi/hi/2000.m4s"])
        #expect(manifest.preferredAudio?.id == "a1")
        #expect(manifest.representations[2].segments.map(\.url.lastPathComponent) == ["a-5.m4s", "a-6.m4s"])
        #expect(manifest.representations[2].kind == .audio)
    }

    @Test func aSegmentListAndASingleFile() throws {
        let data = Self.mpd("""
            <AdaptationSet contentType="video">
              <Representation id="0" bandwidth="1">
                <SegmentList timescale="10" duration="20">
                  <Initialization sourceURL="all.mp4" range="0-99"/>
                  <SegmentURL media="all.mp4" mediaRange="100-199"/>
                  <SegmentURL media="all.mp4" mediaRange="200-299"/>
                </SegmentList>
              </Representation>
              <Representation id="1" bandwidth="2"><BaseURL>whole.mp4</BaseURL><SegmentBase indexRange="10-20"/></Representation>
            </AdaptationSet>
            """)
        let manifest = try DASHManifest(data, url: Self.url)
        let list = manifest.representations[0]
        #expect(list.initialization?.range == ByteRange(offset: 0, length: 100))
        #expect(list.segments.map(\.range) == [ByteRange(offset: 100, length: 100), ByteRange(offset: 200, length: 100)])
        #expect(list.segments.map(\.duration) == [2, 2])
        let single = manifest.representations[1]
        #expect(single.initialization == nil)
        #expect(single.segments.map(\.url.lastPathComponent) == ["whole.mp4"])
        #expect(single.segments.first?.duration == 4)
    }

    @Test func refusals() throws {
        let timeline = Self.mpd("""
            <AdaptationSet contentType="video"><Representation id="0" bandwidth="1">
            <SegmentTemplate media="$Number$.m4s"><SegmentTimeline><S d="1" r="100000000"/></SegmentTimeline></SegmentTemplate>
            </Representation></AdaptationSet>
            """)
        #expect(throws: DASHManifest.Failure.tooManySegments(limit: 20_000)) { try DASHManifest(timeline, url: Self.url) }
        let live = Self.mpd("<AdaptationSet/>", attributes: "type=\"dynamic\"")
        #expect(throws: DASHManifest.Failure.self) { try DASHManifest(live, url: Self.url) }
        let entities = Data("<?xml version=\"1.0\"?><!DOCTYPE MPD [<!ENTITY a \"aaaa\">]><MPD><Period/></MPD>".utf8)
        #expect(throws: DASHManifest.Failure.unsupported("it has a document type declaration")) { try DASHManifest(entities, url: Self.url) }
        let lowercase = Data("<?xml version=\"1.0\"?><!doctype MPD SYSTEM \"file:///etc/passwd\"><MPD><Period/></MPD>".utf8)
        #expect(throws: DASHManifest.Failure.unsupported("it has a document type declaration")) { try DASHManifest(lowercase, url: Self.url) }
        #expect(throws: DASHManifest.Failure.self) { try DASHManifest(Data("#EXTM3U\n".utf8), url: Self.url) }
        #expect(throws: DASHManifest.Failure.self) { try DASHManifest(Data("<MPD><Period>".utf8), url: Self.url) }
        let remote = Self.mpd("<AdaptationSet xmlns:xlink=\"http://www.w3.org/1999/xlink\" xlink:href=\"https://x.example/as.xml\"/>")
        #expect(throws: DASHManifest.Failure.unsupported("remote elements (xlink:href)")) { try DASHManifest(remote, url: Self.url) }
        let badReference = Self.mpd("""
            <AdaptationSet contentType="video"><Representation id="0" bandwidth="1">
            <SegmentTemplate duration="1" initialization="subfile,,start,0,end,9,,:init.mp4" media="$Number$.m4s"/>
            </Representation></AdaptationSet>
            """)
        #expect(throws: DASHManifest.Failure.invalidReference("subfile,,start,0,end,9,,:init.mp4")) {
            try DASHManifest(badReference, url: Self.url)
        }
    }

    @Test func keepingOneVideoAndTheChosenAudio() throws {
        let data = Self.mpd("""
            <AdaptationSet contentType="video">
              <Representation id="v0" bandwidth="100"><SegmentTemplate duration="1" media="v0-$Number$.m4s"/></Representation>
              <Representation id="v1" bandwidth="200"><SegmentTemplate duration="1" media="v1-$Number$.m4s"/></Representation>
            </AdaptationSet>
            <AdaptationSet contentType="audio">
              <Representation id="a0" bandwidth="90"><SegmentTemplate duration="1" media="a0-$Number$.m4s"/></Representation>
            </AdaptationSet>
            <AdaptationSet contentType="audio">
              <Representation id="a1" bandwidth="60"><SegmentTemplate duration="1" media="a1-$Number$.m4s"/></Representation>
            </AdaptationSet>
            """)
        let manifest = try DASHManifest(data, url: Self.url)
        let kept = try DASHManifest(DASHManifest.keeping(data, video: 1, audio: manifest.preferredAudio?.index), url: Self.url)
        #expect(kept.representations.map(\.id) == ["v1", "a1"])
        #expect(kept.representations.first?.segments.first?.url.lastPathComponent == "v1-1.m4s")
    }
}
