import ReelCore

/// Vertical paging of a feed, as a value: where the pages are, what the pointer,
/// the wheel and the keys do to them, and when a page is left and entered.
///
/// The content offset is in pixels: page `i` is fully visible at `i * pageHeight`.
/// Pointer positions are screen `y` coordinates (down is positive), so moving the
/// finger up scrolls towards the next page. Time is passed in with every event
/// (`now:`) and the owner samples ``offset(at:)`` each frame and calls
/// ``tick(now:)`` (at the latest at ``nextDeadline``) so that landings are reported.
///
/// Events come in, ``Action``s come out, as in swift-nio's state machines:
/// - ``Action/pageWillLeave(_:)`` when a page change is committed (on release, a wheel
///   notch or a key), for the page that was entered;
/// - ``Action/pageDidEnter(_:)`` when the animation lands on a page.
///
/// Every `pageDidEnter(i)` is followed by exactly one `pageWillLeave(i)` before the next
/// `pageDidEnter`. A page that is committed to but never landed on (the user grabs the
/// feed mid-animation and swipes on) is neither entered nor left. The first page counts
/// as entered once the controller has items (``init(itemCount:pageHeight:configuration:)``
/// or the first ``setItemCount(_:now:)`` that grows from zero).
public struct SwipeController: Sendable, Hashable {
    /// What the controller asks its owner to do.
    public enum Action: Sendable, Hashable {
        /// The page at this index is being left: pause its player.
        case pageWillLeave(Int)
        /// The page at this index is now fully shown: play it.
        case pageDidEnter(Int)
    }

    /// The tunables; the defaults follow the short-video apps.
    public struct Configuration: Sendable, Hashable {
        /// A release past this drag distance (px) pages.
        public var threshold: Double
        /// A release faster than this (px/s) pages even when the drag is short.
        public var flingVelocity: Double
        /// The velocity is measured over the moves in this window before the release.
        public var velocityWindow: MediaTime
        /// How long a page or snap-back animation takes.
        public var animationDuration: MediaTime
        /// A wheel notch within this long of the previous one belongs to the same burst
        /// and does not page again.
        public var wheelCooldown: MediaTime
        /// Resistance past the first and last page (UIScrollView's 0.55): the shown
        /// overshoot is `c·x·h / (h + c·x)` for a dragged overshoot `x` and page height `h`,
        /// so it never reaches one page.
        public var rubberBandCoefficient: Double

        /// The defaults: 100 px, 800 px/s over 100 ms, 300 ms animations, a 300 ms wheel
        /// cooldown and UIScrollView's rubber band.
        public init(threshold: Double = 100,
                    flingVelocity: Double = 800,
                    velocityWindow: MediaTime = MediaTime(value: 100, timescale: 1000),
                    animationDuration: MediaTime = MediaTime(value: 300, timescale: 1000),
                    wheelCooldown: MediaTime = MediaTime(value: 300, timescale: 1000),
                    rubberBandCoefficient: Double = 0.55) {
            self.threshold = threshold
            self.flingVelocity = flingVelocity
            self.velocityWindow = velocityWindow
            self.animationDuration = animationDuration
            self.wheelCooldown = wheelCooldown
            self.rubberBandCoefficient = rubberBandCoefficient
        }
    }

    /// What the pages are doing.
    public enum Phase: Sendable, Hashable {
        /// At rest on ``SwipeController/index``.
        case idle
        /// Following the pointer.
        case dragging
        /// Easing towards ``SwipeController/index`` (a page change or a snap-back).
        case animating
    }

    private struct Sample: Sendable, Hashable {
        var y: Double
        var time: MediaTime
    }

    private struct Drag: Sendable, Hashable {
        var startY: Double
        var startOffset: Double
        var samples: [Sample]
    }

    private struct Animation: Sendable, Hashable {
        var from: Double
        var to: Double
        var start: MediaTime
    }

    /// The tunables.
    public var configuration: Configuration
    /// How many pages there are; grows with pagination (``setItemCount(_:now:)``).
    public private(set) var itemCount: Int
    /// The height of one page in pixels.
    public private(set) var pageHeight: Double
    /// The current page: the one shown, or the one being animated to.
    public private(set) var index: Int
    /// The page that has been entered and not yet left; `nil` while landing on a new page.
    public private(set) var enteredIndex: Int?

    private var drag: Drag?
    private var animation: Animation?
    private var lastWheel: MediaTime?

    /// A controller on the first page; with items, the first page counts as entered.
    public init(itemCount: Int, pageHeight: Double, configuration: Configuration = Configuration()) {
        precondition(itemCount >= 0 && pageHeight > 0, "itemCount ≥ 0 and pageHeight > 0")
        self.configuration = configuration
        self.itemCount = itemCount
        self.pageHeight = pageHeight
        self.index = 0
        self.enteredIndex = itemCount > 0 ? 0 : nil
    }

