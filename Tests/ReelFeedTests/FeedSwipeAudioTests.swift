import Foundation
import ReelCore
@testable import ReelFeed
import ReelMedia
import ReelTestSupport
import Testing

/// A swipe leaves the page it leaves with no click: its sound fades out instead of being cut,
/// and the page swiped to starts at its own first sample.
@Suite struct FeedSwipeAudioTests {
    static func largestStep(_ samples: ArraySlice<Float>) -> Float {
        zip(samples, samples.dropFirst()).map { abs($1 - $0) }.max() ?? 0
    }

    @Test func theSoundOfThePageLeftFadesOut() async throws {
        let harness = try FeedHarness(count: 3)
        try await harness.start()
        await harness.running(upTo: seconds(0.73))
        let left = try #require(harness.session.player(at: 0))
        let sink = try #require(left.audioSink as? RecordingAudioSink)
        harness.session.move(to: 1)
        await harness.running(upTo: seconds(0.3))
        #expect(left.rate == 0)
        let written = sink.written
        let mono = stride(from: 0, to: written.count, by: 2).map { written[$0] }
        #expect(mono.count > 24_000, "\(mono.count) frames of the first page")
        let own = Self.largestStep(mono[4_800..<min(mono.count, 24_000)])
        #expect(own > 0.001, "the tone sounds")
        #expect(Self.largestStep(mono[...]) <= own * 1.05, "no step larger than the tone's own (\(own))")
        #expect(mono.last == 0, "the last sample handed over is the end of a fade to silence")
        #expect(mono.suffix(240).contains { abs($0) > own }, "and the fade is of sound, not of silence")
        await harness.session.shutdown()
    }
}
