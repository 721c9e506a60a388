import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import ReelLoading
import Synchronization

/// A video sink that keeps what it was shown, hashing frames only while asked to.
final class StressSink: VideoSink, Sendable {
    let hashing = Atomic<Bool>(false)
    let shown = Mutex<[(pts: MediaTime, md5: String)]>([])

    func present(_ frame: VideoFrame, presentation: Presentation) {
        guard hashing.load(ordering: .relaxed) else { return }
        let md5 = frame.md5()
        shown.withTrackedLock { $0.append((frame.pts, md5)) }
    }
}

/// A small, fast random generator with a seed (SplitMix64), one per thread.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// Runs `body` on `count` threads of their own and waits for all of them without blocking
/// the concurrency pool.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
}

enum StressMedia {
    static let clip = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 1.5, keyframeInterval: 15)
    static let other = ClipSpec(width: 128, height: 96, frameRate: 25, duration: 1, keyframeInterval: 10, container: .mp4MoovAtEnd)
    static func url(_ name: String) -> URL { URL(string: "https://stress.example/\(name)")! }

    static func loader() throws -> FakeResourceLoader {
        let loader = FakeResourceLoader(clock: HostClock.shared, script: .init(
            latency: MediaTime(value: 3, timescale: 1000), bytesPerSecond: 4_000_000, chunkSize: 16 * 1024))
        let data = try Fixtures.data(clip)
        loader.add(data, at: url("a.mp4"))
        loader.add(try Fixtures.data(other), at: url("b.mp4"))
        loader.add(Fixtures.garbage(), at: url("garbage.mp4"))
        loader.add(data, at: url("stall.mp4"))
        loader.setScript(.init(fault: .stallAtOffset(0)), for: url("stall.mp4"))
        return loader
    }
}

