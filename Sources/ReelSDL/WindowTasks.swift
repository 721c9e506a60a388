import Foundation
import ReelCore
import Synchronization

/// The window's background commands — choose a category, read a feed again, open search
/// results, search — each run as a task whose outcome, success or failure, comes back to the
/// window's thread: the loop takes them (``takeOutcomes()``) and shows a failure as a notice
/// over the feed. Nothing a command throws is dropped.
///
/// Threads: ``run(_:counted:_:)`` and ``takeOutcomes()`` on the window's thread; the bodies on
/// the concurrency pool (they only await); outcomes are handed over under `state` and the
/// window is woken after it is released.
final class WindowTasks: Sendable {
    /// What ended, and how.
    struct Outcome: Sendable, Equatable {
        /// The command, as the user would name it ("分类 Category").
        var what: String
        /// nil when it succeeded (or was cancelled).
        var failure: String?
    }

    /// Commands counted while they run (`isRunning(_:)`): reading a category again.
    enum Kind: Sendable, Hashable { case reload }

    private struct State {
        var outcomes: [Outcome] = []
        var running: [Kind: Int] = [:]
    }

    // Immutable after init.
    private let wake: @Sendable () -> Void
    /// Guarded: finished commands not yet taken, and the counted ones still running.
    private let state = Mutex(State())

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    /// Runs `body` as a task; its outcome comes back through ``takeOutcomes()``.
    func run(_ what: String, counted kind: Kind? = nil, _ body: @escaping @Sendable () async throws -> Void) {
        if let kind { state.withTrackedLock { $0.running[kind, default: 0] += 1 } }
        Task { [self] in
            var failure: String?
            do {
                try await body()
            } catch is CancellationError {
            } catch {
                failure = String(describing: error)
            }
            state.withTrackedLock { s in
                s.outcomes.append(Outcome(what: what, failure: failure))
                if let kind { s.running[kind, default: 1] -= 1 }
            }
            wake()
        }
    }

    /// Whether a command of `kind` is still running.
    func isRunning(_ kind: Kind) -> Bool { state.withTrackedLock { ($0.running[kind] ?? 0) > 0 } }

    /// The outcomes since the last call, oldest first.
    func takeOutcomes() -> [Outcome] {
        state.withTrackedLock { s in
            defer { s.outcomes = [] }
            return s.outcomes
        }
    }
}
