/// Holds a live stream's playback at a target offset behind its edge with a playback speed a
/// little above or below 1× (0.97–1.03 by default), the way Media3's
/// `DefaultLivePlaybackSpeedControl` does: the speed is 1 plus a gain times the offset's error,
/// changed at most once a second; a stall moves the target back half a second, and it comes
/// back towards the ideal once playback has run without one for a while.
///
/// A value: events in (the ideal target, the edge as a playlist placed it, the playhead with
/// the buffer ahead of it, a stall, the rate the player is at), a ``Decision`` out at each
/// playhead. Times are monotonic seconds the caller gives; stream times are seconds on the
/// stream's own clock. No threads, no clock of its own.
///
/// The edge: a live playlist lists media only once it is complete, so the newest listed media's
/// end at the moment the playlist arrived is at or behind the true edge. The stream grows in
/// real time, so the true edge is `now + c` for a constant `c`, and every sample `newest − at`
/// is at most `c`: the estimate is the largest sample of the last ``Configuration/edgeMemory``
/// seconds (a blocking reload, answered when a part appears, gives `c` itself). Samples age out,
/// so an origin whose clock drifts, or a timeline placed again, is followed.
public struct LiveLatencyMachine: Sendable, Hashable {
    public struct Configuration: Sendable, Hashable {
        /// The slowest and fastest speeds it plays at.
        public var minimumSpeed = 0.97
        public var maximumSpeed = 1.03
        /// How much faster per second of offset over the target (Media3's proportional factor).
        public var gain = 0.1
        /// Within this many seconds of the target it plays at 1×.
        public var tolerance = 0.05
        /// Speeds are multiples of this (a change of rate re-renders the audio ahead).
        public var speedStep = 0.005
        /// The speed changes at most this often, in seconds.
        public var minimumUpdateInterval = 1.0
        /// A stall moves the target back this far, seconds.
        public var stallIncrement = 0.5
        /// The farthest past the ideal target stalls may move it, seconds.
        public var maximumTargetIncrease = 3.0
        /// After this many seconds without a stall the target comes back towards the ideal…
        public var recoveryDelay = 10.0
        /// …by this many seconds per second.
        public var recoveryRate = 0.05
        /// Never faster than 1× with less than this many seconds buffered ahead.
        public var minimumBufferToSpeedUp = 0.5
        /// Edge samples older than this (seconds) no longer count.
        public var edgeMemory = 10.0

        public init() {}
    }

    public enum Event: Sendable, Hashable {
        /// The offset to hold when nothing stalls (the playlist's `PART-HOLD-BACK`, `HOLD-BACK`, or
        /// the user's choice), seconds.
        case idealTarget(Double)
        /// A playlist placed its newest media's end at stream time `newest`; it arrived at `at`.
        case edge(newest: Double, at: Double)
        /// Playback is at stream time `position` at `at`, `buffered` seconds ahead of it.
        case playhead(position: Double, buffered: Double?, at: Double)
        /// Playback waited for data at `at`.
        case stalled(at: Double)
        /// The player's rate is now `rate` (a pause, a hold-to-speed-up, or what this set).
        case rate(Double)
    }

    /// Why it changes nothing.
    public enum Hold: String, Sendable, Hashable {
        /// No ideal target yet.
        case noTarget
        /// No playlist placed the edge on the stream's clock yet.
        case noEdge
        /// The player is paused or at a rate the user chose.
        case userRate
        /// The speed changed less than ``Configuration/minimumUpdateInterval`` ago.
        case tooSoon
        /// The speed it would choose is the one it plays at.
        case unchanged
    }

    public enum Action: Sendable, Hashable {
        /// Set the player's rate to this.
        case speed(Double)
        case hold(Hold)
    }

    /// What one playhead decided, with what it was decided from (the trace's `liveOffset`).
    public struct Decision: Sendable, Hashable {
        public var action: Action
        /// Seconds behind the estimated edge, when known.
        public var offset: Double?
        /// The target now (the ideal, moved back by stalls).
        public var target: Double?
        /// The speed it plays at after this decision.
        public var speed: Double
        /// The estimated edge on the stream's clock at the playhead's time.
        public var edge: Double?
    }

    public let configuration: Configuration
    public private(set) var idealTarget: Double?
    /// The target now: the ideal, moved back by stalls and on its way back.
    public private(set) var target: Double?
    /// The speed it last chose (1 until it chose one).
    public private(set) var speed = 1.0
    /// The player's rate as last told.
    public private(set) var playerRate = 1.0
    /// An edge sample: `newest − at`, and when it arrived.
    private struct EdgeSample: Sendable, Hashable {
        var at: Double
        var lead: Double
    }

