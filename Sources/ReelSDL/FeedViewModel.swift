import ReelCaptions
import ReelCore
import ReelFeed
import ReelMedia

/// The feed window's state and layout as a value: the vertical pager (``SwipeController``),
/// the category tabs (``TabStrip``), the current page's overlay (``PlaybackViewModel``:
/// title, progress, hold for 2x, fullscreen), the image-post carousel and the search panel.
/// Input in drawable pixels comes in, ``Command``s come out; ``drawList(content:)`` draws
/// the pages the pager shows. No SDL in here.
public struct FeedViewModel: Sendable {
    public enum Command: Sendable, Hashable {
        /// Show item `index` of the current feed (a committed swipe).
        case move(to: Int)
        /// Switch to category tab `index`.
        case selectTab(Int)
        /// A command for the current page's player (pause, seek, rate, mute, fullscreen, quit).
        case player(PlaybackViewModel.Command)
        /// Open or close the search panel (start or stop SDL text input).
        case openSearch
        case closeSearch
        case search(String)
        /// Play search result `index` (a feed of the results starting there).
        case openSearchResult(Int)
        /// The results list scrolled near its end: load the next page.
        case loadMoreResults
        /// Leave the search results being played, back to the tabs.
        case closeResults
    }

    /// What one page shows.
    public struct PageContent: Sendable {
        /// Its frame, picture or cover (`nil`: none yet).
        public var source: DrawSource?
        public var item: FeedItem?
        /// Why the page's item cannot be shown (`nil`: it can). A failed page shows its
        /// cover dimmed (or a dark page) and says so.
        public var failure: String?
        public init(source: DrawSource?, item: FeedItem?, failure: String? = nil) {
            self.source = source
            self.item = item
            self.failure = failure
        }
    }

    /// One search result as listed.
    public struct ResultRow: Sendable {
        public var item: FeedItem
        public var thumbnail: RGBImage?
        public init(item: FeedItem, thumbnail: RGBImage?) {
            self.item = item
            self.thumbnail = thumbnail
        }
    }

    public enum Key: Sendable, Hashable {
        case playback(PlaybackViewModel.Key)
        case j, k, slash, enter, backspace
    }

    public enum Input: Sendable, Hashable {
        case pointerDown(x: Double, y: Double)
        case pointerMove(x: Double, y: Double)
        case pointerUp(x: Double, y: Double)
        case pointerCancel
        case wheel(dy: Double)
        case keyDown(Key, isRepeat: Bool)
        case keyUp(Key)
        case text(String)
        case composition(String)
    }

    public private(set) var playback: PlaybackViewModel
    public private(set) var swipe: SwipeController
    public private(set) var tabs: TabStrip
    public private(set) var tabTitles: [String]
    public private(set) var carousel: CarouselModel?
    /// The search panel.
    public private(set) var isSearching = false
    public private(set) var query = ""
    /// Uncommitted IME text (shown underlined after the query).
    public private(set) var composition = ""
    public private(set) var resultRows: [ResultRow] = []
    /// The panel's line about the search: loading, how many, none, why it failed.
    public private(set) var searchStatus = ""
    public private(set) var resultsScroll: Double = 0
    /// While search results play: what was searched (the tab bar shows it with a back arrow).
    public private(set) var resultsTitle: String?
    /// What the tab bar says while results play (default: ‹ 搜索 “resultsTitle”).
    public private(set) var resultsLabel: String?
    /// A notice over the feed, under the tabs: the feed needs sign-in (the feed API answered
    /// 401/403), or a command of the window failed (for ``failureNoticeSeconds``).
    public var notice: String? { needsSignIn ? Self.signInNotice : failureNotice?.text }
    private var needsSignIn = false
    private var failureNotice: (text: String, until: MediaTime)?
    /// How long a failure stays on screen.
    public static let failureNoticeSeconds = 4.0

    /// What the window (and the terminal) says when the feed API answers 401 or 403.
    public static let signInNotice = "需要登录 The feed needs sign-in (use --token)"

