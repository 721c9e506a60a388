import Foundation
import Testing
import ReelMedia
import ReelTestSupport

/// `reel play --window` as a user runs it, on SDL's dummy video driver (no display
/// needed): GL is unavailable there, so the window falls back to the software renderer,
/// draws frames and closes after `--frames`.
@Suite struct WindowCommandTests {
    static func environment() -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["SDL_VIDEODRIVER"] = "dummy"
        env["SDL_AUDIODRIVER"] = "dummy"
        return env
    }

    @Test func playWindowFallsBackToSoftwareOnTheDummyDriverAndStopsAfterFrames() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(ClipSpec(width: 160, height: 120, duration: 2, audioCodec: nil))
        let child = try Child(reel, ["play", file.path, "--window", "--frames", "10", "--hud"], environment: Self.environment())
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        #expect(child.standardError.contains("using the software renderer"))
    }

    @Test func aWindowRunWritesItsTraceWithTheFirstFrame() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(ClipSpec(width: 160, height: 120, duration: 2, audioCodec: nil))
        let scratch = try Scratch("reel-window-trace")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        let child = try Child(reel, ["play", file.path, "--window", "--frames", "3", "--trace", trace], environment: Self.environment())
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 0, "\(child.standardError)")
        let objects = try traceObjects(trace)
        #expect(objects.contains { $0["type"] as? String == "firstFrame" })
        #expect(frames(objects).count >= 3, "\(frames(objects).count) frames")
    }

    @Test func windowAndHeadlessExcludeEachOther() async throws {
        let reel = try await ReelBinary.locate()
        let result = try await runSeparately(reel, ["play", "x.mp4", "--window", "--headless"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("choose one of --window, --terminal and --headless"))
        let feed = try await runSeparately(reel, ["feed", ".", "--window", "--renderer", "vulkan"])
        #expect(feed.status == 2)
    }
}
