import ReelCore
import ReelFeed
import Synchronization
import Testing

/// The models on an injected clock, the way the window drives them: every action's
/// deadline is scheduled on the clock, and the test advances it.
@Suite struct ManualClockDrivingTests {
    /// A swipe controller whose landings run on `clock`, recording every action.
    final class Driver: Sendable {
        let clock: ManualClock
        let state: Mutex<(controller: SwipeController, events: [SwipeController.Action])>

        init(clock: ManualClock, itemCount: Int) {
            self.clock = clock
            self.state = Mutex((SwipeController(itemCount: itemCount, pageHeight: 800), []))
        }

        func send(_ event: (inout SwipeController, MediaTime) -> [SwipeController.Action]) {
            let now = clock.now
            let deadline = state.withTrackedLock { state -> MediaTime? in
                state.events += event(&state.controller, now)
                return state.controller.nextDeadline
            }
            guard let deadline else { return }
            clock.schedule(at: deadline) { [self] in
                self.send { controller, now in controller.tick(now: now) }
            }
        }

        var events: [SwipeController.Action] { state.withTrackedLock { $0.events } }
    }

    @Test func theLandingHappensWhenTheClockReachesTheEndOfTheAnimation() {
        let clock = ManualClock()
        let driver = Driver(clock: clock, itemCount: 5)
        driver.send { c, now in c.next(now: now) }
        #expect(driver.events == [.pageWillLeave(0)])
        clock.advance(by: ms(299))
        #expect(driver.events == [.pageWillLeave(0)])
        clock.advance(by: ms(1))
        #expect(driver.events == [.pageWillLeave(0), .pageDidEnter(1)])

        // Two notches 100 ms apart are one burst; the next page lands 300 ms after the first.
        driver.send { c, now in c.wheel(notches: 1, now: now) }
        clock.advance(by: ms(100))
        driver.send { c, now in c.wheel(notches: 1, now: now) }
        clock.advance(by: ms(1000))
        #expect(driver.events == [.pageWillLeave(0), .pageDidEnter(1), .pageWillLeave(1), .pageDidEnter(2)])
        #expect(clock.now == ms(1400))
    }
}
