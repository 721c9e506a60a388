import Testing
import ReelCore
import ReelFeed
import Foundation
@testable import ReelSDL

@Suite struct FeedViewModelTests {
    func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    func model() -> FeedViewModel {
        var m = FeedViewModel(drawableWidth: 540, drawableHeight: 960)
        m.setTabs(titles: ["推荐", "音乐", "游戏"], widths: [80, 80, 80], selected: 0)
        m.showFeed(count: 5, index: 0, now: ms(0))
        m.setCurrentItem(FeedItem(id: "a", title: "标题", uploader: "作者"), now: ms(0))
        return m
    }

    /// The feed API answered 401/403: the window says the feed needs sign-in, over the feed.
    @Test func aSignInNoticeIsDrawnUnderTheTabs() {
        var m = model()
        func texts() -> [String] {
            m.drawList(now: ms(0)) { _ in FeedViewModel.PageContent(source: nil, item: nil) }.compactMap {
                if case .text(let text, _, _, _, _, _) = $0 { return text }
                return nil
            }
        }
        #expect(!texts().contains(FeedViewModel.signInNotice))
        m.setNeedsSignIn(true)
        #expect(texts().contains(FeedViewModel.signInNotice))
        #expect(FeedViewModel.signInNotice.contains("sign-in"))
    }

    @Test func anUpwardDragPastTheThresholdMovesToTheNextPage() {
        var m = model()
        _ = m.handle(.pointerDown(x: 270, y: 700), now: ms(0))
        _ = m.handle(.pointerMove(x: 270, y: 600), now: ms(100))
        _ = m.handle(.pointerMove(x: 270, y: 450), now: ms(400))
        // The page follows the pointer: 250 px of the next page are showing.
        #expect(m.swipe.offset(at: ms(400)) == 250)
        let commands = m.handle(.pointerUp(x: 270, y: 450), now: ms(420))
        #expect(commands.contains(.move(to: 1)))
        #expect(!commands.contains(.player(.togglePause)))
    }

    @Test func aShortDragSnapsBackAndATapPauses() {
        var m = model()
        _ = m.handle(.pointerDown(x: 270, y: 700), now: ms(0))
        #expect(m.handle(.pointerUp(x: 270, y: 702), now: ms(80)) == [.player(.togglePause)])
        #expect(m.currentIndex == 0)
    }

    @Test func wheelAndKeysPageAndArrowsChangeTabs() {
        var m = model()
        #expect(m.handle(.wheel(dy: -1), now: ms(0)) == [.move(to: 1)])
        #expect(m.handle(.keyDown(.j, isRepeat: false), now: ms(1000)) == [.move(to: 2)])
        #expect(m.handle(.keyDown(.k, isRepeat: false), now: ms(2000)) == [.move(to: 1)])
        #expect(m.handle(.keyDown(.playback(.right), isRepeat: false), now: ms(3000)) == [.selectTab(1)])
        #expect(m.tabs.selectedIndex == 1)
    }

    @Test func aSidewaysDragPastHalfTheWidthSelectsTheNextTab() {
        var m = model()
        _ = m.handle(.pointerDown(x: 500, y: 500), now: ms(0))
        _ = m.handle(.pointerMove(x: 400, y: 505), now: ms(50))
        #expect(m.tabs.dragProgress > 0)
        _ = m.handle(.pointerMove(x: 100, y: 505), now: ms(100))
        #expect(m.handle(.pointerUp(x: 100, y: 505), now: ms(120)) == [.selectTab(1)])
        #expect(m.currentIndex == 0)
    }

    @Test func searchTakesTextAndCompositionAndIgnoresTheSlashThatOpenedIt() {
        var m = model()
        #expect(m.handle(.keyDown(.slash, isRepeat: false), now: ms(0)) == [.openSearch])
        #expect(m.handle(.text("/"), now: ms(1)).isEmpty)
        _ = m.handle(.composition("ye"), now: ms(2))
        #expect(m.query == "" && m.composition == "ye")
        _ = m.handle(.text("夜"), now: ms(3))
        _ = m.handle(.text("景"), now: ms(4))
        _ = m.handle(.keyDown(.backspace, isRepeat: false), now: ms(5))
        #expect(m.query == "夜")
        #expect(m.handle(.keyDown(.enter, isRepeat: false), now: ms(6)) == [.search("夜")])
        m.searchResultsLoaded([FeedViewModel.ResultRow(item: FeedItem(id: "r", title: "夜晚的歌"), thumbnail: nil)], hasMore: false)
        let row = m.resultRect(0)
        _ = m.handle(.pointerDown(x: row.midX, y: row.midY), now: ms(10))
        #expect(m.handle(.pointerUp(x: row.midX, y: row.midY), now: ms(20)) == [.closeSearch, .openSearchResult(0)])
        #expect(!m.isSearching)
    }

    @Test func imagePostsShowDotsAndNoProgressBar() {
        var m = model()
        m.setCurrentItem(FeedItem(id: "p", title: "相册", images: [URL(fileURLWithPath: "/1.jpg"), URL(fileURLWithPath: "/2.jpg")]), now: ms(0))
        #expect(m.carousel?.imageCount == 2)
        #expect(!m.playback.showsTransport)
        _ = m.tick(now: ms(2_100))
        #expect(m.carousel?.index == 1)
    }

