import ReelCore

/// Decides when a key is being *held* (for hold-to-2x) and when it is let go, from key
/// events with explicit times.
///
/// Terminals that speak the kitty keyboard protocol with event types report releases:
/// there a press that is not released within ``holdDelay`` (or any repeat event) means
/// held, and the release ends it. Other terminals only send the key again and again while
/// it is down (auto-repeat, typically after 250–600 ms, then every 30–50 ms). There,
/// two presses closer together than ``repeatInterval`` mean held, and no press for
/// ``releaseTimeout`` means released.
///
/// The detector owns no timer: feed it events and call ``advance(to:)`` at (or after)
/// ``nextDeadline`` to learn about holds that begin or end by time passing.
public struct KeyHoldDetector: Sendable {
    /// A change of the held state.
    public enum Change: Sendable, Hashable {
        /// The key is now held.
        case began
        /// The key is no longer held.
        case ended
    }

    /// With release events: how long a press must last to count as a hold.
    public var holdDelay: MediaTime
    /// Without release events: presses at most this far apart are auto-repeat.
    public var repeatInterval: MediaTime
    /// Without release events: the key counts as released this long after its last press.
    public var releaseTimeout: MediaTime

    /// Whether the key is held now.
    public private(set) var isHeld = false

    /// Whether the terminal reports releases (kitty keyboard protocol with
    /// ``KittyKeyboardFlags/reportEventTypes``). Set it when the terminal answered the
    /// flags query; the detector also sets it on the first repeat or release event.
    public var expectsReleaseEvents: Bool

    private var lastPress: MediaTime?
    private var isDown = false

    /// Creates a detector. The defaults suit common auto-repeat rates (25–33 Hz) while
    /// leaving a deliberate double tap (rarely under 100 ms apart) a tap.
    public init(
        holdDelay: MediaTime = MediaTime(value: 300, timescale: 1000),
        repeatInterval: MediaTime = MediaTime(value: 100, timescale: 1000),
        releaseTimeout: MediaTime = MediaTime(value: 150, timescale: 1000),
        expectsReleaseEvents: Bool = false
    ) {
        self.expectsReleaseEvents = expectsReleaseEvents
        self.holdDelay = holdDelay
        self.repeatInterval = repeatInterval
        self.releaseTimeout = releaseTimeout
    }

    /// When ``advance(to:)`` should next be called, or `nil` when time alone changes nothing.
    public var nextDeadline: MediaTime? {
        guard let lastPress else { return nil }
        if expectsReleaseEvents {
            return isDown && !isHeld ? lastPress + holdDelay : nil
        }
        return isHeld ? lastPress + releaseTimeout : nil
    }

    /// The key went down (or auto-repeated, in a terminal that reports repeats as presses)
    /// at `time`.
    public mutating func press(at time: MediaTime) -> Change? {
        defer { lastPress = time }
        if expectsReleaseEvents {
            if isDown { return repeatEvent(at: time) }
            isDown = true
            return nil
        }
        if !isHeld, let lastPress, time - lastPress <= repeatInterval, time >= lastPress {
            isHeld = true
            return .began
        }
        return nil
    }

    /// A kitty repeat event at `time`: the key is certainly held.
    public mutating func repeatEvent(at time: MediaTime) -> Change? {
        expectsReleaseEvents = true
        isDown = true
        lastPress = lastPress ?? time
        guard !isHeld else { return nil }
        isHeld = true
        return .began
    }

    /// A kitty release event at `time`. From now on this detector trusts release events
    /// and stops guessing from auto-repeat.
    public mutating func release(at time: MediaTime) -> Change? {
        expectsReleaseEvents = true
        isDown = false
        lastPress = nil
        guard isHeld else { return nil }
        isHeld = false
        return .ended
    }

    /// Lets time pass to `time`: a hold may begin (press not yet released after
    /// ``holdDelay``) or end (no auto-repeat for ``releaseTimeout``).
    public mutating func advance(to time: MediaTime) -> Change? {
        guard let deadline = nextDeadline, time >= deadline else { return nil }
        if expectsReleaseEvents {
            isHeld = true
            return .began
        }
        isHeld = false
        lastPress = nil
        return .ended
    }
}
