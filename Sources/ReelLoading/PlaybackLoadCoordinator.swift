import Foundation
import ReelCore
import Synchronization

/// How players tell the preloader that playback needs the network: playback always wins.
///
/// A player calls ``beginLoading(_:)`` when it starts loading below its low-water mark
/// (the preload pauses) or when it needs the connection right now, after a start or a
/// seek (the running preload is cancelled; what it fetched stays cached). The preload
/// goes on once every ``PlaybackLoad`` has ended.
///
/// ```swift
/// let coordinator = PlaybackLoadCoordinator()
/// let preloader = Preloader(loader: cachingLoader, coordinator: coordinator)
/// // in the player, when the buffer runs low:
/// let load = coordinator.beginLoading(.belowLowWaterMark)
/// // ... once the buffer is back above its high-water mark:
/// load.end()
/// ```
public final class PlaybackLoadCoordinator: Sendable {
    /// What the player needs.
    public enum Demand: Sendable {
        /// The player is loading below its low-water mark: preloads pause.
        case belowLowWaterMark
        /// The player needs the connection now: the running preload is cancelled.
        case needsConnection
    }

    /// Guarded by `state`. A waiter is registered in the same critical section that
    /// finds a load under way, and `end` takes the waiters in the critical section that
    /// removes the last load, so an idle moment is never missed. Each waiter leaves the
    /// table exactly once — taken by `end`, by its deadline, or by its task's
    /// cancellation — and whoever takes it resumes it.
    private struct State {
        var active: [UUID: Demand] = [:]
        /// Suspended waits; each resumes with `true` (it had to wait).
        var idleWaiters: [UUID: CheckedContinuation<Bool, Never>] = [:]
        var cancelHandlers: [UUID: @Sendable () -> Void] = [:]
    }

    private let state = Mutex(State())

    /// A coordinator with no load under way. Share one between the players (as their
    /// `PlaybackDemandObserver`) and the ``Preloader`` of the same network.
    public init() {}

    /// Starts a playback load; preloading waits until it (and every other) ends.
    public func beginLoading(_ demand: Demand) -> PlaybackLoad {
        let id = UUID()
        let handlers = state.withTrackedLock { state -> [@Sendable () -> Void] in
            state.active[id] = demand
            return demand == .needsConnection ? Array(state.cancelHandlers.values) : []
        }
        handlers.forEach { $0() }
        return PlaybackLoad(coordinator: self, id: id)
    }

    /// Whether any player is loading.
    public var isPlaybackLoading: Bool { state.withTrackedLock { !$0.active.isEmpty } }

    /// How many playback loads are under way.
    public var activeLoadCount: Int { state.withTrackedLock { $0.active.count } }

    /// How many waits for idle are suspended now (for deterministic tests).
    var suspendedWaiterCount: Int { state.withTrackedLock { $0.idleWaiters.count } }

    fileprivate func end(_ id: UUID) {
        let waiters = state.withTrackedLock { state -> [CheckedContinuation<Bool, Never>] in
            guard state.active.removeValue(forKey: id) != nil, state.active.isEmpty else { return [] }
            defer { state.idleWaiters = [:] }
            return Array(state.idleWaiters.values)
        }
        waiters.forEach { $0.resume(returning: true) }
    }

    /// Resumes the waiter `id` if it is still waiting (its deadline, or its task's cancellation).
    private func resumeWaiter(_ id: UUID) {
        let waiter = state.withTrackedLock { $0.idleWaiters.removeValue(forKey: id) }
        waiter?.resume(returning: true)
    }

    /// Suspends while any playback load is under way (or until ``resumeWaiter(_:)``): the core
    /// of both waits. `arm` runs once the waiter is registered (to schedule a deadline
    /// that calls ``resumeWaiter(_:)``); it does not run when no wait is needed.
    /// Returns whether it had to wait.
    private func suspendWhileLoading(arm: (UUID) -> Void) async -> Bool {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                // `Task.isCancelled` is set before the cancellation handler runs, and the
                // handler takes the same lock: a cancellation is seen here or it finds the waiter.
                let mustWait = state.withTrackedLock { state -> Bool in
                    if state.active.isEmpty || Task.isCancelled { return false }
                    state.idleWaiters[id] = continuation
                    return true
                }
                if mustWait {
                    arm(id)
                } else {
                    continuation.resume(returning: false)
                }
            }
        } onCancel: {
            resumeWaiter(id)
        }
    }

    /// Suspends while any playback load is under way (returns at once when none is, or
    /// when the task is cancelled). Returns whether it had to wait.
    @discardableResult
    func waitUntilIdle() async -> Bool {
        await suspendWhileLoading { _ in }
    }

    /// Suspends while any playback load is under way, but no longer than until `deadline`
    /// on `clock`. Returns `false` when the deadline came first.
    func waitUntilIdle(until deadline: MediaTime, on clock: any EngineClock) async -> Bool {
        let timer = Mutex<ScheduledAction?>(nil)
        _ = await suspendWhileLoading { id in
            let action = clock.schedule(at: deadline) { [self] in resumeWaiter(id) }
            timer.withTrackedLock { $0 = action }
        }
        timer.withTrackedLock { $0 }?.cancel()
        return !isPlaybackLoading
    }

    /// Runs `handler` whenever a load that needs the connection begins, until the
    /// returned token is passed to ``removeCancelHandler(_:)``.
    func addCancelHandler(_ handler: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        state.withTrackedLock { $0.cancelHandlers[id] = handler }
        return id
    }

    func removeCancelHandler(_ id: UUID) {
        state.withTrackedLock { _ = $0.cancelHandlers.removeValue(forKey: id) }
    }
}

/// One playback load announced to a ``PlaybackLoadCoordinator``. End it when the player
/// has what it needs; it also ends when released.
public final class PlaybackLoad: Sendable {
    private let coordinator: PlaybackLoadCoordinator
    private let id: UUID

    fileprivate init(coordinator: PlaybackLoadCoordinator, id: UUID) {
        self.coordinator = coordinator
        self.id = id
    }

    deinit { coordinator.end(id) }

    /// Ends the load (safe to call more than once).
    public func end() { coordinator.end(id) }
}

extension PlaybackLoadCoordinator: PlaybackDemandObserver {
    /// A player's demand, as the player reports it through `PlaybackDemandObserver`: begins a
    /// ``PlaybackLoad`` (`.needsConnection` as ``Demand/needsConnection``, any other as
    /// ``Demand/belowLowWaterMark``) that lasts until the returned token's `end()` is
    /// called or the token is released. Any thread; never blocks.
    public func playbackDemandBegan(_ demand: PlaybackDemand) -> PlaybackDemandToken {
        let load = beginLoading(demand == .needsConnection ? .needsConnection : .belowLowWaterMark)
        return PlaybackDemandToken { load.end() }
    }
}
