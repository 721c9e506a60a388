import Foundation
import ReelCore
import ReelFeed
import ReelMedia
import ReelTestSupport
import Testing

/// An item that cannot be played is a page that says so, wherever it sits in the feed,
/// and the feed goes on: the session marks it failed as soon as its player (or its
/// picture decode) fails, releases its player, keeps the others working, and swiping
/// onto and past it works. Manual clock, fake loader, garbage bytes for the bad items.
@Suite struct FeedFailureTests {
    /// A failure costs what the failure costs: the player rejects garbage at open,
    /// without the (simulated) clock having to move.
    static let promptly = seconds(0.1)

    func failed(_ harness: FeedHarness, _ index: Int) -> Bool { harness.failedIndices.contains(index) }

    @Test func aBadFirstItemFailsAtOnceAndTheNextPageIsPreRenderedAnyway() async throws {
        let harness = try FeedHarness(count: 4, bad: [0])
        try await harness.start()
        #expect(await harness.running(upTo: Self.promptly) { self.failed(harness, 0) }, "item 0 fails without waiting")
        #expect(harness.failedIndices == [0], "once")
        let message = try #require(harness.session.failure(at: 0))
        #expect(!message.isEmpty)
        #expect(harness.events.contains(.failed(index: 0, message: message)))
        #expect(!harness.firstFrames.contains { $0.index == 0 }, "no first frame for a failed page")
        #expect(harness.session.player(at: 0) == nil, "its player is released")
        #expect(harness.session.preloadStage(at: 0) == .none)
        // The failed current page does not hold the neighbours back.
        #expect(await harness.running(upTo: seconds(2)) { harness.session.frame(at: 1) != nil }, "the next page is pre-rendered")

        harness.clearEvents()
        harness.session.next()
        #expect(harness.firstFrames.first?.index == 1)
        #expect(harness.firstFrames.first?.stage == .prerendered)
        #expect(harness.session.player(at: 1)?.rate == 1)
        // Back onto the failed page: it says so again, at once, instead of a first frame.
        harness.clearEvents()
        harness.session.previous()
        #expect(harness.events == [.pageLeave(index: 1), .pageEnter(index: 0), .failed(index: 0, message: message)])
        #expect(harness.session.currentPlayer == nil)
        await harness.session.shutdown()
    }

    @Test func aBadPreRenderedNeighbourFailsWhileTheCurrentPagePlaysOn() async throws {
        let harness = try FeedHarness(count: 5, bad: [1])
        try await harness.start()
        #expect(await harness.running(upTo: seconds(1)) { self.failed(harness, 1) }, "the next page fails while 0 plays")
        let playing = try #require(harness.session.player(at: 0))
        #expect(playing.rate == 1)
        #expect(harness.session.player(at: 1) == nil)
        #expect(harness.session.livePlayers == 1, "the failed neighbour holds no player")
        // The current page goes on presenting frames.
        let before = playing.statistics.presentedFrames
        await harness.running(upTo: seconds(0.5))
        #expect(playing.statistics.presentedFrames > before, "the current page keeps playing")
        #expect(harness.failedIndices == [1], "item 0 is fine")

        // Onto it: failed again, at once; the page after it is opened and pre-rendered.
        harness.clearEvents()
        harness.session.next()
        #expect(harness.failedIndices == [1])
        #expect(harness.firstFrames.isEmpty)
        #expect(playing.rate == 0, "the page left is paused")
        #expect(await harness.running(upTo: seconds(2)) { harness.session.frame(at: 2) != nil })
        #expect(harness.session.player(at: 0) === playing, "the previous page keeps its player")
        // Past it.
        harness.clearEvents()
        harness.session.next()
        #expect(harness.firstFrames.first?.index == 2)
        #expect(harness.firstFrames.first?.stage == .prerendered)
        // And back over it, as the previous page.
        harness.clearEvents()
        harness.session.previous()
        #expect(harness.failedIndices == [1])
        harness.session.previous()
        #expect(await harness.running(upTo: seconds(2)) { harness.firstFrames.contains { $0.index == 0 } })
        await harness.session.shutdown()
    }

