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
        let status = await prepared.exitStatus(timeout: .seconds(120))
        if status == nil { prepared.kill(SIGKILL) }
        #expect(status == 0, "\(prepared.standardError)")
        #expect(prepared.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == directory.appendingPathComponent("manifest.json").path)
        #expect(!prepared.standardError.contains("█"), "no progress bar when stderr is not a terminal")

        let played = try Child(reel, ["demo", "--headless", "--tiny", "--demo-dir", directory.path, "--swipes", "2", "--frames", "3", "--rtt-ms", "0"],
                               environment: ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": cache.path]) { $1 })
        let playedStatus = await played.exitStatus(timeout: .seconds(120))
        if playedStatus == nil { played.kill(SIGKILL) }
        #expect(playedStatus == 0, "\(played.standardError)")
        let lines = played.standardOutput.split(separator: "\n")
        #expect(lines.first?.hasPrefix("demo feed: 4 items") == true, "\(played.standardOutput)")
        #expect(lines.filter { $0.contains("first frame") }.count == 2, "\(played.standardOutput)")
    }
}
