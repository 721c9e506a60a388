import Foundation
import Synchronization

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

    /// A clock reading this one's time whose actions run in order on a timeline of their
    /// own: an owner whose actions do real work (a player's presentation steps) takes one, so
    /// a slow step of one player never delays another's, or a loader's wake-up. The host
    /// clock answers with a new serial queue; the manual clock with itself (one timeline,
    /// advanced by the test, as deterministic as before).
    func makeTimeline() -> any EngineClock
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
public final class ScheduledAction: Sendable {
    private struct State {
        var cancelled = false
        var fired = false
    }
    private let state = Mutex(State())

    public init() {}

    /// Forgets the action if it has not run yet.
    public func cancel() { state.withTrackedLock { $0.cancelled = true } }

    public var isCancelled: Bool { state.withTrackedLock { $0.cancelled } }

    /// Marks the action as run; returns `false` when it was cancelled (or already ran)
    /// and must not run. Clocks call this right before running the action.
    public func claim() -> Bool {
        state.withTrackedLock { state in
            guard !state.cancelled, !state.fired else { return false }
            state.fired = true
            return true
        }
    }
}

/// Resumes a continuation once, whichever of "time reached" and "cancelled" comes first.
private final class ContinuationBox: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var resumed = false
        var cancelHook: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withTrackedLock { state -> Bool in
            if state.resumed { return true }
            state.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func onCancel(_ hook: @escaping @Sendable () -> Void) {
        let runNow = state.withTrackedLock { state -> Bool in
            if state.resumed { return true }
            state.cancelHook = hook
            return false
        }
        if runNow { hook() }
    }

    func resume() {
        let taken = state.withTrackedLock { state -> (CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?)? in
            guard !state.resumed else { return nil }
            state.resumed = true
            defer { state.continuation = nil; state.cancelHook = nil }
            return (state.continuation, state.cancelHook)
        }
        guard let (continuation, hook) = taken else { return }
        continuation?.resume()
        hook?()
    }
}
