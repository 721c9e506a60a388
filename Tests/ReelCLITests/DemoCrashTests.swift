import Foundation
import ReelCore
import ReelLoading
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The demo feed's first-run encode killed half way (after three of six items), and killed at the manifest's commit: the
/// next run makes the library again and plays; nothing half-made is ever taken as made, and the
/// demo folder inside a cache directory is part of its layout (`reel cache verify` stays clean).
@Suite("reel demo killed while it makes its feed")
struct DemoCrashTests {
    static func prepare(_ reel: URL, _ directory: String, environment: [String: String]? = nil) throws -> Child {
        try Child(reel, ["demo", "--prepare-only", "--tiny", "--demo-dir", directory], environment: environment)
    }

    @Test func aKilledFirstRunIsMadeAgainByTheNext() async throws {
        let reel = try await ReelBinary.locate()
        let cache = try Scratch("reel-demo-crash")
        let logs = try Scratch("reel-demo-crash-points")
        defer { cache.remove(); logs.remove() }
        let directory = cache.url.appendingPathComponent(RangeCache.demoFeedFolder).path
        let manifest = directory + "/manifest.json"

        // Half way: killed once three of its six items are made (a crash point between items).
        var environment = ProcessInfo.processInfo.environment
        environment["REEL_CRASH_MATCH"] = "after demo item"
        environment["REEL_CRASH_AT"] = "3"
        environment["REEL_CRASH_LOG"] = logs.file("half")
        let half = try Self.prepare(reel, directory, environment: environment)
        #expect(await half.exitStatus() == SIGKILL, "\(half.output)")
        let made = try String(contentsOfFile: logs.file("half"), encoding: .utf8)
        #expect(made.split(separator: "\n").count == 3 && !made.contains("rename"), "\(made)")
        #expect(!FileManager.default.fileExists(atPath: manifest), "no manifest until every file is made")

        // At its commit: everything made, the manifest synced but not renamed into place.
        environment["REEL_CRASH_MATCH"] = "rename "
        environment["REEL_CRASH_AT"] = "1"
        environment["REEL_CRASH_LOG"] = logs.file("points")
        let atCommit = try Self.prepare(reel, directory, environment: environment)
        let status = await atCommit.exitStatus()
        #expect(status == SIGKILL, "\(atCommit.output)")
        let points = try String(contentsOfFile: logs.file("points"), encoding: .utf8)
        #expect(points.contains(" rename " + manifest), "\(points)")
        #expect(!FileManager.default.fileExists(atPath: manifest))
        #expect(FileManager.default.fileExists(atPath: manifest + ".tmp"), "the synced manifest beside its name")

        let verify = try await run(reel, ["cache", "verify", "--cache-dir", cache.path])
        #expect(verify.status == 0, "the demo folder is part of the cache directory's layout: \(verify.output)")

        let again = try await runSeparately(reel, ["demo", "--prepare-only", "--tiny", "--demo-dir", directory])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == manifest)
        #expect(!FileManager.default.fileExists(atPath: manifest + ".tmp"))
        let data = try Data(contentsOf: URL(fileURLWithPath: manifest))
        let items = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])["items"] as? [[String: Any]]
        #expect(items?.count == 6)
        for item in items ?? [] {
            guard let video = item["video"] as? String, !video.hasPrefix("live/") else { continue }
            #expect(FileManager.default.fileExists(atPath: directory + "/" + video), "\(video)")
        }
        let played = try await runSeparately(reel, ["demo", "--tiny", "--demo-dir", directory, "--headless", "--swipes", "2",
                                                    "--dwell", "0.2", "--cache-dir", cache.path])
        #expect(played.status == 0, "the library made again plays: \(played.stderr)")
    }
}
