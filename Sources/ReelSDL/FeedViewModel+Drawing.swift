import ReelCore
import ReelFeed

extension FeedViewModel {
    // MARK: Drawing

    /// The pages the pager shows now (the current one and, while moving, its neighbour),
    /// the captions and overlay of the page at rest, the tabs, and the search panel when open.
    /// `captions` belong to the current page: a page on the move shows none.
    public func drawList(now: MediaTime, captions: CaptionLayer? = nil, content: (Int) -> PageContent) -> [DrawCommand] {
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
            let layout = playback.layout
            list += playback.overlay(layout, scale, captions: playback.captionCommands(captions, layout))
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

    func dots(_ carousel: CarouselModel) -> [DrawCommand] {
        let d = 7 * scale, gap = 8 * scale
        let total = Double(carousel.imageCount) * d + Double(carousel.imageCount - 1) * gap
        let y = height - 170 * scale
        return (0..<carousel.imageCount).map { i in
            let rect = UIRect(x: (width - total) / 2 + Double(i) * (d + gap), y: y, width: d, height: d)
            return .fill(rect, i == carousel.index ? .white : UIColor.white.withAlpha(0.4), radius: d / 2)
        }
    }

    func tabBar() -> [DrawCommand] {
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

    func searchPanel() -> [DrawCommand] {
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
