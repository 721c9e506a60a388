import ReelCore

/// Long-press to play faster, as a value: a press on the video held for ``holdDelay``
/// without moving plays at ``fastRate`` with a "2x" badge until it is released; a quick
/// press is a tap (toggle pause); a press that moves beyond ``slop`` before the delay is a
/// drag (the swipe controller's) and never speeds up. A key can be held the same way.
///
/// While the video is paused (the owner keeps ``isPaused`` current) a hold does nothing: no
/// 2x, no badge, and its release is not a tap — as in the seed app's player.
///
/// Times are passed in; the owner calls ``tick(now:)`` at (or after) ``nextDeadline``.
/// Only one press is tracked at a time: a key press during a pointer press (or the
/// reverse) is ignored, as are key auto-repeats.
public struct HoldToSpeedUp: Sendable, Hashable {
    /// What the model asks its owner to do.
    public enum Action: Sendable, Hashable {
        /// Play at this rate.
        case setRate(Double)
        /// Show this badge over the video ("2x").
        case showBadge(String)
        /// Hide the badge.
        case hideBadge
        /// A quick tap on the video: toggle pause.
        case togglePause
        /// A key was pressed and released before the hold delay (the owner decides what a
        /// short press of that key does).
        case keyTapped
    }

    /// What is pressing.
    public enum Source: Sendable, Hashable {
        /// A finger or mouse button on the video.
        case pointer
        /// The hold key.
        case key
    }

    private enum State: Sendable, Hashable {
        case idle
        /// Pressed, waiting for the hold delay.
        case pressed(Source, x: Double, y: Double, since: MediaTime)
        /// Held long enough: playing fast.
        case holding(Source)
        /// The pointer moved too far: a drag, ignored until release.
        case dragging
        /// Held long enough while the video was paused: ignored until release.
        case heldWhilePaused(Source)
    }

    /// How long a press must last to speed up (350 ms).
    public var holdDelay: MediaTime
    /// How far (px) the pointer may move before the press becomes a drag.
    public var slop: Double
    /// The rate while held.
    public var fastRate: Double

    /// Whether the video is paused now (set by the owner): a hold then does nothing.
    public var isPaused = false

    private var state: State = .idle

    /// A model at rest; by default a 350 ms hold within 10 px plays at 2x.
    public init(holdDelay: MediaTime = MediaTime(value: 350, timescale: 1000),
                slop: Double = 10, fastRate: Double = 2) {
        self.holdDelay = holdDelay
        self.slop = slop
        self.fastRate = fastRate
    }

    /// Whether the video is playing fast because of a hold.
    public var isHolding: Bool {
        if case .holding = state { return true }
        return false
    }

    /// The badge to show, `"2x"` while holding.
    public var badge: String? { isHolding ? Self.badgeText(fastRate) : nil }

    /// When the pending press becomes a hold (call ``tick(now:)`` then), or `nil`.
    public var nextDeadline: MediaTime? {
        if case .pressed(_, _, _, let since) = state { return since + holdDelay }
        return nil
    }

    /// The badge text for a rate: `2x`, `1.5x`.
    public static func badgeText(_ rate: Double) -> String {
        rate == rate.rounded() ? "\(Int(rate))x" : "\(rate)x"
    }

    /// Time passed: a press held for ``holdDelay`` speeds up.
    public mutating func tick(now: MediaTime) -> [Action] {
        guard case .pressed(let source, _, _, let since) = state, now >= since + holdDelay else { return [] }
        if isPaused {
            state = .heldWhilePaused(source)
            return []
        }
        state = .holding(source)
        return [.setRate(fastRate), .showBadge(Self.badgeText(fastRate))]
    }

    // MARK: Pointer

    /// The pointer went down on the video.
    public mutating func pointerDown(x: Double, y: Double, now: MediaTime) -> [Action] {
        guard case .idle = state else { return [] }
        state = .pressed(.pointer, x: x, y: y, since: now)
        return []
    }

    /// The pointer moved: beyond ``slop`` before the hold fires, the press is a drag.
    /// Once holding, moving does not end the hold.
    public mutating func pointerMove(x: Double, y: Double, now: MediaTime) -> [Action] {
        let actions = tick(now: now)
        guard case .pressed(.pointer, let x0, let y0, _) = state else { return actions }
        let dx = x - x0, dy = y - y0
        if dx * dx + dy * dy > slop * slop { state = .dragging }
        return actions
    }

    /// The pointer was released: the end of a hold (back to 1x), a tap (toggle pause) when
    /// released before ``holdDelay``, or nothing after a drag.
    public mutating func pointerUp(now: MediaTime) -> [Action] {
        switch state {
        case .pressed(.pointer, _, _, let since):
            state = .idle
            return now - since < holdDelay ? [.togglePause] : []
        case .holding(.pointer):
            state = .idle
            return [.setRate(1), .hideBadge]
        case .dragging, .heldWhilePaused(.pointer):
            state = .idle
            return []
        default:
            return []
        }
    }

    /// The pointer was lost (left the window, the gesture was taken over): a hold ends,
    /// and nothing counts as a tap.
    public mutating func pointerCancel(now: MediaTime) -> [Action] {
        switch state {
        case .holding(.pointer):
            state = .idle
            return [.setRate(1), .hideBadge]
        case .pressed(.pointer, _, _, _), .dragging, .heldWhilePaused(.pointer):
            state = .idle
            return []
        default:
            return []
        }
    }

    // MARK: Key

    /// The hold key went down (repeats while it is held are ignored).
    public mutating func keyDown(now: MediaTime) -> [Action] {
        guard case .idle = state else { return [] }
        state = .pressed(.key, x: 0, y: 0, since: now)
        return []
    }

    /// The hold key went up: back to 1x after a hold, else a short press.
    public mutating func keyUp(now: MediaTime) -> [Action] {
        switch state {
        case .pressed(.key, _, _, let since):
            state = .idle
            return now - since < holdDelay ? [.keyTapped] : []
        case .holding(.key):
            state = .idle
            return [.setRate(1), .hideBadge]
        case .heldWhilePaused(.key):
            state = .idle
            return []
        default:
            return []
        }
    }
}
