import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Synchronization

/// A player on a manual clock, fed by a fake loader on the same clock, with
/// recording sinks: every run with the same script gives the same result.
final class PlayerHarness: @unchecked Sendable {
    let clock = ManualClock()
    let loader: FakeResourceLoader
    let video = RecordingVideoSink()
    let audio = RecordingAudioSink()
    let player: Player
    let url: URL
    let driver: ManualClockDriver
    private let log = Mutex<[PlayerEvent]>([])

    init(data: Data, name: String = "clip.mp4", script: FakeResourceLoader.Script = .instant, withAudio: Bool = true) {
        loader = FakeResourceLoader(clock: clock, script: script)
        url = URL(string: "https://fake.example/\(name)")!
        loader.add(data, at: url)
        let player = Player(clock: clock, videoSink: video, audioSink: withAudio ? audio : nil)
        self.player = player
        driver = ManualClockDriver(clock: clock, players: [player])
        player.addEventObserver { [weak self] event in
            if case .framePresented = event { return }
            self?.log.withTrackedLock { $0.append(event) }
        }
    }

    var events: [PlayerEvent] { log.withTrackedLock { $0 } }

    func load(startTime: MediaTime? = nil) {
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader, startTime: startTime))
    }

    /// Runs the clock action by action, the player settled before each, until `condition`
    /// holds or `limit` of clock time passed.
    @discardableResult
    func run(upTo limit: MediaTime, until condition: () -> Bool = { false }) async -> Bool {
        await driver.run(upTo: limit, until: condition)
    }

    /// Runs a seek to completion on the manual clock and returns its result.
    func seek(to time: MediaTime, before: MediaTime = .zero, after: MediaTime = .zero) async -> Bool {
        let result = ResultBox<Bool>()
        player.seek(to: time, toleranceBefore: before, toleranceAfter: after) { result.set($0) }
        await run(upTo: seconds(10)) { result.value != nil }
        return result.value ?? false
    }

    var ended: Bool {
        events.contains { if case .ended = $0 { return true } else { return false } }
    }

    var failure: MediaError? {
        for event in events { if case .failed(let error) = event { return error } }
        return nil
    }
}

final class ResultBox<T: Sendable>: Sendable {
    private let stored = Mutex<T?>(nil)
    func set(_ value: T) { stored.withTrackedLock { $0 = value } }
    var value: T? { stored.withTrackedLock { $0 } }
}

func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1_000_000) }
func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

/// The reference: every frame of the file decoded in order, no pipeline.
func referenceFrames(_ url: URL) throws -> [(pts: MediaTime, md5: String)] {
    var frames: [(MediaTime, String)] = []
    try SequentialDecoder.decodeVideo(url, loader: FileLoaderForTests(), threads: 1) { frame in
        frames.append((frame.pts, frame.md5()))
        return true
    }
    return frames
}