    private var edgeSamples: [EdgeSample] = []
    private var lastSpeedChange: Double?
    private var lastStall: Double?
    private var lastPlayhead: Double?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Takes in `event`; a playhead returns a decision, the rest `nil`.
    public mutating func handle(_ event: Event) -> Decision? {
        switch event {
        case .idealTarget(let seconds):
            guard seconds.isFinite, seconds >= 0 else { return nil }
            // What stalls added to the old ideal stays added to the new one.
            let increase = max(0, (target ?? seconds) - (idealTarget ?? seconds))
            idealTarget = seconds
            target = seconds + min(increase, configuration.maximumTargetIncrease)
            return nil
        case .edge(let newest, let at):
            guard newest.isFinite, at.isFinite else { return nil }
            let sample = EdgeSample(at: at, lead: newest - at)
            // The same playlist told again (a driver that asks at every tick) is one sample.
            guard edgeSamples.last != sample else { return nil }
            edgeSamples.append(sample)
            edgeSamples.removeAll { $0.at < at - configuration.edgeMemory }
            if edgeSamples.count > 256 { edgeSamples.removeFirst(edgeSamples.count - 256) }
            return nil
        case .stalled(let at):
            lastStall = at
            if let ideal = idealTarget, let current = target {
                target = min(current + configuration.stallIncrement, ideal + configuration.maximumTargetIncrease)
            }
            return nil
        case .rate(let rate):
            playerRate = rate
            return nil
        case .playhead(let position, let buffered, let at):
            return decide(position: position, buffered: buffered, at: at)
        }
    }

    /// The estimated edge at `at` on the stream's clock.
    public func edge(at: Double) -> Double? {
        edgeSamples.lazy.filter { $0.at >= at - configuration.edgeMemory }.map(\.lead).max().map { $0 + at }
    }

    /// Whether the player's rate is one this machine may change: what it set last, or 1.
    private var controlsRate: Bool {
        abs(playerRate - speed) < 1e-9 || abs(playerRate - 1) < 1e-9
    }

    private mutating func decide(position: Double, buffered: Double?, at: Double) -> Decision {
        recover(until: at)
        lastPlayhead = at
        let edge = edge(at: at)
        let offset = edge.map { $0 - position }
        var decision = Decision(action: .hold(.noTarget), offset: offset, target: target, speed: speed, edge: edge)
        guard let target else { return decision }
        guard let offset else { decision.action = .hold(.noEdge); return decision }
        guard playerRate > 0, controlsRate else { decision.action = .hold(.userRate); return decision }
        if let last = lastSpeedChange, at - last < configuration.minimumUpdateInterval {
            decision.action = .hold(.tooSoon)
            return decision
        }
        let chosen = chooseSpeed(error: offset - target, buffered: buffered)
        if abs(chosen - speed) < 1e-9, abs(playerRate - chosen) < 1e-9 {
            decision.action = .hold(.unchanged)
            return decision
        }
        speed = chosen
        playerRate = chosen
        lastSpeedChange = at
        decision.action = .speed(chosen)
        decision.speed = chosen
        return decision
    }

    /// 1 + gain × error, within the bounds, on the step; 1 near the target, and never faster
    /// with too little buffered.
    func chooseSpeed(error: Double, buffered: Double?) -> Double {
        guard abs(error) > configuration.tolerance else { return 1 }
        let raw = min(max(1 + configuration.gain * error, configuration.minimumSpeed), configuration.maximumSpeed)
        let step = configuration.speedStep
        var chosen = step > 0 ? (raw / step).rounded() * step : raw
        chosen = min(max(chosen, configuration.minimumSpeed), configuration.maximumSpeed)
        if chosen > 1, let buffered, buffered < configuration.minimumBufferToSpeedUp { chosen = 1 }
        return chosen
    }

    /// Brings the target back towards the ideal for the time since the last playhead, once
    /// playback has gone ``Configuration/recoveryDelay`` without a stall.
    private mutating func recover(until at: Double) {
        guard let ideal = idealTarget, let current = target, current > ideal, let last = lastPlayhead, at > last else { return }
        let calmSince = max(last, (lastStall ?? -.infinity) + configuration.recoveryDelay)
        guard at > calmSince else { return }
        target = max(ideal, current - configuration.recoveryRate * (at - calmSince))
    }
}
