import Foundation
import Synchronization
import ReelTestSupport
import Testing
@testable import ReelMedia

/// The pipeline's one lock: parked workers wake exactly when their condition holds, no
/// wake-up is lost, and settling means every worker waits for something that has not happened.
@Suite struct PipelineMonitorTests {
    struct Counters: Sendable {
        var a = 0
        var b = 0
        var stop = false
    }

    /// Runs `body` on a thread of its own (never on the concurrency pool).
    static func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        Thread {
            body()
            group.leave()
        }.start()
        return group
    }

    /// Whether `group` finished within the watchdog, waited for on a thread of its own (a
    /// global queue's thread is one of the concurrency pool's on Linux).
    static func finished(_ group: DispatchGroup) async -> Bool {
        await offThePool { group.wait(timeout: .now() + .seconds(Int(hangWatchdog.components.seconds))) == .success }
    }

    @Test func aChangeWakesOnlyTheWorkerWhoseConditionHolds() async {
        let monitor = PipelineMonitor(Counters())
        let first = monitor.register("first")
        let second = monitor.register("second")
        let woke = Mutex<[String]>([])
        let g1 = Self.onThread {
            monitor.wait(first, until: { $0.a > 0 || $0.stop }, then: { _ in })
            woke.withTrackedLock { $0.append("first") }
            monitor.exit(first)
        }
        let g2 = Self.onThread {
            monitor.wait(second, until: { $0.b > 0 || $0.stop }, then: { _ in })
            woke.withTrackedLock { $0.append("second") }
            monitor.exit(second)
        }
        #expect(await monitor.settled(), "both wait for something that has not happened")
        monitor.update { $0.a = 1 }
        #expect(await Self.finished(g1))
        #expect(await monitor.settled(), "the second still waits")
        #expect(woke.withTrackedLock { $0 } == ["first"])
        monitor.update { $0.b = 1 }
        #expect(await Self.finished(g2))
        #expect(woke.withTrackedLock { $0 } == ["first", "second"])
    }

    @Test func aBusyWorkerIsNotSettled() async {
        let monitor = PipelineMonitor(Counters())
        let worker = monitor.register("worker")
        let release = DispatchSemaphore(value: 0)
        let group = Self.onThread {
            release.wait()   // busy: neither parked nor reading
            monitor.wait(worker, until: { $0.stop }, then: { _ in })
            monitor.exit(worker)
        }
        #expect(!monitor.isSettled)
        #expect(monitor.busyWorkers() == ["worker"])
        release.signal()
        #expect(await monitor.settled())
        monitor.update { $0.stop = true }
        #expect(await Self.finished(group))
        #expect(monitor.isSettled, "a worker that exited is settled")
    }

    @Test func producersAndConsumersNeverLoseAWakeUp() async {
        // A bounded queue between two threads, each parking when it cannot go on: 200 000
        // hand-offs finish only if no wake-up is ever lost.
        struct Queue: Sendable {
            var items = 0
            var produced = 0
            var consumed = 0
        }
        let monitor = PipelineMonitor(Queue())
        let producer = monitor.register("producer")
        let consumer = monitor.register("consumer")
        let total = 200_000
        let p = Self.onThread {
            for _ in 0..<total {
                monitor.wait(producer, until: { $0.items < 4 }, then: { state in
                    state.items += 1
                    state.produced += 1
                })
            }
            monitor.exit(producer)
        }
        let c = Self.onThread {
            for _ in 0..<total {
                monitor.wait(consumer, until: { $0.items > 0 }, then: { state in
                    state.items -= 1
                    state.consumed += 1
                })
            }
            monitor.exit(consumer)
        }
        #expect(await Self.finished(p))
        #expect(await Self.finished(c))
        #expect(monitor.read { ($0.produced, $0.consumed, $0.items) } == (total, total, 0))
    }

    @Test func aTimedWaitLooksAgainWithoutAnUpdate() async {
        let monitor = PipelineMonitor(Counters())
        let worker = monitor.register("worker")
        let outside = Atomic<Bool>(false)
        let group = Self.onThread {
            // The condition depends on something outside the state (as the audio ring does).
            while monitor.wait(worker, until: { _ in outside.load(ordering: .acquiring) }, orAfter: 0.005, then: { _ in true }) == nil {}
            monitor.exit(worker)
        }
        try? await Task.sleep(for: .milliseconds(20))
        outside.store(true, ordering: .releasing)
        #expect(await Self.finished(group))
    }
}
