import Testing
import ReelCaptions
import ReelCore
import ReelMedia
import ReelFeed
@testable import ReelSDL

/// Where captions go and when they are drawn, with plain values (no window, no libass).
@Suite struct CaptionLayoutTests {
    func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    func model(title: String = "标题", subtitle: String = "@someone") -> PlaybackViewModel {
        var m = PlaybackViewModel(drawableWidth: 540, drawableHeight: 960, scale: 1, title: title)
        m.itemShown(title: title, subtitle: subtitle, showsTransport: true)
        m.videoSizeKnown(width: 540, height: 960)
        m.sync(currentTime: ms(12_000), duration: ms(45_000), loaded: [], isPlaying: true)
        return m
    }

    /// A layer of one 100×30 quad whose bottom is at `bottom` (where libass put it in the video).
    func layer(bottom: Double) -> CaptionLayer {
        let atlas = CaptionAtlas(width: 100, height: 30, bytes: [UInt8](repeating: 255, count: 3000), generation: 1)
        let quad = CaptionQuad(atlasX: 0, atlasY: 0, width: 100, height: 30,
                               rect: UIRect(x: 220, y: bottom - 30, width: 100, height: 30), color: .white)
        return CaptionLayer(atlas: atlas, quads: [quad], pictures: [])
    }

    func captionCommands(_ list: [DrawCommand]) -> [CaptionLayer] {
        list.compactMap { if case .captions(let layer) = $0 { layer } else { nil } }
    }

    @Test func theCaptionAreaStaysAboveTheBarAndMovesUpWhenTheControlsShow() {
        var m = model()
        _ = m.handle(.pointerMove(x: 10, y: 10), now: ms(0))
        #expect(m.controlsVisible)
        let shown = m.layout
        _ = m.tick(now: ms(3_100))
        #expect(!m.controlsVisible)
        let hidden = m.layout

        // Hidden controls: just above the bar, over the video's columns.
        #expect(hidden.captionArea.maxY < hidden.bar.y)
        #expect(hidden.captionArea.maxY > hidden.bar.y - 40)
        #expect(hidden.captionArea.x == hidden.video.x && hidden.captionArea.width == hidden.video.width)
        // Shown controls: above the title block (the uploader line is 28 px over the title)
        // and the time row, so the captions move up with them.
        #expect(shown.captionArea.maxY < shown.titlePoint.y - 28 - 15)
        #expect(shown.captionArea.maxY < shown.fullscreenButton.y)
        #expect(shown.captionArea.maxY < hidden.captionArea.maxY - 60)
        #expect(shown.captionArea.height > 0)
    }

    @Test func theCaptionAreaKeepsClearOfTheFeedsTabBar() {
        var m = model()
        m.topInsetChanged(48)
        #expect(m.layout.captionArea.y >= 48)
        #expect(model().layout.captionArea.y < 48)
    }

    @Test func aLayerIsMovedIntoTheAreaAndDrawnBetweenPictureAndOverlay() throws {
        var m = model()
        _ = m.handle(.pointerMove(x: 10, y: 10), now: ms(0))
        let area = m.layout.captionArea
        // libass put the line at the video's bottom, under the bar.
        let list = m.drawList(frame: nil, captions: layer(bottom: 950))
        let drawn = try #require(captionCommands(list).first)
        let bounds = try #require(drawn.bounds)
        #expect(bounds.maxY <= area.maxY && bounds.y >= area.y)
        #expect(bounds.x == 220 && bounds.width == 100)
        // Already inside: left where libass put it.
        let inside = try #require(captionCommands(m.drawList(frame: nil, captions: layer(bottom: 500))).first?.bounds)
        #expect(inside.maxY == 500)
        // Over the bottom shade (it would dim them), under the controls (the bar, the title).
        let captionIndex = try #require(list.firstIndex { if case .captions = $0 { true } else { false } })
        let barIndex = try #require(list.firstIndex { if case .fill(let r, _, _) = $0 { r == m.layout.bar } else { false } })
        let titleIndex = try #require(list.firstIndex { if case .text("标题", _, _, _, _, _) = $0 { true } else { false } })
        let shadeIndex = try #require(list.firstIndex { if case .fill(let r, let c, _) = $0 { r.y == 960 - 150 && c.a < 1 } else { false } })
        #expect(shadeIndex < captionIndex && captionIndex < barIndex && captionIndex < titleIndex)
    }

    @Test func theCKeyTurnsCaptionsOffAndOnThroughTheModel() {
        var m = model()
        #expect(m.showsCaptions)
        #expect(m.handle(.keyDown(.c, isRepeat: false), now: ms(0)).contains(.setCaptionsShown(false)))
        #expect(!m.showsCaptions)
        #expect(captionCommands(m.drawList(frame: nil, captions: layer(bottom: 500))).isEmpty)
        m.captionsShownChanged(true)
        #expect(captionCommands(m.drawList(frame: nil, captions: layer(bottom: 500))).count == 1)
        #expect(m.handle(.keyDown(.c, isRepeat: false), now: ms(10)).contains(.setCaptionsShown(false)))
    }

    @Test func nothingToShowDrawsNoCaptions() {
        let m = model()
        #expect(captionCommands(m.drawList(frame: nil, captions: nil)).isEmpty)
        let empty = CaptionLayer(atlas: .empty, quads: [], pictures: [])
        #expect(captionCommands(m.drawList(frame: nil, captions: empty)).isEmpty)
    }

    @Test func theFeedDrawsCaptionsForThePageAtRestOnly() {
        var feed = FeedViewModel(drawableWidth: 540, drawableHeight: 960)
        feed.setTabs(titles: ["推荐", "音乐"], widths: [80, 80], selected: 0)
        feed.showFeed(count: 5, index: 0, now: ms(0))
        feed.setCurrentItem(FeedItem(id: "a", title: "标题", uploader: "作者"), now: ms(0))
        let content: (Int) -> FeedViewModel.PageContent = { _ in FeedViewModel.PageContent(source: nil, item: nil) }
        func drawn(at now: MediaTime) -> [CaptionLayer] {
            captionCommands(feed.drawList(now: now, captions: layer(bottom: 900), content: content))
        }
        let atRest = drawn(at: ms(0))
        #expect(atRest.count == 1)
        // Clear of the tab bar and above the bar.
        #expect(atRest.first?.bounds.map { $0.maxY <= feed.playback.layout.captionArea.maxY } == true)
        // While the page follows the pointer, no captions: they belong to the page at rest.
        _ = feed.handle(.pointerDown(x: 270, y: 700), now: ms(10))
        _ = feed.handle(.pointerMove(x: 270, y: 600), now: ms(100))
        _ = feed.handle(.pointerMove(x: 270, y: 450), now: ms(300))
        #expect(drawn(at: ms(300)).isEmpty)
        _ = feed.handle(.pointerCancel, now: ms(310))
        // c in the feed goes to the page's model, as m does.
        #expect(feed.handle(.keyDown(.playback(.c), isRepeat: false), now: ms(5_000)).contains(.player(.setCaptionsShown(false))))
        #expect(!feed.showsCaptions)
        #expect(drawn(at: ms(5_000)).isEmpty)
        feed.captionsShownChanged(true)
        #expect(drawn(at: ms(5_000)).count == 1)
    }
}
