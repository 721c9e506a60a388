import Foundation
import ReelCore
import ReelCaptions

/// The player's state, guarded by ``Player/state`` (one mutex, short critical sections; the
/// engine's callbacks take it, commands take it after ``Player``'s command lock).
struct PlayerState {
    struct TimeObserver {
        var interval: MediaTime
        var queue: DispatchQueue?
        var block: @Sendable (MediaTime) -> Void
        var lastFired: MediaTime?
    }

    var machine = PlayerStateMachine(actionAtItemEnd: .pause)
    var engine: PlaybackEngine?
    var item: PlayerItem?
    var info: MediaInfo?
    var nextID = 0
    var seekWaiters: [Int: (target: MediaTime, done: @Sendable (Bool) -> Void)] = [:]
    var seekLanded: [Int: MediaTime] = [:]
    var eventObservers: [Int: @Sendable (PlayerEvent) -> Void] = [:]
    var timeObservers: [Int: TimeObserver] = [:]
    var firstFrame: FirstFrameReport?
    var lastTime: MediaTime = .zero
    var volume: Float = 1
    var muted = false
    /// Loudness levelling for the next items (off when `nil`), and what it decided for this one.
    var levelling: LoudnessLevelling?
    var loudness: LoudnessReport?
    var defaultRate: Double = 1
    /// Which captions show, for this item and the next ones.
    var captionSelection = CaptionSelection()
    var demandObserver = WeakDemandObserver(value: nil)

    /// Events waiting to be delivered, and whether a thread is delivering them: one thread
    /// at a time delivers, in order, with no lock held; others only add to the queue.
    var outbox: [Delivery] = []
    var delivering = false
}

struct WeakDemandObserver {
    weak var value: (any PlaybackDemandObserver)?
}

/// Something an observer or a waiter is told, in order.
enum Delivery {
    case event(PlayerEvent)
    case completion(@Sendable () -> Void)
    case time(queue: DispatchQueue?, block: @Sendable (MediaTime) -> Void, time: MediaTime)
}

/// What a state change produced, to deliver once the lock is released.
struct Outcome {
    var deliveries: [Delivery] = []
}

extension Player {
    /// Carries out the state machine's actions (engine commands are queued for the engine's
    /// owner, so this never waits) and returns what observers must hear. Call with the state.
    func perform(_ actions: [PlayerStateMachine.Action], _ state: inout PlayerState) -> Outcome {
        var completions: [Delivery] = []
        var events: [Delivery] = []
        for action in actions {
            switch action {
            case .runClock(let rate):
                state.engine?.runClock(rate: rate)
            case .stopClock:
                state.engine?.stopClock()
            case .finishSeek(let id, let finished):
                if let waiter = state.seekWaiters.removeValue(forKey: id) {
                    let landed = state.seekLanded.removeValue(forKey: id)
                    events.append(.event(.seekCompleted(target: waiter.target, landed: landed, finished: finished)))
                    completions.append(.completion { waiter.done(finished) })
                }
            case .restartFromBeginning:
                state.nextID += 1
                state.engine?.seek(id: -1, to: .zero, before: .zero, after: .zero)
            case .notifyStatus(let status):
                events.append(.event(.statusChanged(status)))
            case .notifyTimeControlStatus(let status):
                events.append(.event(.timeControlStatusChanged(status)))
            case .notifyRate(let rate):
                events.append(.event(.rateChanged(rate)))
            case .notifyEnded:
                events.append(.event(.ended(looping: state.machine.actionAtItemEnd == .loop)))
            case .notifyLooped:
                events.append(.event(.ended(looping: true)))
            }
        }
        // Seek completions first: a caller awaiting a seek sees it finished with the events.
        return Outcome(deliveries: completions + events)
    }

    func carryOut(_ outcome: Outcome) {
        deliver(outcome.deliveries)
    }

    /// Delivers in order, one thread at a time, with no lock held. A thread that finds another
    /// delivering leaves its deliveries to it, so observers never nest and never reorder.
    func deliver(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        var batch = state.withTrackedLock { state -> [Delivery] in
            state.outbox += deliveries
            guard !state.delivering else { return [] }
            state.delivering = true
            defer { state.outbox = [] }
            return state.outbox
        }
        while !batch.isEmpty {
            let observers = state.withTrackedLock { Array($0.eventObservers.sorted { $0.key < $1.key }.map(\.value)) }
            for delivery in batch {
                switch delivery {
                case .event(let event):
                    for observer in observers { observer(event) }
                case .completion(let done):
                    done()
                case .time(let queue, let block, let time):
                    if let queue { queue.async { block(time) } } else { block(time) }
                }
            }
            batch = state.withTrackedLock { state -> [Delivery] in
                if state.outbox.isEmpty { state.delivering = false }
                defer { state.outbox = [] }
                return state.outbox
            }
        }
    }

