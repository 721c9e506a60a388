import Foundation
import ReelCore
@testable import ReelLoading
import ReelTestSupport
import Synchronization
import Testing

/// A flag a task sets when it is done, read by the test.
final class DoneFlag: Sendable {
    private let done = Mutex(false)
    func set() { done.withTrackedLock { $0 = true } }
    var isSet: Bool { done.withTrackedLock { $0 } }
}

/// Runs `body` in a task of its own (on `executor` when given); whether it finished within
/// `watchdog` (wall-clock, generous). A task stuck on a lost wake-up makes this `false`
/// instead of hanging the suite (the stuck task is left behind).
func finishes(within watchdog: Duration = hangWatchdog, on executor: (any TaskExecutor)? = nil,
              _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let flag = DoneFlag()
    Task(executorPreference: executor) {
        await body()
        flag.set()
    }
    return await eventually(timeout: watchdog, poll: .milliseconds(2)) { flag.isSet }
}

/// Cancels the calling task (so the next wait begins already cancelled).
func cancelCurrentTask() {
    withUnsafeCurrentTask { $0?.cancel() }
}

/// Every wait of the loading path leaves in the critical section that wakes it, on every
/// path: woken, timed out, or its task cancelled — before or after it registered.
@Suite("Wake-ups")
struct WakeUpTests {
    // MARK: PlaybackLoadCoordinator

