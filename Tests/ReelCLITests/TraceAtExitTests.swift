import Foundation
import ReelCore
import ReelMedia
import ReelOrigin
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel play --trace` loses nothing at exit: whatever ends playback — `--frames 1`, the
/// end, a failure, SIGINT or SIGTERM — every event the player emitted before it stopped is
/// in the trace when the process is gone, the first-frame event included.
@Suite("reel play --trace at exit")
struct TraceAtExitTests {
    static let clip = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 2, keyframeInterval: 30, bFrames: 2)

    /// Runs `reel play input --headless --frames 1 --trace …` `times` times in real time
    /// (as the issue did) and checks every trace; the failures, one line each.
    static func playOneFrame(_ reel: URL, input: String, times: Int, scratch: Scratch) async throws -> [String] {
        var failures: [String] = []
        for run in 1...times {
            let trace = scratch.file("trace-\(run).jsonl")
            let result = try await runSeparately(reel, ["play", input, "--headless", "--frames", "1", "--trace", trace])
            guard result.status == 0 else {
                failures.append("run \(run): exit \(result.status): \(result.stderr)")
                continue
            }
            let objects = try traceObjects(trace)
            let types = objects.compactMap { $0["type"] as? String }
            if !types.contains("firstFrame") { failures.append("run \(run): no firstFrame in \(types)") }
            if frames(objects).count != 1 { failures.append("run \(run): \(frames(objects).count) frames, not 1") }
        }
        return failures
    }

    @Test func everyOneFrameRunOfALocalFileKeepsItsFirstFrameEvent() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        let scratch = try Scratch("reel-trace-exit")
        defer { scratch.remove() }
        let failures = try await Self.playOneFrame(reel, input: file.path, times: 20, scratch: scratch)
        #expect(failures.isEmpty, "\(failures.count) of 20 runs:\n\(failures.joined(separator: "\n"))")
    }

    @Test func everyOneFrameRunOverHTTPKeepsItsFirstFrameEvent() async throws {
        let reel = try await ReelBinary.locate()
        let served = try Scratch("reel-trace-origin")
        let scratch = try Scratch("reel-trace-exit-http")
        defer { served.remove(); scratch.remove() }
        try FileManager.default.copyItem(at: try Fixtures.clip(Self.clip), to: served.url.appendingPathComponent("clip.mp4"))
        let origin = OriginServer(configuration: .init(root: served.url, latency: .milliseconds(5)))
        _ = try await origin.start()
        let url = origin.url(for: "clip.mp4").absoluteString
        let failures: [String]
        do {
            failures = try await Self.playOneFrame(reel, input: url, times: 20, scratch: scratch)
        } catch {
            await origin.stop()
            throw error
        }
        await origin.stop()
        #expect(failures.isEmpty, "\(failures.count) of 20 runs:\n\(failures.joined(separator: "\n"))")
    }

    /// SIGINT and SIGTERM stop a headless run like its end does: the player stops, the
    /// trace is written whole, and the exit status says which signal (128 + n).
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalStopsPlaybackAndTheTraceIsComplete(_ signal: Int32) async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        let scratch = try Scratch("reel-trace-signal")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        let child = try Child(reel, ["play", file.path, "--headless", "--loop", "--trace", trace])
        // The first-frame event is flushed as soon as it is written: once it is in the
        // file, playback runs. (A file written by another process has no event to await.)
        let started = await eventually() {
            ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "").contains("\"firstFrame\"")
        }
        #expect(started, "no first frame: \(child.standardError)")
        // Let it play a few frames past the flush, then stop it.
        try await Task.sleep(for: .milliseconds(300))
        child.kill(signal)
        let status = await child.exitStatus()
        if status == nil { child.kill(SIGKILL) }
        #expect(status == 128 + signal, "\(child.standardError)")
        #expect(child.standardError.contains(signal == SIGINT ? "SIGINT" : "SIGTERM"), "\(child.standardError)")
        // Whole lines only, the first frame among them, and the frames presented after it.
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let objects = try traceObjects(trace)
        #expect(objects.contains { $0["type"] as? String == "firstFrame" })
        #expect(frames(objects).count >= 2, "\(frames(objects).count) frames")
    }

    /// A media failure (exit 3) still leaves the trace written and closed, with the error.
    @Test func aFailureLeavesTheErrorInTheTrace() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-trace-failure")
        defer { scratch.remove() }
        let garbage = scratch.file("garbage.mp4")
        try Fixtures.garbage().write(to: URL(fileURLWithPath: garbage))
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", garbage, "--headless", "--trace", trace])
        #expect(result.status == 3, "\(result.stderr)")
        let objects = try traceObjects(trace)
        #expect(objects.contains { $0["type"] as? String == "error" && ($0["message"] as? String)?.contains("garbage.mp4") == true },
                "\(objects)")
    }
}
