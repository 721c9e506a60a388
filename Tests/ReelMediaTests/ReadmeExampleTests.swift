import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelTestSupport

/// The example test printed in the README, verbatim, so the README stays true.
@Test func aStarvingLoaderBuffersThenResumes() async throws {
    let clock = ManualClock()
    let data = try Fixtures.data(ClipSpec(duration: 4))      // made with libavcodec, no files in git
    let loader = FakeResourceLoader(clock: clock)
    let url = URL(string: "https://fake.example/clip.mp4")!
    loader.add(data, at: url)
    loader.setScript(.init(fault: .stallAtOffset(Int64(data.count / 2))), for: url)
    let player = Player(clock: clock, videoSink: RecordingVideoSink(), audioSink: RecordingAudioSink())
    let driver = ManualClockDriver(clock: clock, players: [player])
    player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader))
    player.play()
    #expect(await driver.run(upTo: .seconds(6)) { player.timeControlStatus == .waitingToPlay(.buffering) })
    loader.resumeStalls()
    #expect(await driver.run(upTo: .seconds(1)) { player.timeControlStatus == .playing })
}
