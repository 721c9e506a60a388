/// The progress bar and the controls around it, as a value: where the thumb is,
/// what the labels say, how much is buffered, what scrubbing asks the player to
/// do, when the controls hide, and whether the view is fullscreen. The window and
/// the terminal draw it; tests drive it with plain numbers and times.
///
/// Scrubbing is the player's scrubbing mode: grabbing the bar begins it, every move of
/// the thumb is a target (the player shows the exact frame there, chasing the newest
/// target with one seek in flight: ``ScrubMachine``), letting go ends it on the exact
/// frame; the label follows the thumb.
public struct ProgressSlider: Sendable, Hashable {
    /// What the slider asks its owner to do.
    public enum Action: Sendable, Hashable {
        /// The bar was grabbed: the player enters scrubbing mode (pauses, audio off).
        case beginScrubbing
        /// The thumb stands for this time now: the player shows the exact frame there.
        case scrub(MediaTime)
        /// Let go (or abandoned): the player shows the exact frame at this time and plays on
        /// if the drag interrupted playback.
        case endScrubbing(MediaTime)
        case showControls
        case hideControls
    }

    /// The item's duration (`.indefinite` until known).
    public var duration: MediaTime
    /// A live stream: the right label says `LIVE`; the bar spans ``liveWindow`` and scrubs
    /// within it, or, before the window is known, stands full at the edge and does not scrub.
    public var isLive = false
    /// A live stream's window on its own clock, from its oldest media to where a player
    /// joining now plays (the right end is the live edge).
    public var liveWindow: TimeRange?
    /// The player's time, when not scrubbing.
    public var currentTime: MediaTime
    /// What the player has buffered.
    public var loadedTimeRanges: [TimeRange]
    /// Whether the player is playing (controls only hide while it is).
    public var isPlaying: Bool
    /// Whether the view is fullscreen.
    public var isFullscreen: Bool
    /// Whether the controls are shown.
    public private(set) var controlsVisible: Bool
    /// Whether the thumb is being dragged.
    public private(set) var isScrubbing: Bool
    /// Controls hide after this long without input while playing.
    public var autoHideDelay: MediaTime

    private var scrubValue: Double = 0
    private var lastInput: MediaTime = .zero
    private var lastTarget: MediaTime?
    /// The player's time when the bar was grabbed (an abandoned drag goes back there).
    private var scrubOrigin: MediaTime = .zero

    public init(duration: MediaTime = .indefinite, currentTime: MediaTime = .zero,
                autoHideDelay: MediaTime = MediaTime(value: 3, timescale: 1)) {
        self.duration = duration
        self.currentTime = currentTime
        self.loadedTimeRanges = []
        self.isPlaying = false
        self.isFullscreen = false
        self.controlsVisible = true
        self.isScrubbing = false
        self.autoHideDelay = autoHideDelay
    }

    // MARK: Values and labels

    /// The thumb position, 0…1: the dragged position while scrubbing, else the current time.
    public var value: Double { isLive && liveWindow == nil ? 1 : isScrubbing ? scrubValue : value(for: currentTime) }

    /// The time the thumb stands for.
    public var displayedTime: MediaTime { isScrubbing ? time(for: scrubValue) : clamp(currentTime) }

    /// What the bar spans: a live stream's window, else the item from zero to its duration.
    private var span: (start: MediaTime, length: MediaTime) {
        if isLive, let liveWindow { return (liveWindow.start, liveWindow.duration) }
        return (.zero, duration)
    }

    /// `value` (0…1) as a time in the item (zero when the duration is unknown).
    public func time(for value: Double) -> MediaTime {
        let (start, length) = span
        guard start.isNumeric, length.isNumeric, length > .zero, value.isFinite else { return start.isNumeric ? start : .zero }
        let fraction = min(1, max(0, value))
        return (start + length.multiplied(byFloat64: fraction)).convertScale(max(length.timescale, 1000))
    }

    /// `time` as a thumb position, 0…1.
    public func value(for time: MediaTime) -> Double {
        let (start, length) = span
        guard start.isNumeric, length.isNumeric, length > .zero, time.isNumeric else { return 0 }
        return min(1, max(0, (time - start).seconds / length.seconds))
    }

