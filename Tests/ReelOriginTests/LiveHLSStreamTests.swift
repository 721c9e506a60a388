import Foundation
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
            let newest = stream.newest(at: (ContinuousClock.now - start).seconds) ?? -1
            let wanted = newest + 2
            let blocked = try await rawRequest(port: port, path: "/live/a.m3u8?_HLS_msn=\(wanted)")
            let answeredAt = (ContinuousClock.now - start).seconds
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

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
