import Foundation
import ReelCore
import ReelFeed
import ReelTestSupport
import Synchronization
import Testing

@Suite struct HTTPFeedSourceTests {
    static let base = URL(string: "https://api.example/v1")!

    private func items(_ range: ClosedRange<Int>) -> [FeedItem] {
        range.map { FeedItem(id: "\($0)", title: "clip \($0)", uploader: "@u", videoURL: URL(string: "https://cdn.example/\($0).mp4")!, category: "travel") }
    }

    @Test func readsCategoriesPagesAndSearchInTheAPIsShape() async throws {
        let loader = FakeResourceLoader()
        loader.add(try FeedAPIFormat.encodeCategories([FeedCategory(id: "travel", title: "旅行")]),
                   at: URL(string: "https://api.example/v1/categories")!)
        loader.add(try FeedAPIFormat.encodeItems(items(1...3)), at: URL(string: "https://api.example/v1/feed?category=travel&current=1&size=3")!)
        loader.add(try FeedAPIFormat.encodeItems(items(4...5)), at: URL(string: "https://api.example/v1/feed?category=travel&current=2&size=3")!)
        loader.add(try FeedAPIFormat.encodeItems(items(2...2)), at: URL(string: "https://api.example/v1/search?text=clip%202&current=1&size=10")!)
        let source = HTTPFeedSource(baseURL: Self.base, loader: loader)
        #expect(try await source.categories() == [FeedCategory(id: "travel", title: "旅行")])
        let first = try await source.page(category: "travel", page: 1, size: 3)
        #expect(first.items.map(\.id) == ["1", "2", "3"] && first.hasMore)
        #expect(first.items[0].videoURL?.absoluteString == "https://cdn.example/1.mp4")
        let second = try await source.page(category: "travel", page: 2, size: 3)
        #expect(second.items.map(\.id) == ["4", "5"])
        #expect(!second.hasMore, "a short page is the last")
        #expect(try await source.search(text: "clip 2", page: 1, size: 10).items.map(\.id) == ["2"])
    }

    @Test func aRefusedTokenRaisesAuthorizationRequired() async throws {
        let loader = FakeResourceLoader()
        let url = URL(string: "https://api.example/v1/feed?current=1&size=10")!
        loader.add(Data(), at: url)
        loader.setScript(.init(fault: .status(401)), for: url)
        let raised = Flag()
        let source = HTTPFeedSource(baseURL: Self.base, loader: loader, onAuthorizationRequired: { raised.set() })
        await #expect(throws: FeedError.authorizationRequired) { _ = try await source.page(category: nil, page: 1, size: 10) }
        #expect(raised.value)
    }

    @Test func otherFailuresAreUnavailableAndBadJSONIsMalformed() async throws {
        let loader = FakeResourceLoader()
        let broken = URL(string: "https://api.example/v1/feed?current=1&size=10")!
        loader.add(Data("{\"items\": 7}".utf8), at: broken)
        let source = HTTPFeedSource(baseURL: Self.base, loader: loader)
        await #expect(throws: FeedError.self) { _ = try await source.page(category: nil, page: 1, size: 10) }
        do {
            _ = try await source.categories()
            Issue.record("a missing endpoint answered")
        } catch let error as FeedError {
            guard case .unavailable = error else { Issue.record("\(error)"); return }
        }
    }
}

final class Flag: Sendable {
    private let raised = Mutex(false)
    func set() { raised.withTrackedLock { $0 = true } }
    var value: Bool { raised.withTrackedLock { $0 } }
}
