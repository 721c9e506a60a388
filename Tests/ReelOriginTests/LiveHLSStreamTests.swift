import Foundation
import ReelCore
import ReelOrigin
import ReelTestSupport
import Testing

@Suite struct LiveHLSStreamTests {
    /// Three segments of 2, 2 and 1.5 s: a pass of 5.5 s.
    static func stream(window: Int = 3, stallsAfter: Double? = nil) throws -> LiveHLSStream {
        try LiveHLSStream(segments: [
            .init(uri: "/vod/s0.m4s", duration: 2), .init(uri: "/vod/s1.m4s", duration: 2), .init(uri: "/vod/s2.m4s", duration: 1.5),
        ], initSection: "/vod/init.mp4", window: window, stallsAfter: stallsAfter)
    }

    @Test func segmentsArePublishedWhenTheirTimeHasPassedAndLoop() throws {
        let stream = try Self.stream()
        #expect(stream.newest(at: 1.9) == nil)
        #expect(stream.newest(at: 2) == 0)
        #expect(stream.newest(at: 5.4) == 1)
        #expect(stream.newest(at: 5.5) == 2)
        #expect(stream.newest(at: 7.5) == 3, "the second pass's first")
        #expect(stream.newest(at: 11) == 5)
        #expect(stream.publishedAt(3) == 7.5)
        #expect(stream.targetDuration == 2)
    }

    @Test func thePlaylistSlidesWithADiscontinuityAtEachLoop() throws {
        let stream = try Self.stream()
        let text = stream.playlist(at: 9.6) // newest: 4 (the second pass's s1, ends at 9.5)
        #expect(text.contains("#EXT-X-MEDIA-SEQUENCE:2\n"))
        #expect(text.contains("#EXT-X-DISCONTINUITY-SEQUENCE:0\n"))
        #expect(text.components(separatedBy: "#EXTINF").count - 1 == 3)
        #expect(text.contains("/vod/s2.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"/vod/init.mp4\"\n#EXTINF:2.00000,\n/vod/s0.m4s\n"))
        #expect(!text.contains("#EXT-X-ENDLIST"))
        #expect(text.contains("CAN-BLOCK-RELOAD=YES,HOLD-BACK=6"))
        // Once the loop start has slid out, the discontinuity sequence counts it.
        let later = stream.playlist(at: 11.1) // newest 5 (ends at 11.0): 3, 4, 5
        #expect(later.contains("#EXT-X-MEDIA-SEQUENCE:3\n#EXT-X-DISCONTINUITY-SEQUENCE:1\n"))
        #expect(!later.contains("#EXT-X-DISCONTINUITY\n"))
    }

    @Test func blockingReloadsWaitForTheSegmentAndRefuseTheFarFuture() throws {
        let stream = try Self.stream()
        #expect(stream.answer(msn: nil, at: 3) == .now)
        #expect(stream.answer(msn: 0, at: 3) == .now)
        #expect(stream.answer(msn: 1, at: 3) == .waitUntil(4))
        #expect(stream.answer(msn: 2, at: 3) == .waitUntil(5.5))
        if case .badRequest = stream.answer(msn: 3, at: 3) {} else { Issue.record("three ahead is refused") }
        if case .badRequest = stream.answer(msn: -1, at: 3) {} else { Issue.record("a negative msn is refused") }
        // A stalled stream answers after three target durations with what it has.
        let stalled = try Self.stream(stallsAfter: 4.5)
        #expect(stalled.newest(at: 100) == 1)
        #expect(stalled.answer(msn: 2, at: 50) == .waitUntil(56))
    }

    @Test func aStreamThatDoesNotLoopEndsAfterOnePass() throws {
        let stream = try LiveHLSStream(segments: [.init(uri: "a", duration: 2), .init(uri: "b", duration: 2)], window: 6, loops: false)
        #expect(!stream.playlist(at: 3.9).contains("#EXT-X-ENDLIST"))
        let ended = stream.playlist(at: 4)
        #expect(ended.hasSuffix("#EXTINF:2.00000,\nb\n#EXT-X-ENDLIST\n"))
        #expect(stream.newest(at: 100) == 1)
        #expect(stream.playlist(at: 100) == ended)
        #expect(stream.answer(msn: 2, at: 5) == .now, "nothing more is coming: a blocking reload answers at once")
    }

    /// Two 2 s segments of four 0.5 s parts (1000-byte ranges), one pass.
    static func partStream() throws -> LiveHLSStream {
        let parts = (0..<4).map { LiveHLSStream.Part(offset: Int64($0) * 1000, length: 1000, duration: 0.5, independent: $0 % 2 == 0) }
        return try LiveHLSStream(segments: [.init(uri: "/a.m4s", duration: 2, parts: parts), .init(uri: "/b.m4s", duration: 2, parts: parts)],
                                 initSection: "/init.mp4", window: 6, loops: false)
    }