    private enum Press: Sendable, Hashable {
        case page, tab, result(Int), searchPanel, playbackControl
    }
    private var press: Press?
    private var swallowSlash = false
    /// Where a press on the page began, and whether it turned into a horizontal drag
    /// (categories, or an image post's pictures) instead of a vertical swipe.
    private var pressStart: (x: Double, y: Double) = (0, 0)
    private var horizontal: Bool?
    /// A horizontal drag decides its direction after this many pixels.
    var directionSlop: Double { 12 * scale }

    public init(drawableWidth: Int, drawableHeight: Int, scale: Double = 1) {
        playback = PlaybackViewModel(drawableWidth: drawableWidth, drawableHeight: drawableHeight, scale: scale)
        swipe = SwipeController(itemCount: 0, pageHeight: Double(max(1, drawableHeight)))
        tabs = TabStrip(tabWidths: [], viewportWidth: Double(drawableWidth))
        tabTitles = []
        playback.topInsetChanged(48 * scale)
    }

    public var scale: Double { playback.scale }
    public var showsHUD: Bool { playback.showsHUD }
    public var width: Double { Double(playback.drawableWidth) }
    public var height: Double { Double(playback.drawableHeight) }
    public var currentIndex: Int { swipe.index }

    // MARK: Updates from the window

    /// The drawable size changed (resize, fullscreen, HiDPI).
    public mutating func resize(width: Int, height: Int, scale: Double, now: MediaTime) {
        guard width != playback.drawableWidth || height != playback.drawableHeight || scale != playback.scale else { return }
        playback.resized(width: width, height: height, scale: scale)
        playback.topInsetChanged(tabBarHeight)
        _ = swipe.resize(pageHeight: Double(max(1, height)), now: now)
        _ = tabs.layout(tabWidths: tabs.tabWidths, viewportWidth: tabViewportWidth)
    }

    /// The categories' titles and their measured widths (pixels, padding included).
    public mutating func setTabs(titles: [String], widths: [Double], selected: Int) {
        tabTitles = titles
        tabs = TabStrip(tabWidths: widths, viewportWidth: tabViewportWidth, selectedIndex: min(max(0, selected), max(0, widths.count - 1)))
    }

    /// The feed shown now (another tab, or search results): a pager over `count` items on `index`.
    public mutating func showFeed(count: Int, index: Int, now: MediaTime) {
        var pager = SwipeController(itemCount: count, pageHeight: Double(max(1, playback.drawableHeight)))
        for _ in 0..<min(index, max(0, count - 1)) { _ = pager.next(now: now) }
        _ = pager.tick(now: now + pager.configuration.animationDuration)
        swipe = pager
        carousel = nil
    }

    /// More items arrived.
    public mutating func setItemCount(_ count: Int, now: MediaTime) {
        if count > swipe.itemCount { _ = swipe.setItemCount(count, now: now) }
    }

    /// The current page's item, for its overlay and carousel. A page that `failed` has
    /// no transport (nothing plays): its title and the reason are all it shows.
    public mutating func setCurrentItem(_ item: FeedItem?, failed: Bool = false, now: MediaTime) {
        let isImagePost = item?.isImagePost ?? false
        playback.itemShown(title: item?.title ?? "", subtitle: item?.uploaderHandle ?? "", showsTransport: !isImagePost && !failed)
        if isImagePost, let item {
            if carousel?.imageCount != item.images.count || carouselItem != item.id {
                carousel = CarouselModel(imageCount: item.images.count, now: now)
                carouselItem = item.id
            }
        } else {
            carousel = nil
            carouselItem = nil
        }
    }
    private var carouselItem: String?

    /// The current player's state, sampled each frame.
    /// A live item (`isLive`) shows as live: `LIVE`, and the bar spans its window (`liveWindow`)
    /// and scrubs within it, or, before the window is known, stands full at the edge.
    public mutating func sync(currentTime: MediaTime, duration: MediaTime, loaded: [TimeRange], isPlaying: Bool,
                              videoSize: (Int, Int)?, isLive: Bool = false, liveWindow: TimeRange? = nil) {
        playback.sync(currentTime: currentTime, duration: duration, loaded: loaded, isPlaying: isPlaying, isLive: isLive,
                      liveWindow: liveWindow)
        playback.videoSizeKnown(width: videoSize?.0 ?? 0, height: videoSize?.1 ?? 0)
    }

