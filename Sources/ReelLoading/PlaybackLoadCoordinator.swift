import Foundation
import ReelCore

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
public final class PlaybackLoadCoordinator: @unchecked Sendable {
    /// What the player needs.
    public enum Demand: Sendable {
        /// The player is loading below its low-water mark: preloads pause.
        case belowLowWaterMark
        /// The player needs the connection now: the running preload is cancelled.
        case needsConnection
    }

    private let lock = NSLock()
    private var active: [UUID: Demand] = [:]
    private var idleWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    private var cancelHandlers: [UUID: @Sendable () -> Void] = [:]

    public init() {}

    /// Starts a playback load; preloading waits until it (and every other) ends.
    public func beginLoading(_ demand: Demand) -> PlaybackLoad {
        let id = UUID()
        let handlers = lock.withLock { () -> [@Sendable () -> Void] in
            active[id] = demand
            return demand == .needsConnection ? Array(cancelHandlers.values) : []
        }
        handlers.forEach { $0() }
        return PlaybackLoad(coordinator: self, id: id)
    }

    /// Whether any player is loading.
    public var isPlaybackLoading: Bool { lock.withLock { !active.isEmpty } }

    /// How many playback loads are under way.
    public var activeLoadCount: Int { lock.withLock { active.count } }

    fileprivate func end(_ id: UUID) {
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            guard active.removeValue(forKey: id) != nil else { return [] }
            guard active.isEmpty else { return [] }
            defer { idleWaiters = [:] }
            return Array(idleWaiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Suspends while any playback load is under way (returns at once when none is).
    /// Returns whether it had to wait.
    @discardableResult
    func waitUntilIdle() async -> Bool {
        let id = UUID()
        var waited = false
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let idle = lock.withLock { () -> Bool in
                    if active.isEmpty { return true }
                    idleWaiters[id] = continuation
                    waited = true
                    return false
                }
                if idle { continuation.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { idleWaiters.removeValue(forKey: id) }
            waiter?.resume()
        }
        return waited
    }

    /// Suspends while any playback load is under way, but no longer than until `deadline`
    /// on `clock`. Returns `false` when the deadline came first.
    func waitUntilIdle(until deadline: MediaTime, on clock: any EngineClock) async -> Bool {
        let id = UUID()
        let timer = LockedBox<ScheduledAction?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let idle = lock.withLock { () -> Bool in
                    if active.isEmpty { return true }
                    idleWaiters[id] = continuation
                    return false
                }
                if idle {
                    continuation.resume()
                    return
                }
                let action = clock.schedule(at: deadline) { [self] in
                    let waiter = lock.withLock { idleWaiters.removeValue(forKey: id) }
                    waiter?.resume()
                }
                timer.withValue { $0 = action }
            }
        } onCancel: {
            let waiter = lock.withLock { idleWaiters.removeValue(forKey: id) }
            waiter?.resume()
        }
        timer.value?.cancel()
        return !isPlaybackLoading
    }

    /// Runs `handler` whenever a load that needs the connection begins, until the
    /// returned token is passed to ``removeCancelHandler(_:)``.
    func addCancelHandler(_ handler: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        lock.withLock { cancelHandlers[id] = handler }
        return id
    }

    func removeCancelHandler(_ id: UUID) {
        lock.withLock { _ = cancelHandlers.removeValue(forKey: id) }
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
    public func playbackDemandBegan(_ demand: PlaybackDemand) -> PlaybackDemandToken {
        let load = beginLoading(demand == .needsConnection ? .needsConnection : .belowLowWaterMark)
        return PlaybackDemandToken { load.end() }
    }
}
