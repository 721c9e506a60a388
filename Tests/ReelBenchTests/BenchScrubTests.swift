import Foundation
import ReelMedia
import ReelTestSupport
import Testing

/// `reel bench scrub` on a small clip with a 2 s GOP: the figure lines, the JSON's shape, and
/// that the frames scrubbing showed were the exact frames at their targets (not the timing:
/// that is the benchmark's business).
@Suite("reel bench scrub")
struct BenchScrubTests {
    static let clip = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 4, keyframeInterval: 60, bFrames: 3)

    @Test func printsTheFiguresBesideTheKeyframeBaselineAndShowsExactFrames() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        let child = try Child(reel, ["bench", "scrub", file.path, "--drag", "1", "--runs", "1", "--json"])
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        let last = try #require(child.standardOutput.split(separator: "\n").last.map(String.init))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(last)")
        #expect(object["previewsPerSecond"] is Double, "\(object)")
        #expect(object["settleMs"] is Double, "the release settled: \(object)")
        let baseline = try #require(object["baseline"] as? [String: Any])
        #expect(baseline["previewsPerSecond"] is Double && baseline["settleMs"] is Double, "\(baseline)")
        #expect((object["exactFrames"] as? Int ?? 0) > 0, "exact frames were shown while dragging: \(object)")
        #expect(object["inexactFrames"] as? Int == 0, "every frame shown for a target is the one at it: \(object)")
        #expect(object["targets"] as? Int == 61)

        let text = try Child(reel, ["bench", "scrub", file.path, "--drag", "0.5", "--runs", "1"])
        #expect(await text.exitStatus() == 0, "\(text.standardError)")
        for line in ["Reel scrubbing mode", "keyframe seeks", "previewsPerSecond", "goal at or over 15", "settleMs",
                     "goal at or under 100", "not the frame at their target"] {
            #expect(text.standardOutput.contains(line), "\(line): \(text.standardOutput)")
        }
    }

    @Test func aMissingFileIsAMediaError() async throws {
        let reel = try await ReelBinary.locate()
        let child = try Child(reel, ["bench", "scrub", "/nonexistent/clip.mp4"])
        #expect(await child.exitStatus() == 3)
        #expect(child.standardError.contains("no such file"))
    }
}
