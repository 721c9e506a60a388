import Foundation
import ReelCore
import Synchronization

/// One seek scrubbing sent and what it showed.
public struct ScrubStep: Sendable, Hashable {
    /// Where the thumb was when the seek went out.
    public var target: MediaTime
    /// How the seek went for it, as ReelCore's `ScrubMachine` chose: decoding on inside the
    /// GOP, an exact seek from the keyframe before, or a keyframe preview.
    public var kind: ScrubMachine.SeekKind
    /// The presentation time of the frame it put on screen (`nil`: replaced, or nothing shown).
    public var frame: MediaTime?
    /// On the player's clock.
    public var sentAt: MediaTime
    /// When the seek completed (its frame on screen, or replaced by a newer one), on the
    /// player's clock; `completedAt - sentAt` is how long the step took.
    public var completedAt: MediaTime
    /// The last seek of the drag (after the release).
    public var isRelease: Bool
}

/// Scrubbing's state in the player: the machine and what it did (one owner: the `scrubbing`
/// mutex; the machine's actions are carried out after it is released).
struct ScrubbingState: Sendable {
    var machine = ScrubMachine()
    var steps: [ScrubStep] = []
    /// Thumb positions the drag went through.
    var targets = 0
    var lastTarget: MediaTime?
    var released = false
    var releasedAt: MediaTime?
    var settledAt: MediaTime?
    var onSettled: [@Sendable (MediaTime) -> Void] = []
}

/// What a drag did: every seek sent and the frame it showed, and when it settled.
public struct ScrubReport: Sendable, Hashable {
    /// The seeks the drag sent, in the order they completed (one in flight at a time).
    public var steps: [ScrubStep]
    /// Thumb positions reported (most are chased away by newer ones).
    public var targets: Int
    /// When ``Player/endScrubbing(at:completion:)`` let go, on the player's clock (`nil`
    /// while the bar is still held).
    public var releasedAt: MediaTime?
    /// When the exact frame at the release target was on screen and the drag was over (the
    /// moment `endScrubbing`'s completion ran), on the player's clock; `nil` until then.
    public var settledAt: MediaTime?
}

extension Player {
    /// Scrubbing mode: while the bar is dragged, the picture shows the exact frame at the
    /// thumb. Pauses (the audio ramps out) until ``endScrubbing(at:completion:)``; the decisions
    /// are ReelCore's `ScrubMachine`'s: one seek in flight with the newest target chased,
    /// decoding on inside the GOP, keyframe previews only while exact frames cannot keep up.
    public func beginScrubbing() {
        guard let engine = state.withTrackedLock({ $0.engine }), let streams = engine.scrubStreamsNow() else { return }
        let media = ScrubMachine.Media(keyframes: engine.keyframeTimesNow(), frameDuration: streams.frameDuration,
                                       hasAudio: streams.hasAudio)
        let playing = rate > 0
        let shown = engine.presentedFrameNow()
        let now = clock.now
        let actions = scrubbing.withTrackedLock { scrub -> [ScrubMachine.Action] in
            guard !scrub.machine.isActive else { return [] }
            scrub = ScrubbingState(machine: scrub.machine)
            return scrub.machine.begin(media: media, isPlaying: playing, frameOnScreen: shown, now: now)
        }
        carryOutScrub(actions)
    }

    /// The thumb is at `time` now.
    public func scrub(to time: MediaTime) {
        let now = clock.now
        let actions = scrubbing.withTrackedLock { scrub -> [ScrubMachine.Action] in
            guard scrub.machine.phase == .dragging else { return [] }
            if scrub.lastTarget != time { scrub.targets += 1 }
            scrub.lastTarget = time
            return scrub.machine.move(to: time, now: now)
        }
        carryOutScrub(actions)
    }

    /// Lets go at `time` (at the last ``scrub(to:)`` target when `nil`): the exact frame there
    /// is shown and, if the drag interrupted playback, playback resumes from it. `completion`
    /// runs once it is on screen.
    public func endScrubbing(at time: MediaTime? = nil, completion: (@Sendable (MediaTime) -> Void)? = nil) {
        let now = clock.now
        let here = currentTime
        let (actions, notSettling) = scrubbing.withTrackedLock { scrub -> ([ScrubMachine.Action], MediaTime?) in
            guard scrub.machine.phase == .dragging else { return ([], time ?? here) }
            let target = time ?? scrub.lastTarget ?? here
            if let completion { scrub.onSettled.append(completion) }
            scrub.released = true
            scrub.releasedAt = now
            return (scrub.machine.end(at: target, now: now), nil)
        }
        if let notSettling { completion?(notSettling) } else { carryOutScrub(actions) }
    }

    /// Whether the bar is held (or its release is landing).
    public var isScrubbing: Bool { scrubbing.withTrackedLock { $0.machine.isActive } }

    /// What the last drag did.
    public var scrubReport: ScrubReport {
        scrubbing.withTrackedLock { ScrubReport(steps: $0.steps, targets: $0.targets, releasedAt: $0.releasedAt, settledAt: $0.settledAt) }
    }

    private func carryOutScrub(_ actions: [ScrubMachine.Action]) {
        for action in actions {
            switch action {
            case .pausePlayback:
                pause()
            case .resumePlayback:
                play()
            case .seek(let target, let kind):
                sendScrubSeek(target, kind: kind)
            case .settled(let target):
                let callbacks = scrubbing.withTrackedLock { scrub -> [@Sendable (MediaTime) -> Void] in
                    scrub.settledAt = clock.now
                    defer { scrub.onSettled = [] }
                    return scrub.onSettled
                }
                callbacks.forEach { $0(target) }
            }
        }
    }

    private func sendScrubSeek(_ target: MediaTime, kind: ScrubMachine.SeekKind) {
        let sentAt = clock.now
        let release = scrubbing.withTrackedLock { scrub -> Bool in if case .releasing = scrub.machine.phase { true } else { false } }
        let before: MediaTime = kind == .keyframe ? .positiveInfinity : .zero
        seek(to: target, toleranceBefore: before, toleranceAfter: .zero, decodeOn: kind == .decodeOn) { [weak self] finished in
            guard let self else { return }
            let frame = finished ? self.state.withTrackedLock({ $0.engine })?.presentedFrameNow() : nil
            let now = self.clock.now
            let actions = self.scrubbing.withTrackedLock { scrub -> [ScrubMachine.Action] in
                scrub.steps.append(ScrubStep(target: target, kind: kind, frame: frame, sentAt: sentAt, completedAt: now,
                                             isRelease: release))
                return scrub.machine.completed(frame: frame, now: now)
            }
            self.carryOutScrub(actions)
        }
    }
}
