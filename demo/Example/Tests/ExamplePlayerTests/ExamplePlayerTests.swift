import ExamplePlayer
import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// A file played through the fake loader on a manual clock: deterministic on any machine.
@Test func aClipPlaysThroughTheFakeLoader() async throws {
    let clock = ManualClock()
    let data = try Fixtures.data(ClipSpec(width: 64, height: 48, frameRate: 10, duration: 2))
    let loader = FakeResourceLoader(clock: clock)
    let url = URL(string: "https://fake.example/clip.mp4")!
    loader.add(data, at: url)
    let video = RecordingVideoSink()
    let player = Player(clock: clock, videoSink: video, audioSink: RecordingAudioSink())
    let driver = ManualClockDriver(clock: clock, players: [player])
    let played = await playFirstSeconds(of: PlayerItem(url: url, loader: loader), for: 1, player: player) { limit, done in
        await driver.run(upTo: limit, until: done)
    }
    #expect(played)
    #expect(video.frames.count >= 10)
    #expect(video.frames.first?.width == 64)
    player.replaceCurrentItem(with: nil)
}