    /// The HUD switched on or off (the H key toggles it too).
    public mutating func hudShown(_ shown: Bool) { playback.hudShown(shown) }
    /// Captions turned on or off (a preference kept across the feed); `c` toggles them too.
    public mutating func captionsShownChanged(_ shown: Bool) { playback.captionsShownChanged(shown) }
    public var showsCaptions: Bool { playback.showsCaptions }
    /// The current page's caption tracks (the CC button and picker).
    public mutating func captionTracksChanged(_ tracks: [PlaybackViewModel.CaptionChoice]) { playback.captionTracksChanged(tracks) }
    /// The current page's track shown (nil: off).
    public mutating func captionSelectionChanged(_ track: CaptionTrackID?) { playback.captionSelectionChanged(track) }

    /// The HUD's lines for this frame.
    public mutating func hudLinesChanged(_ lines: [String]) { playback.hudLinesChanged(lines) }

    // MARK: The search's outcomes

    /// No query (or an empty one): nothing listed, nothing said.
    public mutating func searchCleared() {
        resultRows = []
        searchStatus = ""
    }

    /// A query's first page is loading: the list is empty and says so.
    public mutating func searchStarted() {
        resultRows = []
        searchStatus = "搜索中…"
    }

    /// The query's results so far (with the thumbnails decoded so far): listed and counted,
    /// or "no results"; `hasMore` says further pages load on scrolling.
    public mutating func searchResultsLoaded(_ rows: [ResultRow], hasMore: Bool) {
        resultRows = rows
        searchStatus = rows.isEmpty ? "没有结果" : "\(rows.count) 个结果" + (hasMore ? "（滚动加载更多）" : "")
    }

    /// The last search request failed: the panel says why; the results so far stay listed.
    public mutating func searchFailed(_ message: String, rows: [ResultRow]) {
        resultRows = rows
        searchStatus = "搜索失败: \(message)"
    }

    /// A feed of results plays (search results, or my videos): the tab bar shows `label`
    /// (default ‹ 搜索 “title”) with a back arrow instead of the categories.
    public mutating func resultsShown(title: String, label: String? = nil) {
        resultsTitle = title
        resultsLabel = label
    }

    /// The results' feed closed: the categories show again.
    public mutating func resultsClosed() {
        resultsTitle = nil
        resultsLabel = nil
    }

    // MARK: Layout

    public var tabBarHeight: Double { 48 * scale }
    var tabViewportWidth: Double { max(1, width - 64 * scale) }
    /// The search button at the right of the tab bar.
    public var searchButton: UIRect { UIRect(x: width - 60 * scale, y: 0, width: 60 * scale, height: tabBarHeight) }
    /// Tab `i`'s rect on screen.
    public func tabRect(_ i: Int) -> UIRect {
        UIRect(x: tabs.x(of: i) - tabs.contentOffset, y: 0, width: tabs.tabWidths[i], height: tabBarHeight)
    }
    var searchFieldRect: UIRect { UIRect(x: 12 * scale, y: 12 * scale, width: width - 24 * scale, height: 40 * scale) }
    var resultRowHeight: Double { 96 * scale }
    var resultsTop: Double { 64 * scale + 28 * scale }
    /// Result row `i`'s rect on screen.
    public func resultRect(_ i: Int) -> UIRect {
        UIRect(x: 0, y: resultsTop + Double(i) * resultRowHeight - resultsScroll, width: width, height: resultRowHeight)
    }

    /// When ``tick(now:)`` must run next.
    public var nextDeadline: MediaTime? {
        [playback.nextDeadline, swipe.nextDeadline, carousel?.nextDeadline, failureNotice?.until].compactMap { $0 }.min()
    }

