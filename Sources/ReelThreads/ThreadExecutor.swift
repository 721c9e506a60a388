import Foundation
import Synchronization

/// A `TaskExecutor` that runs its jobs, one at a time and in order, on a thread of its own.
///
/// For async work that must get a thread when the Swift concurrency pool has none free: the
/// pool has as many threads as the machine has cores, and a task that computes for a while
/// holds one. A server inside a test process is the case in point: its request handlers are
/// async, and a client waiting for them in another test must not wait for the pool as well.
///
/// ```swift
/// let executor = ThreadExecutor(named: "reel.origin")
/// let task = Task(executorPreference: executor) { try await handler(request) }
/// // …
/// executor.shutDown()   // the thread ends once its queue is empty
/// ```
///
/// A job enqueued after ``shutDown()`` goes to the global concurrent executor, so no task
/// that still holds a preference for this executor is ever left without a thread.
public final class ThreadExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var shutDown = false
        var threadEnded = false
    }

    /// Guarded: the jobs waiting, oldest first, and whether the thread is ending.
    private let queue = Mutex(Queue())
    /// The thread parks here while its queue is empty.
    private let parker = Parker()
    /// The thread's identity, for ``isCurrent``.
    private let threadID = Mutex<pthread_t?>(nil)

    /// Starts the executor's thread, named `name` in the kernel (what `gdb` and `top -H` show).
    public init(named name: String, stackSize: Int = defaultOwnThreadStackSize) {
        let thread = Thread { [self] in
            nameCurrentThread(name)
            threadID.withTrackedLock { $0 = pthread_self() }
            runJobs()
        }
        thread.name = name
        thread.stackSize = stackSize
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = queue.withTrackedLock { queue in
            guard !queue.threadEnded else { return false }
            queue.jobs.append(job)
            return true
        }
        if accepted {
            parker.unpark()
        } else {
            globalConcurrentExecutor.enqueue(job)
        }
    }

    /// Lets the thread end once it has run every job already queued; later jobs run on the
    /// global concurrent executor. Safe to call more than once and from any thread.
    public func shutDown() {
        queue.withTrackedLock { $0.shutDown = true }
        parker.unpark()
    }

    /// Whether the caller runs on this executor's thread.
    public var isCurrent: Bool {
        threadID.withTrackedLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    private func runJobs() {
        while true {
            let next: UnownedJob? = queue.withTrackedLock { queue in
                if !queue.jobs.isEmpty { return queue.jobs.removeFirst() }
                if queue.shutDown { queue.threadEnded = true }
                return nil
            }
            if let next {
                next.runSynchronously(on: asUnownedTaskExecutor())
                continue
            }
            if queue.withTrackedLock({ $0.threadEnded }) { return }
            parker.park()
        }
    }
}
