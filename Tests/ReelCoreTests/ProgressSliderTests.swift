@testable import ReelCore
import Testing

private func s(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1000) }

@Suite struct ProgressSliderTests {
    @Test func aLiveItemStandsAtTheEdgeSaysLiveAndDoesNotScrub() {
        var slider = ProgressSlider(duration: .indefinite, currentTime: s(83))
        slider.isLive = true
        #expect(slider.value == 1, "the thumb at the live edge")
        #expect(slider.durationLabel == "LIVE")
        #expect(slider.timeLabel == "1:23")
        #expect(!slider.beginScrub(at: 0.2, now: s(1)).contains { if case .scrub = $0 { true } else { false } })
        #expect(!slider.isScrubbing)
        #expect(slider.endScrub(at: 0.2, now: s(2)).isEmpty, "no seek")
        slider.isLive = false
        #expect(slider.durationLabel == "--:--")
    }

    /// With its window known, a live item's bar spans the window (its right end where a player
    /// joining now plays) and scrubs within it.
    @Test func aLiveItemWithAWindowScrubsWithinIt() {
        var slider = ProgressSlider(duration: .indefinite, currentTime: s(126))
        slider.isLive = true
        slider.liveWindow = TimeRange(start: s(120), end: s(128))
        #expect(abs(slider.value - 0.75) < 1e-9)
        #expect(slider.durationLabel == "LIVE")
        #expect(slider.timeLabel == "2:06")
        #expect(slider.time(for: 0) == s(120) && slider.time(for: 1) == s(128) && slider.time(for: 9) == s(128))
        let began = slider.beginScrub(at: 0.25, now: s(1))
        #expect(slider.isScrubbing)
        #expect(began.contains(.scrub(s(122))), "\(began)")
        #expect(slider.timeLabel == "2:02", "the label follows the thumb")
        #expect(slider.endScrub(at: 0.5, now: s(2)).contains(.endScrubbing(s(124))))
        slider.currentTime = s(140)
        #expect(slider.value == 1, "at or past the edge: the right end")
    }

    @Test func valueAndTimeMapBothWays() {
        let slider = ProgressSlider(duration: s(45), currentTime: s(12))
        #expect(abs(slider.value - 12.0 / 45) < 1e-9)
        #expect(slider.time(for: 0.5) == s(22.5))
        #expect(slider.time(for: -1) == .zero)
        #expect(slider.time(for: 7) == s(45))
        #expect(ProgressSlider(duration: .indefinite).time(for: 0.5) == .zero)
        #expect(ProgressSlider(duration: .indefinite, currentTime: s(3)).value == 0)
    }

    @Test(arguments: [
        (0.0, "0:00"), (0.999, "0:00"), (12.4, "0:12"), (59.99, "0:59"), (60, "1:00"),
        (605, "10:05"), (3599.9, "59:59"), (3600, "1:00:00"), (3723, "1:02:03"), (-5, "0:00"),
    ])
    func labels(_ seconds: Double, _ text: String) {
        #expect(ProgressSlider.label(s(seconds)) == text)
    }

    @Test func labelsUseHoursForLongItems() {
        let slider = ProgressSlider(duration: s(3700), currentTime: s(65))
        #expect(slider.timeLabel == "0:01:05")
        #expect(slider.durationLabel == "1:01:40")
        let short = ProgressSlider(duration: s(45), currentTime: s(12))
        #expect(short.timeLabel == "0:12" && short.durationLabel == "0:45")
        #expect(ProgressSlider().durationLabel == "--:--")
    }

    @Test func bufferedFractionReachesTheEndOfTheLoadedRangeAroundTheTime() {
        var slider = ProgressSlider(duration: s(40), currentTime: s(10))
        slider.loadedTimeRanges = [TimeRange(start: s(8), end: s(20)), TimeRange(start: s(30), end: s(35))]
        #expect(slider.bufferedFraction == 0.5)
        slider.currentTime = s(25)
        #expect(slider.bufferedFraction == 25.0 / 40, "nothing buffered ahead outside a range")
    }

    @Test func scrubbingSendsEveryNewTargetToTheScrubbingPlayerAndEndsOnTheRelease() {
        var slider = ProgressSlider(duration: s(40), currentTime: s(5))
        #expect(slider.beginScrub(at: 0.25, now: s(100)) == [.beginScrubbing, .scrub(s(10))])
        #expect(slider.isScrubbing)
        #expect(slider.timeLabel == "0:10", "the label follows the thumb")
        // Not throttled: the player chases the newest target itself, one seek in flight.
        #expect(slider.moveScrub(to: 0.3, now: s(100.016)) == [.scrub(s(12))])
        #expect(slider.timeLabel == "0:12")
        #expect(slider.moveScrub(to: 0.3, now: s(100.033)) == [], "the same time is no new target")
        #expect(slider.moveScrub(to: 0.5, now: s(100.05)) == [.scrub(s(20))])
        #expect(slider.endScrub(at: 0.75, now: s(100.35)) == [.endScrubbing(s(30))])
        #expect(!slider.isScrubbing)
        #expect(slider.displayedTime == s(30))
    }

    @Test func cancellingAScrubEndsItWhereItBegan() {
        var slider = ProgressSlider(duration: s(40), currentTime: s(5))
        _ = slider.beginScrub(at: 0.9, now: .zero)
        #expect(slider.cancelScrub(now: s(1)) == [.endScrubbing(s(5))], "back where the drag began")
        #expect(slider.displayedTime == s(5))
    }

    @Test func tapTogglesTheControlsWhichHideAfterThreeSecondsWhilePlaying() {
        var slider = ProgressSlider(duration: s(40))
        slider.isPlaying = true
        #expect(slider.controlsVisible)
        #expect(slider.tick(now: s(2.9)) == [])
        #expect(slider.tick(now: s(3)) == [.hideControls])
        #expect(!slider.controlsVisible)
        #expect(slider.tap(now: s(10)) == [.showControls])
        #expect(slider.autoHideDeadline == s(13))
        #expect(slider.tap(now: s(11)) == [.hideControls])
        #expect(slider.userActivity(now: s(20)) == [.showControls])
        slider.isPlaying = false
        #expect(slider.tick(now: s(60)) == [], "paused: the controls stay")
    }

    @Test func scrubbingKeepsTheControlsUp() {
        var slider = ProgressSlider(duration: s(40))
        slider.isPlaying = true
        _ = slider.beginScrub(at: 0.1, now: .zero)
        #expect(slider.tick(now: s(10)) == [])
    }

    @Test func fullscreenToggles() {
        var slider = ProgressSlider(duration: s(40))
        _ = slider.toggleFullscreen(now: .zero)
        #expect(slider.isFullscreen)
        _ = slider.toggleFullscreen(now: .zero)
        #expect(!slider.isFullscreen)
    }
}
