import Foundation
import ReelCore
@testable import ReelLoading
import ReelTestSupport
import Testing

/// Moves a manual clock in small steps, letting the tasks it wakes run between steps,
/// until `condition` holds (or a real-time limit passes).
func drive(
    _ clock: ManualClock, step: MediaTime = MediaTime(value: 20, timescale: 1000),
    timeout: Duration = .seconds(30), until condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        clock.advance(by: step)
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Lets tasks run without moving the clock.
func settle() async {
    for _ in 0..<20 { try? await Task.sleep(for: .milliseconds(1)) }
}

/// A preloader over a fake origin timed on a manual clock: 4 MB/s in 64 KiB chunks.
struct PreloadRig {
    let clock = ManualClock()
    let fake: FakeResourceLoader
    let directory: TemporaryDirectory
    let cache: RangeCache
    let loader: CachingLoader
    let coordinator = PlaybackLoadCoordinator()
    let preloader: Preloader

    init(files: [String: Data], estimator: Preloader.Estimator? = nil) throws {
        fake = FakeResourceLoader(clock: clock, script: .init(
            latency: MediaTime(value: 20, timescale: 1000), bytesPerSecond: 4_000_000, chunkSize: 64 * 1024
        ))
        for (name, data) in files { fake.add(data, at: fakeURL(name)) }
        directory = try TemporaryDirectory()
        cache = try makeTestCache(directory, segmentSize: 64 * 1024)
        loader = CachingLoader(upstream: fake, cache: cache)
        preloader = Preloader(
            loader: loader, coordinator: coordinator, clock: clock, estimator: estimator,
            configuration: .init(resumeDelay: MediaTime(value: 100, timescale: 1000), maxPause: MediaTime(value: 2, timescale: 1))
        )
    }

    func cached(_ name: String) -> [Range<Int64>] { cache.cachedRanges(for: fakeURL(name)) }

    var isIdle: Bool { preloader.currentRequest == nil && preloader.pendingRequests.isEmpty }

    func tearDown() {
        preloader.stop()
        cache.close()
        directory.remove()
    }
}

@Suite("Preloader")
struct PreloaderTests {
    let big = LoaderContract.pattern(count: 1_200_000, seed: 30)

    @Test func preloadsTheQueueInOrderOneAtATime() async throws {
        let rig = try PreloadRig(files: ["a": big, "b": big, "c": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([
            .bytes(200_000, of: fakeURL("a")), .bytes(300_000, of: fakeURL("b")), .bytes(100_000, of: fakeURL("c")),
        ])
        var mostAtOnce = 0
        #expect(await drive(rig.clock) {
            mostAtOnce = max(mostAtOnce, rig.fake.activeRequestCount)
            return rig.isIdle && rig.preloader.statistics.completed.count == 3
        })
        #expect(mostAtOnce == 1)
        #expect(rig.fake.requests.map(\.url) == [fakeURL("a"), fakeURL("b"), fakeURL("c")])
        #expect(rig.cached("a") == [0..<200_000])
        #expect(rig.cached("b") == [0..<300_000])
        #expect(rig.cached("c") == [0..<100_000])
        #expect(rig.preloader.statistics.completed == [fakeURL("a"), fakeURL("b"), fakeURL("c")])
        // The preloaded bytes are what a player then reads, from the disk.
        rig.fake.resetCounts()
        #expect((try await rig.loader.data(fakeURL("b"), range: ByteRange(offset: 0, length: 300_000))).fingerprint == (big.prefix(300_000)).fingerprint)
        #expect(rig.fake.requestCount == 0)
    }

    @Test func aNewQueueReplacesTheOldOne() async throws {
        let rig = try PreloadRig(files: ["a": big, "b": big, "c": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a")), .bytes(100_000, of: fakeURL("b"))])
        #expect(await drive(rig.clock) { rig.loader.statistics.bytesFromNetwork > 100_000 })
        // a is still wanted: it goes on, and is not started again.
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a")), .bytes(100_000, of: fakeURL("c"))])
        #expect(rig.preloader.currentRequest?.url == fakeURL("a"))
        #expect(rig.preloader.pendingRequests.map(\.url) == [fakeURL("c")])
        // a is no longer wanted: it is cancelled at once and c starts.
        rig.preloader.setPreloadQueue([.bytes(100_000, of: fakeURL("c"))])
        #expect(await drive(rig.clock) { rig.isIdle && rig.preloader.statistics.completed == [fakeURL("c")] })
        #expect(rig.fake.requests.map(\.url) == [fakeURL("a"), fakeURL("c")])
        #expect((rig.cached("a").first?.upperBound ?? 0) < 1_000_000)
        #expect(rig.cached("b").isEmpty)
        #expect(rig.cached("c") == [0..<100_000])
    }

    @Test func aPlayerBelowItsLowWaterMarkPausesThePreload() async throws {
        let rig = try PreloadRig(files: ["a": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a"))])
        #expect(await drive(rig.clock) { rig.loader.statistics.bytesFromNetwork >= 200_000 })
        let load = rig.coordinator.beginLoading(.belowLowWaterMark)
        await settle()
        let atPause = rig.loader.statistics.bytesFromNetwork
        // A second of clock time (the pause limit is two): nothing more is taken.
        for _ in 0..<50 {
            rig.clock.advance(by: MediaTime(value: 20, timescale: 1000))
            try? await Task.sleep(for: .milliseconds(1))
        }
        #expect(rig.loader.statistics.bytesFromNetwork <= atPause + 64 * 1024)
        #expect(rig.preloader.currentRequest?.url == fakeURL("a"))
        #expect(rig.fake.requestCount == 1)
        load.end()
        #expect(await drive(rig.clock) { rig.isIdle })
        #expect(rig.cached("a") == [0..<1_000_000])
        // The pause kept the connection: one request in all.
        #expect(rig.fake.requestCount == 1)
        #expect(rig.preloader.statistics.interruptions == 0)
    }

    @Test func aPlayerThatNeedsTheConnectionCancelsThePreload() async throws {
        let rig = try PreloadRig(files: ["a": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a"))])
        #expect(await drive(rig.clock) { rig.loader.statistics.bytesFromNetwork >= 300_000 })
        let load = rig.coordinator.beginLoading(.needsConnection)
        #expect(await eventually { rig.fake.activeRequestCount == 0 })
        let cachedAtCancel = rig.cached("a").first?.upperBound ?? 0
        #expect(cachedAtCancel >= 200_000)
        // Nothing starts while the player loads.
        for _ in 0..<25 {
            rig.clock.advance(by: MediaTime(value: 20, timescale: 1000))
            try? await Task.sleep(for: .milliseconds(1))
        }
        #expect(rig.fake.requestCount == 1)
        load.end()
        #expect(await drive(rig.clock) { rig.isIdle })
        #expect(rig.cached("a") == [0..<1_000_000])
        // It resumed from what was cached.
        #expect(rig.fake.requests.count == 2)
        #expect(rig.fake.requests.last?.range.offset == cachedAtCancel)
        #expect(rig.preloader.statistics.interruptions == 1)
    }

    @Test func aPauseLongerThanTheLimitGivesTheConnectionUp() async throws {
        let rig = try PreloadRig(files: ["a": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a"))])
        #expect(await drive(rig.clock) { rig.loader.statistics.bytesFromNetwork >= 200_000 })
        let load = rig.coordinator.beginLoading(.belowLowWaterMark)
        let start = rig.clock.now
        #expect(await drive(rig.clock) { rig.preloader.statistics.interruptions == 1 })
        #expect(rig.clock.now - start >= MediaTime(value: 2, timescale: 1))
        #expect(rig.fake.activeRequestCount == 0)
        load.end()
        #expect(await drive(rig.clock) { rig.isIdle })
        #expect(rig.cached("a") == [0..<1_000_000])
        #expect(rig.fake.requestCount == 2)
    }

    @Test func secondsAreConvertedByTheEstimatorOrTheDefault() async throws {
        let rig = try PreloadRig(files: ["a": big, "b": big]) { url, seconds in
            url.lastPathComponent == "a" ? Int64(seconds * 100_000) : nil
        }
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.seconds(1.5, of: fakeURL("a")), .seconds(3, of: fakeURL("b"))])
        #expect(await drive(rig.clock) { rig.isIdle && rig.preloader.statistics.completed.count == 2 })
        #expect(rig.cached("a") == [0..<150_000])
        #expect(rig.cached("b") == [0..<800_000])
    }

    @Test func anMP4IndexAfterTheMediaIsPreloadedWithTheHead() async throws {
        let file = mp4WithIndexAtEnd(mediaBytes: 1_000_000, indexBytes: 30_000)
        let rig = try PreloadRig(files: ["late.mp4": file])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(100_000, of: fakeURL("late.mp4"))])
        #expect(await drive(rig.clock) { rig.isIdle && rig.preloader.statistics.completed.count == 1 })
        let mdatEnd = Int64(24 + 8 + 1_000_000)
        #expect(rig.cached("late.mp4") == [0..<100_000, mdatEnd..<Int64(file.count)])
    }

    @Test func aFailingPreloadIsRetriedThenDropped() async throws {
        let rig = try PreloadRig(files: ["b": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(100_000, of: fakeURL("missing")), .bytes(100_000, of: fakeURL("b"))])
        #expect(await drive(rig.clock) { rig.isIdle && rig.preloader.statistics.completed.count == 1 })
        #expect(rig.preloader.statistics.failed == [fakeURL("missing")])
        #expect(rig.fake.requests.filter { $0.url == fakeURL("missing") }.count == 2)
        #expect(rig.cached("b") == [0..<100_000])
    }
}
