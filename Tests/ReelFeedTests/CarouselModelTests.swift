import ReelCore
import ReelFeed
import Testing

@Suite struct CarouselModelTests {
    @Test func itAdvancesEveryTwoSecondsAndWraps() {
        var c = CarouselModel(imageCount: 3, now: ms(0))
        #expect(c.nextDeadline == ms(2000))
        #expect(c.tick(now: ms(1999)).isEmpty)
        #expect(c.tick(now: ms(2000)) == [.showImage(1)])
        #expect(c.nextDeadline == ms(4000))
        #expect(c.tick(now: ms(4010)) == [.showImage(2)])
        #expect(c.nextDeadline == ms(6000), "the cadence does not drift with a late tick")
        #expect(c.tick(now: ms(6000)) == [.showImage(0)], "wraps to the first image")
        #expect(c.pageIndicator == (current: 0, count: 3))
    }

    @Test func theIntervalIsConfigurable() {
        var c = CarouselModel(imageCount: 4, now: ms(500), interval: ms(3000))
        #expect(c.tick(now: ms(2500)).isEmpty)
        #expect(c.tick(now: ms(3500)) == [.showImage(1)])
    }

    @Test func draggingPausesAndTheTimerRestartsOnRelease() {
        var c = CarouselModel(imageCount: 3, now: ms(0))
        _ = c.tick(now: ms(2000))
        c.beginDrag(now: ms(3000))
        c.dragChanged(translation: -20)
        #expect(c.isDragging && c.dragTranslation == -20)
        #expect(c.nextDeadline == nil)
        #expect(c.tick(now: ms(9000)).isEmpty, "no advance while the finger is down")
        #expect(c.index == 1)
        #expect(c.endDrag(translation: -20, now: ms(9000)).isEmpty, "too short to swipe")
        #expect(c.nextDeadline == ms(11000))
        #expect(c.tick(now: ms(10999)).isEmpty)
        #expect(c.tick(now: ms(11000)) == [.showImage(2)])
    }

    @Test func manualSwipesWrapBothWays() {
        var c = CarouselModel(imageCount: 3, now: ms(0))
        c.beginDrag(now: ms(100))
        #expect(c.endDrag(translation: 80, now: ms(400)) == [.showImage(2)], "right from the first is the last")
        c.beginDrag(now: ms(500))
        #expect(c.endDrag(translation: -80, now: ms(800)) == [.showImage(0)])
        #expect(c.swipeLeft(now: ms(1000)) == [.showImage(1)])
        #expect(c.swipeRight(now: ms(1500)) == [.showImage(0)])
        #expect(c.nextDeadline == ms(3500), "a manual swipe restarts the timer")
    }

    @Test func aLateTickCatchesUpOnTheMissedAdvances() {
        var c = CarouselModel(imageCount: 5, now: ms(0))
        #expect(c.tick(now: ms(4500)) == [.showImage(2)], "two intervals passed")
        #expect(c.nextDeadline == ms(6000))
        var lap = CarouselModel(imageCount: 3, now: ms(0))
        #expect(lap.tick(now: ms(60_500)).isEmpty, "at most one lap: back where it was")
        #expect(lap.nextDeadline == ms(62_500), "after a gap longer than a lap the timer restarts")
    }

    @Test func aSingleImageNeverMoves() {
        var c = CarouselModel(imageCount: 1, now: ms(0))
        #expect(c.nextDeadline == nil)
        #expect(c.tick(now: ms(10000)).isEmpty)
        #expect(c.swipeLeft(now: ms(10000)).isEmpty)
        #expect(c.index == 0)
    }
}
