import Foundation
import ReelCore
import ReelStreaming
import Testing

@Suite struct HLSMediaPlaylistTests {
    static let lowLatency = """
    #EXTM3U
    #EXT-X-VERSION:9
    #EXT-X-TARGETDURATION:4
    #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.0,CAN-SKIP-UNTIL=24.0,HOLD-BACK=12
    #EXT-X-PART-INF:PART-TARGET=0.33334
    #EXT-X-MEDIA-SEQUENCE:266
    #EXT-X-MAP:URI="init.mp4"
    #EXT-X-PROGRAM-DATE-TIME:2026-11-27T00:00:00.000Z
    #EXTINF:4.00008,
    fileSequence266.mp4
    #EXTINF:4.00008,
    fileSequence267.mp4
    #EXT-X-DISCONTINUITY
    #EXTINF:4.00008,
    fileSequence268.mp4
    #EXT-X-PART:DURATION=0.33334,URI="filePart269.0.mp4",INDEPENDENT=YES
    #EXT-X-PART:DURATION=0.33334,URI="filePart269.1.mp4"
    #EXTINF:0.66668,
    fileSequence269.mp4
    #EXT-X-PART:DURATION=0.33334,URI="filePart270.0.mp4",INDEPENDENT=YES
    #EXT-X-PART:DURATION=0.33334,URI="whole270.mp4",BYTERANGE="1000@0"
    #EXT-X-PART:DURATION=0.33334,URI="whole270.mp4",BYTERANGE="500"
    #EXT-X-PRELOAD-HINT:TYPE=PART,URI="whole270.mp4",BYTERANGE-START=1500

    """

    @Test func readsALowLatencyPlaylist() throws {
        let playlist = try HLSMediaPlaylist.parse(Data(Self.lowLatency.utf8))
        #expect(playlist.targetDuration == 4)
        #expect(playlist.mediaSequence == 266)
        #expect(playlist.segments.map(\.sequence) == [266, 267, 268, 269])
        #expect(playlist.nextSequence == 270)
        #expect(playlist.segments.map(\.discontinuity) == [false, false, true, false])
        #expect(playlist.segments.map(\.discontinuitySequence) == [0, 0, 1, 1])
        #expect(playlist.segments.allSatisfy { $0.initSection?.uri == "init.mp4" })
        #expect(playlist.segments[3].parts.map(\.resource.uri) == ["filePart269.0.mp4", "filePart269.1.mp4"])
        #expect(playlist.segments[3].parts.map(\.independent) == [true, false])
        #expect(abs(playlist.segments[3].duration - 0.66668) < 1e-9)
        #expect(playlist.trailingParts.count == 3)
        #expect(playlist.trailingParts[1].resource.range == ByteRange(offset: 0, length: 1000))
        #expect(playlist.trailingParts[2].resource.range == ByteRange(offset: 1000, length: 500), "a range without @ follows the last one of its URI")
        #expect(playlist.preloadHints == [.init(kind: .part, resource: .init(uri: "whole270.mp4", range: ByteRange(offset: 1500)))])
        #expect(playlist.partTarget == 0.33334)
        #expect(playlist.serverControl.canBlockReload)
        #expect(playlist.serverControl.canSkipUntil == 24)
        #expect(playlist.serverControl.holdBack == 12)
        #expect(playlist.serverControl.partHoldBack == 1)
        #expect(!playlist.isFinal)
    }

    @Test func readsADeltaUpdate() throws {
        let text = """
        #EXTM3U
        #EXT-X-TARGETDURATION:2
        #EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=12
        #EXT-X-MEDIA-SEQUENCE:100
        #EXT-X-SKIP:SKIPPED-SEGMENTS=6
        #EXTINF:2,
        s106.ts
        #EXTINF:2,
        s107.ts
        """
        let playlist = try HLSMediaPlaylist.parse(Data(text.utf8))
        #expect(playlist.skippedSegments == 6)
        #expect(playlist.segments.map(\.sequence) == [106, 107])
        #expect(playlist.nextSequence == 108)
    }

