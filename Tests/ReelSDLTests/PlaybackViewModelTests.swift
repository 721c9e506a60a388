import Testing
import ReelCore
import ReelMedia
@testable import ReelSDL

@Suite struct PlaybackViewModelTests {
    func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    func model() -> PlaybackViewModel {
        var m = PlaybackViewModel(drawableWidth: 540, drawableHeight: 960, title: "标题")
        m.videoSizeKnown(width: 1280, height: 720)
        m.sync(currentTime: ms(12_000), duration: ms(45_000), loaded: [], isPlaying: true)
        return m
    }

    @Test func landscapeVideoIsAspectFittedAndCentred() {
        let l = model().layout
        #expect(l.video == UIRect(x: 0, y: 328, width: 540, height: 304))
    }

    @Test func timeLabelShowsPositionAndDuration() {
        #expect(model().timeText == "0:12 / 0:45")
    }

    @Test func holdOnTheVideoPlaysAt2xUntilRelease() {
        var m = model()
        #expect(m.handle(.pointerDown(x: 270, y: 480), now: ms(0)).isEmpty)
        #expect(m.nextDeadline == ms(350))
        #expect(m.tick(now: ms(350)) == [.setRate(2)])
        #expect(m.badge == "2x")
        #expect(m.handle(.pointerUp(x: 270, y: 480), now: ms(900)) == [.setRate(1)])
        #expect(m.badge == nil)
    }

    @Test func holdWhilePausedDoesNothing() {
        var m = model()
        m.sync(currentTime: ms(12_000), duration: ms(45_000), loaded: [], isPlaying: false)
        #expect(m.handle(.pointerDown(x: 270, y: 480), now: ms(0)).isEmpty)
        #expect(m.tick(now: ms(400)).isEmpty)
        #expect(m.badge == nil)
        #expect(m.handle(.pointerUp(x: 270, y: 480), now: ms(900)).isEmpty)
        _ = m.handle(.keyDown(.space, isRepeat: false), now: ms(1000))
        _ = m.handle(.keyDown(.space, isRepeat: true), now: ms(1200))
        #expect(m.tick(now: ms(1400)).isEmpty)
        #expect(m.handle(.keyUp(.space), now: ms(1800)).isEmpty)
        #expect(m.badge == nil)
    }

    @Test func quickTapTogglesPauseAndDoubleTapTogglesFullscreen() {
        var m = model()
        _ = m.handle(.pointerDown(x: 270, y: 480), now: ms(0))
        #expect(m.handle(.pointerUp(x: 270, y: 480), now: ms(80)) == [.togglePause])
        _ = m.handle(.pointerDown(x: 270, y: 480), now: ms(200))
        #expect(m.handle(.pointerUp(x: 270, y: 480), now: ms(260)) == [.togglePause, .setFullscreen(true)])
        #expect(m.isFullscreen)
    }

    @Test func draggingTheBarPreviewsThenSeeksExactlyOnRelease() {
        var m = model()
        let bar = m.layout.bar
        let down = m.handle(.pointerDown(x: bar.x + bar.width * 0.5, y: bar.midY), now: ms(0))
        #expect(m.isScrubbing)
        #expect(down.contains(.beginScrubbing) && down.contains(.scrub(ms(22_500))), "\(down)")
        #expect(m.timeText == "0:22 / 0:45")
        _ = m.handle(.pointerMove(x: bar.x + bar.width * 0.2, y: bar.midY), now: ms(500))
        #expect(m.timeText == "0:09 / 0:45")
        let up = m.handle(.pointerUp(x: bar.x + bar.width * 0.2, y: bar.midY), now: ms(600))
        #expect(up == [.endScrubbing(ms(9_000))])
        #expect(!m.isScrubbing)
    }

    @Test func keysToggleFullscreenMuteAndHoldSpaceFor2x() {
        var m = model()
        #expect(m.handle(.keyDown(.f, isRepeat: false), now: ms(0)) == [.setFullscreen(true)])
        #expect(m.handle(.keyDown(.escape, isRepeat: false), now: ms(10)) == [.setFullscreen(false)])
        #expect(m.handle(.keyDown(.m, isRepeat: false), now: ms(20)) == [.setMuted(true)])
        _ = m.handle(.keyDown(.space, isRepeat: false), now: ms(100))
        _ = m.handle(.keyDown(.space, isRepeat: true), now: ms(300))
        #expect(m.tick(now: ms(460)) == [.setRate(2)])
        #expect(m.handle(.keyUp(.space), now: ms(800)) == [.setRate(1)])
        _ = m.handle(.keyDown(.space, isRepeat: false), now: ms(1000))
        #expect(m.handle(.keyUp(.space), now: ms(1100)) == [.togglePause])
    }

    @Test func controlsHideWhilePlayingAndComeBackOnActivity() {
        var m = model()
        _ = m.handle(.pointerMove(x: 10, y: 10), now: ms(0))
        #expect(m.controlsVisible)
        _ = m.tick(now: ms(3_100))
        #expect(!m.controlsVisible)
        _ = m.handle(.pointerMove(x: 20, y: 20), now: ms(3_200))
        #expect(m.controlsVisible)
    }

    @Test func layoutFollowsTheDrawableSizeForHiDPIAndFullscreen() {
        var m = model()
        m.resized(width: 1080, height: 1920, scale: 2)
        let l = m.layout
        #expect(l.video.width == 1080)
        #expect(l.bar.width == 1080 - 64)
        #expect(l.bar.midY == 1920 - 56)
    }
}
