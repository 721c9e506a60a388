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
    public var resultRows: [ResultRow] = []
    public var searchStatus = ""
    public private(set) var resultsScroll: Double = 0
    /// While search results play: what was searched (the tab bar shows it with a back arrow).
    public var resultsTitle: String?
    /// What the tab bar says while results play (default: ‹ 搜索 “resultsTitle”).
    public var resultsLabel: String?
    /// A notice over the feed, under the tabs (the feed API answered 401/403: it needs sign-in).
    public var notice: String?

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
        playback.topInset = 48 * scale
    }

    public var scale: Double { playback.scale }
    public var showsHUD: Bool {
        get { playback.showsHUD }
        set { playback.showsHUD = newValue }
    }
    public var width: Double { Double(playback.drawableWidth) }
    public var height: Double { Double(playback.drawableHeight) }
    public var currentIndex: Int { swipe.index }

    // MARK: Updates from the window

    /// The drawable size changed (resize, fullscreen, HiDPI).
    public mutating func resize(width: Int, height: Int, scale: Double, now: MediaTime) {
        guard width != playback.drawableWidth || height != playback.drawableHeight || scale != playback.scale else { return }
        playback.drawableWidth = width
        playback.drawableHeight = height
        playback.scale = scale
        playback.topInset = tabBarHeight
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
        playback.title = item?.title ?? ""
        playback.subtitle = item?.uploaderHandle ?? ""
        let isImagePost = item?.isImagePost ?? false
        playback.showsTransport = !isImagePost && !failed
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
    public mutating func sync(currentTime: MediaTime, duration: MediaTime, loaded: [TimeRange], isPlaying: Bool,
                              videoSize: (Int, Int)?) {
        playback.sync(currentTime: currentTime, duration: duration, loaded: loaded, isPlaying: isPlaying)
        playback.videoWidth = videoSize?.0 ?? 0
        playback.videoHeight = videoSize?.1 ?? 0
    }

    public mutating func setHUD(_ lines: [String]) { playback.hudLines = lines }

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
        [playback.nextDeadline, swipe.nextDeadline, carousel?.nextDeadline].compactMap { $0 }.min()
    }

    // MARK: Input

    public mutating func handle(_ input: Input, now: MediaTime) -> [Command] {
        if isSearching { return handleSearch(input, now: now) }
        var out: [Command] = []
        switch input {
        case .pointerDown(let x, let y):
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
        case .pointerMove(let x, let y):
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
        case .pointerUp(let x, let y):
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
        case .pointerCancel:
            if press == .page {
                _ = swipe.pointerCancel(now: now)
            }
            out += playback.handle(.pointerCancel, now: now).map(Command.player)
            press = nil
        case .wheel(let dy):
            let before = swipe.index
            _ = swipe.wheel(notches: dy > 0 ? -1 : 1, now: now)
            if swipe.index != before { out.append(.move(to: swipe.index)) }
        case .keyDown(let key, let isRepeat):
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
        case .keyUp(let key):
            if case .playback(let k) = key { out += playback.handle(.keyUp(k), now: now).map(Command.player) }
        case .text, .composition:
            break
        }
        return out
    }

    /// Time passed: landings, holds, auto-hide, the carousel's auto-advance.
    public mutating func tick(now: MediaTime) -> [Command] {
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

    // MARK: Drawing

    /// The pages the pager shows now (the current one and, while moving, its neighbour),
    /// the overlay of the page at rest, the tabs, and the search panel when open.
    public func drawList(now: MediaTime, content: (Int) -> PageContent) -> [DrawCommand] {
        let bounds = UIRect(x: 0, y: 0, width: width, height: height)
        var list: [DrawCommand] = [.fill(bounds, .black, radius: 0)]
        let offset = swipe.offset(at: now)
        let first = Int((offset / height).rounded(.down))
        for index in max(0, first)...max(0, first + 1) where index < swipe.itemCount {
            let top = Double(index) * height - offset
            guard top < height, top + height > 0 else { continue }
            var rect = bounds.offsetBy(dx: 0, dy: top.rounded())
            // An image post's picture follows a sideways drag.
            if index == swipe.index, let carousel, carousel.isDragging { rect = rect.offsetBy(dx: carousel.dragTranslation, dy: 0) }
            let page = content(index)
            if let failure = page.failure {
                list += failedPage(failure, source: page.source, in: rect)
            } else if let source = page.source {
                list += PlaybackViewModel.page(source, in: rect)
            } else if let item = page.item {
                // No frame and no cover yet: the title on black.
                list.append(.text(item.title, point: (rect.midX, rect.midY), size: 18 * scale, color: UIColor.white.withAlpha(0.6),
                                  anchor: .center, maxWidth: width - 32 * scale))
            }
        }
        let atRest = abs(offset - Double(swipe.index) * height) < 1
        if atRest, swipe.itemCount > 0 {
            list += playback.overlay(playback.layout, scale)
            if let carousel, carousel.imageCount > 1 {
                list += dots(carousel)
            }
        } else if swipe.itemCount == 0 {
            list.append(.text(searchStatus.isEmpty ? "加载中…" : searchStatus, point: (bounds.midX, bounds.midY), size: 16 * scale,
                              color: UIColor.white.withAlpha(0.7), anchor: .center, maxWidth: nil))
        }
        list += tabBar()
        if let notice, !notice.isEmpty {
            let s = scale
            let banner = UIRect(x: 16 * s, y: tabBarHeight + 12 * s, width: max(0, width - 32 * s), height: 40 * s)
            list.append(.fill(banner, UIColor.black.withAlpha(0.75), radius: 8 * s))
            list.append(.text(notice, point: (banner.midX, banner.midY), size: 15 * s, color: .white, anchor: .center,
                              maxWidth: max(0, banner.width - 16 * s)))
        }
        if isSearching { list += searchPanel() }
        return list
    }

    /// A page whose item cannot be shown: its cover dimmed behind (else a dark page), a
    /// mark, "无法播放" (cannot play) and the reason — never a page waiting forever.
    func failedPage(_ failure: String, source: DrawSource?, in rect: UIRect) -> [DrawCommand] {
        let s = scale
        var list: [DrawCommand] = []
        if let source {
            list.append(.backdrop(source: source, rect: rect, dim: 0.7))
        } else {
            list.append(.fill(rect, UIColor(r: 0.1, g: 0.1, b: 0.11), radius: 0))
        }
        let mark = UIRect(x: rect.midX - 22 * s, y: rect.midY - 70 * s, width: 44 * s, height: 44 * s)
        list.append(.fill(mark, UIColor.white.withAlpha(0.15), radius: 22 * s))
        list.append(.text("!", point: (mark.midX, mark.midY), size: 26 * s, color: .white, anchor: .center, maxWidth: nil))
        list.append(.text("无法播放", point: (rect.midX, rect.midY), size: 18 * s, color: .white, anchor: .center,
                          maxWidth: width - 32 * s))
        list.append(.text(failure, point: (rect.midX, rect.midY + 30 * s), size: 13 * s, color: UIColor.white.withAlpha(0.65),
                          anchor: .center, maxWidth: width - 32 * s))
        return list
    }

    private func dots(_ carousel: CarouselModel) -> [DrawCommand] {
        let d = 7 * scale, gap = 8 * scale
        let total = Double(carousel.imageCount) * d + Double(carousel.imageCount - 1) * gap
        let y = height - 170 * scale
        return (0..<carousel.imageCount).map { i in
            let rect = UIRect(x: (width - total) / 2 + Double(i) * (d + gap), y: y, width: d, height: d)
            return .fill(rect, i == carousel.index ? .white : UIColor.white.withAlpha(0.4), radius: d / 2)
        }
    }

    private func tabBar() -> [DrawCommand] {
        let s = scale
        var list: [DrawCommand] = [.fill(UIRect(x: 0, y: 0, width: width, height: tabBarHeight), UIColor.black.withAlpha(0.25), radius: 0)]
        if let resultsTitle {
            list.append(.text(resultsLabel ?? "‹ 搜索 “\(resultsTitle)”", point: (14 * s, tabBarHeight / 2), size: 16 * s, color: .white,
                              anchor: .centerLeft, maxWidth: searchButton.x - 20 * s))
            list.append(.text("搜索", point: (searchButton.midX, searchButton.midY), size: 15 * s, color: .white, anchor: .center, maxWidth: nil))
            return list
        }
        for (i, title) in tabTitles.enumerated() where i < tabs.tabWidths.count {
            let r = tabRect(i)
            // Only whole tabs: a cut one would run under the search button.
            guard r.x >= -1, r.maxX <= tabViewportWidth + 1 else { continue }
            let selected = i == tabs.selectedIndex
            list.append(.text(title.isEmpty ? "推荐" : title, point: (r.midX, r.midY), size: (selected ? 17 : 15) * s,
                              color: UIColor.white.withAlpha(selected ? 1 : 0.6), anchor: .center, maxWidth: nil))
        }
        if !tabs.tabWidths.isEmpty {
            let indicator = tabs.indicator
            let w = min(24 * s, indicator.width * 0.5)
            let x = indicator.x - tabs.contentOffset + (indicator.width - w) / 2
            list.append(.fill(UIRect(x: x, y: tabBarHeight - 6 * s, width: w, height: 3 * s), .white, radius: 1.5 * s))
        }
        list.append(.text("搜索", point: (searchButton.midX, searchButton.midY), size: 15 * s, color: .white, anchor: .center, maxWidth: nil))
        return list
    }

    private func searchPanel() -> [DrawCommand] {
        let s = scale
        var list: [DrawCommand] = [.fill(UIRect(x: 0, y: 0, width: width, height: height), UIColor(r: 0.07, g: 0.07, b: 0.08, a: 0.97), radius: 0)]
        for (i, row) in resultRows.enumerated() {
            let r = resultRect(i)
            guard r.maxY > resultsTop, r.y < height else { continue }
            let thumb = UIRect(x: 12 * s, y: r.y + 8 * s, width: 45 * s, height: 80 * s)
            list.append(.fill(thumb, UIColor.white.withAlpha(0.08), radius: 4 * s))
            if let image = row.thumbnail {
                list.append(.picture(source: .image(key: "thumb:" + row.item.id, image), rect: thumb.aspectFit(contentWidth: image.width, contentHeight: image.height)))
            }
            list.append(.text(row.item.title, point: (thumb.maxX + 12 * s, r.y + 22 * s), size: 16 * s, color: .white, anchor: .centerLeft,
                              maxWidth: width - thumb.maxX - 24 * s))
            if !row.item.uploader.isEmpty {
                list.append(.text(row.item.uploaderHandle, point: (thumb.maxX + 12 * s, r.y + 48 * s), size: 13 * s,
                                  color: UIColor.white.withAlpha(0.6), anchor: .centerLeft, maxWidth: width - thumb.maxX - 24 * s))
            }
            list.append(.fill(UIRect(x: thumb.maxX + 12 * s, y: r.maxY - 1, width: width, height: 1), UIColor.white.withAlpha(0.08), radius: 0))
        }
        // The field and status stay on top of the scrolled list.
        list.append(.fill(UIRect(x: 0, y: 0, width: width, height: resultsTop), UIColor(r: 0.07, g: 0.07, b: 0.08), radius: 0))
        let field = searchFieldRect
        list.append(.fill(field, UIColor.white.withAlpha(0.12), radius: field.height / 2))
        let shown = query + composition
        let placeholder = shown.isEmpty
        list.append(.text(placeholder ? "搜索视频、用户" : shown, point: (field.x + 16 * s, field.midY), size: 16 * s,
                          color: UIColor.white.withAlpha(placeholder ? 0.45 : 1), anchor: .centerLeft, maxWidth: field.width - 32 * s))
        list.append(.text(searchStatus, point: (16 * s, 64 * s + 14 * s), size: 13 * s, color: UIColor.white.withAlpha(0.6),
                          anchor: .centerLeft, maxWidth: width - 32 * s))
        return list
    }

    /// The composition's position, for the IME candidate window (`SDL_SetTextInputRect`).
    public var textInputRect: UIRect { searchFieldRect }
}
