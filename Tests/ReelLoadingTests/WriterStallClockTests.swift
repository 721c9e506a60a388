import Foundation
import ReelCore
@testable import ReelLoading
import ReelTestSupport
import Testing

/// A read waiting for another read's writer gives up on the cache's injected clock.
@Suite("Writer stalls on the cache's clock")
struct WriterStallClockTests {
    @Test func aWaitForAStalledWriterEndsWhenTheCacheClockPassesItsTimeout() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let cache = try makeTestCache(directory) { $0.clock = clock }
        defer { cache.close() }
        let lease = cache.lease(fakeURL("stalled"))
        defer { lease.release() }
        _ = lease.reconcile(ContentInformation(length: 1000, entityTag: "\"s\""))
        let writer = try #require(lease.prepareFetch(at: 0, takeOver: false, priority: .playback).writer)
        defer { writer.finish() }

        let moved = OutcomeBox()
        let waiting = Task { moved.set(await writer.waitForProgress(beyond: 0, timeout: .seconds(2))) }
        #expect(await eventually(poll: .milliseconds(2)) { clock.pendingCount == 1 })
        clock.advance(by: MediaTime(value: 1999, timescale: 1000))
        try await Task.sleep(for: .milliseconds(20))
        #expect(moved.value == nil, "not before the timeout on the cache's clock")
        clock.advance(by: MediaTime(value: 1, timescale: 1000))
        #expect(await finishes { await waiting.value })
        #expect(moved.value == false, "a writer that did not move stalled")
    }

    @Test func progressEndsTheWaitAndForgetsItsWakeUp() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let cache = try makeTestCache(directory) { $0.clock = clock }
        defer { cache.close() }
        let lease = cache.lease(fakeURL("moving"))
        defer { lease.release() }
        _ = lease.reconcile(ContentInformation(length: 1000, entityTag: "\"m\""))
        let writer = try #require(lease.prepareFetch(at: 0, takeOver: false, priority: .playback).writer)
        defer { writer.finish() }

        let moved = OutcomeBox()
        let waiting = Task { moved.set(await writer.waitForProgress(beyond: 0, timeout: .seconds(2))) }
        #expect(await eventually(poll: .milliseconds(2)) { clock.pendingCount == 1 })
        #expect(writer.append(Data(repeating: 1, count: 10)) == 10)
        #expect(await finishes { await waiting.value })
        #expect(moved.value == true)
        #expect(clock.pendingCount == 0, "the timeout was cancelled")
    }
}
