import Foundation
import ReelThreads
import Synchronization

/// A task executor with a thread of its own. Tasks created with it as their preference run
/// there, not on the shared concurrency pool: a test that counts hundreds of hand-offs between
/// two tasks measures its own wake-ups, not how long the rest of the suite holds the pool (on
/// one core the pool is one thread, and every hop waits behind every other test's work).
///
/// The thread runs until ``shutdown()``; jobs enqueued after that still run, so no task is
/// stranded.
public final class ThreadExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var stopping = false
    }

    private let queue = Mutex(Queue())
    private let parker = Parker()

    public init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withTrackedLock { $0.jobs.append(job) }
        parker.unpark()
    }

    /// Lets the thread end once it has run every job it holds.
    public func shutdown() {
        queue.withTrackedLock { $0.stopping = true }
        parker.unpark()
    }

    private func run() {
        while true {
            let (jobs, stopping) = queue.withTrackedLock { queue in
                defer { queue.jobs.removeAll(keepingCapacity: true) }
                return (queue.jobs, queue.stopping)
            }
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if jobs.isEmpty {
                if stopping { return }
                parker.park()
            }
        }
    }
}
