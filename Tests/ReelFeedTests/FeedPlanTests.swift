import ReelFeed
import Testing

@Suite struct FeedPlanTests {
    @Test func theCurrentPageThenNextThenPreviousHoldPlayers() {
        let plan = FeedPlan.make(current: 5, count: 20)
        #expect(plan.pool == [5, 6, 4])
        #expect(plan.preload == [7, 3, 8, 2, 9, 1], "by distance, ahead first at equal distance")
    }

    @Test func theEndsOfTheFeedCutThePlan() {
        #expect(FeedPlan.make(current: 0, count: 10).pool == [0, 1])
        #expect(FeedPlan.make(current: 0, count: 10).preload == [2, 3, 4])
        #expect(FeedPlan.make(current: 9, count: 10).pool == [9, 8])
        #expect(FeedPlan.make(current: 9, count: 10).preload == [7, 6, 5])
        #expect(FeedPlan.make(current: 0, count: 1).pool == [0])
        #expect(FeedPlan.make(current: 0, count: 0).pool.isEmpty)
    }

    @Test func aRingWrapsWithoutRepeatingAnItem() {
        let plan = FeedPlan.make(current: 0, count: 10, wraps: true)
        #expect(plan.pool == [0, 1, 9])
        #expect(plan.preload == [2, 8, 3, 7, 4, 6])
        let small = FeedPlan.make(current: 1, count: 3, wraps: true)
        #expect(small.pool == [1, 2, 0])
        #expect(small.preload.isEmpty)
    }

    @Test func picturesGetNoPlayerAndNoPreload() {
        let plan = FeedPlan.make(current: 2, count: 10, wantsPlayer: { $0 != 3 && $0 != 4 })
        #expect(plan.pool == [2, 1])
        #expect(plan.preload == [0, 5, 6])
    }
}