enum CommandStress {
    /// Eight threads call every command at random on one player for `seconds`, then the same
    /// player plays a clip normally, and what it shows is compared with a plain decode.
    static func run(seconds: Double) async throws -> StressResult {
        // A loader for each phase: the fake keeps a log of every request, which is not the
        // player's memory.
        var loader = try StressMedia.loader()
        let sink = StressSink()
        let player = Player(clock: HostClock.shared, videoSink: sink, audioSink: NullAudioSink())
        let ended = Atomic<Bool>(false)
        player.addEventObserver { event in
            if case .ended = event { ended.store(true, ordering: .relaxed) }
        }
        // Warm up (first use of FFmpeg, the fixtures, the reference decode), then measure.
        let reference = try referenceFrames()
        player.replaceCurrentItem(with: PlayerItem(url: StressMedia.url("a.mp4"), loader: loader))
        player.play()
        for _ in 0..<500 where player.statistics.firstFrame == nil { try await Task.sleep(for: .milliseconds(10)) }
        player.replaceCurrentItem(with: nil)
        loader = try StressMedia.loader()
        let before = await ProcessState.settle(threads: 0)

        let operations = Atomic<Int>(0)
        let deadline = Date().addingTimeInterval(seconds)
        let stressLoader = loader
        await onThreads(8) { index in
            var random = SplitMix(state: UInt64(index) &* 7919 &+ 1)
            while Date() < deadline {
                randomCommand(&random, player: player, loader: stressLoader)
                operations.add(1, ordering: .relaxed)
                usleep(UInt32(random.below(2000)))
            }
        }

        player.replaceCurrentItem(with: nil)
        loader = try StressMedia.loader()
        sink.hashing.store(true, ordering: .relaxed)
        ended.store(false, ordering: .relaxed)
        player.volume = 1
        player.rate = 0
        player.defaultRate = 1
        player.replaceCurrentItem(with: PlayerItem(url: StressMedia.url("a.mp4"), loader: loader))
        player.play()
        for _ in 0..<3000 where !ended.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(10)) }
        player.replaceCurrentItem(with: nil)
        loader = try StressMedia.loader()
        var result = StressResult(scenario: "commands", operations: operations.load(ordering: .relaxed),
                                  threadsBefore: before.threads, threadsAfter: 0, rssBefore: before.rss, rssAfter: 0)
        compare(sink.shown.withTrackedLock { $0 }, with: reference, into: &result)
        result.ended = ended.load(ordering: .relaxed)
        let after = await ProcessState.settle(threads: before.threads)
        (result.threadsAfter, result.rssAfter) = (after.threads, after.rss)
        result.enginesAlive = MediaResources.liveEngines
        return result
    }

    private static func randomCommand(_ random: inout SplitMix, player: Player, loader: FakeResourceLoader) {
        let names = ["a.mp4", "b.mp4", "garbage.mp4", "stall.mp4"]
        switch random.below(10) {
        case 0:
            player.replaceCurrentItem(with: nil)
        case 1, 2:
            let start = random.below(3) == 0 ? MediaTime(value: Int64(random.below(1500)), timescale: 1000) : nil
            let name = names[random.below(names.count)]
            player.replaceCurrentItem(with: PlayerItem(url: StressMedia.url(name), loader: loader, startTime: start))
        case 3, 4:
            let target = MediaTime(value: Int64(random.below(1600)), timescale: 1000)
            let exact = random.below(2) == 0
            player.seek(to: target, toleranceBefore: exact ? .zero : .positiveInfinity,
                        toleranceAfter: exact ? .zero : .positiveInfinity) { _ in }
        case 5:
            player.rate = [0, 0.5, 1, 2][random.below(4)]
        case 6:
            player.play()
        case 7:
            player.pause()
        case 8:
            player.volume = Float(random.below(5)) / 4
        default:
            _ = player.currentTime
            _ = player.statistics
            _ = player.loadedTimeRanges
        }
    }

    private static func referenceFrames() throws -> [(MediaTime, String)] {
        var reference: [(MediaTime, String)] = []
        try SequentialDecoder.decodeVideo(try Fixtures.clip(StressMedia.clip), loader: FileLoaderForStress(), threads: 1) { frame in
            reference.append((frame.pts, frame.md5()))
            return true
        }
        return reference
    }

    /// Every frame shown must be the plain decode's frame of the same time, in order.
    private static func compare(_ shown: [(pts: MediaTime, md5: String)], with reference: [(MediaTime, String)],
                                into result: inout StressResult) {
        result.referenceFrames = reference.count
        result.presented = shown.count
        var last = -1
        for frame in shown {
            guard let index = reference.firstIndex(where: { $0.0 == frame.pts }) else {
                result.mismatches += 1
                continue
            }
            if reference[index].1 != frame.md5 { result.mismatches += 1 }
            if index <= last { result.outOfOrder += 1 }
            last = index
        }
    }
}

enum StalledOpenStress {
    /// Opens an item whose first read stalls and releases it at once, `cycles` times: every
    /// release must return (the stalled read is interrupted) and leave nothing running.
    static func run(cycles: Int) async throws -> StressResult {
        let loader = try StressMedia.loader()
        let player = Player(clock: HostClock.shared, videoSink: StressSink(), audioSink: NullAudioSink())
        player.replaceCurrentItem(with: PlayerItem(url: StressMedia.url("stall.mp4"), loader: loader))
        player.replaceCurrentItem(with: nil)
        let before = await ProcessState.settle(threads: 0)
        await onThreads(1) { _ in
            var random = SplitMix(state: 42)
            for _ in 0..<cycles {
                player.replaceCurrentItem(with: PlayerItem(url: StressMedia.url("stall.mp4"), loader: loader))
                if random.below(2) == 0 { player.play() }
                usleep(UInt32(random.below(3000)))
                player.replaceCurrentItem(with: nil)
            }
        }
        let after = await ProcessState.settle(threads: before.threads)
        var result = StressResult(scenario: "stalled-opens", operations: cycles, threadsBefore: before.threads,
                                  threadsAfter: after.threads, rssBefore: before.rss, rssAfter: after.rss)
        result.enginesAlive = MediaResources.liveEngines
        return result
    }
}
typealias FileLoaderForStress = FileLoader