    @Test func readsByteRangesStartAndVOD() throws {
        let text = """
        #EXTM3U
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXT-X-TARGETDURATION:6
        #EXT-X-START:TIME-OFFSET=-4.5,PRECISE=YES
        #EXT-X-MAP:URI="main.mp4",BYTERANGE="700@0"
        #EXTINF:6,
        #EXT-X-BYTERANGE:1000@700
        main.mp4
        #EXTINF:5.5,
        #EXT-X-BYTERANGE:800
        main.mp4
        #EXT-X-GAP
        #EXTINF:6,
        missing.mp4
        """
        let playlist = try HLSMediaPlaylist.parse(Data(text.utf8))
        #expect(playlist.isFinal)
        #expect(playlist.playlistType == .vod)
        #expect(playlist.initSection == .init(uri: "main.mp4", range: ByteRange(offset: 0, length: 700)))
        #expect(playlist.segments.map(\.range) == [ByteRange(offset: 700, length: 1000), ByteRange(offset: 1700, length: 800), nil])
        #expect(playlist.segments.map(\.isGap) == [false, false, true])
        #expect(playlist.duration == 17.5)
        #expect(playlist.start?.offset == -4.5)
        #expect(playlist.start?.precise == true)
    }

    @Test(arguments: [
        ("#EXT-X-MEDIA-SEQUENCE:-4", "#EXT-X-MEDIA-SEQUENCE"),
        ("#EXT-X-MEDIA-SEQUENCE:9223372036854775807", "#EXT-X-MEDIA-SEQUENCE"),
        ("#EXT-X-TARGETDURATION:x", "#EXT-X-TARGETDURATION"),
        ("#EXT-X-BYTERANGE:9223372036854775807@9223372036854775807", "#EXT-X-BYTERANGE"),
        ("#EXT-X-BYTERANGE:-5", "#EXT-X-BYTERANGE"),
        ("#EXT-X-SKIP:SKIPPED-SEGMENTS=99999999999", "#EXT-X-SKIP"),
        ("#EXT-X-START:TIME-OFFSET=nan", "#EXT-X-START"),
        ("#EXT-X-PART:DURATION=inf,URI=\"p.mp4\"", "#EXT-X-PART DURATION"),
        ("#EXT-X-PART:URI=\"p.mp4\"", "#EXT-X-PART"),
    ])
    func refusesValuesThatDoNotFit(line: String, tag: String) {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n\(line)\n#EXTINF:2,\na.ts\n"
        #expect {
            _ = try HLSMediaPlaylist.parse(Data(text.utf8))
        } throws: { error in
            guard case .badValue(let named, _) = error as? HLSMediaPlaylist.ParseError else { return false }
            return named == tag
        }
    }

    @Test func refusesAPlaylistThatGrowsPastItsLimit() {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n"
        text.reserveCapacity(2_000_000)
        for index in 0...HLSMediaPlaylist.maximumSegments { text += "#EXTINF:1,\n\(index).ts\n" }
        #expect(throws: HLSMediaPlaylist.ParseError.tooManySegments(limit: HLSMediaPlaylist.maximumSegments)) {
            _ = try HLSMediaPlaylist.parse(Data(text.utf8))
        }
    }

    @Test func aLivePlaylistBeforeItsFirstSegmentIsOne() throws {
        let playlist = try HLSMediaPlaylist.parse(Data("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n".utf8))
        #expect(playlist.segments.isEmpty)
        #expect(playlist.nextSequence == 0)
        var tracker = LivePlaylistTracker()
        try tracker.received(playlist, at: 0)
        #expect(tracker.next() == .waitForReload)
    }

    @Test func aMasterOrTextIsNotAMediaPlaylist() {
        #expect(HLSMediaPlaylist(Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n".utf8)) == nil)
        #expect(HLSMediaPlaylist(Data("WEBVTT\n".utf8)) == nil)
        #expect(HLSMediaPlaylist(Data()) == nil)
    }

    @Test func noMutationTraps() {
        // Every cut and a few thousand one-byte changes of the low-latency playlist parse or
        // are refused with a reason; none traps.
        let bytes = Array(Self.lowLatency.utf8)
        for cut in 0...bytes.count { _ = try? HLSMediaPlaylist.parse(Data(bytes[..<cut])) }
        var generator = SplitMix(seed: 25)
        let alphabet = Array("0123456789-@.,=\"#:\n ABEX".utf8)
        for _ in 0..<3000 {
            var mutated = bytes
            let index = Int(generator.next() % UInt64(mutated.count))
            mutated[index] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
            if let playlist = try? HLSMediaPlaylist.parse(Data(mutated)) {
                #expect(playlist.segments.count <= HLSMediaPlaylist.maximumSegments)
                #expect(playlist.nextSequence >= playlist.mediaSequence)
            }
        }
    }
}

/// A small deterministic generator for the mutation tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
