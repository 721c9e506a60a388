import Foundation

/// A value delivered once (from any thread), with the monotonic time it arrived, and
/// awaited: how a command learns that playback ended or failed, or a benchmark that a
/// first frame came. Later deliveries are ignored.
final class OneShot<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (Value, Double)?
    private var waiter: CheckedContinuation<(Value, Double)?, Never>?
    private var timedOut = false

    func fulfil(_ newValue: Value) {
        let at = monotonicMs()
        let waiter: CheckedContinuation<(Value, Double)?, Never>? = lock.withLock {
            guard stored == nil, !timedOut else { return nil }
            stored = (newValue, at)
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: (newValue, at))
    }

    var isFulfilled: Bool { lock.withLock { stored != nil } }

    /// The value, if it came.
    var value: Value? { lock.withLock { stored?.0 } }

    /// The value, however long it takes.
    func wait() async -> Value {
        // Only a timed wait's expiry delivers nil.
        await arrival()!.0
    }

    /// The value and when it came, or nil after `timeout` seconds.
    func wait(timeout: Double) async -> (Value, Double)? {
        let timer = Task {
            try? await Task.sleep(for: .seconds(timeout))
            self.expire()
        }
        defer { timer.cancel() }
        return await arrival()
    }

    private func arrival() async -> (Value, Double)? {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let stored {
                lock.unlock()
                continuation.resume(returning: stored)
            } else if timedOut {
                lock.unlock()
                continuation.resume(returning: nil)
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }

    private func expire() {
        let waiter: CheckedContinuation<(Value, Double)?, Never>? = lock.withLock {
            guard stored == nil else { return nil }
            timedOut = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: nil)
    }
}
