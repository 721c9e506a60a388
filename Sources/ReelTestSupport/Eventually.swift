import Foundation

/// Polls `condition` until it holds or `timeout` passes (for work done on threads or
/// tasks the test does not drive); returns whether it held.
///
/// It suspends between polls (`Task.sleep`), so it never holds a thread of the
/// concurrency pool. `timeout` is a watchdog against a hang, not a measurement: pick
/// it generously (a busy machine can pause a process for seconds). For work timed on
/// a `ManualClock`, drive the clock instead and check the condition in simulated time.
public func eventually(
    timeout: Duration = .seconds(10), poll: Duration = .milliseconds(10), _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: poll)
    }
    return condition()
}
