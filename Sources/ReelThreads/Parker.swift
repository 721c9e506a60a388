import Dispatch
import Synchronization

/// The one way a thread of Reel's own sleeps until another thread has something for it.
///
/// The thing waited for lives in the waker's and sleeper's shared state, under its own
/// `Mutex`; `Parker` only carries the wake-up. The sleeper finds the state not ready under the
/// mutex, makes sure a waker can find it (a parker registered in the state, or one the waker
/// always signals), releases the mutex, and parks; the waker changes the state, releases the
/// mutex, and unparks. A wake-up is latched: an ``unpark()`` that comes before ``park()`` makes
/// the park return at once, so none is lost. Wake-ups coalesce: any number of unparks while
/// the sleeper is awake make its next park return once. A park may therefore return with the
/// state still not ready, and the sleeper always looks again.
///
/// Threads of the engine's own only (the demux, decode and render threads, FFmpeg's AVIO reads,
/// the terminal's render thread): a thread of the Swift concurrency pool never parks.
public final class Parker: Sendable {
    /// Whether a wake-up was posted to `semaphore` and not yet consumed. An atomic rather than
    /// a `Mutex`: ThreadSanitizer sees its order (it does not see the futex inside `Mutex`).
    private let pending = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    public init() {}

    /// Wakes the parked thread, or makes its next park return at once. Any thread.
    public func unpark() {
        if !pending.exchange(true, ordering: .sequentiallyConsistent) { semaphore.signal() }
    }

    /// Blocks the calling thread until an unpark (at once if one is pending).
    public func park() {
        semaphore.wait()
        pending.store(false, ordering: .sequentiallyConsistent)
    }

    /// Blocks until an unpark or until `seconds` of wall time pass; `false` when the time ran
    /// out first. For conditions that also depend on something outside the shared state.
    @discardableResult
    public func park(seconds: Double) -> Bool {
        let nanoseconds = Int(min(max(0, seconds), 1e9) * 1e9)
        guard semaphore.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return false }
        pending.store(false, ordering: .sequentiallyConsistent)
        return true
    }
}
