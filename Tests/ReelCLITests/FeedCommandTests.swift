import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to its end, then waits (boundedly) until `complete` holds for what it
/// wrote: a pipe can deliver its last bytes after the exit is seen. `nil` status: it
/// did not end within `timeout` (and was killed).
func runToEnd(_ executable: URL, _ arguments: [String], timeout: Duration = Child.watchdog,
              until complete: @escaping @Sendable (_ status: Int32, _ stdout: String, _ stderr: String) -> Bool) async throws
    -> (status: Int32?, signalled: Bool, stdout: String, stderr: String) {
    let child = try Child(executable, arguments)
    guard let status = await child.exitStatus(timeout: timeout) else {
        child.kill(SIGKILL)
        _ = await child.exitStatus()
        return (nil, false, child.standardOutput, child.standardError)
    }
    _ = await eventually() { complete(status, child.standardOutput, child.standardError) }
    return (status, child.end?.signalled == true, child.standardOutput, child.standardError)
}

/// `reel feed … --headless`: a scripted session over a directory and over a shaped origin.
@Suite("reel feed --headless")
struct FeedCommandTests {
    static func makeFeed(_ root: Scratch) throws {
        let clip = try Data(contentsOf: Fixtures.clip(ClipSpec(width: 96, height: 160, duration: 1.5, audioCodec: .aac)))
        for i in 1...4 { try clip.write(to: root.url.appendingPathComponent("clip\(i).mp4")) }
        let post = root.url.appendingPathComponent("post")
        try FileManager.default.createDirectory(at: post, withIntermediateDirectories: true)
        try ClipEncoder.encodeImage(source: "color=c=yellow", width: 800, height: 600, to: post.appendingPathComponent("1.png"))
    }

    static func swipeLines(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func aDirectoryFeedSwipesThroughPreRenderedPagesAndWraps() async throws {
        let reel = try await ReelBinary.locate()
        let root = try Scratch("reel-feed-dir")
        defer { root.remove() }
        try Self.makeFeed(root)
        let trace = root.file("trace.jsonl")
        let result = try await runSeparately(reel, ["feed", root.path, "--headless", "--swipes", "7", "--dwell", "1", "--settle", "--trace", trace])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Self.swipeLines(result.stdout)
        let swipes = lines.filter { $0["type"] as? String == "swipe" }
        #expect(swipes.map { $0["index"] as? Int } == [1, 2, 3, 4, 0, 1, 2], "five items, wrapping after the last")
        for swipe in swipes {
            for key in ["swipeToFirstFrameMs", "preloadStage", "livePlayers", "liveDecoders", "rssBytes"] {
                #expect(swipe[key] != nil, "\(key) missing in \(swipe)")
            }
            #expect((swipe["livePlayers"] as? Int ?? 9) <= 3)
            #expect((swipe["liveDecoders"] as? Int ?? 9) <= 3)
            #expect((swipe["rssBytes"] as? Int ?? 0) > 0)
        }
        #expect(swipes.allSatisfy { $0["preloadStage"] as? String == "prerendered" },
                "settled before each swipe, the next page is pre-rendered: \(swipes.map { $0["preloadStage"] ?? "" })")
        let summary = try #require(lines.last)
        #expect(summary["type"] as? String == "summary")
        #expect(summary["swipes"] as? Int == 7)
        let events = try traceObjects(trace)
        #expect(events.contains { $0["type"] as? String == "firstFrame" }, "the players' own events are in the trace")
    }

    @Test func aFeedAPIOverAShapedOriginAndBadSources() async throws {
        let reel = try await ReelBinary.locate()
        let root = try Scratch("reel-feed-api")
        defer { root.remove() }
        try Self.makeFeed(root)
        let server = try Child(reel, ["serve", root.path, "--port", "0", "--rtt-ms", "20", "--kbps", "20000"])
        defer { server.kill(SIGKILL) }
        let base = try await servedURL(server, attempts: 500)
        let origin = try #require(base)
        let cache = try Scratch("reel-feed-cache")
        defer { cache.remove() }
        let result = try await runSeparately(reel, ["feed", origin.appendingPathComponent("api").absoluteString + "/", "--headless",
                                                    "--swipes", "3", "--dwell", "0.5", "--settle", "--cache-dir", cache.path])
        #expect(result.status == 0, "\(result.stderr)")
        let swipes = Self.swipeLines(result.stdout).filter { $0["type"] as? String == "swipe" }
        #expect(swipes.count == 3)
        #expect(swipes.allSatisfy { $0["preloadStage"] as? String == "prerendered" }, "\(swipes)")

        let missing = try await runSeparately(reel, ["feed", root.file("nope"), "--headless"])
        #expect(missing.status == 3)
        #expect(missing.stderr.split(separator: "\n").count == 1, "one line: \(missing.stderr)")
        let empty = try Scratch("reel-feed-empty")
        defer { empty.remove() }
        let none = try await runSeparately(reel, ["feed", empty.path, "--headless"])
        #expect(none.status == 3, "\(none.stderr)")
        let usage = try await runSeparately(reel, ["feed", root.path, "--headless", "--swipes", "-1"])
        #expect(usage.status == 2)
    }

