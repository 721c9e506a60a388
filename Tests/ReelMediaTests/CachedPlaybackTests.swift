import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing

/// Playback through the range cache, in real time, over a fake origin.
@Suite struct CachedPlaybackTests {
    @Test(arguments: [true, false])
    func moovAtTheEndPlaysThroughTheCacheWhileTheHeadStillDownloads(_ reportsLength: Bool) async throws {
        let file = try Fixtures.clip(ClipSpec(width: 320, height: 240, duration: 3, container: .mp4MoovAtEnd, bitRateKbps: 1200))
        let data = try Data(contentsOf: file)
        let reference = try referenceFrames(file).map(\.md5)
        // A 20 ms, 20 Mbit/s link: the player's seek to the index lands while the head still downloads.
        let origin = FakeResourceLoader(clock: HostClock.shared, script: .init(latency: MediaTime(value: 20, timescale: 1000), bytesPerSecond: 2_500_000, chunkSize: 16 * 1024))
        let url = URL(string: "https://origin.example/clip.mp4")!
        origin.add(data, at: url, reportsLength: reportsLength)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-cached-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try RangeCache(configuration: .init(directory: directory))
        defer { cache.close() }
        let loader = CachingLoader(upstream: origin, cache: cache)
        let sink = RecordingVideoSink()
        let player = Player(clock: HostClock.shared, videoSink: sink, audioSink: NullAudioSink())
        let ended = ResultBox<Bool>()
        player.addEventObserver { event in
            switch event {
            case .ended: ended.set(true)
            case .failed: ended.set(false)
            default: break
            }
        }
        player.defaultRate = 2
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader))
        player.play()
        // A watchdog, not a performance bound: a loaded machine may take minutes.
        let deadline = Date().addingTimeInterval(900)
        while ended.value == nil, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let statistics = player.statistics
        let state = "\(player.status), \(player.timeControlStatus), at \(player.currentTime.seconds) s, loaded \(player.loadedTimeRanges), \(statistics)"
        player.replaceCurrentItem(with: nil)
        #expect(ended.value == true, "played to the end (reports length: \(reportsLength)); \(state)")
        // Real time on a busy machine may drop late frames; what is shown is the file's frames, in order.
        let shown = sink.frames.map(\.md5)
        var cursor = reference.startIndex
        for md5 in shown {
            guard let found = reference[cursor...].firstIndex(of: md5) else {
                Issue.record("a frame that is not the file's, or out of order")
                break
            }
            cursor = found + 1
        }
        // Every frame of the file was either shown or dropped as late, however slow the machine.
        #expect(!shown.isEmpty)
        #expect(statistics.presentedFrames + statistics.droppedFrames == reference.count, "\(statistics)")
    }
}
