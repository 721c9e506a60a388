import Foundation
import ReelCore
import ReelStreaming
import ReelTestSupport
import Testing

/// What the scheduling loader takes from the engine and what it leaves to FFmpeg's HLS demuxer,
/// and how it keeps one stream per playlist URL.
@Suite struct HLSSchedulingLoaderTests {
    static let base = URL(string: "https://origin.example/stream/")!
    static let media = Data("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg-0.ts\n#EXT-X-ENDLIST\n".utf8)
    static let master = Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=300000\nlow.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=900000\nhigh.m3u8\n".utf8)

    func loader() -> HLSSchedulingLoader {
        HLSSchedulingLoader(upstream: FakeResourceLoader(clock: ManualClock()))
    }

    @Test func aMediaPlaylistOrAMasterOverHTTPIsScheduledUnderItsOwnURL() throws {
        let scheduling = loader()
        // A master's subtitle renditions are the engine's to read: the master is still taken.
        let subtitled = Data(("#EXTM3U\n#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"s\",NAME=\"en\",LANGUAGE=\"en\",URI=\"subs.m3u8\"\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=300000,SUBTITLES=\"s\"\nvideo.m3u8\n").utf8)
        for (name, document) in [("media.m3u8", Self.media), ("master.m3u8", Self.master), ("subtitled.m3u8", subtitled)] {
            let url = Self.base.appendingPathComponent(name)
            #expect(!scheduling.isSectioned(url))
            let section = try #require(scheduling.schedule(url, document: document, startTime: nil))
            #expect(section.url.scheme == LiveMediaLoader.scheme)
            #expect(!section.restartsTimeline)
            #expect(scheduling.isSectioned(url), "later sections, seeks and the duration go by the playlist's URL")
            #expect(scheduling.isSectioned(section.url))
        }
    }

    @Test func whatTheReaderCannotPlayIsLeftToTheDemuxer() {
        let scheduling = loader()
        let url = Self.base.appendingPathComponent("master.m3u8")
        let audio = "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",URI=\"audio.m3u8\"\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=300000,AUDIO=\"a\"\nvideo.m3u8\n"
        #expect(scheduling.schedule(url, document: Data(audio.utf8), startTime: nil) == nil, "separate audio rendition")
        #expect(scheduling.schedule(url, document: Data("not a playlist".utf8), startTime: nil) == nil)
        let local = URL(fileURLWithPath: "/tmp/stream/media.m3u8")
        #expect(scheduling.schedule(local, document: Self.media, startTime: nil) == nil, "a local playlist")
        #expect(!scheduling.isSectioned(url) && !scheduling.isSectioned(local))
    }

    @Test func schedulingAPlaylistAgainStopsItsPreviousStream() throws {
        let scheduling = loader()
        let url = Self.base.appendingPathComponent("media.m3u8")
        let first = try #require(scheduling.schedule(url, document: Self.media, startTime: nil))
        let second = try #require(scheduling.schedule(url, document: Self.media, startTime: nil))
        #expect(first.url != second.url)
        #expect(!scheduling.isSectioned(first.url), "the first run is forgotten")
        #expect(scheduling.isSectioned(second.url))
    }

    @Test func onlyTheLatestStreamsAreKept() throws {
        let scheduling = loader()
        var sections: [URL] = []
        for index in 0...HLSSchedulingLoader.keptStreams {
            let url = Self.base.appendingPathComponent("media-\(index).m3u8")
            sections.append(try #require(scheduling.schedule(url, document: Self.media, startTime: nil)).url)
        }
        #expect(!scheduling.isSectioned(sections[0]), "the oldest is dropped")
        #expect(sections.dropFirst().allSatisfy(scheduling.isSectioned))
    }
}
