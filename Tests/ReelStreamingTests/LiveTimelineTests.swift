import ReelStreaming
import Testing

/// Where a live stream's segments lie on its own clock, from what the playlists list and one
/// frame's time: the window, the segment a seek starts at, and how both follow the window as
/// it slides.
@Suite struct LiveTimelineTests {
    static func entries(_ range: ClosedRange<Int64>, duration: Double = 2, discontinuityAt: Int64? = nil) -> [LiveTimeline.Entry] {
        range.map { LiveTimeline.Entry(sequence: $0, duration: duration, discontinuity: $0 == discontinuityAt) }
    }

    @Test func nothingIsPlacedBeforeAnAnchor() {
        var timeline = LiveTimeline()
        timeline.listed(Self.entries(10...15), targetDuration: 2, holdBack: 6)
        #expect(timeline.window == nil)
        #expect(timeline.seekable == nil)
        #expect(timeline.sequence(holding: 25) == nil)
    }

    @Test func oneFrameOfAKnownSegmentPlacesTheWholeWindow() throws {
        var timeline = LiveTimeline()
        timeline.listed(Self.entries(10...15), targetDuration: 2, holdBack: 6)
        // Joined at segment 13 (6 s back from the end), whose first frame showed at 126 s.
        timeline.anchor(13, at: 126)
        #expect(timeline.start(of: 10) == 120)
        #expect(timeline.start(of: 15) == 130)
        #expect(timeline.window == 120...132)
        #expect(timeline.seekable == 120...126, "up to the join point")
        #expect(timeline.sequence(holding: 119) == 10, "before the window: its first segment")
        #expect(timeline.sequence(holding: 120) == 10)
        #expect(timeline.sequence(holding: 123.9) == 11)
        #expect(timeline.sequence(holding: 124) == 12)
        #expect(timeline.sequence(holding: 126) == nil, "at the join point: join at the edge")
    }

    @Test func theWindowSlidesAndTheAnchorHolds() {
        var timeline = LiveTimeline()
        timeline.listed(Self.entries(10...15), targetDuration: 2, holdBack: 6)
        timeline.anchor(13, at: 126)
        timeline.listed(Self.entries(12...17), targetDuration: 2, holdBack: 6)
        #expect(timeline.window == 124...136)
        // Past the anchor's segment: the anchor still places every later one.
        timeline.listed(Self.entries(16...21), targetDuration: 2, holdBack: 6)
        #expect(timeline.window == 132...144)
        #expect(timeline.sequence(holding: 133) == 16)
        #expect(timeline.entries.first?.sequence == 13, "nothing older than the anchor is kept")
    }

    @Test func aReloadThatSkipsPastWhatWasKnownLosesThePlace() {
        var timeline = LiveTimeline()
        timeline.listed(Self.entries(10...15), targetDuration: 2, holdBack: 6)
        timeline.anchor(13, at: 126)
        // Segments 16…19 were never listed: where 20 starts is not known.
        timeline.listed(Self.entries(20...25), targetDuration: 2, holdBack: 6)
        #expect(timeline.window == nil)
    }

    @Test func aDiscontinuityBoundsWhatCanBePlaced() {
        var timeline = LiveTimeline()
        timeline.listed(Self.entries(10...15, discontinuityAt: 12), targetDuration: 2, holdBack: 4)
        timeline.anchor(14, at: 500)
        // 10 and 11 are on the other side of the discontinuity: their times are not 496 on.
        #expect(timeline.start(of: 11) == nil)
        #expect(timeline.window == 496...504)
        #expect(timeline.sequence(holding: 450) == 12)
    }

    @Test func anAnchorOnTheSegmentStillArrivingTakesEffectOnceItIsListed() {
        var timeline = LiveTimeline()
        timeline.listed(Self.entries(10...15), targetDuration: 2, holdBack: 1)
        // Low latency: joined at a part of segment 16, not listed whole yet.
        timeline.anchor(16, at: 132)
        #expect(timeline.window == nil)
        timeline.listed(Self.entries(11...16), targetDuration: 2, holdBack: 1)
        #expect(timeline.window == 122...134)
    }

    /// Durations that lie (segments of no length, one of the largest a playlist may state):
    /// the window stays finite and in order, and a seek still lands on a listed segment.
    @Test func lyingDurationsKeepTheWindowFiniteAndInOrder() throws {
        var timeline = LiveTimeline()
        let entries = [LiveTimeline.Entry(sequence: 0, duration: 0), .init(sequence: 1, duration: 0),
                       .init(sequence: 2, duration: 999_999), .init(sequence: 3, duration: 0), .init(sequence: 4, duration: 2)]
        timeline.listed(entries, targetDuration: 2, holdBack: 6)
        timeline.anchor(3, at: 50)
        let window = try #require(timeline.window)
        #expect(window.lowerBound.isFinite && window.upperBound.isFinite && window.lowerBound <= window.upperBound)
        #expect(window == (50 - 999_999)...52)
        let seekable = try #require(timeline.seekable)
        #expect(seekable.lowerBound <= seekable.upperBound)
        for time in [-1e12, window.lowerBound, 0, 49.9, 50, 1e12] {
            if let sequence = timeline.sequence(holding: time) { #expect((0...4).contains(sequence), "\(time)") }
        }
        // Nothing but segments of no length: a window of no length, never a division by it.
        var empty = LiveTimeline()
        empty.listed((0...3).map { .init(sequence: $0, duration: 0) }, targetDuration: 1, holdBack: 3)
        empty.anchor(1, at: 7)
        #expect(empty.window == 7...7)
        #expect(empty.sequence(holding: 7) == nil, "at the join point: the edge")
    }

    @Test func aPlaylistThatGrowsWithoutBoundKeepsALimitedHistory() {
        var timeline = LiveTimeline()
        timeline.limit = 100
        timeline.listed(Self.entries(0...9), targetDuration: 2, holdBack: 6)
        timeline.anchor(0, at: 0)
        timeline.listed(Self.entries(0...499), targetDuration: 2, holdBack: 6)
        #expect(timeline.entries.count == 100)
        #expect(timeline.start(of: 499) == 998, "the anchor moved with the cut")
        #expect(timeline.window == 800...1000)
    }
}
