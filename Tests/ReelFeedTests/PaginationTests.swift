import ReelFeed
import Testing

private struct Item: Equatable {
    var id: String
    var title: String
}

private func items(_ ids: [String], tag: String = "") -> [Item] { ids.map { Item(id: $0, title: $0 + tag) } }
private func range(_ r: Range<Int>) -> [Item] { items(r.map { "v\($0)" }) }

@Suite struct PaginationTests {
    @Test func theNextPageLoadsAt70PercentOnce() {
        var p = Pagination<String>()
        #expect(p.start() == .loadNextPage, "an empty feed asks for its first page")
        #expect(p.isLoading)
        let first = p.append(range(0..<10), id: \.id, hasMore: true)
        #expect(first.items.count == 10 && first.droppedDuplicates == 0 && first.action == nil)
        for index in 0..<7 {
            #expect(p.indexChanged(to: index) == nil, "index \(index) is below 70 % of 10")
        }
        #expect(p.indexChanged(to: 7) == .loadNextPage)
        #expect(p.isLoading)
        // Swiping back and forth while the page loads does not ask again.
        for index in [8, 6, 7, 9, 7] {
            #expect(p.indexChanged(to: index) == nil)
        }
        let second = p.append(range(10..<20), id: \.id, hasMore: true)
        #expect(second.action == nil, "index 7 is below 70 % of 20")
        #expect(!p.isLoading && p.loadedCount == 20 && p.pagesLoaded == 2)
        #expect(p.indexChanged(to: 13) == nil)
        #expect(p.indexChanged(to: 14) == .loadNextPage)
    }

    @Test func notWhileLoadingAndNotWhenThereIsNoMore() {
        var p = Pagination<String>()
        _ = p.append(range(0..<10), id: \.id, hasMore: false)
        #expect(!p.hasMore)
        #expect(p.indexChanged(to: 9) == nil, "the source said there is no more")

        #expect(Pagination<String>.shouldLoad(index: 7, loadedCount: 10, isLoading: false, hasMore: true))
        #expect(!Pagination<String>.shouldLoad(index: 7, loadedCount: 10, isLoading: true, hasMore: true))
        #expect(!Pagination<String>.shouldLoad(index: 7, loadedCount: 10, isLoading: false, hasMore: false))
        #expect(!Pagination<String>.shouldLoad(index: 6, loadedCount: 10, isLoading: false, hasMore: true))
    }

    @Test(arguments: [
        (10, 0.7, 7), (20, 0.7, 14), (3, 0.7, 2), (1, 0.7, 0), (10, 0.5, 5), (7, 0.7, 5), (30, 0.7, 21),
    ])
    func theTriggerPoint(_ count: Int, _ fraction: Double, _ first: Int) {
        #expect(!Pagination<String>.reachesTrigger(index: first - 1, loadedCount: count, fraction: fraction))
        #expect(Pagination<String>.reachesTrigger(index: first, loadedCount: count, fraction: fraction))
    }

    @Test func theFractionIsConfigurable() {
        var p = Pagination<String>(triggerFraction: 0.5)
        _ = p.append(range(0..<10), id: \.id, hasMore: true)
        #expect(p.indexChanged(to: 4) == nil)
        #expect(p.indexChanged(to: 5) == .loadNextPage)
    }

    @Test func aFailedLoadMayBeRetried() {
        var p = Pagination<String>()
        _ = p.append(range(0..<10), id: \.id, hasMore: true)
        #expect(p.indexChanged(to: 8) == .loadNextPage)
        p.loadFailed()
        #expect(!p.isLoading)
        #expect(p.indexChanged(to: 9) == .loadNextPage)
    }

    @Test func duplicatesAreDroppedKeepingTheFirstOccurrence() {
        var p = Pagination<String>()
        _ = p.append(items(["a", "b", "c"]), id: \.id, hasMore: true)
        let page = p.append(items(["b", "d", "a", "d", "e"], tag: "-again"), id: \.id, hasMore: true)
        #expect(page.items == [Item(id: "d", title: "d-again"), Item(id: "e", title: "e-again")])
        #expect(page.droppedDuplicates == 3)
        #expect(p.loadedCount == 5)
        #expect(p.contains("a") && p.contains("e") && !p.contains("f"))
    }

    @Test func aPageOfOnlyDuplicatesAsksAgainAtOnce() {
        var p = Pagination<String>()
        _ = p.append(range(0..<10), id: \.id, hasMore: true)
        #expect(p.indexChanged(to: 9) == .loadNextPage)
        let page = p.append(range(0..<10), id: \.id, hasMore: true)
        #expect(page.items.isEmpty && page.droppedDuplicates == 10)
        #expect(page.action == .loadNextPage, "the user is still at the trigger point")
        #expect(p.isLoading)
    }
}
