import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One mutex with any number of condition variables on it: the pipeline lock.
/// Every waiter of a pipeline has its own condition, so a change wakes only the
/// waiters it concerns (see ``PipelineActivity/broadcast()``) instead of every
/// thread of the player — on two cores, a thundering herd per frame costs decode time.
final class PipelineLock: NSLocking, @unchecked Sendable {
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Called by ``broadcast()`` with the lock held.
    var onBroadcast: (() -> Void)?

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Wakes every waiter that can now go on (call with the lock held, after
    /// changing shared state).
    func broadcast() { onBroadcast?() }

    /// A condition variable on this lock.
    final class Condition: @unchecked Sendable {
        private let cond: UnsafeMutablePointer<pthread_cond_t>
        private let lock: PipelineLock

        init(_ lock: PipelineLock) {
            self.lock = lock
            cond = .allocate(capacity: 1)
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(cond, &attributes)
            pthread_condattr_destroy(&attributes)
        }

        deinit {
            pthread_cond_destroy(cond)
            cond.deallocate()
        }

        /// Waits (with the lock held) until signalled or spuriously woken.
        func wait() { pthread_cond_wait(cond, lock.mutex) }

        /// Waits at most `seconds`; returns `false` on timeout.
        func wait(seconds: Double) -> Bool {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let total = Int64(now.tv_nsec) + Int64(max(0, seconds) * 1e9)
            var deadline = timespec(tv_sec: now.tv_sec + Int(total / 1_000_000_000), tv_nsec: Int(total % 1_000_000_000))
            return pthread_cond_timedwait(cond, lock.mutex, &deadline) == 0
        }

        func signal() { pthread_cond_signal(cond) }
    }
}
