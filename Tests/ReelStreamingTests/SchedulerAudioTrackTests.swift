import Foundation
import ReelCore
@testable import ReelStreaming
import ReelTestSupport
import Testing

/// The audio tracks Reel's scheduler offers (an HLS master's separate `AUDIO` renditions, a DASH
/// manifest's audio AdaptationSets) and that the one chosen is the one it reads.
@Suite struct SchedulerAudioTrackTests {
    static let base = URL(string: "https://origin.example/stream/")!

    func loader() -> HLSSchedulingLoader {
        HLSSchedulingLoader(upstream: FakeResourceLoader(clock: ManualClock()))
    }

    static let master = Data(("#EXTM3U\n"
        + "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"English\",LANGUAGE=\"en\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"2\",URI=\"en/audio.m3u8\"\n"
        + "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"Français\",LANGUAGE=\"fr\",CHANNELS=\"6/JOC\",URI=\"fr/audio.m3u8\"\n"
        + "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"English AD\",LANGUAGE=\"en\","
        + "CHARACTERISTICS=\"public.accessibility.describes-video,public.easy-to-read\",URI=\"ad/audio.m3u8\"\n"
        + "#EXT-X-STREAM-INF:BANDWIDTH=300000,CODECS=\"avc1.64001f,mp4a.40.2\",AUDIO=\"a\"\nlow.m3u8\n"
        + "#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS=\"avc1.64001f,mp4a.40.2\",AUDIO=\"a\"\nhigh.m3u8\n").utf8)

    @Test func anHLSMastersAudioRenditionsAreListedWithLanguageNameRoleAndChannels() {
        let tracks = loader().audioTracks(Self.base.appendingPathComponent("master.m3u8"), document: Self.master)
        #expect(tracks.map(\.id) == [0, 1, 2])
        #expect(tracks.map(\.language) == ["en", "fr", "en"])
        #expect(tracks.map(\.label) == ["English", "Français", "English AD"])
        #expect(tracks.map(\.roles) == [[], [], [AudioTrack.describesVideo]])
        #expect(tracks.map(\.channels) == [2, 6, nil])
        #expect(tracks.map(\.isDefault) == [true, false, false])
        #expect(tracks.allSatisfy { $0.codec == "aac" })
    }

