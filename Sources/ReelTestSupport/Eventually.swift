import Foundation

/// How long a test waits for something that should happen before it gives up: a watchdog
/// against a hang, never a measurement. On one loaded core, work of a second can take
/// minutes (the whole suite shares the core), so it is generous; a test only waits this
/// long when it is failing.
public let hangWatchdog: Duration = .seconds(300)

/// Polls `condition` until it holds or `timeout` passes (for work done on threads or
/// tasks the test does not drive); returns whether it held.
///
/// It suspends between polls (`Task.sleep`), so it never holds a thread of the
/// concurrency pool. `timeout` is a watchdog against a hang, not a measurement: pick
/// it generously (a busy machine can pause a process for seconds). For work timed on
/// a `ManualClock`, drive the clock instead and check the condition in simulated time.
public func eventually(
    timeout: Duration = hangWatchdog, poll: Duration = .milliseconds(10), _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: poll)
    }
    return condition()
}
