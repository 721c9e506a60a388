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
            let section = try #require(scheduling.schedule(url, document: document, playlists: [:], startTime: nil))
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
        #expect(scheduling.schedule(url, document: Data(audio.utf8), playlists: [:], startTime: nil) == nil,
                "a separate audio rendition whose playlists could not be read")
        #expect(scheduling.schedule(url, document: Data("not a playlist".utf8), playlists: [:], startTime: nil) == nil)
        let local = URL(fileURLWithPath: "/tmp/stream/media.m3u8")
        #expect(scheduling.schedule(local, document: Self.media, playlists: [:], startTime: nil) == nil, "a local playlist")
        #expect(!scheduling.isSectioned(url) && !scheduling.isSectioned(local))
    }

    static let fragmented = Data(("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:2.0,\nseg-0.m4s\n"
        + "#EXTINF:2.0,\nseg-1.m4s\n#EXT-X-ENDLIST\n").utf8)

    /// A master whose variants carry video alone beside one audio rendition is taken when the
    /// rendition and the starting variant are fragmented MP4 with an end, read first; anything
    /// else is left to FFmpeg's HLS demuxer.
    @Test func aSeparateAudioRenditionIsTakenOnlyWhenBothPlaylistsCanBeJoined() throws {
        let url = Self.base.appendingPathComponent("master.m3u8")
        let master = Data(("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"fr\",URI=\"fr/audio.m3u8\"\n"
            + "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",DEFAULT=YES,URI=\"en/audio.m3u8\"\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=300000,AUDIO=\"a\"\nlow.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=900000,AUDIO=\"a\"\nhigh.m3u8\n").utf8)
        let audio = Self.base.appendingPathComponent("en/audio.m3u8")
        let low = Self.base.appendingPathComponent("low.m3u8")
        #expect(loader().playlistsToRead(url, document: master) == [audio, low], "the DEFAULT rendition, and the first variant")
        #expect(loader().playlistsToRead(url, document: Self.master).isEmpty, "variants that carry their audio")

        let ts = Self.media
        let live = Data(String(decoding: Self.fragmented, as: UTF8.self).replacingOccurrences(of: "#EXT-X-ENDLIST\n", with: "").utf8)
        let refused: [(String, [URL: Data])] = [
            ("the audio is MPEG-TS", [audio: ts, low: Self.fragmented]),
            ("the video is MPEG-TS", [audio: Self.fragmented, low: ts]),
            ("the audio is live", [audio: live, low: Self.fragmented]),
            ("the video playlist could not be read", [audio: Self.fragmented]),
        ]
        for (why, playlists) in refused {
            let scheduling = loader()
            #expect(scheduling.schedule(url, document: master, playlists: playlists, startTime: nil) == nil, "\(why)")
            #expect(!scheduling.isSectioned(url))
        }
        // Both live, their sequence numbers in line: taken; not in line: FFmpeg's.
        let moved = Data(String(decoding: live, as: UTF8.self).replacingOccurrences(of: "#EXTM3U\n", with: "#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:40\n").utf8)
        #expect(loader().schedule(url, document: master, playlists: [audio: live, low: live], startTime: nil) != nil)
        #expect(loader().schedule(url, document: master, playlists: [audio: moved, low: live], startTime: nil) == nil)
        // Audio segments a little longer (AAC frames), and so a larger target duration: in line.
        let longer = Data(String(decoding: live, as: UTF8.self).replacingOccurrences(of: "#EXTINF:2.0,", with: "#EXTINF:2.02,")
            .replacingOccurrences(of: "#EXT-X-TARGETDURATION:2", with: "#EXT-X-TARGETDURATION:3").utf8)
        #expect(loader().schedule(url, document: master, playlists: [audio: longer, low: live], startTime: nil) != nil)
        // Segments of one number a whole second apart: not in line.
        let apart = Data(String(decoding: live, as: UTF8.self).replacingOccurrences(of: "#EXTINF:2.0,", with: "#EXTINF:3.0,").utf8)
        #expect(loader().schedule(url, document: master, playlists: [audio: apart, low: live], startTime: nil) == nil)
        let scheduling = loader()
        let section = try #require(scheduling.schedule(url, document: master, playlists: [audio: Self.fragmented, low: Self.fragmented],
                                                       startTime: nil))
        #expect(section.url.scheme == LiveMediaLoader.scheme)
        #expect(scheduling.isSectioned(url))

        // The played audio is the variants' own (the DEFAULT has no URI, as in Apple's examples):
        // taken as a master without renditions, nothing to read first.
        let muxed = Data(("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"main\",DEFAULT=YES\n"
            + "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"alt\",DEFAULT=NO,URI=\"alt/audio.m3u8\"\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=300000,AUDIO=\"a\"\nlow.m3u8\n").utf8)
        #expect(loader().playlistsToRead(url, document: muxed).isEmpty)
        #expect(loader().schedule(url, document: muxed, playlists: [:], startTime: nil) != nil)

        // Variants that name different audio groups (an audio ladder) or a video rendition: FFmpeg's.
        for other in [String(decoding: master, as: UTF8.self).replacingOccurrences(of: "high.m3u8", with: "high.m3u8")
                        .replacingOccurrences(of: "BANDWIDTH=900000,AUDIO=\"a\"", with: "BANDWIDTH=900000,AUDIO=\"b\""),
                      String(decoding: master, as: UTF8.self).replacingOccurrences(
                        of: "#EXT-X-STREAM-INF:BANDWIDTH=300000", with: "#EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID=\"v\",NAME=\"cam\",URI=\"cam.m3u8\"\n#EXT-X-STREAM-INF:BANDWIDTH=300000")] {
            let document = Data(other.utf8)
            #expect(loader().playlistsToRead(url, document: document).isEmpty)
            #expect(loader().schedule(url, document: document, playlists: [audio: Self.fragmented, low: Self.fragmented], startTime: nil) == nil)
        }
    }

    static func dash(_ representations: String) -> Data {
        Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S">
          <Period id="0">\(representations)</Period>
        </MPD>
        """.utf8)
    }

    static let dashVideo = """
        <AdaptationSet contentType="video">
          <Representation id="v0" bandwidth="300000" width="160" height="120"><SegmentTemplate duration="2" initialization="v0/init.mp4" media="v0/$Number$.m4s"/></Representation>
          <Representation id="v1" bandwidth="900000" width="320" height="240"><SegmentTemplate duration="2" initialization="v1/init.mp4" media="v1/$Number$.m4s"/></Representation>
        </AdaptationSet>
        """
    static let dashAudio = """
        <AdaptationSet contentType="audio">
          <Representation id="a0" bandwidth="64000"><SegmentTemplate duration="2" initialization="a0/init.mp4" media="a0/$Number$.m4s"/></Representation>
        </AdaptationSet>
        """

    /// A static DASH manifest of segmented fMP4 over HTTP is taken like a master (its video
    /// Representations the variants, its audio joined beside); one the scheduler cannot read
    /// whole or that names what the door refuses is left to the demuxer (DASH as HLS, which
    /// says what it refuses).
    @Test func aDASHManifestIsTakenWhenEveryRepresentationIsSegmentedFMP4OverHTTP() throws {
        let url = Self.base.appendingPathComponent("manifest.mpd")
        let good = Self.dash(Self.dashVideo + Self.dashAudio)
        #expect(loader().playlistsToRead(url, document: good).isEmpty, "everything is in the manifest")
        let scheduling = loader()
        let section = try #require(scheduling.schedule(url, document: good, playlists: [:], startTime: nil))
        #expect(section.url.scheme == LiveMediaLoader.scheme)
        #expect(scheduling.isSectioned(url))
        #expect(loader().schedule(url, document: Self.dash(Self.dashVideo), playlists: [:], startTime: nil) != nil,
                "video Representations that carry their audio")

        let refused: [(String, Data, URL)] = [
            ("a local manifest", good, URL(fileURLWithPath: "/tmp/stream/manifest.mpd")),
            ("sound alone", Self.dash(Self.dashAudio), url),
            ("one file per Representation", Self.dash("""
                <AdaptationSet contentType="video"><Representation id="v0" bandwidth="1"><BaseURL>whole.mp4</BaseURL></Representation></AdaptationSet>
                """ + Self.dashAudio), url),
            ("a segment on another scheme", Self.dash(Self.dashVideo.replacingOccurrences(of: "v1/$Number$.m4s", with: "file:///etc/$Number$")), url),
            ("a segment that is a playlist", Self.dash(Self.dashVideo.replacingOccurrences(of: "v1/$Number$.m4s", with: "v1/$Number$.m3u8")), url),
            ("not a manifest", Data("<MPD><Period>".utf8), url),
        ]
        for (why, document, address) in refused {
            let scheduling = loader()
            #expect(scheduling.schedule(address, document: document, playlists: [:], startTime: nil) == nil, "\(why)")
            #expect(!scheduling.isSectioned(address), "\(why)")
        }
    }

    @Test func schedulingAPlaylistAgainStopsItsPreviousStream() throws {
        let scheduling = loader()
        let url = Self.base.appendingPathComponent("media.m3u8")
        let first = try #require(scheduling.schedule(url, document: Self.media, playlists: [:], startTime: nil))
        let second = try #require(scheduling.schedule(url, document: Self.media, playlists: [:], startTime: nil))
        #expect(first.url != second.url)
        #expect(!scheduling.isSectioned(first.url), "the first run is forgotten")
        #expect(scheduling.isSectioned(second.url))
    }

    @Test func onlyTheLatestStreamsAreKept() throws {
        let scheduling = loader()
        var sections: [URL] = []
        for index in 0...HLSSchedulingLoader.keptStreams {
            let url = Self.base.appendingPathComponent("media-\(index).m3u8")
            sections.append(try #require(scheduling.schedule(url, document: Self.media, playlists: [:], startTime: nil)).url)
        }
        #expect(!scheduling.isSectioned(sections[0]), "the oldest is dropped")
        #expect(sections.dropFirst().allSatisfy(scheduling.isSectioned))
    }
}