    @Test func theChosenRenditionIsTheOneReadElseTheDefault() {
        let url = Self.base.appendingPathComponent("master.m3u8")
        let low = Self.base.appendingPathComponent("low.m3u8")
        let scheduling = loader()
        #expect(scheduling.playlistsToRead(url, document: Self.master, audio: 1) == [Self.base.appendingPathComponent("fr/audio.m3u8"), low])
        #expect(scheduling.playlistsToRead(url, document: Self.master, audio: 2) == [Self.base.appendingPathComponent("ad/audio.m3u8"), low])
        #expect(scheduling.playlistsToRead(url, document: Self.master, audio: nil) == [Self.base.appendingPathComponent("en/audio.m3u8"), low])
        #expect(scheduling.playlistsToRead(url, document: Self.master, audio: 7) == [Self.base.appendingPathComponent("en/audio.m3u8"), low],
                "a track it does not offer: the DEFAULT")
    }

    @Test func renditionsTheVariantsCarryOrThatDifferByVariantAreNotOffered() {
        let url = Self.base.appendingPathComponent("master.m3u8")
        let muxed = Data(("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",LANGUAGE=\"en\",DEFAULT=YES\n"
            + "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"fr\",LANGUAGE=\"fr\",URI=\"fr.m3u8\"\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=300000,AUDIO=\"a\"\nlow.m3u8\n").utf8)
        #expect(loader().audioTracks(url, document: muxed).isEmpty, "the DEFAULT is the variants' own audio")
        let plain = Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=300000\nlow.m3u8\n".utf8)
        #expect(loader().audioTracks(url, document: plain).isEmpty)
        #expect(loader().audioTracks(url, document: Data("#EXTM3U\n#EXTINF:2,\ns.ts\n".utf8)).isEmpty)
    }

    static let manifest = """
        <?xml version="1.0"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S" minBufferTime="PT1S">
          <Period>
            <AdaptationSet contentType="video" mimeType="video/mp4" codecs="avc1.64001f">
              <SegmentTemplate initialization="v-$RepresentationID$-init.mp4" media="v-$RepresentationID$-$Number$.m4s" duration="2" startNumber="1"/>
              <Representation id="v0" bandwidth="300000" width="320" height="180"/>
            </AdaptationSet>
            <AdaptationSet contentType="audio" mimeType="audio/mp4" codecs="mp4a.40.2" lang="en">
              <Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
              <Label>English</Label>
              <SegmentTemplate initialization="a-$RepresentationID$-init.mp4" media="a-$RepresentationID$-$Number$.m4s" duration="2" startNumber="1"/>
              <Representation id="en-hi" bandwidth="128000"/>
              <Representation id="en-lo" bandwidth="64000"/>
            </AdaptationSet>
            <AdaptationSet contentType="audio" mimeType="audio/mp4" codecs="mp4a.40.2" lang="fr">
              <Role schemeIdUri="urn:mpeg:dash:role:2011" value="dub"/>
              <SegmentTemplate initialization="a-$RepresentationID$-init.mp4" media="a-$RepresentationID$-$Number$.m4s" duration="2" startNumber="1"/>
              <Representation id="fr" bandwidth="96000"/>
            </AdaptationSet>
            <AdaptationSet contentType="audio" mimeType="audio/mp4" codecs="ec-3" lang="en">
              <Accessibility schemeIdUri="urn:tva:metadata:cs:AudioPurposeCS:2007" value="1"/>
              <SegmentTemplate initialization="a-$RepresentationID$-init.mp4" media="a-$RepresentationID$-$Number$.m4s" duration="2" startNumber="1"/>
              <Representation id="ad" bandwidth="32000"/>
            </AdaptationSet>
          </Period>
        </MPD>
        """

    @Test func aDASHManifestsAudioAdaptationSetsAreListedWithLanguageRoleAndLabel() throws {
        let url = Self.base.appendingPathComponent("stream.mpd")
        let tracks = loader().audioTracks(url, document: Data(Self.manifest.utf8))
        #expect(tracks.map(\.id) == [0, 1, 2])
        #expect(tracks.map(\.language) == ["en", "fr", "en"])
        #expect(tracks.map(\.label) == ["English", nil, nil])
        #expect(tracks.map(\.roles) == [[], ["dub"], [AudioTrack.describesVideo]])
        #expect(tracks.map(\.isDefault) == [true, false, false], "the Role main, not the lowest bandwidth")
        #expect(tracks.map(\.codec) == ["aac", "aac", "eac3"])
    }

    /// The DASH stream's audio playlist (in memory) lists the chosen AdaptationSet's lowest
    /// Representation; without a choice, the `main` one's.
    @Test func theChosenAdaptationSetIsTheOneTheSchedulerReads() throws {
        let url = Self.base.appendingPathComponent("stream.mpd")
        let manifest = try DASHManifest(Data(Self.manifest.utf8), url: url)
        for (audio, expected) in [(1, "fr"), (nil, "en-lo"), (2, "ad"), (9, "en-lo")] as [(Int?, String)] {
            let chosen = try #require(HLSSchedulingLoader.audioRepresentation(of: manifest, audio: audio))
            #expect(chosen.id == expected)
            let documents = manifest.hlsDocuments(manifest: url, audio: chosen)
            let playlist = try #require(documents[DASHManifest.hlsPlaylistURL(for: url, index: chosen.index).absoluteString])
            #expect(String(decoding: playlist, as: UTF8.self).contains("a-\(expected)-1.m4s"))
            let master = String(decoding: try #require(documents[url.absoluteString]), as: UTF8.self)
            #expect(master.components(separatedBy: "TYPE=AUDIO").count == 2, "one audio rendition: the chosen one")
        }
        let section = loader().schedule(url, document: Data(Self.manifest.utf8), playlists: [:], startTime: nil, audio: 1)
        #expect(section?.url.scheme == LiveMediaLoader.scheme, "taken with the French set")
    }
}