    @Test func badItemsAheadOfAndBehindAPageDeepInTheFeed() async throws {
        // At page 4, item 5 (current + 1) and item 3 (current - 1) are bad.
        let harness = try FeedHarness(count: 8, bad: [3, 5])
        try await harness.start()
        await harness.running(upTo: seconds(1)) { harness.session.frame(at: 1) != nil }
        harness.session.move(to: 4)
        #expect(await harness.running(upTo: seconds(2)) { self.failed(harness, 3) && self.failed(harness, 5) },
                "both neighbours fail: \(harness.events)")
        #expect(await harness.running(upTo: seconds(1)) { harness.firstFrames.contains { $0.index == 4 } })
        let current = try #require(harness.session.player(at: 4))
        #expect(current.rate == 1)
        #expect(harness.session.livePlayers == 1)
        #expect(harness.session.failure(at: 4) == nil)
        // Onto 5, then past it to 6.
        harness.clearEvents()
        harness.session.next()
        #expect(harness.failedIndices == [5])
        #expect(await harness.running(upTo: seconds(2)) { harness.session.frame(at: 6) != nil })
        harness.session.next()
        #expect(harness.firstFrames.last?.index == 6)
        #expect(harness.firstFrames.last?.stage == .prerendered)
        await harness.session.shutdown()
    }

    @Test func aBadLastItemFailsAndAWrappingFeedGoesOnToTheFirst() async throws {
        let harness = try FeedHarness(count: 4, wraps: true, bad: [3])
        try await harness.start()
        await harness.running(upTo: seconds(1)) { harness.session.frame(at: 1) != nil }
        harness.session.move(to: 2)
        #expect(await harness.running(upTo: seconds(2)) { self.failed(harness, 3) }, "the last item fails as the next page")
        harness.clearEvents()
        harness.session.next()
        #expect(harness.session.currentIndex == 3)
        #expect(harness.failedIndices == [3])
        // Its next page is the first again, opened although the last never showed a frame.
        #expect(await harness.running(upTo: seconds(2)) { harness.session.frame(at: 0) != nil })
        harness.session.next()
        #expect(harness.session.currentIndex == 0)
        #expect(harness.firstFrames.last?.index == 0)
        #expect(harness.firstFrames.last?.stage == .prerendered)
        await harness.session.shutdown()
    }

    @Test func anImagePostWhosePictureDoesNotDecodeIsAFailedPage() async throws {
        let harness = try FeedHarness(count: 3, images: [1], bad: [1])
        try await harness.start()
        #expect(await eventually() { self.failed(harness, 1) }, "the post's first picture fails to decode")
        #expect(harness.session.picture(at: 1) == nil)
        let message = try #require(harness.session.failure(at: 1))
        #expect(message.contains("p1.png"), "the message names the picture: \(message)")
        harness.clearEvents()
        harness.session.next()
        #expect(harness.failedIndices == [1])
        #expect(harness.firstFrames.isEmpty)
        // The feed goes on past it.
        #expect(await harness.running(upTo: seconds(2)) { harness.session.frame(at: 2) != nil })
        harness.session.next()
        #expect(harness.firstFrames.last?.index == 2)
        await harness.session.shutdown()
    }

    @Test func everyItemBadStillSwipesThroughTheWholeFeed() async throws {
        let harness = try FeedHarness(count: 3, bad: [0, 1, 2])
        try await harness.start()
        #expect(await harness.running(upTo: Self.promptly) { self.failed(harness, 0) })
        #expect(await harness.running(upTo: Self.promptly) { self.failed(harness, 1) }, "the neighbour is tried, and fails")
        harness.session.next()
        #expect(await harness.running(upTo: Self.promptly) { self.failed(harness, 2) })
        harness.session.next()
        #expect(harness.session.currentIndex == 2)
        #expect(Set(harness.failedIndices) == [0, 1, 2])
        #expect(harness.session.livePlayers == 0)
        await harness.session.shutdown()
    }
}
