import Foundation
import ReelCore
import ReelStreaming
import Synchronization
import Testing

/// Live streams that misbehave, read by the segment scheduler on a simulated clock through a
/// scripted origin: each ends clearly (or is followed another way) instead of being asked for
/// ever. No socket, no file, and nothing waits on the wall clock.
@Suite struct HostileLiveStreamTests {
    static let base = URL(string: "https://origin.example/live/")!
    static let playlistURL = base.appendingPathComponent("index.m3u8")

    /// A live playlist of 1 s segments `range` (target duration 1 s), with `control` as its
    /// server control, `skipped` of them left out as a delta update does, `final` with an end.
    static func playlist(_ range: Range<Int>, control: String = "", skipped: Int = 0, final: Bool = false) -> Data {
        var text = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:1\n"
        if !control.isEmpty { text += "#EXT-X-SERVER-CONTROL:\(control)\n" }
        text += "#EXT-X-MEDIA-SEQUENCE:\(range.lowerBound)\n#EXT-X-MAP:URI=\"init.mp4\"\n"
        if skipped > 0 { text += "#EXT-X-SKIP:SKIPPED-SEGMENTS=\(skipped)\n" }
        for index in range.dropFirst(skipped) { text += "#EXTINF:1.0,\ns\(index).m4s\n" }
        if final { text += "#EXT-X-ENDLIST\n" }
        return Data(text.utf8)
    }

    /// A reader of `loader`'s playlist whose clock moves only when it waits.
    static func reader(_ loader: ScriptedLoader, tracker: LivePlaylistTracker = LivePlaylistTracker()) -> (LiveSegmentReader, SimulatedClock) {
        let clock = SimulatedClock()
        var reader = LiveSegmentReader(playlist: playlistURL, loader: loader, tracker: tracker)
        reader.now = { clock.seconds }
        reader.sleep = { seconds in
            clock.advance(seconds)
            await Task.yield()
        }
        return (reader, clock)
    }

    /// A server that answers every request for the playlist with a delta update (`EXT-X-SKIP`),
    /// though the client never asked for one (`_HLS_skip`), naming segments that are not there:
    /// the whole playlist is asked for once more, then the stream fails saying why. (It used to
    /// reload at once for ever: 3 700 requests in 10 s, half a core.)
    @Test func deltaUpdatesNobodyAskedForEndTheStreamAfterOneRetry() async throws {
        let loader = ScriptedLoader { url in
            url.lastPathComponent == "index.m3u8"
                ? .data(Self.playlist(100..<113, control: "CAN-SKIP-UNTIL=12", skipped: 10)) : .status(404)
        }
        let (reader, _) = Self.reader(loader)
        await #expect(throws: LivePlaylistTracker.Failure.unaskedDeltaUpdate(skipped: 10)) {
            _ = try await reader.stream().collect()
        }
        let asked = loader.requests
        #expect(asked.count == 2, "the playlist, then the whole playlist once more: \(asked)")
        #expect(asked.allSatisfy { $0.query == nil }, "never a delta update asked for: \(asked)")
        #expect(LivePlaylistTracker.Failure.unaskedDeltaUpdate(skipped: 10).description
            == "the live playlist is a delta update (EXT-X-SKIP of 10 segments never listed) though the whole playlist was asked for")
    }

    /// A server that offers blocking reloads (`CAN-BLOCK-RELOAD=YES`) but never answers one:
    /// the reader gives the first up after three target durations and a second (before the
    /// loader's own 20 s response timeout would, and retry), and follows the stream with
    /// plain reloads to its end, each segment once, never blocking again.
    @Test func aBlockingReloadHeldPastThreeTargetDurationsFallsBackToPlainReloads() async throws {
        let plainReloads = Mutex(0)
        let loader = ScriptedLoader { url in
            if url.query?.contains("_HLS_msn") == true { return .never }
            guard url.lastPathComponent == "index.m3u8" else { return .data(Data("\(url.lastPathComponent);".utf8)) }
            // The playlist grows by a segment at each plain reload, and ends at segment 9.
            let grown = plainReloads.withTrackedLock { count -> Int in
                defer { count += 1 }
                return min(6 + count, 10)
            }
            return .data(Self.playlist(max(0, grown - 4)..<grown, control: "CAN-BLOCK-RELOAD=YES", final: grown == 10))
        }
        let (reader, clock) = Self.reader(loader)
        let bytes = try await reader.stream().collect()
        #expect(String(decoding: bytes, as: UTF8.self) == "init.mp4;" + (3..<10).map { "s\($0).m4s;" }.joined(),
                "joined three segments back, then every segment once, to the end")
        let blocking = loader.requests.filter { $0.query?.contains("_HLS_msn") == true }
        #expect(blocking.count == 1, "one blocking reload, then none: \(loader.requests)")
        #expect(reader.blockingDeadline(targetDuration: 1) == 4)
        #expect(reader.blockingDeadline(targetDuration: 10) == 16, "never past the longest blocking wait and its second")
        #expect(clock.seconds >= 4, "the held reload was waited for 4 s of the reader's clock")
    }
}

/// Seconds that pass only when the reader waits.
final class SimulatedClock: Sendable {
    private let now = Mutex(0.0)
    var seconds: Double { now.withTrackedLock { $0 } }
    func advance(_ seconds: Double) { now.withTrackedLock { $0 += seconds } }
}

/// An origin scripted per URL: bytes, an HTTP status, or a response that never comes (until
/// the read is cancelled). It records every URL asked for.
final class ScriptedLoader: ResourceLoader, Sendable {
    enum Reply: Sendable {
        case data(Data)
        case status(Int)
        case never
    }

    private let script: @Sendable (URL) -> Reply
    private let asked = Mutex<[URL]>([])

    init(_ script: @escaping @Sendable (URL) -> Reply) {
        self.script = script
    }

    var requests: [URL] { asked.withTrackedLock { $0 } }

    func read(_ url: URL, range: ByteRange) -> ByteStream {
        asked.withTrackedLock { $0.append(url) }
        let (stream, continuation) = ByteStream.makeStream()
        switch script(url) {
        case .data(let data):
            continuation.respond(with: ContentInformation(length: Int64(data.count), isByteRangeAccessSupported: false, finalURL: url))
            continuation.yield(data)
            continuation.finish()
        case .status(let status):
            continuation.finish(throwing: status == 404 ? ResourceLoaderError.notFound(url: url)
                                : ResourceLoaderError.httpStatus(url: url, range: range, status: status))
        case .never:
            continuation.onCancel { continuation.finish(throwing: CancellationError()) }
        }
        return stream
    }

    func contentInformation(for url: URL) async throws -> ContentInformation {
        ContentInformation(length: nil, isByteRangeAccessSupported: false, finalURL: url)
    }
}
