import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel play` killed with SIGKILL in the middle of downloads never leaves a wrong
/// byte in the cache: `verify` stays clean, the replay shows exactly the frames of
/// the local file, and a warm replay fetches nothing.
@Suite("playback through the cache survives SIGKILL")
struct CrashSafetyTests {
    @Test func killedPlaybackLeavesACacheThatReplaysFrameForFrame() async throws {
        let reel = try await ReelBinary.locate()
        // About 2 MB; at 8 Mbit/s the download takes two seconds, so every kill lands mid-way.
        let spec = ClipSpec(width: 640, height: 360, frameRate: 30, duration: 4, keyframeInterval: 30, bFrames: 2, bitRateKbps: 4000)
        let local = try Fixtures.clip(spec)
        let reference = try referenceMD5s(local)
        let served = try Scratch("reel-crash-origin")
        let cache = try Scratch("reel-crash-cache")
        defer { served.remove(); cache.remove() }
        try FileManager.default.copyItem(at: local, to: served.url.appendingPathComponent("clip.mp4"))
        let origin = OriginServer(configuration: .init(root: served.url, latency: .milliseconds(20), bandwidthKbps: 8_000))
        _ = try await origin.start()
        let url = origin.url(for: "clip.mp4").absoluteString
        var random = SystemRandomNumberGenerator()
        do {
            for round in 1...4 {
                let child = try Child(reel, ["play", url, "--headless", "--cache-dir", cache.path])
                try await Task.sleep(for: .milliseconds(Int.random(in: 200...900, using: &random)))
                child.kill(SIGKILL)
                _ = await child.exitStatus()
                let verify = try await run(reel, ["cache", "verify", "--cache-dir", cache.path])
                #expect(verify.status == 0, "round \(round): \(verify.output)")
            }
            let cachedBefore = RangeCache.inspect(directory: cache.url, verifyContents: true)
            #expect(cachedBefore.isClean)

            let trace = cache.file("replay.jsonl")
            let replay = try await runSeparately(reel, ["play", url, "--headless", "--clock", "fast", "--cache-dir", cache.path, "--trace", trace])
            #expect(replay.status == 0, "\(replay.stderr)")
            #expect(frames(try traceObjects(trace)).compactMap { $0["md5"] as? String } == reference)

            origin.resetStatistics()
            let warm = try await runSeparately(reel, ["play", url, "--headless", "--clock", "fast", "--cache-dir", cache.path, "--trace", trace])
            #expect(warm.status == 0, "\(warm.stderr)")
            #expect(origin.statistics.bytesServed == 0, "a warm replay fetches nothing")
            #expect(frames(try traceObjects(trace)).compactMap { $0["md5"] as? String } == reference)
        } catch {
            await origin.stop()
            throw error
        }
        await origin.stop()
    }
}
