import ReelCore
import ReelFeed
import Testing

/// Milliseconds as a media time.
func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

/// Equal to within a millionth of a pixel (eased positions go through `Double` seconds).
func approx(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-6 }

private let height = 800.0

/// Drags from `from` to `to` (screen y) in `steps` moves spread evenly over `duration`
/// ms starting at `start` ms, then releases at `to` `holdBeforeRelease` ms later.
private func drag(_ c: inout SwipeController, from: Double, to: Double, start: Int64 = 0,
                  duration: Int64, steps: Int64 = 10, holdBeforeRelease: Int64 = 0) -> [SwipeController.Action] {
    var actions = c.pointerDown(y: from, now: ms(start))
    for step in 1...steps {
        let y = from + (to - from) * Double(step) / Double(steps)
        actions += c.pointerMove(y: y, now: ms(start + duration * step / steps))
    }
    actions += c.pointerUp(y: to, now: ms(start + duration + holdBeforeRelease))
    return actions
}

@Suite struct SwipeControllerTests {
    @Test func aSlowDragBelowTheThresholdSnapsBack() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        #expect(c.pointerDown(y: 500, now: ms(0)).isEmpty)
        _ = c.pointerMove(y: 440, now: ms(300))
        #expect(c.offset(at: ms(300)) == 60, "the page follows the pointer")
        #expect(c.phase == .dragging)
        _ = c.pointerMove(y: 420, now: ms(600))
        #expect(c.pointerUp(y: 420, now: ms(700)).isEmpty)
        #expect(c.index == 0 && c.enteredIndex == 0)
        #expect(c.phase == .animating)
        #expect(c.offset(at: ms(700)) == 80, "the snap-back starts where the page was")
        #expect(c.offset(at: ms(1000)) == 0)
        #expect(c.tick(now: ms(1000)).isEmpty, "snapping back does not re-enter the page")
        #expect(c.phase == .idle)
    }

    @Test func aSlowDragPastTheThresholdPagesOnAndBack() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        #expect(drag(&c, from: 500, to: 350, duration: 1000) == [.pageWillLeave(0)])
        #expect(c.index == 1 && c.enteredIndex == nil)
        #expect(c.tick(now: ms(1299)).isEmpty)
        #expect(c.tick(now: ms(1300)) == [.pageDidEnter(1)])
        #expect(c.offset(at: ms(1300)) == height)

        // Dragging down past the threshold goes back.
        #expect(drag(&c, from: 300, to: 420, start: 2000, duration: 1000) == [.pageWillLeave(1)])
        #expect(c.tick(now: ms(3300)) == [.pageDidEnter(0)])
    }

    @Test func theThresholdIsConfigurable() {
        var c = SwipeController(itemCount: 5, pageHeight: height,
                                configuration: .init(threshold: 200))
        #expect(drag(&c, from: 500, to: 350, duration: 1000).isEmpty, "150 px is short of 200")
        _ = c.tick(now: ms(1300))
        #expect(drag(&c, from: 500, to: 290, start: 2000, duration: 1000) == [.pageWillLeave(0)])
    }

    @Test func aFastShortFlingPages() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        // 50 px in 40 ms: 1250 px/s upwards, far short of the 100 px threshold.
        _ = c.pointerDown(y: 500, now: ms(0))
        _ = c.pointerMove(y: 480, now: ms(16))
        _ = c.pointerMove(y: 460, now: ms(32))
        #expect(abs(c.pointerVelocity - -1250) < 1e-6)
        #expect(c.pointerUp(y: 450, now: ms(40)) == [.pageWillLeave(0)])
        #expect(c.index == 1)

        // The same 50 px over a second snaps back.
        var slow = SwipeController(itemCount: 5, pageHeight: height)
        #expect(drag(&slow, from: 500, to: 450, duration: 1000).isEmpty)
        #expect(slow.index == 0)

        // A fast downward fling goes back.
        _ = c.tick(now: ms(400))
        #expect(drag(&c, from: 300, to: 340, start: 1000, duration: 30, steps: 3) == [.pageWillLeave(1)])
        #expect(c.index == 0)
    }

    @Test func aFlingThatStoppedBeforeTheReleaseIsNotAFling() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        // 50 px fast, then the finger rests 200 ms before letting go.
        #expect(drag(&c, from: 500, to: 450, duration: 40, steps: 3, holdBeforeRelease: 200).isEmpty)
        #expect(c.index == 0)
    }

    @Test func theFirstPageRubberBandsAndStays() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        _ = c.pointerDown(y: 100, now: ms(0))
        _ = c.pointerMove(y: 400, now: ms(500))
        let shown = c.offset(at: ms(500))
        #expect(shown < 0 && shown > -0.55 * 300, "resisted: less than the 300 px dragged")
        let c2 = 0.55 * 300 * height / (height + 0.55 * 300)
        #expect(abs(shown - -c2) < 1e-9)
        _ = c.pointerMove(y: 5000, now: ms(900))
        #expect(c.offset(at: ms(900)) > -height, "never a whole page")
        #expect(c.pointerUp(y: 5000, now: ms(1200)).isEmpty)
        #expect(c.index == 0 && c.enteredIndex == 0)
        #expect(c.offset(at: ms(1500)) == 0)
        #expect(c.tick(now: ms(1500)).isEmpty)
    }

    @Test func theLastPageRubberBandsAndStays() {
        var c = SwipeController(itemCount: 3, pageHeight: height)
        _ = c.next(now: ms(0)); _ = c.tick(now: ms(300))
        _ = c.next(now: ms(400)); _ = c.tick(now: ms(700))
        #expect(c.index == 2)
        // A fast fling upwards on the last page.
        _ = c.pointerDown(y: 600, now: ms(1000))
        _ = c.pointerMove(y: 400, now: ms(1050))
        let shown = c.offset(at: ms(1050))
        #expect(shown > 2 * height && shown < 2 * height + 200)
        #expect(c.pointerUp(y: 350, now: ms(1060)).isEmpty)
        #expect(c.index == 2)
        #expect(c.offset(at: ms(1360)) == 2 * height)
        #expect(c.next(now: ms(2000)).isEmpty, "no page after the last")
    }

    @Test func animationsEaseOutCubicOver300ms() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        #expect(c.next(now: ms(1000)) == [.pageWillLeave(0)])
        #expect(c.nextDeadline == ms(1300))
        #expect(c.offset(at: ms(1000)) == 0)
        #expect(approx(c.offset(at: ms(1075)), height * 0.578125))   // 1 − 0.75³
        #expect(approx(c.offset(at: ms(1150)), height * 0.875))      // 1 − 0.5³
        #expect(c.offset(at: ms(1300)) == height)
        #expect(c.offset(at: ms(2000)) == height)
        #expect(SwipeController.easeOutCubic(0) == 0 && SwipeController.easeOutCubic(1) == 1)
        #expect(c.tick(now: ms(1300)) == [.pageDidEnter(1)])
        #expect(c.nextDeadline == nil)
    }

    @Test func aBurstOfWheelNotchesPagesOnce() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        var actions = c.wheel(notches: 1, now: ms(0))
        for t in stride(from: Int64(50), through: 600, by: 50) {
            actions += c.wheel(notches: 1, now: ms(t))
        }
        #expect(actions == [.pageWillLeave(0), .pageDidEnter(1)])
        #expect(c.index == 1)
        // A notch after a pause of the cooldown pages again; backwards too.
        #expect(c.wheel(notches: 1, now: ms(900)) == [.pageWillLeave(1)])
        #expect(c.wheel(notches: -1, now: ms(1300)) == [.pageDidEnter(2), .pageWillLeave(2)])
        #expect(c.index == 1)
    }

    @Test func theWheelCooldownIsConfigurable() {
        var c = SwipeController(itemCount: 5, pageHeight: height,
                                configuration: .init(wheelCooldown: ms(100)))
        _ = c.wheel(notches: 1, now: ms(0))
        _ = c.wheel(notches: 1, now: ms(150))
        #expect(c.index == 2)
    }

    @Test func pagesAreLeftOnCommitAndEnteredOnLanding() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        var events: [SwipeController.Action] = []
        events += drag(&c, from: 600, to: 400, duration: 200)    // commit at 200
        #expect(events == [.pageWillLeave(0)])
        events += c.tick(now: ms(400))                           // mid-flight
        #expect(events == [.pageWillLeave(0)])
        events += c.tick(now: ms(500))                           // lands
        events += c.next(now: ms(1000))
        events += c.tick(now: ms(1300))
        events += c.previous(now: ms(2000))
        events += c.tick(now: ms(2300))
        #expect(events == [.pageWillLeave(0), .pageDidEnter(1), .pageWillLeave(1), .pageDidEnter(2),
                           .pageWillLeave(2), .pageDidEnter(1)])
    }

    @Test func keysDuringAnAnimationSkipThePageInBetween() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        #expect(c.next(now: ms(0)) == [.pageWillLeave(0)])
        #expect(c.next(now: ms(100)).isEmpty, "page 1 was never entered, so it is not left")
        #expect(c.index == 2)
        let from = c.offset(at: ms(100))
        #expect(from > 0 && from < height, "the second animation starts where the first was")
        #expect(approx(c.offset(at: ms(250)), from + (2 * height - from) * 0.875))
        #expect(c.tick(now: ms(400)) == [.pageDidEnter(2)])
    }

    @Test func aSwipeDuringAnAnimationContinuesFromTheCurrentPosition() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        _ = c.next(now: ms(0))
        let caught = c.offset(at: ms(150))
        #expect(approx(caught, 700))
        #expect(c.pointerDown(y: 500, now: ms(150)).isEmpty)
        #expect(c.phase == .dragging)
        #expect(c.offset(at: ms(400)) == caught, "grabbed: the page stops where it was")
        _ = c.pointerMove(y: 480, now: ms(400))
        #expect(c.offset(at: ms(400)) == caught + 20)
        // A short slow drag lets the page finish its way to page 1.
        #expect(c.pointerUp(y: 480, now: ms(600)).isEmpty)
        #expect(c.offset(at: ms(600)) == caught + 20)
        #expect(c.tick(now: ms(900)) == [.pageDidEnter(1)])

        // Caught again and dragged back past the threshold: page 0 is re-entered.
        _ = c.next(now: ms(1000))   // leaves 1, towards 2
        _ = c.pointerDown(y: 300, now: ms(1150))
        _ = c.pointerMove(y: 500, now: ms(1600))
        #expect(approx(c.offset(at: ms(1600)), 1300), "caught at 1500, dragged 200 px back")
        #expect(c.pointerUp(y: 500, now: ms(1800)).isEmpty, "page 2 was never entered")
        #expect(c.index == 1)
        #expect(c.tick(now: ms(2100)) == [.pageDidEnter(1)])
    }

    @Test func growingTheFeedDoesNotDisturbTheCurrentPage() {
        var c = SwipeController(itemCount: 3, pageHeight: height)
        _ = c.next(now: ms(0))
        let before = c.offset(at: ms(100))
        #expect(c.setItemCount(10, now: ms(100)).isEmpty)
        #expect(c.index == 1 && c.phase == .animating && c.offset(at: ms(100)) == before)
        #expect(c.tick(now: ms(300)) == [.pageDidEnter(1)])
        #expect(c.maxOffset == 9 * height)

        var empty = SwipeController(itemCount: 0, pageHeight: height)
        #expect(empty.next(now: ms(0)).isEmpty)
        #expect(empty.enteredIndex == nil)
        #expect(empty.setItemCount(4, now: ms(10)) == [.pageDidEnter(0)])
        #expect(empty.setItemCount(8, now: ms(20)).isEmpty)
    }

    @Test func aResizeLandsAtOnceOnTheCurrentPage() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        _ = c.next(now: ms(0))
        #expect(c.resize(pageHeight: 600, now: ms(100)) == [.pageDidEnter(1)])
        #expect(c.phase == .idle && c.offset(at: ms(100)) == 600)
        _ = c.pointerDown(y: 500, now: ms(200))
        #expect(c.resize(pageHeight: 700, now: ms(250)).isEmpty)
        #expect(c.phase == .idle && c.offset(at: ms(250)) == 700, "the drag is dropped")
        #expect(c.pointerUp(y: 100, now: ms(300)).isEmpty)
    }

    @Test func aCancelledDragSnapsBack() {
        var c = SwipeController(itemCount: 5, pageHeight: height)
        _ = c.pointerDown(y: 500, now: ms(0))
        _ = c.pointerMove(y: 200, now: ms(20))
        #expect(c.pointerCancel(now: ms(30)).isEmpty)
        #expect(c.index == 0)
        #expect(c.offset(at: ms(330)) == 0)
    }
}
