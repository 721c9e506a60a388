import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

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
        let result = try await runSeparately(reel, ["feed", root.path, "--headless", "--swipes", "7", "--dwell", "0.2", "--trace", trace], timeout: .seconds(60))
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
        #expect(swipes.filter { $0["preloadStage"] as? String == "prerendered" }.count >= 6,
                "with a dwell, the next page is pre-rendered: \(swipes.map { $0["preloadStage"] ?? "" })")
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
        var base: URL?
        for _ in 0..<500 where base == nil {
            if let line = server.standardOutput.split(separator: "\n").first, let url = URL(string: String(line)) { base = url }
            try await Task.sleep(for: .milliseconds(10))
        }
        let origin = try #require(base)
        let cache = try Scratch("reel-feed-cache")
        defer { cache.remove() }
        let result = try await runSeparately(reel, ["feed", origin.appendingPathComponent("api").absoluteString + "/", "--headless",
                                                    "--swipes", "3", "--dwell", "0.5", "--cache-dir", cache.path], timeout: .seconds(60))
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
}
