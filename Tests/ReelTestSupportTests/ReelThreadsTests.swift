import Foundation
import ReelCore
import ReelThreads
import Synchronization
import Testing

/// ReelThreads' `onOwnThread`: blocking work on a thread of its own, awaited.
@Suite struct OwnThreadTests {
    struct Refused: Error, Equatable {}

    @Test func twoBodiesThatWaitForEachOtherBothFinish() async {
        // Each blocks until the other has run: only two threads of their own can finish this,
        // whatever the size of the concurrency pool (one under `taskset -c 0`).
        let first = DispatchSemaphore(value: 0)
        let second = DispatchSemaphore(value: 0)
        async let a: Bool = onOwnThread(named: "reel.tests.a") {
            first.signal()
            return second.wait(timeout: .now() + 300) == .success
        }
        async let b: Bool = onOwnThread(named: "reel.tests.b") {
            second.signal()
            return first.wait(timeout: .now() + 300) == .success
        }
        let (gotA, gotB) = await (a, b)
        #expect(gotA && gotB)
    }

    @Test func theBodyRunsOnANamedThreadThatIsNotTheCallers() async {
        let caller = pthread_self()
        let (name, same, main) = await onOwnThread(named: "reel.named.thread") { () -> (String, Bool, Bool) in
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            return (comm.trimmingCharacters(in: .newlines), pthread_equal(pthread_self(), caller) != 0, Thread.isMainThread)
        }
        #expect(name == "reel.named.thre", "the kernel keeps the first 15 bytes of the name")
        #expect(!same)
        #expect(!main)
    }

    @Test func aThrowingBodyHandsItsErrorToTheCaller() async {
        await #expect(throws: Refused.self) {
            try await onOwnThread(named: "reel.tests.throws") { () throws -> Int in throw Refused() }
        }
        let value = try? await onOwnThread(named: "reel.tests.returns") { () throws -> Int in 42 }
        #expect(value == 42)
    }
}

/// ReelThreads' `Parker`: latched, coalescing, never lost.
@Suite struct ParkerTests {
    @Test func anUnparkBeforeTheParkIsKept() {
        let parker = Parker()
        parker.unpark()
        #expect(parker.park(seconds: 300), "the pending wake-up returns the park at once")
    }

    @Test func unparksWhileAwakeWakeOnce() {
        let parker = Parker()
        for _ in 0..<5 { parker.unpark() }
        #expect(parker.park(seconds: 300))
        #expect(!parker.park(seconds: 0.01), "the five unparks were one wake-up")
    }

    @Test func aParkWithNothingPendingTimesOut() {
        #expect(!Parker().park(seconds: 0.01))
    }

    @Test func aThreadParkedOnAConditionIsWokenEveryTime() async {
        // A producer thread hands a consumer thread 10 000 values one at a time through a
        // `Mutex` and a parker each way: a lost wake-up stops both for good.
        let box = SlotBox()
        let consumer = Parker(), producer = Parker()
        async let received: Int = onOwnThread(named: "reel.consumer") {
            var sum = 0
            while true {
                let (value, done) = box.slot.withTrackedLock { slot -> (Int?, Bool) in
                    defer { slot.value = nil }
                    return (slot.value, slot.done)
                }
                if let value {
                    sum += value
                    producer.unpark()
                } else if done {
                    return sum
                } else {
                    consumer.park()
                }
            }
        }
        async let sent: Int = onOwnThread(named: "reel.producer") {
            var sum = 0
            for value in 1...10_000 {
                while !box.slot.withTrackedLock({ slot -> Bool in
                    guard slot.value == nil else { return false }
                    slot.value = value
                    return true
                }) {
                    producer.park()
                }
                sum += value
                consumer.unpark()
            }
            box.slot.withTrackedLock { $0.done = true }
            consumer.unpark()
            return sum
        }
        let (got, gave) = await (received, sent)
        #expect(got == gave)
        #expect(got == 50_005_000)
    }

    /// One value handed from the producer to the consumer.
    final class SlotBox: Sendable {
        struct Slot { var value: Int?; var done = false }
        let slot = Mutex(Slot())
    }
}

/// ReelThreads' `ThreadExecutor`: async work with a thread of its own.
@Suite struct ThreadExecutorTests {
    @Test func jobsRunInOrderOnTheExecutorsThread() async {
        let executor = ThreadExecutor(named: "reel.tests.exec")
        defer { executor.shutDown() }
        let seen = Mutex<[Int]>([])
        for index in 0..<20 {
            await Task(executorPreference: executor) { @Sendable in
                #expect(executor.isCurrent)
                seen.withTrackedLock { $0.append(index) }
            }.value
        }
        #expect(seen.withTrackedLock { $0 } == Array(0..<20))
        #expect(!executor.isCurrent)
    }

    @Test func aTaskOnTheExecutorRunsWhileThePoolIsHeld() async {
        // Every pool thread blocks until the executor's task has run: only a thread of the
        // executor's own can release them (under `taskset -c 0` the pool has one thread).
        let executor = ThreadExecutor(named: "reel.tests.held")
        defer { executor.shutDown() }
        let released = DispatchSemaphore(value: 0)
        let holders = ProcessInfo.processInfo.activeProcessorCount
        Task(executorPreference: executor) {
            try? await Task.sleep(for: .milliseconds(20))
            for _ in 0..<holders { released.signal() }
        }
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<holders {
                group.addTask(executorPreference: globalConcurrentExecutor) {
                    released.wait(timeout: .now() + 300) == .success
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 })
    }

    @Test func afterShutDownJobsStillRun() async throws {
        let executor = ThreadExecutor(named: "reel.tests.after")
        executor.shutDown()
        try await Task.sleep(for: .milliseconds(50))
        let ran = await Task(executorPreference: executor) { true }.value
        #expect(ran, "a job after the thread ended goes to the global executor")
    }
}
