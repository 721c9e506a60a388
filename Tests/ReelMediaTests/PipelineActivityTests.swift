import Foundation
@testable import ReelMedia
import Testing

/// The pipeline lock and settling, without an engine: workers wait on conditions
/// of one lock, a broadcast wakes the ones that can go on, and a settle waiter
/// returns once every worker waits for something that has not happened.
@Suite struct PipelineActivityTests {
    final class Flags: @unchecked Sendable {
        var a = false
        var b = false
        var aDone = false
        var bDone = false
    }

    @Test func broadcastWakesTheReadyWorkerAndSettlingWaitsForIt() {
        let activity = PipelineActivity()
        let flags = Flags()
        let a = activity.register("a")
        let b = activity.register("b")
        let finished = DispatchGroup()
        for (worker, isA) in [(a, true), (b, false)] {
            finished.enter()
            Thread.detachNewThread {
                activity.condition.lock()
                activity.wait(worker) { isA ? flags.a : flags.b }
                if isA { flags.aDone = true } else { flags.bDone = true }
                activity.condition.unlock()
                activity.exit(worker)
                finished.leave()
            }
        }
        // Both wait for flags nobody set yet: settled.
        #expect(activity.waitUntilSettled(timeout: 60))
        #expect(activity.condition.withLock { !flags.aDone && !flags.bDone })

        activity.condition.withLock {
            flags.a = true
            activity.broadcast()
        }
        // Settled again only once `a` ran to its exit; `b` still waits.
        #expect(activity.waitUntilSettled(timeout: 60))
        #expect(activity.condition.withLock { flags.aDone && !flags.bDone })

        activity.condition.withLock {
            flags.b = true
            activity.broadcast()
        }
        #expect(activity.waitUntilSettled(timeout: 60))
        #expect(activity.condition.withLock { flags.aDone && flags.bDone })
        #expect(finished.wait(timeout: .now() + 60) == .success)
        #expect(activity.settleStatistics.calls == 3)
    }
}
