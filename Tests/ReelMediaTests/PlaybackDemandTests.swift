import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing

/// Playback tells the preload coordinator when it needs the network, so preloads yield.
@Suite struct PlaybackDemandTests {
    @Test func openingNeedsTheConnectionUntilTheFirstFrameAndRunningLowPausesPreloads() async throws {
        let data = try Fixtures.data(ClipSpec(duration: 4, keyframeInterval: 30))
        // Slow enough that the queue stays below the low-water mark for a while.
        let harness = PlayerHarness(data: data, script: .init(latency: ms(30), bytesPerSecond: 60_000, chunkSize: 8 * 1024))
        let coordinator = PlaybackLoadCoordinator()
        harness.player.demandObserver = coordinator
        harness.load()
        #expect(coordinator.isPlaybackLoading, "opening needs the connection")
        harness.player.play()
        await harness.run(upTo: ms(500))
        #expect(harness.video.frames.count > 0)
        #expect(coordinator.isPlaybackLoading, "still below the low-water mark on a slow link")
        // Once everything has arrived the demand ends.
        await harness.run(upTo: seconds(10)) { !coordinator.isPlaybackLoading }
        #expect(!coordinator.isPlaybackLoading)
        harness.player.replaceCurrentItem(with: nil)
        #expect(coordinator.activeLoadCount == 0)
    }

    @Test func aSeekNeedsTheConnectionUntilItLands() async throws {
        let data = try Fixtures.data(ClipSpec(duration: 3))
        let harness = PlayerHarness(data: data)
        let coordinator = PlaybackLoadCoordinator()
        harness.player.demandObserver = coordinator
        harness.load()
        await harness.run(upTo: seconds(1)) { harness.player.status == .readyToPlay && !coordinator.isPlaybackLoading }
        #expect(!coordinator.isPlaybackLoading)
        let done = ResultBox<Bool>()
        harness.player.seek(to: seconds(2), toleranceBefore: .zero, toleranceAfter: .zero) { done.set($0) }
        #expect(coordinator.isPlaybackLoading)
        await harness.run(upTo: seconds(1)) { done.value != nil }
        await harness.run(upTo: ms(10))
        #expect(!coordinator.isPlaybackLoading)
    }
}
