import Foundation

/// Polls `condition` until it holds or `timeout` passes (for work done on threads or
/// tasks the test does not drive); returns whether it held.
public func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