    /// Four good clips and two files no demuxer accepts: one sorted first, one in the middle.
    static func makeFeedWithBadFiles(_ root: Scratch) throws {
        let clip = try Data(contentsOf: Fixtures.clip(ClipSpec(width: 96, height: 160, duration: 1.5, audioCodec: .aac)))
        for name in ["b-clip.mp4", "c-clip.mp4", "e-clip.mp4", "f-clip.mp4"] {
            try clip.write(to: root.url.appendingPathComponent(name))
        }
        try Fixtures.garbage(seed: 7).write(to: root.url.appendingPathComponent("a-broken.mp4"))
        try Fixtures.garbage(seed: 8).write(to: root.url.appendingPathComponent("d-broken.mkv"))
    }

    @Test func badFilesFirstAndInTheMiddleArePagesThatFailAndTheFeedGoesOn() async throws {
        let reel = try await ReelBinary.locate()
        let root = try Scratch("reel-feed-bad")
        defer { root.remove() }
        try Self.makeFeedWithBadFiles(root)
        let trace = root.file("trace.jsonl")
        // Items: 0 a-broken, 1 b, 2 c, 3 d-broken, 4 e, 5 f; seven swipes wrap to 1.
        let result = try await runToEnd(reel, ["feed", root.path, "--headless", "--swipes", "7", "--dwell", "0.1", "--trace", trace]) {
            _, stdout, _ in stdout.contains("\"type\":\"summary\"") }
        #expect(result.status == 0, "the feed ran: \(result.stderr)")
        let lines = Self.swipeLines(result.stdout)
        let failed = lines.filter { $0["type"] as? String == "failed" }
        #expect(failed.map { $0["index"] as? Int } == [0, 3, 0], "the bad pages, each time the feed lands on them: \(result.stdout)")
        for line in failed {
            let message = line["message"] as? String ?? ""
            #expect(!message.isEmpty)
            #expect(!message.contains("after 30 s") && !message.contains("stuck"),
                    "the player's own failure, not the watchdog's: \(message)")
        }
        let swipes = lines.filter { $0["type"] as? String == "swipe" }
        #expect(swipes.map { $0["index"] as? Int } == [1, 2, 4, 5, 1], "the good pages show: \(result.stdout)")
        let summary = try #require(lines.last)
        #expect(summary["type"] as? String == "summary")
        #expect(summary["failed"] as? Int == 3)
        #expect(summary["swipes"] as? Int == 5)
        let events = try traceObjects(trace)
        #expect(events.filter { $0["type"] as? String == "failed" }.count == 3, "the trace has the failed pages too")
    }

    @Test func aFeedWhoseEveryItemFailsExitsThree() async throws {
        let reel = try await ReelBinary.locate()
        let root = try Scratch("reel-feed-all-bad")
        defer { root.remove() }
        for i in 0..<2 { try Fixtures.garbage(seed: UInt32(20 + i)).write(to: root.url.appendingPathComponent("bad\(i).mp4")) }
        let result = try await runToEnd(reel, ["feed", root.path, "--headless", "--swipes", "3", "--dwell", "0"]) {
            _, stdout, stderr in stdout.contains("\"type\":\"summary\"") && stderr.hasSuffix("\n") }
        #expect(result.status == 3, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains("failed"))
        let failed = Self.swipeLines(result.stdout).filter { $0["type"] as? String == "failed" }
        #expect(failed.map { $0["index"] as? Int } == [0, 1, 0, 1], "every page was tried: \(result.stdout)")
    }

    @Test(.enabled(if: TmuxPane.isAvailable)) func theTerminalFeedShowsAFailedPageAndSwipesOn() async throws {
        let reel = try await ReelBinary.locate()
        let root = try Scratch("reel-feed-term-bad")
        defer { root.remove() }
        try Self.makeFeedWithBadFiles(root)
        let pane = TmuxPane()
        let command = "SDL_AUDIODRIVER=dummy '\(reel.path)' feed '\(root.path)' --terminal --no-cache; echo REEL-EXIT=$?; sleep 60"
        try await pane.start(columns: 80, rows: 24, command: command)
        do {
            // The first page is broken: it says so, and the feed is there to swipe.
            let broken = try await pane.waitFor { $0.contains("cannot play") }
            #expect(broken.contains("cannot play"), "\(broken)")
            #expect(broken.contains("a broken"), "the page's title: \(broken)")
            #expect(broken.contains("1/6"), "\(broken)")
            try await pane.send("Down")
            let next = try await pane.waitFor { $0.contains("2/6") && $0.contains("b clip") }
            #expect(next.contains("b clip") && !next.contains("cannot play"), "\(next)")
            try await pane.send("q")
            let after = try await pane.waitFor { $0.contains("REEL-EXIT=") }
            #expect(after.contains("REEL-EXIT=0"), "\(after)")
        } catch {
            await pane.kill()
            throw error
        }
        await pane.kill()
    }
}
