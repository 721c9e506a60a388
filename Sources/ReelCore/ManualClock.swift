import Foundation

/// A clock that moves only when told: `advance(by:)` moves it forward and runs,
/// synchronously on the caller's thread and in deadline order, every action that
/// falls due — each one seeing ``now`` equal to its own deadline, as an
/// `EmbeddedEventLoop` does. Actions due at the same time run in the order they
/// were scheduled. Nothing happens between advances, so a test driven by a manual
/// clock gives the same result every run.
public final class ManualClock: EngineClock, @unchecked Sendable {
    private struct Entry {
        var deadline: MediaTime
        var sequence: UInt64
        var action: @Sendable () -> Void
        var handle: ScheduledAction
    }

    private let lock = NSLock()
    private var current: MediaTime
    private var entries: [Entry] = []
    private var sequence: UInt64 = 0

    /// A clock reading `now` (zero by default).
    public init(now: MediaTime = .zero) {
        self.current = now
    }

    public var now: MediaTime { lock.withLock { current } }

    @discardableResult
    public func schedule(at deadline: MediaTime, _ action: @escaping @Sendable () -> Void) -> ScheduledAction {
        let handle = ScheduledAction()
        lock.withLock {
            sequence += 1
            entries.append(Entry(deadline: deadline, sequence: sequence, action: action, handle: handle))
        }
        return handle
    }

    /// The earliest deadline still waiting, if any.
    public var nextDeadline: MediaTime? {
        lock.withLock {
            entries.filter { !$0.handle.isCancelled }.map(\.deadline).min()
        }
    }

    /// How many actions are waiting.
    public var pendingCount: Int {
        lock.withLock { entries.filter { !$0.handle.isCancelled }.count }
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
        lock.withLock {
            if current < target { current = target }
        }
    }

    /// Runs the actions already due at the current time.
    public func runDue() {
        advance(to: now)
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
        lock.withLock {
            entries.removeAll { $0.handle.isCancelled }
            var best: Int?
            for (index, entry) in entries.enumerated() where entry.deadline <= target {
                if let b = best {
                    let other = entries[b]
                    if entry.deadline < other.deadline
                        || (entry.deadline == other.deadline && entry.sequence < other.sequence) {
                        best = index
                    }
                } else {
                    best = index
                }
            }
            guard let index = best else { return nil }
            let entry = entries.remove(at: index)
            if current < entry.deadline { current = entry.deadline }
            return entry
        }
    }
}
