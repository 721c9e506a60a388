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
///
/// The pause between polls starts at `poll` and doubles up to ``eventuallyLongestPoll``
/// (or `poll`, if longer): a condition that holds soon is seen soon, and one that takes long
/// does not cost the pool a job every few milliseconds. On one core the whole suite's
/// waits share one pool thread, and fifty waits polling every 10 ms were a job every
/// 0.2 ms on a thread that gets a few percent of the core.
public func eventually(
    timeout: Duration = hangWatchdog, poll: Duration = .milliseconds(10), _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    let longest = max(poll, eventuallyLongestPoll)
    var pause = poll
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: pause)
        pause = min(pause * 2, longest)
    }
    return condition()
}

/// The longest pause between two polls of ``eventually(timeout:poll:_:)``.
public let eventuallyLongestPoll: Duration = .milliseconds(100)
