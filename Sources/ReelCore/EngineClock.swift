import Foundation

/// The clock the engine reads host time from and waits on, injected wherever time
/// passes: the player's pacing, the swipe animations, a fake loader's latency.
///
/// Times are ``MediaTime`` values on the clock's own monotonic timeline (they mean
/// nothing across clocks). Two implementations: ``HostClock`` follows the machine's
/// monotonic time; ``ManualClock`` moves only when a test advances it, running what
/// was scheduled synchronously and in deadline order.
public protocol EngineClock: AnyObject, Sendable {
    /// The current time on this clock.
    var now: MediaTime { get }

    /// Runs `action` once the clock reaches `deadline` (at once, or as soon as
    /// possible, if it already has). Actions must be short: they wake someone up.
    @discardableResult
    func schedule(at deadline: MediaTime, _ action: @escaping @Sendable () -> Void) -> ScheduledAction
}

extension EngineClock {
    /// Runs `action` after `delay` from now.
    @discardableResult
    public func schedule(after delay: MediaTime, _ action: @escaping @Sendable () -> Void) -> ScheduledAction {
        schedule(at: now + delay, action)
    }

    /// Suspends until the clock reaches `deadline`. Throws `CancellationError`
    /// (and forgets the wake-up) when the task is cancelled.
    public func sleep(until deadline: MediaTime) async throws {
        let box = ContinuationBox()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                box.install(continuation)
                let scheduled = schedule(at: deadline) { box.resume() }
                box.onCancel { scheduled.cancel() }
            }
        } onCancel: {
            box.resume()
        }
        try Task.checkCancellation()
    }

    /// Suspends for `duration` of this clock's time.
    public func sleep(for duration: MediaTime) async throws {
        try await sleep(until: now + duration)
    }
}

/// A wake-up scheduled on an ``EngineClock``; cancel it to forget it.
public final class ScheduledAction: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    private var fired = false

    public init() {}

    /// Forgets the action if it has not run yet.
    public func cancel() { lock.withLock { cancelled = true } }

    public var isCancelled: Bool { lock.withLock { cancelled } }

    /// Marks the action as run; returns `false` when it was cancelled (or already ran)
    /// and must not run. Clocks call this right before running the action.
    public func claim() -> Bool {
        lock.withLock {
            guard !cancelled, !fired else { return false }
            fired = true
            return true
        }
    }
}

/// Resumes a continuation once, whichever of "time reached" and "cancelled" comes first.
private final class ContinuationBox: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?
    private var resumed = false
    private var cancelHook: (@Sendable () -> Void)?

    func install(_ continuation: CheckedContinuation<Void, Never>) {
        lock.lock()
        if resumed {
            lock.unlock()
            continuation.resume()
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    func onCancel(_ hook: @escaping @Sendable () -> Void) {
        lock.lock()
        if resumed { lock.unlock(); hook(); return }
        cancelHook = hook
        lock.unlock()
    }

    func resume() {
        lock.lock()
        guard !resumed else { lock.unlock(); return }
        resumed = true
        let continuation = self.continuation
        let hook = cancelHook
        self.continuation = nil
        cancelHook = nil
        lock.unlock()
        continuation?.resume()
        hook?()
    }
}
