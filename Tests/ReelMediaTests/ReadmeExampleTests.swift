import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// The example test printed in the README, verbatim, so the README stays true.
@Test func aStarvingLoaderBuffersThenResumes() throws {
    let clock = ManualClock()
    let data = try Fixtures.data(ClipSpec(duration: 4))      // made with libavcodec, no files in git
    let loader = FakeResourceLoader(clock: clock)
    let url = URL(string: "https://fake.example/clip.mp4")!
    loader.add(data, at: url)
    loader.setScript(.init(fault: .stallAtOffset(Int64(data.count / 2))), for: url)
    let player = Player(clock: clock, videoSink: RecordingVideoSink(), audioSink: RecordingAudioSink())
    player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader))
    player.play()
    for _ in 0..<6000 where player.timeControlStatus != .waitingToPlay(.buffering) {
        player.waitUntilSettled()
        clock.advance(by: MediaTime(value: 1, timescale: 1000))
    }
    #expect(player.timeControlStatus == .waitingToPlay(.buffering))
    loader.resumeStalls()
    for _ in 0..<1000 where player.timeControlStatus != .playing {
        player.waitUntilSettled()
        clock.advance(by: MediaTime(value: 1, timescale: 1000))
    }
    #expect(player.timeControlStatus == .playing)
}
