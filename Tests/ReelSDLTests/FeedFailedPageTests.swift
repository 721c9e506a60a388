import Foundation
import ReelCore
import ReelFeed
import Testing
@testable import ReelSDL

/// A page whose item cannot be played draws as a page that says so: its cover dimmed
/// (or a dark page), "无法播放" and the reason; no transport controls; the pages around
/// it draw as before.
@Suite struct FeedFailedPageTests {
    func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    func model(failed: Bool) -> FeedViewModel {
        var m = FeedViewModel(drawableWidth: 540, drawableHeight: 960)
        m.setTabs(titles: ["推荐"], widths: [80], selected: 0)
        m.showFeed(count: 3, index: 0, now: ms(0))
        m.setCurrentItem(FeedItem(id: "a", title: "坏掉的视频", videoURL: URL(fileURLWithPath: "/a.mp4")), failed: failed, now: ms(0))
        return m
    }

    func texts(_ list: [DrawCommand]) -> [String] {
        list.compactMap { if case .text(let text, _, _, _, _, _) = $0 { text } else { nil } }
    }

    @Test func aFailedPageSaysSoWithItsReasonOnADarkPage() {
        let m = model(failed: true)
        let item = FeedItem(id: "a", title: "坏掉的视频", videoURL: URL(fileURLWithPath: "/a.mp4"))
        let list = m.drawList(now: ms(0)) { _ in .init(source: nil, item: item, failure: "a.mp4: Invalid data found when processing input") }
        let shown = texts(list)
        #expect(shown.contains("无法播放"))
        #expect(shown.contains("a.mp4: Invalid data found when processing input"))
        // A dark page under it, the full page.
        #expect(list.contains { if case .fill(let rect, let colour, _) = $0 { rect.height == 960 && colour.r > 0 && colour.r < 0.3 } else { false } })
        // Centred on the page.
        let reason = list.compactMap { command -> (Double, Double)? in
            if case .text(let text, let point, _, _, _, _) = command, text == "无法播放" { return point } else { return nil }
        }
        #expect(reason.first.map { abs($0.0 - 270) < 1 && abs($0.1 - 480) < 1 } == true)
        // Nothing plays on it: no progress bar, no play/pause.
        #expect(!m.playback.showsTransport)
        #expect(model(failed: false).playback.showsTransport, "a page that did not fail has its transport")
    }

    @Test func aFailedPageWithACoverShowsItDimmedBehindTheReason() {
        let m = model(failed: true)
        let cover = RGBImage(width: 9, height: 16, fill: (200, 30, 30))
        let item = FeedItem(id: "a", title: "坏掉的视频", videoURL: URL(fileURLWithPath: "/a.mp4"))
        let list = m.drawList(now: ms(0)) { _ in .init(source: .image(key: "cover", cover), item: item, failure: "broken") }
        let backdrop = list.first { if case .backdrop = $0 { true } else { false } }
        guard case .backdrop(_, let rect, let dim) = backdrop else {
            Issue.record("no dimmed cover: \(list)")
            return
        }
        #expect(rect.height == 960 && dim >= 0.5)
        #expect(!list.contains { if case .picture = $0 { true } else { false } }, "the cover is only a backdrop, dimmed")
        #expect(texts(list).contains("无法播放") && texts(list).contains("broken"))
    }

    @Test func thePagesAroundAFailedOneDrawAsBefore() {
        var m = model(failed: false)
        let frameless = FeedItem(id: "b", title: "下一个", videoURL: URL(fileURLWithPath: "/b.mp4"))
        // Halfway through a swipe from the failed page 0 to page 1.
        _ = m.handle(.pointerDown(x: 270, y: 900), now: ms(0))
        _ = m.handle(.pointerMove(x: 270, y: 420), now: ms(100))
        let list = m.drawList(now: ms(100)) { index in
            index == 0 ? .init(source: nil, item: frameless, failure: "broken") : .init(source: nil, item: frameless)
        }
        let shown = texts(list)
        #expect(shown.filter { $0 == "无法播放" }.count == 1, "only page 0 says it failed")
        #expect(shown.contains("下一个"), "page 1 shows its title while it has no frame")
    }
}
