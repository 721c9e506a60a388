@testable import ReelCore
import Testing

private func f(_ n: Int64) -> MediaTime { MediaTime(value: n, timescale: 30) }

@Suite struct FrameSelectionTests {
    @Test func showsTheDueFrameAndKeepsFutureOnes() {
        let pick = FrameSelection.select(pts: [f(10), f(11), f(12)], now: f(10))
        #expect(pick.drop == 0 && pick.presentNext)
        let early = FrameSelection.select(pts: [f(10), f(11)], now: f(9))
        #expect(early.drop == 0 && !early.presentNext)
    }

    @Test func dropsFramesWhoseSuccessorIsAlreadyDue() {
        // At 2x the clock runs past frames 10 and 11: both are late, 12 is shown.
        let pick = FrameSelection.select(pts: [f(10), f(11), f(12), f(13)], now: f(12))
        #expect(pick.drop == 2)
        #expect(pick.presentNext)
    }

    @Test func aLateFrameWithNoDueSuccessorIsStillShown() {
        let pick = FrameSelection.select(pts: [f(10), f(12)], now: MediaTime(value: 23, timescale: 60))
        #expect(pick.drop == 0 && pick.presentNext)
    }

    @Test func theLastQueuedFrameIsNeverDropped() {
        let pick = FrameSelection.select(pts: [f(1)], now: f(100))
        #expect(pick.drop == 0 && pick.presentNext)
        #expect(FrameSelection.select(pts: [], now: f(1)) == (0, false))
    }

    @Test func slackCountsANearlyDueFrameAsDue() {
        let pick = FrameSelection.select(pts: [MediaTime(value: 1001, timescale: 1000)], now: MediaTime(value: 1, timescale: 1),
                                         slack: MediaTime(value: 1, timescale: 1000))
        #expect(pick.presentNext)
    }
}
