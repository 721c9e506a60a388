import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// An interrupt that arrives after the demux thread already took the seek it was for (the
/// owner's `seek()` decides to interrupt, and the read it meant to stop ends by itself first)
/// fails the next read with AVERROR_EXIT. libavformat keeps that error and the end-of-file flag
/// on the context, and a read at the same position does not clear them: without `resume()`
/// clearing them, every later read failed the same way and the demux thread spun, never parking
/// (`did not settle: demux: running`, PlayerBehaviourTests' two seeks in a row under load).
@Suite struct InterruptedReadTests {
    @Test func aReadAfterAnInterruptAndAResumeGoesOn() throws {
        // Large enough (about 1 MB) that reads refill the context's buffer from the loader.
        let data = try Fixtures.data(ClipSpec(width: 640, height: 480, frameRate: 30, duration: 3, keyframeInterval: 30,
                                              videoSource: "testsrc2=size=640x480:rate=30,noise=alls=60:allf=t"))
        let loader = FakeResourceLoader()
        let url = URL(string: "https://fake.example/interrupted.mp4")!
        loader.add(data, at: url)
        let demuxer = try Demuxer(url: url, loader: loader)
        defer { demuxer.close() }
        var failedByInterrupt = 0
        var reachedTheEnd = false
        rounds: for _ in 0..<1000 {
            // An interrupt nobody waits for, as a late one is: the next read may fail…
            demuxer.bridge.interrupt()
            if (try? demuxer.readPacket()) == nil { failedByInterrupt += 1 }
            demuxer.bridge.resume()
            // …and once resumed, reading goes on: never cancelled again by the old interrupt.
            for _ in 0..<3 {
                guard try demuxer.readPacket() != nil else {
                    reachedTheEnd = true
                    break rounds
                }
            }
        }
        #expect(failedByInterrupt > 0, "the interrupts reached reads")
        #expect(reachedTheEnd)
    }
}