    // MARK: Reading

    /// What the pages are doing.
    public var phase: Phase {
        if drag != nil { return .dragging }
        if animation != nil { return .animating }
        return .idle
    }

    /// The offset of the last page at rest.
    public var maxOffset: Double { Double(max(itemCount - 1, 0)) * pageHeight }

    /// The content offset (px) to draw at `now`: the resting offset, the dragged offset
    /// (with rubber-band resistance past the ends), or the eased animation's position.
    public func offset(at now: MediaTime) -> Double {
        if let drag {
            return rubberBanded(drag.startOffset + (drag.startY - (drag.samples.last?.y ?? drag.startY)))
        }
        if let animation {
            let progress = animationProgress(animation, now: now)
            return animation.from + (animation.to - animation.from) * Self.easeOutCubic(progress)
        }
        return restingOffset(index)
    }

    /// When the running animation lands (call ``tick(now:)`` then), or `nil`.
    public var nextDeadline: MediaTime? {
        animation.map { $0.start + configuration.animationDuration }
    }

    /// Ease-out cubic, `1 − (1 − p)³`, for `p` in 0…1.
    public static func easeOutCubic(_ p: Double) -> Double {
        let q = 1 - min(1, max(0, p))
        return 1 - q * q * q
    }

    // MARK: Time

    /// Time passed: lands the animation once it is over (``Action/pageDidEnter(_:)``).
    public mutating func tick(now: MediaTime) -> [Action] {
        guard let animation, now >= animation.start + configuration.animationDuration else { return [] }
        self.animation = nil
        return land()
    }

    // MARK: Pointer

    /// The pointer went down at `y`. During an animation the pages stop where they are
    /// and the drag continues from there.
    public mutating func pointerDown(y: Double, now: MediaTime) -> [Action] {
        let actions = tick(now: now)
        guard itemCount > 0 else { return actions }
        let start = offset(at: now)
        animation = nil
        drag = Drag(startY: y, startOffset: unRubberBanded(start), samples: [Sample(y: y, time: now)])
        return actions
    }

    /// The pointer moved to `y`: the pages follow it.
    public mutating func pointerMove(y: Double, now: MediaTime) -> [Action] {
        guard drag != nil else { return [] }
        drag!.samples.append(Sample(y: y, time: now))
        trimSamples(now: now)
        return []
    }

    /// The pointer was released at `y`: page to the next or previous page when the drag
    /// went past ``Configuration/threshold`` or was faster than
    /// ``Configuration/flingVelocity``, else snap back. The page moved from is the
    /// current ``index`` (the animation's target when the drag began mid-animation).
    public mutating func pointerUp(y: Double, now: MediaTime) -> [Action] {
        guard var drag else { return [] }
        drag.samples.append(Sample(y: y, time: now))
        self.drag = drag
        trimSamples(now: now)
        let velocity = releaseVelocity()   // px/s of the pointer; negative is upwards
        let translation = drag.startY - y   // positive: dragged towards the next page
        let current = offset(at: now)
        self.drag = nil

        var step = 0
        if abs(velocity) >= configuration.flingVelocity {
            step = velocity < 0 ? 1 : -1
        } else if abs(translation) >= configuration.threshold {
            step = translation > 0 ? 1 : -1
        }
        let target = min(max(index + step, 0), max(itemCount - 1, 0))
        return go(to: target, from: current, now: now)
    }

    /// The drag was abandoned (the pointer left the window): snap back to the current page.
    public mutating func pointerCancel(now: MediaTime) -> [Action] {
        guard drag != nil else { return [] }
        let current = offset(at: now)
        drag = nil
        return go(to: index, from: current, now: now)
    }

    /// The pointer's vertical velocity (px/s, negative upwards) over
    /// ``Configuration/velocityWindow`` before its latest sample; 0 when not dragging.
    public var pointerVelocity: Double { releaseVelocity() }

    // MARK: Wheel and keys

    /// A wheel notch: `notches > 0` pages to the next page, `< 0` to the previous one.
    /// A burst of notches, each within ``Configuration/wheelCooldown`` of the one before,
    /// pages once. Ignored while dragging.
    public mutating func wheel(notches: Int, now: MediaTime) -> [Action] {
        guard notches != 0, drag == nil else { return [] }
        let inBurst = lastWheel.map { now - $0 < configuration.wheelCooldown } ?? false
        lastWheel = now
        guard !inBurst else { return tick(now: now) }
        return page(by: notches > 0 ? 1 : -1, now: now)
    }

