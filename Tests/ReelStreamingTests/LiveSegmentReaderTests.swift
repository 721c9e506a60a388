import Foundation
import ReelCore
import ReelLoading
import ReelOrigin
import ReelStreaming
import ReelTestSupport
import Synchronization
import Testing

/// The live segment reader against a real live origin (ReelOrigin's live route, real time,
/// blocking reloads) through the HTTP loader. Wall-clock bounds here are watchdogs only.
@Suite struct LiveSegmentReaderTests {
    /// A directory with `init.mp4` and twelve segments whose bytes say which they are.
    static func files() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("INIT;".utf8).write(to: directory.appendingPathComponent("init.mp4"))
        for index in 0..<12 { try Data("SEG-\(index);".utf8).write(to: directory.appendingPathComponent("s\(index).m4s")) }
        return directory
    }

    /// Twelve segments of 0.25 s (a target duration of 1 s), one pass or looping.
    static func stream(stallsAfter: Double? = nil, loops: Bool = false) throws -> LiveHLSStream {
        try LiveHLSStream(segments: (0..<12).map { .init(uri: "/s\($0).m4s", duration: 0.25) }, initSection: "/init.mp4",
                          window: 4, stallsAfter: stallsAfter, loops: loops)
    }

    @Test func followsTheLiveEdgeFetchingEachSegmentOnceToTheEnd() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream())]))
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
        #expect(indices == Array(first..<12), "from the join to the end, in order, none twice, none skipped")
        #expect(first <= 4, "it joined at the edge of the first playlist it saw (at most 4 segments listed, 3 s back)")
        let seen = events.withTrackedLock { $0 }
        let fetched = seen.compactMap { event -> Double? in if case .fetched(_, _, _, let behind) = event { behind } else { nil } }
        #expect(fetched.count == indices.count)
        let reloads = seen.filter { if case .playlist = $0 { true } else { false } }.count
        #expect(reloads >= 3, "it reloaded the playlist as it grew")
    }

    @Test func aDiscontinuityEndsTheStreamClearly() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(loops: true))]))
        let port = try await server.start()
        let http = HTTPLoader()
        let media = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http).stream()
        await #expect(throws: LiveSegmentReader.Failure.discontinuity(12)) { _ = try await media.collect() }
        await http.shutdown()
        await server.stop()
    }

    @Test func aPlaylistOrASegmentLargerThanItsLimitEndsTheStream() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        // A segment of 2 MB where the limit is 1 MB (a segment that never ends, cut short).
        try Data(count: 2 << 20).write(to: root.appendingPathComponent("s0.m4s"))
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream())]))
        let port = try await server.start()
        let http = HTTPLoader()
        let url = URL(string: "http://127.0.0.1:\(port)/live.m3u8")!
        var reader = LiveSegmentReader(playlist: url, loader: http)
        reader.maximumSegmentBytes = 1 << 20
        await #expect(throws: LiveSegmentReader.Failure.tooLarge(what: "the segment", url: URL(string: "http://127.0.0.1:\(port)/s0.m4s")!, limit: 1 << 20)) {
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
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(stallsAfter: 0.7))]))
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
