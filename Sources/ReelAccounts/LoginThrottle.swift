import Foundation
import ReelCore
import Synchronization

/// Limits failed sign-ins per account name: after `maximumFailures` failures within
/// `window`, further attempts for that name are refused until the oldest failure leaves
/// the window. Time comes from the injected `now`. State is behind one Mutex, taken
/// briefly from any thread.
final class LoginThrottle: Sendable {
    let maximumFailures: Int
    let window: TimeInterval
    private let now: @Sendable () -> Date
    private let failures = Mutex<[String: [Date]]>([:])

    init(maximumFailures: Int, window: TimeInterval, now: @escaping @Sendable () -> Date) {
        self.maximumFailures = maximumFailures
        self.window = window
        self.now = now
    }

    /// Seconds until `name` may try again, or `nil` when it may try now.
    func retryAfter(_ name: String) -> Int? {
        let key = name.lowercased()
        let now = self.now()
        return failures.withTrackedLock { table -> Int? in
            let recent = (table[key] ?? []).filter { now.timeIntervalSince($0) < window }
            table[key] = recent.isEmpty ? nil : recent
            guard recent.count >= maximumFailures, let oldest = recent.first else { return nil }
            return max(1, Int((window - now.timeIntervalSince(oldest)).rounded(.up)))
        }
    }

    func recordFailure(_ name: String) {
        let key = name.lowercased()
        let now = self.now()
        failures.withTrackedLock { table in table[key, default: []].append(now) }
    }

    func recordSuccess(_ name: String) {
        let key = name.lowercased()
        failures.withTrackedLock { table in table[key] = nil }
    }
}
