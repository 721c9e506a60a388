import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// Releasing an item never waits for the network: a read stalled in the loader is
/// interrupted.
@Suite struct StalledCloseTests {
    @Test(arguments: [0, 20_000], [false, true])
    func releasingAnItemWhoseReadIsStalledReturns(stallOffset: Int, manual: Bool) async throws {
        let data = try Fixtures.data(ClipSpec(duration: 2))
        let clock: any EngineClock = manual ? ManualClock() : HostClock.shared
        let loader = FakeResourceLoader(clock: clock)
        let url = URL(string: "https://fake.example/stalled.mp4")!
        loader.add(data, at: url)
        loader.setScript(.init(fault: .stallAtOffset(Int64(stallOffset))), for: url)
        let player = Player(clock: clock, videoSink: RecordingVideoSink(), audioSink: RecordingAudioSink())
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader))
        player.play()
        try await Task.sleep(nanoseconds: 100_000_000)
        let done = ResultBox<Bool>()
        Thread { player.replaceCurrentItem(with: nil); done.set(true) }.start()
        for _ in 0..<2000 where !(done.value ?? false) { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(done.value == true, "replaceCurrentItem(nil) returned while the read was stalled")
        loader.resumeStalls()
        for _ in 0..<500 where !(done.value ?? false) { try await Task.sleep(nanoseconds: 10_000_000) }
    }
}

