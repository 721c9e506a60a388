/// The player's state as a value: events go in, actions come out, and the I/O
/// layer (the engine in ReelMedia) carries the actions out. Modelled on
/// swift-nio's state machines; tested on its own, with no clock and no thread.
///
/// The states follow `AVPlayer`: ``Status`` says whether the item can play at
/// all, ``TimeControlStatus`` whether time is moving, and ``rate`` what the user
/// asked for (0 means paused).
public struct PlayerStateMachine: Sendable, Hashable {
    /// Whether the current item can play (`AVPlayer.Status`).
    public enum Status: Sendable, Hashable {
        case unknown
        case readyToPlay
        case failed(String)
    }

    /// Why time is not moving although the user asked for playback.
    public enum WaitingReason: String, Sendable, Hashable {
        /// Buffers ran dry; waiting for data (`toMinimizeStalls`). Shown as buffering.
        case buffering
        /// The item is still opening.
        case evaluatingBufferingRate
        /// There is no item.
        case noItemToPlay
    }

    /// Whether time is moving (`AVPlayer.TimeControlStatus`).
    public enum TimeControlStatus: Sendable, Hashable {
        case paused
        case waitingToPlay(WaitingReason)
        case playing
    }

    /// What to do when the item ends.
    public enum ActionAtItemEnd: String, Sendable, Hashable, Codable {
        /// Stop at the last frame (the rate becomes 0).
        case pause
        /// Start again from the beginning (what feeds do).
        case loop
    }

    public enum Event: Sendable, Hashable {
        /// A new item was set (`false`: the player was emptied).
        case itemReplaced(hasItem: Bool)
        /// The item opened and can play.
        case itemReady
        /// The item failed for good.
        case itemFailed(String)
        /// The user asked for a rate (0 pauses).
        case rateRequested(Double)
        /// Buffers ran dry while playing.
        case bufferEmpty
        /// Enough is buffered to play.
        case bufferReady
        /// A seek was asked for.
        case seekRequested(id: Int)
        /// The seek reached its target (a frame is shown there).
        case seekCompleted(id: Int)
        /// The item reached its end.
        case reachedEnd
        /// A looping item played through once more without stopping: the engine read its next
        /// pass ahead and time ran on into it (a seamless loop; nothing to restart).
        case passCompleted
    }

    public enum Action: Sendable, Hashable {
        /// Let time run at this rate from the current position (start or re-rate the clock and audio).
        case runClock(rate: Double)
        /// Stop time where it is (pause the clock and audio).
        case stopClock
        /// Finish a seek's caller with this result (`false` when a newer seek replaced it).
        case finishSeek(id: Int, finished: Bool)
        /// Go back to the start and keep playing (looping).
        case restartFromBeginning
        /// Tell observers about a change.
        case notifyStatus(Status)
        case notifyTimeControlStatus(TimeControlStatus)
        case notifyRate(Double)
        /// Tell observers the item ended.
        case notifyEnded
        /// Tell observers the item ended and played on from its start (a seamless loop).
        case notifyLooped
    }

    public private(set) var status: Status = .unknown
    public private(set) var timeControlStatus: TimeControlStatus = .waitingToPlay(.noItemToPlay)
    /// The rate the user asked for; 0 is paused.
    public private(set) var rate: Double = 0
    public var actionAtItemEnd: ActionAtItemEnd
    private var hasItem = false
    private var buffering = false
    private var pendingSeek: Int?
    private var clockRunning = false
    private var ended = false

    public init(actionAtItemEnd: ActionAtItemEnd = .pause) {
        self.actionAtItemEnd = actionAtItemEnd
        self.timeControlStatus = .paused
    }

    /// Whether a seek is in flight.
    public var isSeeking: Bool { pendingSeek != nil }
    /// Whether the item has ended (and was not looped or restarted).
    public var hasEnded: Bool { ended }

    public mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        let before = (status, timeControlStatus, rate)
        apply(event, into: &actions)
        timeControlStatus = computeTimeControlStatus()
        let shouldRun = timeControlStatus == .playing
        if shouldRun != clockRunning || (shouldRun && before.2 != rate) {
            actions.append(shouldRun ? .runClock(rate: rate) : .stopClock)
            clockRunning = shouldRun
        }
        if before.0 != status { actions.append(.notifyStatus(status)) }
        if before.1 != timeControlStatus { actions.append(.notifyTimeControlStatus(timeControlStatus)) }
        if before.2 != rate { actions.append(.notifyRate(rate)) }
        return actions
    }

    /// The event's own effect on the state; `handle` adds the clock and notifications.
    private mutating func apply(_ event: Event, into actions: inout [Action]) {
        switch event {
        case .itemReplaced(let has):
            hasItem = has
            status = .unknown
            buffering = false
            ended = false
            if let seek = pendingSeek {
                actions.append(.finishSeek(id: seek, finished: false))
                pendingSeek = nil
            }
        case .itemReady:
            guard hasItem, status == .unknown else { break }
            status = .readyToPlay
        case .itemFailed(let message):
            guard hasItem else { break }
            status = .failed(message)
            if let seek = pendingSeek {
                actions.append(.finishSeek(id: seek, finished: false))
                pendingSeek = nil
            }
        case .rateRequested(let newRate):
            let clamped = newRate.isFinite ? max(0, newRate) : 0
            rate = clamped
            if clamped > 0 && ended {
                // Playing an ended item starts it over, like pressing play at the end.
                ended = false
                actions.append(.restartFromBeginning)
            }
        case .bufferEmpty:
            if hasItem, status == .readyToPlay { buffering = true }
        case .bufferReady:
            buffering = false
        case .seekRequested(let id):
            if let old = pendingSeek { actions.append(.finishSeek(id: old, finished: false)) }
            pendingSeek = id
            ended = false
        case .seekCompleted(let id):
            guard pendingSeek == id else { break }
            pendingSeek = nil
            actions.append(.finishSeek(id: id, finished: true))
        case .reachedEnd:
            guard hasItem, status == .readyToPlay else { break }
            switch actionAtItemEnd {
            case .loop:
                // An item the engine could not loop seamlessly (no known duration) ends and
                // starts again from its beginning.
                actions.append(.notifyEnded)
                actions.append(.restartFromBeginning)
            case .pause:
                ended = true
                rate = 0
                actions.append(.notifyEnded)
            }
        case .passCompleted:
            // Whatever the action at the end says now: the pass was already read and played.
            guard hasItem, status == .readyToPlay else { break }
            actions.append(.notifyLooped)
        }
    }

    private func computeTimeControlStatus() -> TimeControlStatus {
        guard rate > 0 else { return .paused }
        guard hasItem else { return .waitingToPlay(.noItemToPlay) }
        switch status {
        case .unknown: return .waitingToPlay(.evaluatingBufferingRate)
        case .failed: return .paused
        case .readyToPlay: break
        }
        if ended { return .paused }
        if buffering { return .waitingToPlay(.buffering) }
        return .playing
    }
}
