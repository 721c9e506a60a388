import Foundation
import ReelTestSupport
import Testing

/// `reel demo --prepare-only` and `--headless` over a tiny library.
@Suite("reel demo")
struct DemoCommandTests {
    @Test func prepareOnlyPrintsTheManifestAndHeadlessPlaysTheFeed() async throws {
        let reel = try await ReelBinary.locate()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-demo-cli-\(UUID().uuidString)")
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("reel-demo-cache-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: cache)
        }
        let prepared = try Child(reel, ["demo", "--prepare-only", "--tiny", "--demo-dir", directory.path],
                                 environment: ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": cache.path]) { $1 })
        let status = await prepared.exitStatus()
        if status == nil { prepared.kill(SIGKILL) }
        #expect(status == 0, "\(prepared.standardError)")
        #expect(prepared.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == directory.appendingPathComponent("manifest.json").path)
        #expect(!prepared.standardError.contains("█"), "no progress bar when stderr is not a terminal")

        // Through every item of the tiny feed, the last of them the live one.
        let played = try Child(reel, ["demo", "--headless", "--tiny", "--demo-dir", directory.path, "--swipes", "5", "--dwell", "0.3",
                                      "--rtt-ms", "0", "--cache-dir", cache.path, "--verbose"])
        let playedStatus = await played.exitStatus()
        if playedStatus == nil { played.kill(SIGKILL) }
        #expect(playedStatus == 0, "\(played.standardError)")
        let objects = played.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.map { $0["type"] as? String ?? "" } == ["open"] + Array(repeating: "swipe", count: 5) + ["summary"],
                "\(played.standardOutput)")
        #expect(objects.last?["failed"] as? Int == 0, "\(played.standardOutput)")
        #expect(played.standardError.contains("demo feed at http://127.0.0.1:"))
        // The adaptive stream and the live one (published live by the demo's origin) both
        // play through Reel's segment scheduler.
        for path in ["/streams/streamed/master.m3u8", "/live/streams/live/master.m3u8"] {
            #expect(played.standardError.contains("\(path): Reel's segment scheduler reads it"), "\(path)")
        }

        // The default command runs anywhere: with no display and no terminal it plays headless.
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        let anywhere = try Child(reel, ["demo", "--tiny", "--demo-dir", directory.path, "--swipes", "1", "--dwell", "0.1",
                                        "--rtt-ms", "0", "--cache-dir", cache.path], environment: environment)
        let anywhereStatus = await anywhere.exitStatus()
        if anywhereStatus == nil { anywhere.kill(SIGKILL) }
        #expect(anywhereStatus == 0, "\(anywhere.standardError)")
        #expect(anywhere.standardError.contains("playing the demo headless"))
        #expect(anywhere.standardOutput.contains("\"type\":\"summary\""))
        let play = try Child(reel, ["play", "x.mp4"], environment: environment)
        #expect(await play.exitStatus() == 2, "play still asks: \(play.standardError)")
    }
}
