import Foundation
import Synchronization

/// A value that threads change and tests await: ``wait(timeout:until:)`` suspends the
/// test (a continuation, never a blocked thread) until a change makes the predicate hold.
/// The timeout is only a watchdog against a hang.
final class Observed<Value: Sendable>: Sendable {
    private struct Waiter {
        let predicate: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Value?, Never>
    }
    private struct State {
        var value: Value
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    /// Guarded: the value and who waits for what.
    private let state: Mutex<State>

    init(_ value: Value) { state = Mutex(State(value: value)) }

    var value: Value { state.withTrackedLock { $0.value } }

    /// Changes the value (any thread); waiters whose predicate now holds are resumed
    /// after the mutex is released.
    func update(_ change: (inout Value) -> Void) {
        let ready = state.withTrackedLock { state -> [(CheckedContinuation<Value?, Never>, Value)] in
            change(&state.value)
            let value = state.value
            let due = state.waiters.filter { $0.value.predicate(value) }
            for id in due.keys { state.waiters[id] = nil }
            return due.values.map { ($0.continuation, value) }
        }
        for (continuation, value) in ready { continuation.resume(returning: value) }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withTrackedLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: nil)
    }

    /// The value once `predicate` holds, or nil after `timeout`.
    func wait(timeout: Duration = .seconds(30), until predicate: @escaping @Sendable (Value) -> Bool) async -> Value? {
        let id = state.withTrackedLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        var watchdog: Task<Void, Never>?
        defer { watchdog?.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
            let now: Value? = state.withTrackedLock { state in
                if predicate(state.value) { return state.value }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return nil
            }
            if let now {
                continuation.resume(returning: now)
                return
            }
            // Started once the waiter is registered, so it cannot fire before.
            watchdog = Task { [self] in
                try? await Task.sleep(for: timeout)
                expire(id)
            }
        }
    }
}

/// Runs `body` on a thread of its own and awaits its result (blocking work stays off the
/// concurrency pool).
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}
