import Foundation
import ReelCore
import ReelLoading
import ReelOrigin
import ReelStreaming
import ReelTestSupport
import Synchronization
import Testing

/// The live segment reader against a real live origin (ReelOrigin's live route, blocking
/// reloads) through the HTTP loader. The origin's time moves with the requests, so what the
/// reader sees does not depend on how loaded the machine is.
@Suite struct LiveSegmentReaderTests {
    /// A directory with `init.mp4` and 24 segments whose bytes say which they are
    /// (segment `big`, if given, is 2 MB instead).
    static func files(big: Int? = nil) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("INIT;".utf8).write(to: directory.appendingPathComponent("init.mp4"))
        for index in 0..<24 {
            let bytes = index == big ? Data(count: 2 << 20) : Data("SEG-\(index);".utf8)
            try bytes.write(to: directory.appendingPathComponent("s\(index).m4s"))
        }
        return directory
    }

    /// 24 segments of 0.25 s (a target duration of 1 s), one pass or looping.
    static func stream(stallsAfter: Double? = nil, loops: Bool = false) throws -> LiveHLSStream {
        try LiveHLSStream(segments: (0..<24).map { .init(uri: "/s\($0).m4s", duration: 0.25) }, initSection: "/init.mp4",
                          window: 4, stallsAfter: stallsAfter, loops: loops)
    }

    /// 2.5 s in at the first reload: segment 10 is the newest, 7…10 are listed (a window of
    /// 4), and three target durations back reaches past the first listed: the join is 7.
    static let time = LiveHLSTime.perRequest(start: 2.5, step: 0.25)

    @Test func followsTheLiveEdgeFetchingEachSegmentOnceToTheEnd() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(), time: Self.time)]))
        let port = try await server.start()
        let http = HTTPLoader()
        let events = Mutex<[LiveSegmentReader.Event]>([])
        let reader = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http) { event in
            events.withTrackedLock { $0.append(event) }
        }
        let media = reader.stream()
        let bytes = try await media.collect()
        await http.shutdown()
        await server.stop()
        let tokens = String(decoding: bytes, as: UTF8.self).split(separator: ";").map(String.init)
        #expect(tokens.first == "INIT", "the init section first, once")
        #expect(tokens.dropFirst().allSatisfy { $0.hasPrefix("SEG-") })
        let indices = tokens.dropFirst().compactMap { Int($0.dropFirst(4)) }
        let first = try #require(indices.first)
        #expect(first == 7, "it joined at the edge of the first playlist it saw")
        #expect(indices == Array(7..<24), "from the join to the end, in order, none twice, none skipped")
        let seen = events.withTrackedLock { $0 }
        let fetched = seen.compactMap { event -> Double? in if case .fetched(_, _, _, let behind) = event { behind } else { nil } }
        #expect(fetched.count == indices.count)
        let reloads = seen.filter { if case .playlist = $0 { true } else { false } }.count
        #expect(reloads >= 14, "it reloaded the playlist as it grew: one blocking reload per segment")
    }

    @Test func aDiscontinuityEndsTheStreamClearly() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(loops: true), time: Self.time)]))
        let port = try await server.start()
        let http = HTTPLoader()
        let media = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http).stream()
        await #expect(throws: LiveSegmentReader.Failure.discontinuity(24)) { _ = try await media.collect() }
        await http.shutdown()
        await server.stop()
    }

    @Test func aPlaylistOrASegmentLargerThanItsLimitEndsTheStream() async throws {
        // The first segment fetched is 2 MB where the limit is 1 MB (a segment that never ends, cut short).
        let root = try Self.files(big: 7)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(), time: Self.time)]))
        let port = try await server.start()
        let http = HTTPLoader()
        let url = URL(string: "http://127.0.0.1:\(port)/live.m3u8")!
        var reader = LiveSegmentReader(playlist: url, loader: http)
        reader.maximumSegmentBytes = 1 << 20
        await #expect(throws: LiveSegmentReader.Failure.tooLarge(what: "the segment", url: URL(string: "http://127.0.0.1:\(port)/s7.m4s")!, limit: 1 << 20)) {
            _ = try await reader.stream().collect()
        }
        // A playlist past its limit (a live playlist that grew without bound).
        var small = LiveSegmentReader(playlist: url, loader: http)
        small.maximumPlaylistBytes = 100
        await #expect(throws: LiveSegmentReader.Failure.tooLarge(what: "the live playlist", url: url, limit: 100)) {
            _ = try await small.stream().collect()
        }
        await http.shutdown()
        await server.stop()
    }

    @Test func aStalledPlaylistEndsTheStreamWithAStaleError() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(stallsAfter: 0.7), time: Self.time)]))
        let port = try await server.start()
        let http = HTTPLoader()
        let reader = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http)
        let media = reader.stream()
        var failure: (any Error)?
        do {
            for try await _ in media {}
        } catch {
            failure = error
        }
        await http.shutdown()
        await server.stop()
        guard case .stale(let seconds)? = failure as? LivePlaylistTracker.Failure else {
            Issue.record("expected a stale playlist, got \(String(describing: failure))")
            return
        }
        #expect(seconds >= 3, "three target durations (1 s each) without a change")
    }
}
