import Foundation
import ReelCore
import ReelLoading
import ReelMediaTools
import ReelOrigin
import ReelStreaming
import ReelTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel play` of live streams whose origin misbehaves: each ends with exit 3 and one line,
/// soon, and a process waiting on a stalled origin waits without spending the processor.
/// The origins are in this process; the deadlines below are watchdogs, the assertions are on
/// what the player asked for and said.
@Suite("reel play: hostile live streams")
struct HostileLiveTests {
    /// A playlist route answering `answer(query)` and recording each request's query.
    final class PlaylistLog: Sendable {
        private let log = Mutex<[(query: String?, at: ContinuousClock.Instant)]>([])
        func record(_ query: String?) { log.withTrackedLock { $0.append((query, .now)) } }
        var queries: [String?] { log.withTrackedLock { $0.map(\.query) } }
        /// When the first request whose query contains `text` came.
        func first(containing text: String) -> ContinuousClock.Instant? {
            log.withTrackedLock { $0.first { $0.query?.contains(text) == true }?.at }
        }
    }

    static func playlistResponse(_ text: String) -> OriginResponse {
        OriginResponse(headers: [("Content-Type", "application/vnd.apple.mpegurl"), ("Cache-Control", "no-cache")], body: Data(text.utf8))
    }

    /// A server that sends delta updates (`EXT-X-SKIP`) to a client that never asked for one
    /// (no `_HLS_skip`), without an end, naming segments that are not there. The player used
    /// to reload it at once for ever (past two minutes, 70 s of processor in 120 s); now it
    /// asks for the whole playlist once more and ends.
    @Test func deltaUpdatesNobodyAskedForEndWithExitThree() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-hostile-delta")
        defer { scratch.remove() }
        let log = PlaylistLog()
        let delta = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:2\n#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=12\n"
            + "#EXT-X-MEDIA-SEQUENCE:100\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXT-X-SKIP:SKIPPED-SEGMENTS=10\n"
            + (110..<113).map { "#EXTINF:2.0,\ns\($0).m4s\n" }.joined()
        let server = OriginServer(configuration: .init(root: scratch.url, routes: [
            OriginRoute(pathPrefix: "/delta.m3u8", methods: ["GET", "HEAD"]) { request in
                log.record(request.query)
                return Self.playlistResponse(delta)
            },
        ]))
        _ = try await server.start()
        let result = try await runSeparately(reel, ["play", server.url(for: "delta.m3u8").absoluteString, "--headless", "--no-cache"])
        await server.stop()
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains("delta update (EXT-X-SKIP of 10 segments never listed)"), "\(result.stderr)")
        let queries = log.queries
        #expect(queries.count <= 4, "asked again once, not for ever: \(queries.count) requests")
        #expect(queries.allSatisfy { $0?.contains("_HLS_skip") != true }, "\(queries)")
    }

    /// An origin that offers blocking reloads and holds every one without answering, its
    /// playlist never growing: the player plays what it joined at (the last segment, by
    /// `EXT-X-START`), waits for the blocking reload three target durations and a second
    /// (spending next to nothing of the processor meanwhile), gives it up for a plain reload,
    /// finds the playlist stale and ends. On the real clock: `--clock fast`'s simulation
    /// thread polls while the stream waits, which is the test clock's cost, not the player's.
    @Test func aBlockingReloadThatIsNeverAnsweredIsWaitedForCheaplyThenTheStreamEnds() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-hostile-blocking")
        defer { scratch.remove() }
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 6, keyframeInterval: 15))
        let playlistFile = try StreamPackager.package(clip, loader: FileLoader(), format: .hlsFMP4,
                                                      into: scratch.url.appendingPathComponent("s"), segmentSeconds: 2)
        let vod = try HLSMediaPlaylist.parse(try Data(contentsOf: playlistFile))
        let initURI = try #require(vod.initSection).uri
        // The packaged segments, live: no end, blocking reloads offered, a target duration of
        // 5 s (a 16 s deadline for a blocking reload), joined 1 s before the end.
        let live = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:5\n#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES\n"
            + "#EXT-X-START:TIME-OFFSET=-1.0\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-MAP:URI=\"s/\(initURI)\"\n"
            + vod.segments.map { "#EXTINF:\($0.duration),\ns/\($0.uri)\n" }.joined()
        let log = PlaylistLog()
        let server = OriginServer(configuration: .init(root: scratch.url, routes: [
            OriginRoute(pathPrefix: "/held.m3u8", methods: ["GET", "HEAD"]) { request in
                log.record(request.query)
                // Held far past any deadline (the route's sleep is cancelled when the server stops).
                if request.queryItems["_HLS_msn"] != nil { try await Task.sleep(for: .seconds(60)) }
                return Self.playlistResponse(live)
            },
        ]))
        _ = try await server.start()
        let started = ContinuousClock.now
        let child = try Child(reel, ["play", server.url(for: "held.m3u8").absoluteString, "--headless", "--no-cache"])
        defer { child.kill(SIGKILL) }
        // Watchdog: the blocking reload comes once the listed segments were fetched.
        var held: ContinuousClock.Instant?
        while held == nil, ContinuousClock.now - started < Child.watchdog {
            held = log.first(containing: "_HLS_msn")
            try await Task.sleep(for: .milliseconds(20))
        }
        let blocking = try #require(held, "no blocking reload: \(log.queries) \(child.output)")
        // From 8 s after it (the 2 s joined are played by then, even on a loaded core) to 14 s,
        // before the 16 s deadline: the processor time the waiting process spent.
        let share = try await Self.processorShare(of: child.pid, from: blocking + .seconds(8), to: blocking + .seconds(14))
        let status = await child.exitStatus()
        await server.stop()
        // 6 s at 1 % of a core is 60 ms, 6 clock ticks: a process that polls, or reloads at
        // once, spends far more (the delta case above spent half a core); one that waits
        // spends none (0 ticks measured). Only a spin can fail this.
        if let share { #expect(share < Self.waitingShare, "the waiting process used \(share * 100) % of a core") }
        #expect(status == 3, "\(child.output)")
        #expect(child.standardError.split(separator: "\n").count == 1, "one line: \(child.standardError)")
        #expect(child.standardError.contains("has not changed for"), "\(child.standardError)")
        let queries = log.queries
        // A blocking reload given up, then plain ones. (Once, on one core beside the whole
        // suite, the origin saw two blocking requests; why is not known yet: a retry below the
        // reader or a second run of it. A reader that kept blocking would be seen many times.)
        #expect((1...2).contains(queries.filter { $0?.contains("_HLS_msn") == true }.count), "\(queries)")
        #expect(queries.last == String?.none, "a plain reload after the held one: \(queries)")
    }

    /// An origin whose files stall after their headers (the first request for each): the
    /// live stream's init section does not come. The player waits without spending the processor,
    /// then ends with one line naming what did not come.
    @Test func aLiveInitSectionThatNeverArrivesIsWaitedForCheaplyThenTheStreamEnds() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-hostile-stall")
        defer { scratch.remove() }
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 6, keyframeInterval: 15))
        let playlistFile = try StreamPackager.package(clip, loader: FileLoader(), format: .hlsFMP4,
                                                      into: scratch.url.appendingPathComponent("s"), segmentSeconds: 2)
        let vod = try HLSMediaPlaylist.parse(try Data(contentsOf: playlistFile))
        let initURI = try #require(vod.initSection).uri
        // A target duration of 4 s: the 30 s floor of the deadline, so a test process starved for seconds on
        // a loaded core still measures while the player waits.
        let live = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-MAP:URI=\"s/\(initURI)\"\n"
            + vod.segments.map { "#EXTINF:\($0.duration),\ns/\($0.uri)\n" }.joined()
        let server = OriginServer(configuration: .init(root: scratch.url, fault: .stallAfterHeaders, routes: [
            OriginRoute(pathPrefix: "/stalled.m3u8", methods: ["GET", "HEAD"]) { _ in Self.playlistResponse(live) },
        ]))
        _ = try await server.start()
        let started = ContinuousClock.now
        let child = try Child(reel, ["play", server.url(for: "stalled.m3u8").absoluteString, "--headless", "--no-cache"])
        defer { child.kill(SIGKILL) }
        // Watchdog: the init section is asked for once the playlist was read.
        while !server.statistics.requests.contains(where: { $0.path.hasSuffix(initURI) }), ContinuousClock.now - started < Child.watchdog {
            try await Task.sleep(for: .milliseconds(20))
        }
        let asked = ContinuousClock.now
        try #require(server.statistics.requests.contains { $0.path.hasSuffix(initURI) }, "\(child.output)")
        let share = try await Self.processorShare(of: child.pid, from: asked + .seconds(1), to: asked + .seconds(6))
        let status = await child.exitStatus()
        await server.stop()
        if let share { #expect(share < Self.waitingShare, "the waiting process used \(share * 100) % of a core") }
        #expect(status == 3, "\(child.output)")
        #expect(child.standardError.split(separator: "\n").count == 1, "one line: \(child.standardError)")
        // The init section's deadline is 30 s (the floor); the loader's own response timeout
        // (20 s) comes first and asks again, and this origin stalls only the first request: the
        // init section then arrives, and the playlist, which never changes, ends the stream as
        // stale. Either way the one line says what did not come.
        let said = child.standardError
        #expect(said.contains("the init section") && said.contains("of the live stream has not arrived in 30.0 s")
                || said.contains("the live playlist has not changed for"), "\(said)")
    }

    /// A live playlist that grows without bound (1.5 MB more at each request, in lines of a tag
    /// Reel does not know): the reload past 4 MiB is refused, with one line, instead of being
    /// read and parsed whole again and again.
    @Test func aPlaylistThatGrowsWithoutBoundEndsWithExitThree() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-hostile-growing")
        defer { scratch.remove() }
        let clip = try Fixtures.clip(ClipSpec(width: 160, height: 120, frameRate: 30, duration: 3, keyframeInterval: 15))
        let playlistFile = try StreamPackager.package(clip, loader: FileLoader(), format: .hlsFMP4,
                                                      into: scratch.url.appendingPathComponent("s"), segmentSeconds: 1)
        let vod = try HLSMediaPlaylist.parse(try Data(contentsOf: playlistFile))
        let initURI = try #require(vod.initSection).uri
        let head = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-MAP:URI=\"s/\(initURI)\"\n"
        let segments = vod.segments.map { "#EXTINF:\($0.duration),\ns/\($0.uri)\n" }.joined()
        let padding = "#EXT-X-REEL-PADDING:" + String(repeating: "x", count: 1_000) + "\n"
        let requests = Mutex(0)
        let server = OriginServer(configuration: .init(root: scratch.url, routes: [
            OriginRoute(pathPrefix: "/growing.m3u8", methods: ["GET", "HEAD"]) { _ in
                let count = requests.withTrackedLock { count -> Int in
                    count += 1
                    return count
                }
                return Self.playlistResponse(head + String(repeating: padding, count: 1_500 * (count - 1)) + segments)
            },
        ]))
        _ = try await server.start()
        let result = try await runSeparately(reel, ["play", server.url(for: "growing.m3u8").absoluteString, "--headless", "--no-cache"])
        await server.stop()
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains("is larger than 4194304 bytes"), "\(result.stderr)")
        #expect(requests.withTrackedLock { $0 } <= 6, "refused at the first reload past the limit")
    }

    /// utime + stime of process `pid`, in clock ticks (/proc/PID/stat, fields 14 and 15);
    /// `nil` once it is gone.
    /// The most a waiting player may use of a core while measured here. Idle, a waiting player
    /// measured 0 clock ticks (the bound is 1 %); beside two busy loops one measured
    /// 2.4 % (12 ticks in 5 s, not yet explained: a polling thread measured 3.25 %). A spin
    /// measured 48 %: this bound catches that, with room for a loaded machine, and would not
    /// catch a slow poll.
    static let waitingShare = 0.10

    /// The share of a core `pid` used from `start` to `end` (by the clock times the test actually
    /// woke at), or `nil` when it had ended by then: on one core beside the whole suite the test
    /// can wake after the stream's deadline, and a process that has ended is not spinning. Only a
    /// measurement taken while it waits is judged.
    static func processorShare(of pid: Int32, from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) async throws -> Double? {
        try await Task.sleep(until: start)
        let woke = ContinuousClock.now
        guard let before = try processorTicks(pid) else { return nil }
        try await Task.sleep(until: max(end, woke + .seconds(2)))
        let elapsed = ContinuousClock.now - woke
        guard let after = try processorTicks(pid) else { return nil }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(after - before) / Double(sysconf(Int32(_SC_CLK_TCK))) / seconds
    }

    static func processorTicks(_ pid: Int32) throws -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        // After the command's name (in parentheses, which may hold spaces): state is field 3.
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        return try #require(Int(fields[11])) + #require(Int(fields[12]))
    }
}