    /// The "next" key (down arrow, `j`): the next page, from wherever the pages are.
    public mutating func next(now: MediaTime) -> [Action] {
        guard drag == nil else { return [] }
        return page(by: 1, now: now)
    }

    /// The "previous" key (up arrow, `k`): the previous page, from wherever the pages are.
    public mutating func previous(now: MediaTime) -> [Action] {
        guard drag == nil else { return [] }
        return page(by: -1, now: now)
    }

    // MARK: Items and size

    /// The feed now has `count` items (pagination appended some). The current page, its
    /// offset and any drag or animation are untouched; growing from zero enters page 0.
    /// Feeds only grow: a refresh makes a new controller.
    public mutating func setItemCount(_ count: Int, now: MediaTime) -> [Action] {
        precondition(count >= itemCount, "a feed only grows; make a new controller to refresh")
        let wasEmpty = itemCount == 0
        itemCount = count
        guard wasEmpty, count > 0 else { return [] }
        enteredIndex = 0
        return [.pageDidEnter(0)]
    }

    /// The window was resized: pages are now `height` pixels high. A drag is dropped
    /// and an animation lands at once on the current page.
    public mutating func resize(pageHeight height: Double, now: MediaTime) -> [Action] {
        precondition(height > 0, "pageHeight > 0")
        pageHeight = height
        drag = nil
        guard animation != nil else { return [] }
        animation = nil
        return land()
    }

    // MARK: Private

    private mutating func page(by step: Int, now: MediaTime) -> [Action] {
        var actions = tick(now: now)
        guard itemCount > 0 else { return actions }
        let target = min(max(index + step, 0), itemCount - 1)
        guard target != index else { return actions }
        actions += go(to: target, from: offset(at: now), now: now)
        return actions
    }

    /// Commits `target` (leaving the entered page when it changes) and animates to it.
    private mutating func go(to target: Int, from current: Double, now: MediaTime) -> [Action] {
        var actions: [Action] = []
        if target != index {
            // `enteredIndex` is `index` or nil: leave it only if it was entered.
            if let entered = enteredIndex {
                actions.append(.pageWillLeave(entered))
                enteredIndex = nil
            }
            index = target
        }
        let destination = restingOffset(target)
        if current == destination {
            animation = nil
            return actions + land()
        }
        animation = Animation(from: current, to: destination, start: now)
        return actions
    }

    private mutating func land() -> [Action] {
        guard itemCount > 0, enteredIndex != index else { return [] }
        enteredIndex = index
        return [.pageDidEnter(index)]
    }

    private func restingOffset(_ page: Int) -> Double { Double(page) * pageHeight }

    private func animationProgress(_ animation: Animation, now: MediaTime) -> Double {
        let duration = configuration.animationDuration.seconds
        guard duration > 0 else { return 1 }
        return min(1, max(0, (now - animation.start).seconds / duration))
    }

    /// The shown offset for a dragged (raw) offset: resistance past either end.
    private func rubberBanded(_ raw: Double) -> Double {
        if raw < 0 { return -resist(-raw) }
        if raw > maxOffset { return maxOffset + resist(raw - maxOffset) }
        return raw
    }

    /// The dragged (raw) offset that shows as `shown`: the inverse of ``rubberBanded(_:)``,
    /// so a drag that starts in the overshoot continues smoothly.
    private func unRubberBanded(_ shown: Double) -> Double {
        if shown < 0 { return -unresist(-shown) }
        if shown > maxOffset { return maxOffset + unresist(shown - maxOffset) }
        return shown
    }

    private func resist(_ x: Double) -> Double {
        let c = configuration.rubberBandCoefficient, h = pageHeight
        return c * x * h / (h + c * x)
    }

    private func unresist(_ y: Double) -> Double {
        let c = configuration.rubberBandCoefficient, h = pageHeight
        guard c > 0, y < h else { return y }
        return y * h / (c * (h - y))
    }

    private mutating func trimSamples(now: MediaTime) {
        guard var drag else { return }
        let horizon = now - configuration.velocityWindow
        // Keep one sample at or before the window's start so a still pointer reads 0.
        while drag.samples.count > 2, drag.samples[1].time <= horizon {
            drag.samples.removeFirst()
        }
        self.drag = drag
    }

    private func releaseVelocity() -> Double {
        guard let samples = drag?.samples, let last = samples.last else { return 0 }
        let horizon = last.time - configuration.velocityWindow
        guard let first = samples.first(where: { $0.time >= horizon }) else { return 0 }
        let dt = (last.time - first.time).seconds
        guard dt > 0 else { return 0 }
        return (last.y - first.y) / dt
    }
}
