import Foundation
import Synchronization

/// A value delivered once (from any thread), with the monotonic time it arrived (milliseconds), and
/// awaited: how a command learns that playback ended or failed, or a benchmark that a
/// first frame came. Later deliveries are ignored. Waiting suspends (a continuation),
/// never blocks a thread; waiters are resumed after the mutex is released.
public final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var stored: (Value, Double)?
        var waiters: [CheckedContinuation<(Value, Double)?, Never>] = []
        var timedOut = false
    }

    /// Guarded: the value, who waits for it, and whether a timed wait gave up.
    private let state = Mutex(State())

    public init() {}

    public func fulfil(_ newValue: Value) {
        let at = Double(DispatchTime.now().uptimeNanoseconds) / 1e6
        let waiters = state.withTrackedLock { state -> [CheckedContinuation<(Value, Double)?, Never>] in
            guard state.stored == nil, !state.timedOut else { return [] }
            state.stored = (newValue, at)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: (newValue, at)) }
    }

    public var isFulfilled: Bool { state.withTrackedLock { $0.stored != nil } }

    /// The value, if it came.
    public var value: Value? { state.withTrackedLock { $0.stored?.0 } }

    /// The value, however long it takes.
    public func wait() async -> Value {
        // Only a timed wait's expiry delivers nil.
        await arrival()!.0
    }

    /// The value and when it came, or nil after `timeout` seconds.
    public func wait(timeout: Double) async -> (Value, Double)? {
        let timer = Task {
            try? await Task.sleep(for: .seconds(timeout))
            self.expire()
        }
        defer { timer.cancel() }
        return await arrival()
    }

    private func arrival() async -> (Value, Double)? {
        await withCheckedContinuation { (continuation: CheckedContinuation<(Value, Double)?, Never>) in
            let now: (Value, Double)?? = state.withTrackedLock { state in
                if let stored = state.stored { return .some(stored) }
                if state.timedOut { return .some(nil) }
                state.waiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    private func expire() {
        let waiters = state.withTrackedLock { state -> [CheckedContinuation<(Value, Double)?, Never>] in
            guard state.stored == nil else { return [] }
            state.timedOut = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }
}
