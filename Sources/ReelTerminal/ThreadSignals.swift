import Dispatch
import Synchronization

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
