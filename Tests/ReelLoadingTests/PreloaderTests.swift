import Foundation
import ReelCore
@testable import ReelLoading
import ReelTestSupport
import Testing

/// Drives a preload rig on its manual clock: lets the system settle (every task waits
/// on the clock, a playback load or nothing), checks `condition`, and only then moves
/// the clock to its next deadline — so however slowly the machine runs the tasks, the
/// clock never runs ahead of them and every run sees the same simulated timeline.
/// Gives up when `condition` still fails after `limit` of clock time, or when nothing
/// is scheduled any more (nothing can change). Wall-clock time bounds only the settling,
/// as a watchdog against a hang.
func drive(
    _ rig: PreloadRig, limit: MediaTime = MediaTime(value: 120, timescale: 1),
    until condition: () -> Bool
) async -> Bool {
    let start = rig.clock.now
    while true {
        guard await rig.settle() else { return false }
        if condition() { return true }
        guard rig.clock.now - start < limit, rig.clock.advanceToNextDeadline() else { return false }
    }
}

/// Moves the clock by `total` in `step`s, letting the rig settle after each.
func advance(_ rig: PreloadRig, by total: MediaTime, step: MediaTime = MediaTime(value: 20, timescale: 1000)) async -> Bool {
    let end = rig.clock.now + total
    while rig.clock.now < end {
        rig.clock.advance(to: min(end, rig.clock.now + step))
        guard await rig.settle() else { return false }
    }
    return true
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

    /// Whether nothing in the rig can move until the clock does or the test acts: no
    /// worker; or a wait on the coordinator (the worker's, or a paused preload's gate);
    /// or, between preloads, a sleep on the clock; or, while a preload runs, its reader
    /// waiting on the fake with nothing buffered. Each of these waits is left in the
    /// critical section that wakes it, so a woken task never looks settled.
    var isSettled: Bool {
        guard preloader.hasWorker else { return true }
        if coordinator.suspendedWaiterCount > 0 { return true }
        if preloader.currentRequest == nil {
            return fake.activeRequestCount == 0 && clock.pendingCount > 0
        }
        return fake.activeRequestCount > 0 && fake.readersAreWaiting
    }

    /// Waits (polling, without blocking a thread) until the rig is settled; `false` only
    /// if it never settles within a generous wall-clock watchdog.
    func settle() async -> Bool {
        await eventually(poll: .milliseconds(1)) { isSettled }
    }

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
        #expect(await drive(rig) { rig.isIdle && rig.preloader.statistics.completed.count == 3 })
        #expect(rig.fake.mostActiveRequests == 1)
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
        #expect(await drive(rig) { rig.loader.statistics.bytesFromNetwork > 100_000 })
        // a is still wanted: it goes on, and is not started again.
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a")), .bytes(100_000, of: fakeURL("c"))])
        #expect(rig.preloader.currentRequest?.url == fakeURL("a"))
        #expect(rig.preloader.pendingRequests.map(\.url) == [fakeURL("c")])
        // a is no longer wanted: it is cancelled at once and c starts.
        rig.preloader.setPreloadQueue([.bytes(100_000, of: fakeURL("c"))])
        #expect(await drive(rig) { rig.isIdle && rig.preloader.statistics.completed == [fakeURL("c")] })
        #expect(rig.fake.requests.map(\.url) == [fakeURL("a"), fakeURL("c")])
        #expect((rig.cached("a").first?.upperBound ?? 0) < 1_000_000)
        #expect(rig.cached("b").isEmpty)
        #expect(rig.cached("c") == [0..<100_000])
    }

    @Test func aPlayerBelowItsLowWaterMarkPausesThePreload() async throws {
        let rig = try PreloadRig(files: ["a": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a"))])
        #expect(await drive(rig) { rig.loader.statistics.bytesFromNetwork >= 200_000 })
        let load = rig.coordinator.beginLoading(.belowLowWaterMark)
        let atPause = rig.loader.statistics.bytesFromNetwork
        // A second of clock time (the pause limit is two): at most the chunk under way
        // when the pause began is taken, then the gate holds.
        #expect(await advance(rig, by: MediaTime(value: 1, timescale: 1)))
        #expect(rig.coordinator.suspendedWaiterCount == 1, "the preload waits in its gate")
        #expect(rig.loader.statistics.bytesFromNetwork <= atPause + 64 * 1024)
        #expect(rig.preloader.currentRequest?.url == fakeURL("a"))
        #expect(rig.fake.requestCount == 1)
        load.end()
        #expect(await drive(rig) { rig.isIdle })
        #expect(rig.cached("a") == [0..<1_000_000])
        // The pause kept the connection: one request in all.
        #expect(rig.fake.requestCount == 1)
        #expect(rig.preloader.statistics.interruptions == 0)
    }

    @Test func aPlayerThatNeedsTheConnectionCancelsThePreload() async throws {
        let rig = try PreloadRig(files: ["a": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a"))])
        #expect(await drive(rig) { rig.loader.statistics.bytesFromNetwork >= 300_000 })
        let load = rig.coordinator.beginLoading(.needsConnection)
        // Cancelling is synchronous down to the fake: its request ends at once.
        #expect(rig.fake.activeRequestCount == 0)
        #expect(await rig.settle())
        let cachedAtCancel = rig.cached("a").first?.upperBound ?? 0
        #expect(cachedAtCancel >= 200_000)
        // Nothing starts while the player loads.
        #expect(await advance(rig, by: MediaTime(value: 500, timescale: 1000)))
        #expect(rig.fake.requestCount == 1)
        load.end()
        #expect(await drive(rig) { rig.isIdle })
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
        #expect(await drive(rig) { rig.loader.statistics.bytesFromNetwork >= 200_000 })
        let load = rig.coordinator.beginLoading(.belowLowWaterMark)
        let start = rig.clock.now
        #expect(await drive(rig) { rig.preloader.statistics.interruptions == 1 })
        #expect(rig.clock.now - start >= MediaTime(value: 2, timescale: 1))
        #expect(rig.fake.activeRequestCount == 0)
        load.end()
        #expect(await drive(rig) { rig.isIdle })
        #expect(rig.cached("a") == [0..<1_000_000])
        #expect(rig.fake.requestCount == 2)
    }

    @Test func secondsAreConvertedByTheEstimatorOrTheDefault() async throws {
        let rig = try PreloadRig(files: ["a": big, "b": big]) { url, seconds in
            url.lastPathComponent == "a" ? Int64(seconds * 100_000) : nil
        }
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.seconds(1.5, of: fakeURL("a")), .seconds(3, of: fakeURL("b"))])
        #expect(await drive(rig) { rig.isIdle && rig.preloader.statistics.completed.count == 2 })
        #expect(rig.cached("a") == [0..<150_000])
        #expect(rig.cached("b") == [0..<800_000])
    }

    @Test func anMP4IndexAfterTheMediaIsPreloadedWithTheHead() async throws {
        let file = mp4WithIndexAtEnd(mediaBytes: 1_000_000, indexBytes: 30_000)
        let rig = try PreloadRig(files: ["late.mp4": file])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(100_000, of: fakeURL("late.mp4"))])
        #expect(await drive(rig) { rig.isIdle && rig.preloader.statistics.completed.count == 1 })
        let mdatEnd = Int64(24 + 8 + 1_000_000)
        #expect(rig.cached("late.mp4") == [0..<100_000, mdatEnd..<Int64(file.count)])
    }

    @Test func aFailingPreloadIsRetriedThenDropped() async throws {
        let rig = try PreloadRig(files: ["b": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(100_000, of: fakeURL("missing")), .bytes(100_000, of: fakeURL("b"))])
        #expect(await drive(rig) { rig.isIdle && rig.preloader.statistics.completed.count == 1 })
        #expect(rig.preloader.statistics.failed == [fakeURL("missing")])
        #expect(rig.fake.requests.filter { $0.url == fakeURL("missing") }.count == 2)
        #expect(rig.cached("b") == [0..<100_000])
    }

    @Test func aPausedPreloadThatIsNoLongerWantedIsDroppedNotRequeued() async throws {
        let rig = try PreloadRig(files: ["a": big, "b": big])
        defer { rig.tearDown() }
        rig.preloader.setPreloadQueue([.bytes(1_000_000, of: fakeURL("a"))])
        #expect(await drive(rig) { rig.loader.statistics.bytesFromNetwork >= 200_000 })
        let load = rig.coordinator.beginLoading(.belowLowWaterMark)
        #expect(await advance(rig, by: MediaTime(value: 100, timescale: 1000)))
        #expect(rig.coordinator.suspendedWaiterCount == 1, "a waits in its gate")
        // Replaced while paused: a cancellation, not a pause that ran too long.
        rig.preloader.setPreloadQueue([.bytes(100_000, of: fakeURL("b"))])
        #expect(await rig.settle())
        load.end()
        #expect(await drive(rig) { rig.isIdle && rig.preloader.statistics.completed == [fakeURL("b")] })
        #expect(rig.preloader.statistics.interruptions == 0)
        #expect(rig.fake.requests.map(\.url) == [fakeURL("a"), fakeURL("b")])
    }
}
