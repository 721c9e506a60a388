import Dispatch
import Foundation
import ReelCore
import Synchronization

/// Holds a live item at its target offset behind the edge: the driver of ReelCore's
/// `LiveLatencyMachine`. It feeds the machine the player's position twice a second of media
/// (with the buffer ahead, the player's rate and its stalls) and the edge the item's loader
/// reports (`LiveLatencyReporting`), and sets the player's ``Player/rate`` to the speed the
/// machine chooses — the rate hold-to-speed-up sets, so the audio keeps its pitch (the render
/// thread stretches it with libavfilter's `atempo`). A rate the user chose (a pause, 2×) is left
/// alone until it is 1× again. Items that are not live, or whose loader reports no edge, are
/// left alone.
///
/// Threads: the player calls in (a periodic time observer on the driver's own serial queue; an
/// event observer that only hands stalls to that queue); the machine is that queue's, behind a
/// `Mutex` for Swift's checking. The rate is set from the queue, never from inside the
/// player's observers (a rate change calls them).
public final class LiveLatencyDriver: Sendable {
    private let queue = DispatchQueue(label: "reel.live-latency")
    private let machine: Mutex<LiveLatencyMachine>
    private weak let player: Player?
    private let onDecision: (@Sendable (LiveLatencyMachine.Decision) -> Void)?
    private let start = ContinuousClock.now
    private let tokens = Mutex<[ObserverToken]>([])

    /// Starts holding `player`'s live items at their target; `onDecision` hears every decision
    /// (the trace's `liveOffset`), on the driver's queue.
    public init(player: Player, configuration: LiveLatencyMachine.Configuration = .init(),
                interval: Double = 0.5, onDecision: (@Sendable (LiveLatencyMachine.Decision) -> Void)? = nil) {
        self.player = player
        self.machine = Mutex(LiveLatencyMachine(configuration: configuration))
        self.onDecision = onDecision
        let periodic = player.addPeriodicTimeObserver(forInterval: MediaTime(seconds: interval, preferredTimescale: 1000),
                                                      queue: queue) { [weak self] _ in self?.tick() }
        let events = player.addEventObserver { [weak self] event in
            guard let self, case .stall(true) = event else { return }
            let at = self.now()
            self.queue.async { self.machine.withLock { _ = $0.handle(.stalled(at: at)) } }
        }
        tokens.withLock { $0 = [periodic, events] }
    }

    /// Stops listening to the player (the rate stays as it is).
    public func stop() {
        let taken = tokens.withLock { tokens -> [ObserverToken] in
            defer { tokens = [] }
            return tokens
        }
        guard let player, taken.count == 2 else { return }
        player.removeTimeObserver(taken[0])
        player.removeEventObserver(taken[1])
    }

    private func now() -> Double { (ContinuousClock.now - start).inSecondsDouble }

    /// One decision, on the queue.
    private func tick() {
        guard let player, player.isLive, let item = player.currentItem,
              let reporting = item.loader as? any LiveLatencyReporting,
              let edge = reporting.liveEdge(of: item.url) else { return }
        let time = player.currentTime
        guard time.isNumeric else { return }
        let position = time.seconds
        let buffered = player.loadedTimeRanges.map { ($0.start + $0.duration).seconds }.max().map { max(0, $0 - position) }
        let rate = player.rate
        let at = now()
        let decision = machine.withLock { machine -> LiveLatencyMachine.Decision? in
            if machine.idealTarget != edge.target { _ = machine.handle(.idealTarget(edge.target)) }
            _ = machine.handle(.edge(newest: edge.newest, at: at - edge.age))
            _ = machine.handle(.rate(rate))
            return machine.handle(.playhead(position: position, buffered: buffered, at: at))
        }
        guard let decision else { return }
        if case .speed(let speed) = decision.action { player.rate = speed }
        onDecision?(decision)
    }
}

private extension Duration {
    var inSecondsDouble: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