    @Test func aWaitForPlaybackThatBeginsCancelledReturnsAtOnce() async {
        let coordinator = PlaybackLoadCoordinator()
        let load = coordinator.beginLoading(.belowLowWaterMark)
        // Cancelled before it registers: the cancellation handler runs first and finds no
        // waiter; the registration must see the cancellation instead of waiting for the load.
        #expect(await finishes {
            cancelCurrentTask()
            _ = await coordinator.waitUntilIdle()
        })
        #expect(await finishes {
            cancelCurrentTask()
            _ = await coordinator.waitUntilIdle(until: MediaTime(value: 3600, timescale: 1), on: ManualClock())
        })
        #expect(coordinator.suspendedWaiterCount == 0)
        load.end()
    }

    @Test func aWaitForPlaybackEndsWithTheLoadItsDeadlineOrItsCancellation() async {
        let coordinator = PlaybackLoadCoordinator()
        let clock = ManualClock()
        let load = coordinator.beginLoading(.needsConnection)

        let ended = DoneFlag()
        Task { if await coordinator.waitUntilIdle() { ended.set() } }
        #expect(await eventually(poll: .milliseconds(2)) { coordinator.suspendedWaiterCount == 1 })
        load.end()
        #expect(await eventually(poll: .milliseconds(2)) { ended.isSet })

        let second = coordinator.beginLoading(.belowLowWaterMark)
        let timedOut = DoneFlag()
        Task {
            let idle = await coordinator.waitUntilIdle(until: MediaTime(value: 2, timescale: 1), on: clock)
            if !idle { timedOut.set() }
        }
        #expect(await eventually(poll: .milliseconds(2)) { coordinator.suspendedWaiterCount == 1 })
        clock.advance(by: MediaTime(value: 1999, timescale: 1000))
        #expect(coordinator.suspendedWaiterCount == 1, "not before the deadline")
        clock.advance(by: MediaTime(value: 1, timescale: 1000))
        #expect(await eventually(poll: .milliseconds(2)) { timedOut.isSet })
        #expect(clock.pendingCount == 0)

        let waiting = Task { await coordinator.waitUntilIdle() }
        #expect(await eventually(poll: .milliseconds(2)) { coordinator.suspendedWaiterCount == 1 })
        waiting.cancel()
        #expect(await finishes { _ = await waiting.value })
        #expect(coordinator.suspendedWaiterCount == 0)
        second.end()
    }

    @Test func manyLoadsAndWaitsNeverLoseTheEndOfTheLastLoad() async {
        // Loads begin and end on one task while waiters come and go on others; every
        // waiter must see an idle moment. A lost wake-up leaves one waiting for ever.
        let coordinator = PlaybackLoadCoordinator()
        for round in 0..<200 {
            let load = coordinator.beginLoading(round.isMultiple(of: 2) ? .belowLowWaterMark : .needsConnection)
            let waiters = (0..<4).map { _ in Task { await coordinator.waitUntilIdle() } }
            await Task.yield()
            load.end()
            for waiter in waiters {
                #expect(await finishes { _ = await waiter.value }, "round \(round)")
            }
        }
    }

    // MARK: ByteStream

    @Test func aProducerWaitingAtTheHighWaterMarkStopsWhenItsTaskIsCancelled() async throws {
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: 8)
        continuation.respond(with: ContentInformation(length: 100))
        let producer = Task { () -> Bool in
            do {
                try await continuation.send(Data(repeating: 7, count: 12))
                return false
            } catch is CancellationError {
                return true
            } catch {
                return false
            }
        }
        #expect(await eventually(poll: .milliseconds(2)) { stream.bufferedByteCount == 12 })
        // The consumer neither reads nor cancels: only the producer's own cancellation can end the wait.
        producer.cancel()
        let box = OutcomeBox()
        #expect(await finishes { box.set(await producer.value) })
        #expect(box.value == true, "send throws CancellationError")
        #expect(!stream.isCancelled)
    }

    @Test func aProducerThatBeginsCancelledDoesNotWait() async {
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: 4)
        #expect(await finishes {
            cancelCurrentTask()
            _ = try? await continuation.send(Data(repeating: 1, count: 10))
        })
        #expect(stream.bufferedByteCount == 10, "the bytes are kept; only the wait is skipped")
    }

    @Test func twoTasksWaitingOnOneStreamBothWake() async throws {
        let (stream, continuation) = ByteStream.makeStream()
        let first = Task { try await stream.contentInformation() }
        let second = Task { try await stream.contentInformation() }
        #expect(await eventually(poll: .milliseconds(2)) { stream.isReaderWaiting })
        continuation.respond(with: ContentInformation(length: 5))
        let box = OutcomeBox()
        #expect(await finishes {
            let a = try? await first.value
            let b = try? await second.value
            box.set(a?.length == 5 && b?.length == 5)
        })
        #expect(box.value == true)
    }

    @Test func asyncProducerAndConsumerNeverStallAtATinyHighWaterMark() async throws {
        // Hundreds of hand-offs at the high-water mark each way: a lost wake-up on either
        // side stops the stream for good, which the watchdog turns into a failure. The
        // watchdog is long: under ThreadSanitizer on a loaded machine a round has taken a minute.
        // Producer and consumer each run on a thread of their own: on one core the shared
        // pool is one thread, and 400 hops each queued behind the rest of the suite's work
        // have taken longer than the watchdog without any wake-up being lost.
        let producing = ThreadExecutor(name: "test producer")
        let consuming = ThreadExecutor(name: "test consumer")
        defer { producing.shutdown(); consuming.shutdown() }
        for round in 0..<50 {
            let (stream, continuation) = ByteStream.makeStream(highWaterMark: 3)
            continuation.respond(with: ContentInformation(length: nil))
            let producer = Task(executorPreference: producing) {
                for i in 0..<200 { try await continuation.send(Data([UInt8(truncatingIfNeeded: i), 1, 2])) }
                continuation.finish()
            }
            let box = TotalBox()
            #expect(await finishes(on: consuming) {
                box.set((try? await stream.collect().count) ?? -1)
            }, "round \(round)")
            #expect(box.value == 600, "round \(round)")
            _ = try? await producer.value
        }
    }

    @Test func aReaderThreadAndAProducerNeverStall() async throws {
        // The blocking read parks a thread of its own; the producer pushes from a task, on a
        // thread of its own too, so its hops do not queue behind the rest of the suite.
        let producing = ThreadExecutor(name: "test producer")
        defer { producing.shutdown() }
        for round in 0..<50 {
            let (stream, continuation) = ByteStream.makeStream(highWaterMark: 64)
            let box = TotalBox()
            let reader = DoneFlag()
            Thread.detachNewThread {
                var total = 0
                do {
                    _ = try stream.waitForContentInformation()
                    var buffer = [UInt8](repeating: 0, count: 7)
                    while true {
                        let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
                        if n == 0 { break }
                        total += n
                    }
                } catch {
                    total = -1
                }
                box.set(total)
                reader.set()
            }
            let producer = Task(executorPreference: producing) {
                continuation.respond(with: ContentInformation(length: nil))
                for i in 0..<300 { try await continuation.send(Data(repeating: UInt8(truncatingIfNeeded: i), count: 5)) }
                continuation.finish()
            }
            #expect(await eventually(poll: .milliseconds(2)) { reader.isSet }, "round \(round)")
            #expect(box.value == 1500, "round \(round)")
            _ = try? await producer.value
        }
    }

    @Test func cancellingWakesEveryKindOfWaiter() async throws {
        // Nothing is ever read: the thread and the task wait for the information, the
        // producer for room below the high-water mark.
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: 1)
        let thread = DoneFlag()
        Thread.detachNewThread {
            _ = try? stream.waitForContentInformation()
            thread.set()
        }
        let consumer = Task { try? await stream.contentInformation() }
        let producer = Task { try? await continuation.send(Data([1, 2, 3])) }
        #expect(await eventually(poll: .milliseconds(2)) { stream.bufferedByteCount == 3 })
        stream.cancel()
        #expect(await eventually(poll: .milliseconds(2)) { thread.isSet })
        #expect(await finishes { _ = await consumer.value; _ = await producer.value })
    }

    // MARK: SpanWriter

    @Test func aWaitForAWriterThatBeginsCancelledReturnsAtOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeTestCache(directory)
        defer { cache.close() }
        let url = fakeURL("writer")
        let lease = cache.lease(url)
        defer { lease.release() }
        _ = lease.reconcile(ContentInformation(length: 1000, entityTag: "\"w\""))
        let writer = try #require(lease.prepareFetch(at: 0, takeOver: false, priority: .playback).writer)
        defer { writer.finish() }
        // Cancelled before it registers: without noticing, it would sleep its whole timeout.
        #expect(await finishes {
            cancelCurrentTask()
            _ = await writer.waitForProgress(beyond: 0, timeout: .seconds(3600))
        })
        // A wait that registered is ended by the writer's progress.
        let moved = OutcomeBox()
        let waiting = Task { moved.set(await writer.waitForProgress(beyond: 0, timeout: .seconds(3600))) }
        try await Task.sleep(for: .milliseconds(20))
        #expect(writer.append(Data(repeating: 5, count: 10)) == 10)
        #expect(await finishes { await waiting.value })
        #expect(moved.value == true)
    }

    @Test func aWaitThatBeginsAfterTheBytesArrivedSaysTheWriterMoved() async throws {
        // A reader saw the gap, the writer filled it before the reader began to wait: the
        // wait returns at once and is no stall (a stall would take the fetch over).
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeTestCache(directory)
        defer { cache.close() }
        let lease = cache.lease(fakeURL("late-waiter"))
        defer { lease.release() }
        _ = lease.reconcile(ContentInformation(length: 1000, entityTag: "\"w\""))
        let writer = try #require(lease.prepareFetch(at: 0, takeOver: false, priority: .playback).writer)
        defer { writer.finish() }
        #expect(writer.append(Data(repeating: 5, count: 10)) == 10)
        #expect(await writer.waitForProgress(beyond: 0, timeout: .seconds(3600)))
        #expect(await writer.waitForProgress(beyond: 9, timeout: .seconds(3600)))
    }

    // MARK: Preloader

    @Test func waitingForAnIdlePreloaderEndsWithItsTask() async throws {
        let rig = try PreloadRig(files: ["a": LoaderContract.pattern(count: 300_000, seed: 5)])
        defer { rig.tearDown() }
        let load = rig.coordinator.beginLoading(.belowLowWaterMark)
        rig.preloader.setPreloadQueue([.bytes(100_000, of: fakeURL("a"))])
        // The worker waits for playback: the preloader is not idle, and a task waiting for
        // it must still be able to give up.
        let waiter = Task { await rig.preloader.waitUntilIdle() }
        try await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        #expect(await finishes { await waiter.value })
        load.end()
        #expect(await drive(rig) { rig.isIdle && rig.preloader.statistics.completed.count == 1 })
        #expect(await finishes { await rig.preloader.waitUntilIdle() })
    }
}

/// A result a task hands to the test.
final class OutcomeBox: Sendable {
    private let stored = Mutex<Bool?>(nil)
    func set(_ value: Bool) { stored.withTrackedLock { $0 = value } }
    var value: Bool? { stored.withTrackedLock { $0 } }
}

/// A count a thread or task hands to the test.
final class TotalBox: Sendable {
    private let stored = Mutex<Int?>(nil)
    func set(_ value: Int) { stored.withTrackedLock { $0 = value } }
    var value: Int? { stored.withTrackedLock { $0 } }
}