    /// The time observers due now (all of them when `force`). Call with the state.
    func timeObserverCalls(_ state: inout PlayerState, force: Bool) -> [Delivery] {
        let time = state.engine?.currentTimeNow() ?? state.lastTime
        var calls: [Delivery] = []
        for (id, var observer) in state.timeObservers.sorted(by: { $0.key < $1.key }) {
            let due: Bool
            if force {
                due = true
            } else if let last = observer.lastFired {
                due = time < last || time - last >= observer.interval
            } else {
                due = true
            }
            guard due else { continue }
            observer.lastFired = time
            state.timeObservers[id] = observer
            calls.append(.time(queue: observer.queue, block: observer.block, time: time))
        }
        return calls
    }
}

extension Player: PlaybackEngineDelegate {
    /// Runs `body` with the state if `engine` is still this player's, then delivers.
    private func ifCurrent(_ engine: PlaybackEngine, _ body: (inout PlayerState) -> [Delivery]) {
        let deliveries = state.withTrackedLock { state -> [Delivery] in
            guard state.engine === engine else { return [] }
            return body(&state)
        }
        deliver(deliveries)
    }

    func engine(_ engine: PlaybackEngine, didOpen info: MediaInfo) {
        ifCurrent(engine) { state in
            state.info = info
            return []
        }
    }

    func engineIsReady(_ engine: PlaybackEngine) {
        ifCurrent(engine) { state in perform(state.machine.handle(.itemReady), &state).deliveries }
    }

    func engine(_ engine: PlaybackEngine, didFail error: MediaError) {
        ifCurrent(engine) { state in
            perform(state.machine.handle(.itemFailed(error.description)), &state).deliveries + [.event(.failed(error))]
        }
    }

    func engine(_ engine: PlaybackEngine, bufferingChanged isEmpty: Bool) {
        ifCurrent(engine) { state in
            perform(state.machine.handle(isEmpty ? .bufferEmpty : .bufferReady), &state).deliveries + [.event(.stall(isEmpty))]
        }
    }

    func engine(_ engine: PlaybackEngine, didCompleteSeek id: Int, landedAt time: MediaTime) {
        ifCurrent(engine) { state in
            state.seekLanded[id] = time
            return perform(state.machine.handle(.seekCompleted(id: id)), &state).deliveries
                + timeObserverCalls(&state, force: true)
        }
    }

    func engineDidReachEnd(_ engine: PlaybackEngine) {
        ifCurrent(engine) { state in
            perform(state.machine.handle(.reachedEnd), &state).deliveries + timeObserverCalls(&state, force: true)
        }
    }

    func engineDidLoop(_ engine: PlaybackEngine) {
        ifCurrent(engine) { state in
            perform(state.machine.handle(.passCompleted), &state).deliveries + timeObserverCalls(&state, force: true)
        }
    }

    func engine(_ engine: PlaybackEngine, didReportFirstFrame report: FirstFrameReport) {
        ifCurrent(engine) { state in
            state.firstFrame = report
            return [.event(.firstFrame(report))]
        }
    }

    func engine(_ engine: PlaybackEngine, didPresent frame: VideoFrame, presentation: Presentation) {
        ifCurrent(engine) { _ in [.event(.framePresented(pts: frame.pts, presentation: presentation))] }
    }

    func engine(_ engine: PlaybackEngine, didTick currentTime: MediaTime) {
        ifCurrent(engine) { state in timeObserverCalls(&state, force: false) }
    }

    func engine(_ engine: PlaybackEngine, didShowCaptions frame: CaptionFrame) {
        ifCurrent(engine) { _ in [.event(.captionsChanged(frame))] }
    }

    func engine(_ engine: PlaybackEngine, didChangeCaptionTracks tracks: [CaptionTrack]) {
        ifCurrent(engine) { _ in [.event(.captionTracksChanged(tracks))] }
    }

    func engine(_ engine: PlaybackEngine, captionSourceFailed failure: CaptionSourceFailure) {
        ifCurrent(engine) { _ in [.event(.captionSourceFailed(failure))] }
    }

    func engine(_ engine: PlaybackEngine, didLevelLoudness report: LoudnessReport) {
        ifCurrent(engine) { state in
            state.loudness = report
            return [.event(.loudness(report))]
        }
    }
}
