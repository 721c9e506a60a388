import Foundation
import ReelCore
import ReelFeed
import ReelTestSupport
import Testing

@Suite struct SearchModelTests {
    static let items = (0..<23).map { FeedItem(id: "i\($0)", title: $0 % 2 == 0 ? "Cat \($0)" : "猫 \($0)", videoURL: URL(string: "https://x/\($0).mp4")!) }

    @Test func aQueryPagesUntilAShortPageSaysNoMore() async {
        let model = SearchModel(source: ListFeedSource(items: Self.items), pageSize: 5)
        await model.search("cat")
        #expect(model.state == .results)
        #expect(model.results.map(\.id) == ["i0", "i2", "i4", "i6", "i8"])
        #expect(model.hasMore)
        await model.loadMore()
        await model.loadMore()
        #expect(model.results.count == 12)
        #expect(!model.hasMore, "12 matches: the third page is short")
        await model.loadMore()
        #expect(model.results.count == 12)
    }

    @Test func chineseQueriesAndEmptyResults() async {
        let model = SearchModel(source: ListFeedSource(items: Self.items), pageSize: 20)
        await model.search("猫")
        #expect(model.results.count == 11)
        await model.search("dog")
        #expect(model.state == .empty)
        #expect(model.results.isEmpty)
        await model.search("   ")
        #expect(model.state == .idle)
    }

    @Test func refreshStartsAgainFromTheFirstPage() async {
        let model = SearchModel(source: ListFeedSource(items: Self.items), pageSize: 5)
        await model.search("cat")
        await model.loadMore()
        #expect(model.results.count == 10)
        await model.refresh()
        #expect(model.results.count == 5)
        #expect(model.query == "cat")
    }

    @Test func choosingAResultOpensAFeedOfTheResultsAtIt() async throws {
        let harness = try FeedHarness(count: 12)
        let model = SearchModel(source: harness.session.source, pageSize: 4)
        await model.search("video 1")
        #expect(model.results.map(\.id) == ["item1", "item10", "item11"])
        let feed = FeedSession(source: model.feedSource(), loader: harness.loader, clock: harness.clock)
        try await feed.start(at: 2)
        #expect(feed.currentItem?.id == "item11")
        #expect(feed.items.map(\.id) == ["item1", "item10", "item11"])
        await feed.shutdown()
    }
}

@Suite struct FeedBrowserTests {
    @Test func categoryFeedsAreCreatedLazilyAndOnlyTheSelectedOnePlays() async throws {
        let harness = try FeedHarness(count: 1)
        let urls = (0..<6).map { URL(string: "https://fake.example/c\($0).mp4")! }
        let data = try Fixtures.data(FeedHarness.clipSpec)
        for url in urls { harness.loader.add(data, at: url) }
        let items = urls.enumerated().map { i, url in
            FeedItem(id: "c\(i)", title: "Clip \(i)", videoURL: url, category: i < 3 ? "nature" : "music")
        }
        let source = ListFeedSource(items: items, categoryList: [FeedCategory(id: "nature", title: "Nature"), FeedCategory(id: "music", title: "音乐")])
        let clock = harness.clock
        let loader = harness.loader
        let browser = FeedBrowser(source: source) { category in
            FeedSession(source: source, category: category, loader: loader, clock: clock)
        }
        try await browser.start()
        #expect(browser.categories.map(\.title) == ["Nature", "音乐"])
        #expect(browser.createdTabs == [0])
        let nature = try #require(browser.currentSession)
        #expect(nature.items.map(\.id) == ["c0", "c1", "c2"])
        await offThePool {
            for _ in 0..<200 where nature.frame(at: 0) == nil {
                nature.waitUntilIdle()
                for player in nature.poolPlayers { player.waitUntilSettled() }
                clock.advance(by: MediaTime(value: 10, timescale: 1000))
            }
        }
        #expect(nature.currentPlayer?.rate == 1)

        try await browser.select(1)
        #expect(browser.createdTabs == [0, 1])
        let music = try #require(browser.currentSession)
        #expect(music.items.map(\.id) == ["c3", "c4", "c5"])
        #expect(nature.currentPlayer?.rate == 0, "leaving a category pauses its page")
        await nature.idle()
        #expect(nature.livePlayers == 1, "and releases its neighbours")
        #expect(music.currentPlayer?.rate == 1)

        try await browser.select(0)
        #expect(browser.currentSession === nature, "created once")
        #expect(nature.currentPlayer?.rate == 1, "entering resumes it")
        #expect(music.currentPlayer?.rate == 0)
        await browser.shutdown()
    }
}
