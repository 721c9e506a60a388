import Foundation
import Synchronization

/// A clock that moves only when told: `advance(by:)` moves it forward and runs,
/// synchronously on the caller's thread and in deadline order, every action that
/// falls due — each one seeing ``now`` equal to its own deadline, as an
/// `EmbeddedEventLoop` does. Actions due at the same time run in the order they
/// were scheduled. Nothing happens between advances, so a test driven by a manual
/// clock gives the same result every run.
public final class ManualClock: EngineClock, Sendable {
    private struct Entry {
        var deadline: MediaTime
        var sequence: UInt64
        var action: @Sendable () -> Void
        var handle: ScheduledAction
    }

    private struct State {
        var current: MediaTime
        var entries: [Entry] = []
        var sequence: UInt64 = 0
    }

    /// Guards the time and the waiting actions; never held while an action runs.
    private let state: Mutex<State>

    /// A clock reading `now` (zero by default).
    public init(now: MediaTime = .zero) {
        state = Mutex(State(current: now))
    }

    public var now: MediaTime { state.withTrackedLock { $0.current } }

    @discardableResult
    public func schedule(at deadline: MediaTime, _ action: @escaping @Sendable () -> Void) -> ScheduledAction {
        let handle = ScheduledAction()
        state.withTrackedLock { state in
            state.sequence += 1
            state.entries.append(Entry(deadline: deadline, sequence: state.sequence, action: action, handle: handle))
        }
        return handle
    }

    /// The earliest deadline still waiting, if any.
    public var nextDeadline: MediaTime? {
        state.withTrackedLock { state in
            state.entries.filter { !$0.handle.isCancelled }.map(\.deadline).min()
        }
    }

    /// How many actions are waiting.
    public var pendingCount: Int {
        state.withTrackedLock { state in state.entries.filter { !$0.handle.isCancelled }.count }
    }

    /// Moves the clock forward by `duration`, running what falls due on the way.
    public func advance(by duration: MediaTime) {
        advance(to: now + duration)
    }

    /// Moves the clock to `target` (never backwards), running what falls due on
    /// the way. Actions scheduled by those actions run too if they are due by `target`.
    public func advance(to target: MediaTime) {
        while let entry = takeNext(dueBy: target) {
            if entry.handle.claim() { entry.action() }
        }
        state.withTrackedLock { state in
            if state.current < target { state.current = target }
        }
    }

    /// Runs the one action due first, if it falls due by `limit` (any, without a limit): the
    /// clock moves to its deadline (never backwards) and the action runs. Otherwise the clock
    /// moves to `limit` (or stays, without one). Returns whether an action ran.
    ///
    /// A driver that lets the system under test settle between calls sees every action run
    /// on a settled system, so the same script gives the same result every run
    /// (``advance(to:)`` runs every due action back to back, with no settling between).
    @discardableResult
    public func runNext(notAfter limit: MediaTime? = nil) -> Bool {
        while let entry = takeNext(dueBy: limit ?? .positiveInfinity) {
            if entry.handle.claim() {
                entry.action()
                return true
            }
        }
        if let limit {
            state.withTrackedLock { state in
                if state.current < limit { state.current = limit }
            }
        }
        return false
    }

    /// Itself: a test's whole system runs on the one timeline it advances.
    public func makeTimeline() -> any EngineClock { self }

    /// Runs the actions already due at the current time.
    public func runDue() {
        advance(to: now)
    }

    /// Advances deadline by deadline until `condition` holds; `false` when nothing is left
    /// scheduled first. For systems whose steps all run inside the clock's actions (the fake
    /// loader's deliveries): the whole run happens on the caller's thread, in simulated time,
    /// however busy the machine is.
    public func runUntil(_ condition: () -> Bool) -> Bool {
        while !condition() {
            guard advanceToNextDeadline() else { return condition() }
        }
        return true
    }

    /// Advances to the next deadline and runs what is due there. Returns `false`
    /// when nothing is scheduled.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let next = nextDeadline else { return false }
        advance(to: max(next, now))
        return true
    }

    private func takeNext(dueBy target: MediaTime) -> Entry? {
        state.withTrackedLock { state in
            state.entries.removeAll { $0.handle.isCancelled }
            var best: Int?
            for (index, entry) in state.entries.enumerated() where entry.deadline <= target {
                if let b = best {
                    let other = state.entries[b]
                    if entry.deadline < other.deadline
                        || (entry.deadline == other.deadline && entry.sequence < other.sequence) {
                        best = index
                    }
                } else {
                    best = index
                }
            }
            guard let index = best else { return nil }
            let entry = state.entries.remove(at: index)
            if state.current < entry.deadline { state.current = entry.deadline }
            return entry
        }
    }
}