    /// Whether the feed needs sign-in (its notice shows while it does).
    public mutating func setNeedsSignIn(_ needed: Bool) { needsSignIn = needed }

    /// A command of the window failed: `message` shows over the feed for a while.
    public mutating func commandFailed(_ message: String, now: MediaTime) {
        failureNotice = (message, now + MediaTime(seconds: Self.failureNoticeSeconds, preferredTimescale: 1000))
    }

    // MARK: Input

    public mutating func handle(_ input: Input, now: MediaTime) -> [Command] {
        if isSearching { return handleSearch(input, now: now) }
        switch input {
        case .pointerDown(let x, let y): return pointerDown(x: x, y: y, now: now)
        case .pointerMove(let x, let y): return pointerMove(x: x, y: y, now: now)
        case .pointerUp(let x, let y): return pointerUp(x: x, y: y, now: now)
        case .pointerCancel:
            var out: [Command] = []
            if press == .page {
                _ = swipe.pointerCancel(now: now)
            }
            out += playback.handle(.pointerCancel, now: now).map(Command.player)
            press = nil
            return out
        case .wheel(let dy):
            var out: [Command] = []
            let before = swipe.index
            _ = swipe.wheel(notches: dy > 0 ? -1 : 1, now: now)
            if swipe.index != before { out.append(.move(to: swipe.index)) }
            return out
        case .keyDown(let key, let isRepeat): return keyDown(key, isRepeat: isRepeat, now: now)
        case .keyUp(let key):
            guard case .playback(let k) = key else { return [] }
            return playback.handle(.keyUp(k), now: now).map(Command.player)
        case .text, .composition:
            return []
        }
    }

    private mutating func pointerDown(x: Double, y: Double, now: MediaTime) -> [Command] {
        var out: [Command] = []
        if y < tabBarHeight {
            press = .tab
        } else {
            out += playback.handle(.pointerDown(x: x, y: y), now: now).map(Command.player)
            if playback.isPressingVideo {
                press = .page
                pressStart = (x, y)
                horizontal = nil
                _ = swipe.pointerDown(y: y, now: now)
            } else {
                press = .playbackControl
            }
        }
        return out
    }

    private mutating func pointerMove(x: Double, y: Double, now: MediaTime) -> [Command] {
        var out: [Command] = []
        if press == .page {
            let dx = x - pressStart.x, dy = y - pressStart.y
            if horizontal == nil, max(abs(dx), abs(dy)) > directionSlop {
                horizontal = abs(dx) > abs(dy)
                if horizontal == true {
                    // Sideways: not a page swipe, not a tap or hold.
                    _ = swipe.pointerCancel(now: now)
                    _ = playback.handle(.pointerCancel, now: now)
                    if var c = carousel, c.imageCount > 1 {
                        c.beginDrag(now: now)
                        carousel = c
                    }
                }
            }
            if horizontal == true {
                if var c = carousel, c.isDragging {
                    c.dragChanged(translation: dx)
                    carousel = c
                } else {
                    tabs.dragChanged(progress: -dx / max(1, width))
                }
                return out
            }
            _ = swipe.pointerMove(y: y, now: now)
        }
        out += playback.handle(.pointerMove(x: x, y: y), now: now).map(Command.player)
        return out
    }

    private mutating func pointerUp(x: Double, y: Double, now: MediaTime) -> [Command] {
        var out: [Command] = []
        let pressed = press
        press = nil
        switch pressed {
        case .tab:
            if searchButton.contains(x: x, y: y) {
                out += openSearch()
            } else if resultsTitle != nil {
                out.append(.closeResults)
            } else if let i = tabs.tabWidths.indices.first(where: { tabRect($0).contains(x: x, y: y) }) {
                out += selectTab(i)
            }
        case .page where horizontal == true:
            let dx = x - pressStart.x
            if var c = carousel, c.isDragging {
                _ = c.endDrag(translation: dx, now: now)
                carousel = c
            } else {
                let before = tabs.selectedIndex
                _ = tabs.dragEnded(progress: -dx / max(1, width))
                if tabs.selectedIndex != before { out.append(.selectTab(tabs.selectedIndex)) }
            }
        case .page:
            let before = swipe.index
            _ = swipe.pointerUp(y: y, now: now)
            out += playback.handle(.pointerUp(x: x, y: y), now: now).map(Command.player)
            if swipe.index != before { out.append(.move(to: swipe.index)) }
        default:
            out += playback.handle(.pointerUp(x: x, y: y), now: now).map(Command.player)
        }
        return out
    }