    /// How far the buffer reaches, 0…1: the end of the loaded range that holds the displayed time.
    public var bufferedFraction: Double {
        let now = displayedTime
        let reach = loadedTimeRanges
            .filter { $0.start <= now && now <= $0.end }
            .map(\.end)
            .max() ?? now
        return value(for: reach)
    }

    /// The left label (`0:12`), following the thumb while scrubbing.
    public var timeLabel: String { Self.label(displayedTime, hours: usesHours) }
    /// The right label (`0:45`), or `--:--` while the duration is unknown.
    public var durationLabel: String {
        if isLive { return "LIVE" }
        return duration.isNumeric ? Self.label(duration, hours: usesHours) : "--:--"
    }

    private var usesHours: Bool { duration.isNumeric && duration.seconds >= 3600 }

    /// `m:ss`, or `h:mm:ss` from one hour (or when `hours` is asked for); seconds round down.
    public static func label(_ time: MediaTime, hours: Bool = false) -> String {
        let total = time.isNumeric && time.seconds > 0 ? Int(time.seconds.rounded(.down)) : 0
        let h = total / 3600, m = (total % 3600) / 60, s = total % 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if hours || h > 0 { return "\(h):\(two(m)):\(two(s))" }
        return "\(m):\(two(s))"
    }

    private func clamp(_ time: MediaTime) -> MediaTime {
        guard time.isNumeric else { return .zero }
        if time < .zero { return .zero }
        if duration.isNumeric, time > duration { return duration }
        return time
    }

    // MARK: Scrubbing

    /// The finger (or mouse) went down on the bar at `value`.
    public mutating func beginScrub(at value: Double, now: MediaTime) -> [Action] {
        guard !isLive || liveWindow != nil else { return touch(now) }
        scrubOrigin = clamp(currentTime)
        isScrubbing = true
        scrubValue = min(1, max(0, value))
        lastTarget = nil
        return touch(now) + [.beginScrubbing] + target()
    }

    /// The thumb moved to `value`: a new target (none when it stands for the same time).
    public mutating func moveScrub(to value: Double, now: MediaTime) -> [Action] {
        guard isScrubbing else { return [] }
        scrubValue = min(1, max(0, value))
        return touch(now) + target()
    }

    /// Let go at `value`: scrubbing ends on the exact frame there.
    public mutating func endScrub(at value: Double, now: MediaTime) -> [Action] {
        guard isScrubbing else { return [] }
        scrubValue = min(1, max(0, value))
        isScrubbing = false
        let target = time(for: scrubValue)
        currentTime = target
        return touch(now) + [.endScrubbing(target)]
    }

    /// The drag was abandoned (the pointer left): scrubbing ends back at the player's time
    /// from before the drag.
    public mutating func cancelScrub(now: MediaTime) -> [Action] {
        guard isScrubbing else { return touch(now) }
        isScrubbing = false
        currentTime = scrubOrigin
        return touch(now) + [.endScrubbing(scrubOrigin)]
    }

    private mutating func target() -> [Action] {
        let target = time(for: scrubValue)
        if target == lastTarget { return [] }
        lastTarget = target
        return [.scrub(target)]
    }

    // MARK: Controls

    /// A tap on the video toggles the controls.
    public mutating func tap(now: MediaTime) -> [Action] {
        lastInput = now
        controlsVisible.toggle()
        return [controlsVisible ? .showControls : .hideControls]
    }

    /// Any other input (a key, a move over the controls) shows them and restarts the timer.
    public mutating func userActivity(now: MediaTime) -> [Action] {
        touch(now)
    }

    /// Time passed: hide the controls after ``autoHideDelay`` without input while playing.
    public mutating func tick(now: MediaTime) -> [Action] {
        guard controlsVisible, isPlaying, !isScrubbing, now - lastInput >= autoHideDelay else { return [] }
        controlsVisible = false
        return [.hideControls]
    }

    /// When the controls will hide if nothing happens (for scheduling a tick).
    public var autoHideDeadline: MediaTime? {
        guard controlsVisible, isPlaying, !isScrubbing else { return nil }
        return lastInput + autoHideDelay
    }

    /// Toggles fullscreen (the controls show so the change is visible).
    public mutating func toggleFullscreen(now: MediaTime) -> [Action] {
        isFullscreen.toggle()
        return touch(now)
    }

    private mutating func touch(_ now: MediaTime) -> [Action] {
        lastInput = now
        guard !controlsVisible else { return [] }
        controlsVisible = true
        return [.showControls]
    }
}
