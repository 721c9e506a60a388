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
        reader.arrivalDeadlines = true
        reader.now = { clock.seconds }
        reader.sleep = { seconds in
            clock.advance(seconds)
            await Task.yield()
        }
        return (reader, clock)
    }

    /// A watchdog on the reader's clock that reaches its deadline only while a read the origin
    /// never answers is under way: transfers that arrive always win their race, whatever the
    /// order the tasks run in.
    static func watchdog(_ loader: ScriptedLoader, _ clock: SimulatedClock) -> @Sendable (Double) async throws -> Void {
        { seconds in
            try await loader.untilStuck()
            clock.advance(seconds)
        }
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
        var (reader, clock) = Self.reader(loader)
        reader.watchdog = Self.watchdog(loader, clock)
        let bytes = try await reader.stream().collect()
        #expect(String(decoding: bytes, as: UTF8.self) == "init.mp4;" + (3..<10).map { "s\($0).m4s;" }.joined(),
                "joined three segments back, then every segment once, to the end")
        let blocking = loader.requests.filter { $0.query?.contains("_HLS_msn") == true }
        #expect(blocking.count == 1, "one blocking reload, then none: \(loader.requests)")
        #expect(reader.blockingDeadline(targetDuration: 1) == 4)
        #expect(reader.blockingDeadline(targetDuration: 10) == 16, "never past the longest blocking wait and its second")
        #expect(clock.seconds >= 4, "the held reload was waited for 4 s of the reader's clock")
    }

    /// A low-latency server whose part list lies: the segment being written has three parts in
    /// one playlist and one in the next, every reload (blocking ones too) answered at once.
    /// Nothing newer is ever listed, so the reader waits half a target duration between
    /// reloads and ends the stream as stale after three target durations, having fetched
    /// nothing twice.
    @Test func aPartListThatShrinksAndGrowsBackEndsTheStreamAsStale() async throws {
        let reloads = Mutex(0)
        let loader = ScriptedLoader { url in
            guard url.lastPathComponent == "index.m3u8" else { return .data(Data("\(url.lastPathComponent);".utf8)) }
            let count = reloads.withTrackedLock { count -> Int in
                count += 1
                return count
            }
            // A watchdog: a reader reloading for ever fails here instead of hanging the test.
            if count > 200 { return .status(500) }
            var text = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:1\n#EXT-X-PART-INF:PART-TARGET=0.25\n"
                + "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=0.75\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-MAP:URI=\"init.mp4\"\n"
            text += (0..<4).map { "#EXTINF:1.0,\ns\($0).m4s\n" }.joined()
            for part in 0..<(count.isMultiple(of: 2) ? 1 : 3) {
                text += "#EXT-X-PART:DURATION=0.25,URI=\"p4.\(part).m4s\"\(part == 0 ? ",INDEPENDENT=YES" : "")\n"
            }
            return .data(Data(text.utf8))
        }
        let (reader, clock) = Self.reader(loader)
        var sent = Data()
        do {
            for try await chunk in reader.stream() { sent.append(chunk) }
            Issue.record("the stream ended without a failure")
        } catch let failure as LivePlaylistTracker.Failure {
            guard case .stale(let seconds) = failure else { Issue.record("\(failure)"); return }
            #expect(seconds >= 3, "three target durations without anything newer")
        }
        let fetched = String(decoding: sent, as: UTF8.self).split(separator: ";")
        #expect(Set(fetched).count == fetched.count, "nothing fetched twice: \(fetched)")
        let asked = reloads.withTrackedLock { $0 }
        #expect(asked <= 10, "a reload each half target duration, not at once: \(asked)")
        #expect(clock.seconds < 5, "ended within a few target durations of the reader's clock: \(clock.seconds)")
    }

    /// A live segment whose response never comes (or never ends): the reader gives it up after
    /// three target durations and a second, or 30 s when that is longer,
    /// and ends the stream saying which, with what came before it sent.
    @Test func aLiveSegmentThatNeverArrivesEndsTheStream() async throws {
        let loader = ScriptedLoader { url in
            switch url.lastPathComponent {
            case "index.m3u8": .data(Self.playlist(0..<6))
            case "s5.m4s": .never
            default: .data(Data("\(url.lastPathComponent);".utf8))
            }
        }
        var (reader, clock) = Self.reader(loader)
        reader.watchdog = Self.watchdog(loader, clock)
        var sent = Data()
        let stuck = Self.base.appendingPathComponent("s5.m4s")
        await #expect(throws: LiveSegmentReader.Failure.notArrived(what: "the segment", url: stuck, seconds: 30)) {
            for try await chunk in reader.stream() { sent.append(chunk) }
        }
        #expect(String(decoding: sent, as: UTF8.self) == "init.mp4;s3.m4s;s4.m4s;", "what arrived before it went out")
        #expect(LiveSegmentReader.Failure.notArrived(what: "the segment", url: stuck, seconds: 30).description
            == "the segment https://origin.example/live/s5.m4s of the live stream has not arrived in 30.0 s")
        #expect(reader.liveArrivalDeadline(targetDuration: 6) == 30, "never under the floor: a starved machine is not a stalled origin")
        #expect(reader.liveArrivalDeadline(targetDuration: 12) == 37)
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

    /// Reads under way that will never be answered.
    private let stuck = Mutex(0)

    /// Returns once a read that will never be answered is under way (throws when cancelled).
    func untilStuck() async throws {
        while stuck.withTrackedLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(1)) }
    }

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
            stuck.withTrackedLock { $0 += 1 }
            continuation.onCancel { [self] in
                stuck.withTrackedLock { $0 -= 1 }
                continuation.finish(throwing: CancellationError())
            }
        }
        return stream
    }

    func contentInformation(for url: URL) async throws -> ContentInformation {
        ContentInformation(length: nil, isByteRangeAccessSupported: false, finalURL: url)
    }
}