    private mutating func keyDown(_ key: Key, isRepeat: Bool, now: MediaTime) -> [Command] {
        var out: [Command] = []
        switch key {
        case .j, .playback(.down): out += page(by: 1, now: now)
        case .k, .playback(.up): out += page(by: -1, now: now)
        case .playback(.left): if !isRepeat { out += selectTab(tabs.selectedIndex - 1) }
        case .playback(.right): if !isRepeat { out += selectTab(tabs.selectedIndex + 1) }
        case .slash:
            out += openSearch()
            // The same key press also arrives as SDL_TEXTINPUT "/" once text input starts.
            swallowSlash = true
        case .playback(let k): out += playback.handle(.keyDown(k, isRepeat: isRepeat), now: now).map(Command.player)
        default: break
        }
        return out
    }

    /// Time passed: landings, holds, auto-hide, the carousel's auto-advance.
    public mutating func tick(now: MediaTime) -> [Command] {
        if let failure = failureNotice, now >= failure.until { failureNotice = nil }
        _ = swipe.tick(now: now)
        if var c = carousel {
            _ = c.tick(now: now)
            carousel = c
        }
        return playback.tick(now: now).map(Command.player)
    }

    private mutating func page(by step: Int, now: MediaTime) -> [Command] {
        let before = swipe.index
        _ = step > 0 ? swipe.next(now: now) : swipe.previous(now: now)
        return swipe.index != before ? [.move(to: swipe.index)] : []
    }

    private mutating func selectTab(_ index: Int) -> [Command] {
        guard tabs.tabWidths.indices.contains(index), index != tabs.selectedIndex else { return [] }
        _ = tabs.select(index)
        return [.selectTab(index)]
    }

    private mutating func openSearch() -> [Command] {
        isSearching = true
        composition = ""
        return [.openSearch]
    }

    private mutating func handleSearch(_ input: Input, now: MediaTime) -> [Command] {
        if case .text("/") = input, swallowSlash {
            swallowSlash = false
            return []
        }
        if case .keyUp = input {} else { swallowSlash = false }
        switch input {
        case .text(let text):
            query += text
            composition = ""
        case .composition(let text):
            composition = text
        case .keyDown(let key, _):
            switch key {
            case .backspace: if !query.isEmpty { query.removeLast() }
            case .enter:
                resultsScroll = 0
                return [.search(query)]
            case .playback(.escape):
                isSearching = false
                composition = ""
                return [.closeSearch]
            case .playback(.down): return scrollResults(by: resultRowHeight)
            case .playback(.up): return scrollResults(by: -resultRowHeight)
            default: break
            }
        case .wheel(let dy):
            return scrollResults(by: -dy * resultRowHeight / 2)
        case .pointerDown(let x, let y):
            if let i = resultRows.indices.first(where: { resultRect($0).contains(x: x, y: y) }), y >= resultsTop {
                press = .result(i)
            } else {
                press = .searchPanel
            }
        case .pointerUp(let x, let y):
            defer { press = nil }
            if case .result(let i) = press, resultRect(i).contains(x: x, y: y) {
                isSearching = false
                return [.closeSearch, .openSearchResult(i)]
            }
        default: break
        }
        return []
    }

    private mutating func scrollResults(by delta: Double) -> [Command] {
        let visible = height - resultsTop
        let content = Double(resultRows.count) * resultRowHeight
        resultsScroll = min(max(0, resultsScroll + delta), max(0, content - visible))
        return resultsScroll + visible >= content - resultRowHeight ? [.loadMoreResults] : []
    }
}
