import ReelCore
import ReelFeed
import Testing

@Suite struct HoldToSpeedUpTests {
    @Test func aLongPressPlaysAtTwiceTheRateUntilReleased() {
        var h = HoldToSpeedUp()
        #expect(h.pointerDown(x: 100, y: 300, now: ms(0)).isEmpty)
        #expect(h.nextDeadline == ms(350))
        #expect(h.tick(now: ms(349)).isEmpty)
        #expect(h.badge == nil)
        #expect(h.tick(now: ms(350)) == [.setRate(2), .showBadge("2x")])
        #expect(h.isHolding && h.badge == "2x")
        #expect(h.pointerMove(x: 130, y: 340, now: ms(500)).isEmpty, "moving while held keeps the hold")
        #expect(h.pointerUp(now: ms(2000)) == [.setRate(1), .hideBadge])
        #expect(!h.isHolding && h.badge == nil)
    }

    @Test func aQuickTapTogglesPauseAndNeverSpeedsUp() {
        var h = HoldToSpeedUp()
        _ = h.pointerDown(x: 100, y: 300, now: ms(0))
        _ = h.pointerMove(x: 103, y: 304, now: ms(100))   // within the slop
        #expect(h.pointerUp(now: ms(200)) == [.togglePause])
        #expect(h.tick(now: ms(400)).isEmpty)
        #expect(h.nextDeadline == nil)
    }

    /// As the seed app's player: holding a paused video does nothing — no 2x, no badge, and
    /// the release is not a tap (it does not start playback).
    @Test func aHoldWhilePausedDoesNothing() {
        var h = HoldToSpeedUp()
        h.isPaused = true
        _ = h.pointerDown(x: 100, y: 300, now: ms(0))
        #expect(h.tick(now: ms(400)).isEmpty)
        #expect(!h.isHolding && h.badge == nil)
        #expect(h.nextDeadline == nil)
        #expect(h.pointerUp(now: ms(1500)).isEmpty)
        // A quick tap while paused still toggles pause (plays).
        _ = h.pointerDown(x: 100, y: 300, now: ms(2000))
        #expect(h.pointerUp(now: ms(2100)) == [.togglePause])
        // The hold key too, and a lost pointer.
        _ = h.keyDown(now: ms(3000))
        #expect(h.tick(now: ms(3400)).isEmpty)
        #expect(h.keyUp(now: ms(4000)).isEmpty)
        _ = h.pointerDown(x: 1, y: 1, now: ms(5000))
        _ = h.tick(now: ms(5400))
        #expect(h.pointerCancel(now: ms(5500)).isEmpty)
        // Playing again: a hold speeds up as before.
        h.isPaused = false
        _ = h.pointerDown(x: 1, y: 1, now: ms(6000))
        #expect(h.tick(now: ms(6350)) == [.setRate(2), .showBadge("2x")])
        #expect(h.pointerUp(now: ms(7000)) == [.setRate(1), .hideBadge])
    }

    @Test func aDragCancelsTheHold() {
        var h = HoldToSpeedUp()
        _ = h.pointerDown(x: 100, y: 300, now: ms(0))
        #expect(h.pointerMove(x: 100, y: 330, now: ms(100)).isEmpty)
        #expect(h.nextDeadline == nil)
        #expect(h.tick(now: ms(1000)).isEmpty, "a drag is the swipe controller's, not a hold")
        #expect(h.pointerUp(now: ms(1200)).isEmpty, "and not a tap either")
        // The next press works again.
        _ = h.pointerDown(x: 0, y: 0, now: ms(2000))
        #expect(h.tick(now: ms(2350)) == [.setRate(2), .showBadge("2x")])
    }

    @Test func theDelaySlopAndRateAreConfigurable() {
        var h = HoldToSpeedUp(holdDelay: ms(500), slop: 40, fastRate: 3)
        _ = h.pointerDown(x: 0, y: 0, now: ms(0))
        _ = h.pointerMove(x: 30, y: 0, now: ms(100))
        #expect(h.tick(now: ms(400)).isEmpty)
        #expect(h.tick(now: ms(500)) == [.setRate(3), .showBadge("3x")])
    }

    @Test func aHeldKeySpeedsUpAndAShortPressIsAKeyTap() {
        var h = HoldToSpeedUp()
        #expect(h.keyDown(now: ms(0)).isEmpty)
        #expect(h.keyDown(now: ms(100)).isEmpty, "auto-repeat")
        #expect(h.nextDeadline == ms(350), "the repeat does not restart the delay")
        #expect(h.tick(now: ms(350)) == [.setRate(2), .showBadge("2x")])
        #expect(h.pointerDown(x: 0, y: 0, now: ms(400)).isEmpty, "one press at a time")
        #expect(h.pointerUp(now: ms(450)).isEmpty)
        #expect(h.isHolding)
        #expect(h.keyUp(now: ms(900)) == [.setRate(1), .hideBadge])

        #expect(h.keyDown(now: ms(1000)).isEmpty)
        #expect(h.keyUp(now: ms(1100)) == [.keyTapped])
        #expect(h.tick(now: ms(2000)).isEmpty)
    }

    @Test func aCancelledHoldReturnsToNormalSpeed() {
        var h = HoldToSpeedUp()
        _ = h.pointerDown(x: 0, y: 0, now: ms(0))
        _ = h.tick(now: ms(400))
        #expect(h.pointerCancel(now: ms(500)) == [.setRate(1), .hideBadge])
        _ = h.pointerDown(x: 0, y: 0, now: ms(600))
        #expect(h.pointerCancel(now: ms(700)).isEmpty)
        #expect(h.pointerUp(now: ms(710)).isEmpty)
    }
}
