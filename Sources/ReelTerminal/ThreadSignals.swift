import Dispatch
import Synchronization

/// How a thread of this module sleeps until there is work: the one blocking primitive
/// of ReelTerminal (its locks are all `Synchronization.Mutex`, which has no condition
/// variable).
///
/// The work itself lives in the owner's `Mutex`; whoever changes it calls ``signal()``
/// after releasing that mutex, and the sleeping thread calls ``wait(seconds:)`` and then
/// looks at the state again under the mutex. Signals coalesce into one pending wake-up,
/// so a burst of changes wakes the thread once; a wake-up may be spurious (the state is
/// always checked again), but none is lost: a signal that comes while the thread is
/// awake makes its next wait return at once.
///
/// Only for the module's own threads (the render thread): never wait on the Swift
/// concurrency pool.
final class Wakeup: Sendable {
    /// Whether a wake-up is posted to `semaphore` and not yet consumed.
    private let pending = Mutex(false)
    private let semaphore = DispatchSemaphore(value: 0)

    init() {}

    /// Wakes the waiting thread (or makes its next wait return at once). Any thread.
    func signal() {
        let post = pending.withTrackedLock { pending in
            defer { pending = true }
            return !pending
        }
        if post { semaphore.signal() }
    }

    /// Sleeps until signalled or `seconds` pass; `false` on timeout. The owner's thread only.
    @discardableResult
    func wait(seconds: Double) -> Bool {
        let signalled = semaphore.wait(timeout: .now() + .nanoseconds(Int(max(0, seconds) * 1e9))) == .success
        if signalled { pending.withTrackedLock { $0 = false } }
        return signalled
    }
}

/// A thread's exit, awaited from async code: the thread calls ``fire()`` as its last act;
/// ``wait()`` suspends (never blocks) until then, or returns at once when it already has.
final class ExitSignal: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Guarded: whether the thread is gone, and who waits for it.
    private let state = Mutex(State())

    init() {}

    /// The thread is done. Waiters are resumed after the mutex is released.
    func fire() {
        let waiters = state.withTrackedLock { state in
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withTrackedLock { state in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
