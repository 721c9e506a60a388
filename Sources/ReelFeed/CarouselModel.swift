import ReelCore

/// An image post's banner (the original's carousel), as a value: which image is shown,
/// when it advances on its own, and what a drag does.
///
/// With two or more images the banner advances every ``interval`` and wraps from the last
/// image to the first. Dragging pauses it; releasing (or a manual swipe) restarts the
/// timer, so the next automatic advance is a full interval after the user's last input.
/// The owner calls ``tick(now:)`` at (or after) ``nextDeadline``.
public struct CarouselModel: Sendable, Hashable {
    /// What the carousel asks its owner to do.
    public enum Action: Sendable, Hashable {
        /// Show the image at this index (and light this page indicator dot).
        case showImage(Int)
    }

    /// How many images the post has.
    public let imageCount: Int
    /// The time between automatic advances.
    public var interval: MediaTime
    /// A release farther than this (px) from where the drag began swipes.
    public var swipeThreshold: Double
    /// The image shown, which is also the page indicator's lit dot.
    public private(set) var index: Int = 0
    /// Whether the user is dragging the banner (auto-advance is paused).
    public private(set) var isDragging: Bool = false
    /// The horizontal drag distance so far (px, negative: towards the next image).
    public private(set) var dragTranslation: Double = 0

    private var deadline: MediaTime?

    /// A banner on its first image; with two or more images the timer starts at `now`.
    public init(imageCount: Int, now: MediaTime,
                interval: MediaTime = MediaTime(value: 2, timescale: 1),
                swipeThreshold: Double = 50) {
        precondition(imageCount >= 0, "imageCount ≥ 0")
        self.imageCount = imageCount
        self.interval = interval
        self.swipeThreshold = swipeThreshold
        self.deadline = imageCount > 1 ? now + interval : nil
    }

    /// When the next automatic advance is due; `nil` while dragging or with fewer than
    /// two images.
    public var nextDeadline: MediaTime? { isDragging ? nil : deadline }

    /// The page indicator: one dot per image, `index` lit.
    public var pageIndicator: (current: Int, count: Int) { (index, imageCount) }

    /// Time passed: advance once for every interval that elapsed (keeping the cadence),
    /// unless the user is dragging. After a gap longer than a lap (the app was asleep) the
    /// advances stop at one lap and the timer restarts a full interval from `now`.
    public mutating func tick(now: MediaTime) -> [Action] {
        guard !isDragging, var due = deadline, now >= due else { return [] }
        var steps = 0
        while now >= due {
            steps += 1
            due = due + interval
            if steps >= imageCount { break }   // a long gap needs no more than one lap
        }
        if now >= due { due = now + interval }
        deadline = due
        return move(by: steps)
    }

    /// The user put a finger on the banner: auto-advance pauses.
    public mutating func beginDrag(now: MediaTime) {
        guard imageCount > 0 else { return }
        isDragging = true
        dragTranslation = 0
    }

    /// The drag moved `translation` px horizontally from where it began.
    public mutating func dragChanged(translation: Double) {
        guard isDragging else { return }
        dragTranslation = translation
    }

    /// The drag ended at `translation`: past ``swipeThreshold`` to the left shows the next
    /// image, to the right the previous one (wrapping); the timer restarts at `now`.
    public mutating func endDrag(translation: Double, now: MediaTime) -> [Action] {
        guard isDragging else { return [] }
        isDragging = false
        dragTranslation = 0
        restartTimer(now)
        if translation <= -swipeThreshold { return move(by: 1) }
        if translation >= swipeThreshold { return move(by: -1) }
        return []
    }

    /// A manual swipe to the left (a key, a button): the next image; the timer restarts.
    public mutating func swipeLeft(now: MediaTime) -> [Action] {
        restartTimer(now)
        return move(by: 1)
    }

    /// A manual swipe to the right: the previous image; the timer restarts.
    public mutating func swipeRight(now: MediaTime) -> [Action] {
        restartTimer(now)
        return move(by: -1)
    }

    private mutating func restartTimer(_ now: MediaTime) {
        deadline = imageCount > 1 ? now + interval : nil
    }

    private mutating func move(by steps: Int) -> [Action] {
        guard imageCount > 1, steps % imageCount != 0 else { return [] }
        index = ((index + steps) % imageCount + imageCount) % imageCount
        return [.showImage(index)]
    }
}