    @Test func partsArePublishedAsTheyAreWrittenWithAPreloadHint() throws {
        let stream = try Self.partStream()
        #expect(stream.partTarget == 0.5)
        let text = stream.playlist(at: 2.6)
        #expect(text.contains("#EXT-X-PART-INF:PART-TARGET=0.50000\n"))
        #expect(text.contains("PART-HOLD-BACK=1.50000"))
        #expect(text.contains("#EXT-X-PART:DURATION=0.50000,URI=\"/a.m4s\",BYTERANGE=\"1000@3000\"\n#EXTINF:2.00000,\n/a.m4s\n"))
        #expect(text.hasSuffix(
            "#EXT-X-PART:DURATION=0.50000,URI=\"/b.m4s\",BYTERANGE=\"1000@0\",INDEPENDENT=YES\n"
                + "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"/b.m4s\",BYTERANGE-START=1000,BYTERANGE-LENGTH=1000\n"))
        #expect(text.components(separatedBy: "#EXT-X-PART:").count - 1 == 5, "segment a's four and b's first")
        #expect(stream.partsPublished(1, at: 2.6) == 1)
        #expect(stream.answer(msn: 1, part: 0, at: 2.6) == .now)
        #expect(stream.answer(msn: 1, part: 1, at: 2.6) == .waitUntil(3))
        #expect(stream.answer(msn: 1, part: nil, at: 2.6) == .waitUntil(4))
        if case .badRequest = stream.answer(msn: nil, part: 1, at: 2.6) {} else { Issue.record("_HLS_part alone is refused") }
        let ended = stream.playlist(at: 4)
        #expect(ended.hasSuffix("/b.m4s\n#EXT-X-ENDLIST\n"), "no hint once it ended")
    }

    /// An ISO box of `type` around `payload`.
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + [UInt8](type.utf8) + payload
    }

    /// A `moof` whose `trun` carries first-sample flags: a sync sample or not.
    static func moof(sync: Bool) -> [UInt8] {
        let tfhd = box("tfhd", [0, 0, 0, 0, 0, 0, 0, 1])
        let flags: [UInt8] = sync ? [0x02, 0x00, 0x00, 0x00] : [0x01, 0x01, 0x00, 0x00]
        let trun = box("trun", [0, 0, 0, 0x05, 0, 0, 0, 1, 0, 0, 0, 0] + flags)
        return box("moof", box("traf", tfhd + trun))
    }

    @Test func aFragmentedSegmentsFragmentsAreItsParts() {
        let first = Self.box("styp", [UInt8]("msdh".utf8)) + Self.moof(sync: true) + Self.box("mdat", [UInt8](repeating: 1, count: 100))
        let second = Self.moof(sync: false) + Self.box("mdat", [UInt8](repeating: 2, count: 50))
        let parts = LiveHLSStream.fragmentParts(first + second, duration: 1)
        #expect(parts == [
            .init(offset: 0, length: Int64(first.count), duration: 0.5, independent: true),
            .init(offset: Int64(first.count), length: Int64(second.count), duration: 0.5, independent: false),
        ])
        // One fragment, a plain MP4, or bytes that are not boxes: no parts.
        #expect(LiveHLSStream.fragmentParts(first, duration: 1).isEmpty)
        #expect(LiveHLSStream.fragmentParts(Self.box("ftyp", []) + Self.box("moov", []) + Self.box("mdat", [1]), duration: 1).isEmpty)
        #expect(LiveHLSStream.fragmentParts([UInt8]("not boxes at all".utf8), duration: 1).isEmpty)
        // Cut anywhere, it never traps.
        for cut in 0..<(first + second).count { _ = LiveHLSStream.fragmentParts(Array((first + second)[..<cut]), duration: 1) }
    }

    @Test func nonsenseIsRefused() {
        #expect(throws: LiveHLSStream.Failure.noSegments) { try LiveHLSStream(segments: []) }
        #expect(throws: LiveHLSStream.Failure.badDuration(uri: "x")) {
            try LiveHLSStream(segments: [.init(uri: "x", duration: .nan)])
        }
    }

    @Test func theServerPublishesTheStreamAndHoldsABlockingReload() async throws {
        let stream = try LiveHLSStream(segments: (0..<4).map { .init(uri: "/vod/s\($0).ts", duration: 0.4) }, window: 3)
        let start = ContinuousClock.now
        try await withOrigin(routes: [.liveHLS("/live/a.m3u8", stream: stream, start: start)]) { _, port in
            let plain = try await rawRequest(port: port, path: "/live/a.m3u8")
            #expect(plain.status == 200)
            #expect(plain.header("Content-Type") == "application/vnd.apple.mpegurl")
            let listed = String(decoding: plain.body, as: UTF8.self)
            #expect(listed.hasPrefix("#EXTM3U\n"))
            // Ask for a segment two past the newest now: the answer lists it, and it came no
            // sooner than the segment's time (a lower bound only: a loaded machine is slower).
            let newest = stream.newest(at: (ContinuousClock.now - start).inSeconds) ?? -1
            let wanted = newest + 2
            let blocked = try await rawRequest(port: port, path: "/live/a.m3u8?_HLS_msn=\(wanted)")
            let answeredAt = (ContinuousClock.now - start).inSeconds
            #expect(blocked.status == 200)
            #expect(answeredAt >= stream.publishedAt(wanted))
            let playlist = try #require(String(data: blocked.body, encoding: .utf8))
            let sequenceLine = try #require(playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") })
            let first = try #require(Int64(sequenceLine.dropFirst("#EXT-X-MEDIA-SEQUENCE:".count)))
            let count = Int64(playlist.components(separatedBy: "#EXTINF").count - 1)
            #expect(first + count - 1 >= wanted, "the playlist lists segment \(wanted): \(playlist)")
            let far = try await rawRequest(port: port, path: "/live/a.m3u8?_HLS_msn=1000000")
            #expect(far.status == 400)
            let junk = try await rawRequest(port: port, path: "/live/a.m3u8?_HLS_msn=x")
            #expect(junk.status == 400)
            #expect(try await rawRequest(port: port, path: "/live/a.m3u8/more").status == 404)
        }
    }
}
