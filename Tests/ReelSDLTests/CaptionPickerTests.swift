import Testing
import ReelCaptions
import ReelCore
import ReelMedia
@testable import ReelSDL

@Suite struct CaptionPickerTests {
    func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }
    let en = CaptionTrackID("s:2"), fr = CaptionTrackID("side:1")

    /// Paused, so the controls show.
    func model(tracks: Bool = true, scale: Double = 1) -> PlaybackViewModel {
        var m = PlaybackViewModel(drawableWidth: Int(540 * scale), drawableHeight: Int(960 * scale), scale: scale, title: "t")
        m.videoSizeKnown(width: 1280, height: 720)
        m.sync(currentTime: ms(12_000), duration: ms(45_000), loaded: [], isPlaying: false)
        if tracks { m.captionTracksChanged([.init(id: en, name: "English"), .init(id: fr, name: "fr")]) }
        m.captionSelectionChanged(en)
        return m
    }

    func tap(_ m: inout PlaybackViewModel, _ r: UIRect) -> [PlaybackViewModel.Command] {
        m.handle(.pointerDown(x: r.midX, y: r.midY), now: ms(0)) + m.handle(.pointerUp(x: r.midX, y: r.midY), now: ms(50))
    }

    @Test func buttonShowsOnlyWithTracks() {
        #expect(model(tracks: false).layout.captionsButton == nil)
        let l = model().layout
        let cc = try! #require(l.captionsButton)
        #expect(cc.maxX <= l.fullscreenButton.x && cc.y == l.fullscreenButton.y)
    }

    @Test func tappingTheButtonOpensOffAndEachTrackWithTheCurrentMarked() {
        var m = model()
        #expect(tap(&m, m.layout.captionsButton!).isEmpty)
        #expect(m.isCaptionPickerOpen)
        let rows = m.captionPickerRows(m.layout)
        #expect(rows.map(\.name) == ["Off", "English", "fr"])
        #expect(rows.map(\.track) == [nil, en, fr])
        // Above the controls, and drawn with the current one marked.
        #expect(rows.last!.rect.maxY <= m.layout.captionsButton!.y)
        let texts = m.overlay(m.layout, 1).compactMap { c -> String? in if case .text(let t, _, _, _, _, _) = c { t } else { nil } }
        #expect(texts.contains("✓ English") && texts.contains("   Off") && texts.contains("   fr"))
    }

    @Test func tappingARowSelectsItsTrackAndCloses() {
        var m = model()
        _ = tap(&m, m.layout.captionsButton!)
        #expect(tap(&m, m.captionPickerRows(m.layout)[2].rect) == [.selectCaptionTrack(fr)])
        #expect(!m.isCaptionPickerOpen)
        _ = tap(&m, m.layout.captionsButton!)
        #expect(tap(&m, m.captionPickerRows(m.layout)[0].rect) == [.selectCaptionTrack(nil)])
    }

    @Test func escapeAndATapElsewhereClose() {
        var m = model()
        _ = tap(&m, m.layout.captionsButton!)
        #expect(m.handle(.keyDown(.escape, isRepeat: false), now: ms(100)) == [])
        #expect(!m.isCaptionPickerOpen)
        _ = tap(&m, m.layout.captionsButton!)
        // A tap on the video beside the panel closes it and does nothing else.
        #expect(tap(&m, UIRect(x: 10, y: 400, width: 4, height: 4)) == [])
        #expect(!m.isCaptionPickerOpen)
    }

    @Test func theControlsStayWhileThePickerIsOpenAndHideAfterItCloses() {
        var m = model()
        m.sync(currentTime: ms(12_000), duration: ms(45_000), loaded: [], isPlaying: true)
        _ = tap(&m, m.layout.captionsButton!)
        #expect(m.isCaptionPickerOpen && m.controlsVisible)
        // Long past the auto-hide delay: nothing to schedule, and a tick leaves them.
        #expect(m.nextDeadline == nil)
        _ = m.tick(now: ms(60_000))
        #expect(m.controlsVisible && m.isCaptionPickerOpen)
        #expect(m.handle(.keyDown(.escape, isRepeat: false), now: ms(60_100)) == [])
        // Closed: the delay runs again from the last tick, and then they hide.
        let deadline = try! #require(m.nextDeadline)
        #expect(deadline > ms(60_000))
        _ = m.tick(now: deadline)
        #expect(!m.controlsVisible)
    }

    @Test func hitTestingFollowsTheScaledLayout() {
        var m = model(scale: 2)
        let cc = m.layout.captionsButton!
        #expect(cc.width == 72)
        _ = tap(&m, cc)
        let rows = m.captionPickerRows(m.layout)
        #expect(rows[1].rect.height == 68)
        // Just below the last row is outside the panel: it closes without choosing.
        let below = UIRect(x: rows[2].rect.midX, y: rows[2].rect.maxY + 1, width: 0, height: 0)
        #expect(tap(&m, below) == [])
        #expect(!m.isCaptionPickerOpen)
    }

    @Test func pickingPutsTheTrackLanguageFirst() {
        let tracks = [CaptionTrack(id: en, origin: .inBand(stream: 2), format: .webvtt, language: "en"), CaptionTrack(id: fr, origin: .inBand(stream: 3), format: .webvtt, language: "fr")]
        let next = CaptionSelection(preferredLanguages: ["en", "de"]).picking(fr, among: tracks)
        #expect(next == CaptionSelection(isEnabled: true, preferredLanguages: ["fr", "en", "de"], track: fr))
        #expect(CaptionSelection().picking(nil, among: tracks).isEnabled == false)
    }
}