    /// A live item in the feed shows as live, like `reel play`'s window: `LIVE` for the duration.
    @Test func aLiveItemShowsLive() {
        var m = model()
        m.setCurrentItem(FeedItem(id: "l", title: "直播", videoURL: URL(string: "http://o/live/master.m3u8")), now: ms(0))
        m.sync(currentTime: ms(5_000), duration: .indefinite, loaded: [], isPlaying: true, videoSize: (360, 640), isLive: true)
        #expect(m.playback.timeText.hasSuffix("/ LIVE"), "\(m.playback.timeText)")
        m.sync(currentTime: ms(5_000), duration: ms(12_000), loaded: [], isPlaying: true, videoSize: (360, 640))
        #expect(!m.playback.timeText.contains("LIVE"))
    }

    func texts(_ m: FeedViewModel, now: MediaTime = .zero) -> [String] {
        m.drawList(now: now) { _ in FeedViewModel.PageContent(source: nil, item: nil) }.compactMap {
            if case .text(let text, _, _, _, _, _) = $0 { return text }
            return nil
        }
    }

    func row(_ title: String) -> FeedViewModel.ResultRow {
        FeedViewModel.ResultRow(item: FeedItem(id: title, title: title), thumbnail: nil)
    }

    /// The search's outcomes come in as events; the panel lists the rows and says where the search is.
    @Test func theSearchPanelShowsWhatTheSearchEventsSay() {
        var m = model()
        _ = m.handle(.keyDown(.slash, isRepeat: false), now: ms(0))
        m.searchStarted()
        #expect(m.resultRows.isEmpty)
        #expect(texts(m).contains("搜索中…"))
        m.searchResultsLoaded([row("夜晚的歌"), row("夜景")], hasMore: true)
        #expect(m.resultRows.map(\.item.title) == ["夜晚的歌", "夜景"])
        #expect(texts(m).contains("2 个结果（滚动加载更多）"))
        #expect(texts(m).contains("夜景"))
        m.searchResultsLoaded([], hasMore: false)
        #expect(texts(m).contains("没有结果"))
        m.searchCleared()
        #expect(m.searchStatus.isEmpty && m.resultRows.isEmpty)
    }

    /// A failed search says why in the panel, and what was found before stays listed.
    @Test func aSearchFailureIsShownAndKeepsTheResultsSoFar() {
        var m = model()
        _ = m.handle(.keyDown(.slash, isRepeat: false), now: ms(0))
        m.searchResultsLoaded([row("夜晚的歌")], hasMore: true)
        m.searchFailed("timed out", rows: [row("夜晚的歌")])
        #expect(m.searchStatus == "搜索失败: timed out")
        #expect(texts(m).contains("搜索失败: timed out"))
        #expect(texts(m).contains("夜晚的歌"))
    }

    /// A command that failed (a search that threw, a category that did not load) is a notice
    /// over the feed for a while, then goes.
    @Test func aFailedCommandIsANoticeForAWhile() {
        var m = model()
        m.commandFailed("搜索失败 Search failed: offline", now: ms(1_000))
        #expect(m.notice == "搜索失败 Search failed: offline")
        #expect(texts(m, now: ms(1_000)).contains("搜索失败 Search failed: offline"))
        #expect(m.nextDeadline.map { $0 <= ms(5_000) } == true)
        _ = m.tick(now: ms(4_900))
        #expect(m.notice != nil)
        _ = m.tick(now: ms(5_000))
        #expect(m.notice == nil)
    }

    /// While a results feed plays the tab bar shows what it is, with a back arrow; a click
    /// there closes it, and closing brings the categories back.
    @Test func aResultsFeedIsNamedInTheTabBarUntilItCloses() {
        var m = model()
        m.resultsShown(title: "绿")
        #expect(texts(m).contains("‹ 搜索 “绿”"))
        #expect(!texts(m).contains("音乐"))
        _ = m.handle(.pointerDown(x: 40, y: 20), now: ms(0))
        #expect(m.handle(.pointerUp(x: 40, y: 20), now: ms(10)) == [.closeResults])
        m.resultsShown(title: "我的作品", label: "‹ 我的作品 My videos")
        #expect(texts(m).contains("‹ 我的作品 My videos"))
        m.resultsClosed()
        #expect(m.resultsTitle == nil && m.resultsLabel == nil)
        #expect(texts(m).contains("音乐"))
        _ = m.handle(.pointerDown(x: 40, y: 20), now: ms(20))
        #expect(m.handle(.pointerUp(x: 40, y: 20), now: ms(30)) != [.closeResults])
    }

    @Test func theHUDShowsItsLinesOnlyWhileItIsOn() {
        var m = model()
        m.hudLinesChanged(["gl  540×960"])
        #expect(!texts(m).contains("gl  540×960"))
        m.hudShown(true)
        #expect(m.showsHUD)
        #expect(texts(m).contains("gl  540×960"))
    }
}
