import Testing
import PropertyBased
import ReelCore
import ReelCaptions

@Suite struct CaptionTimelineTests {
    let track = CaptionTrackID.stream(2)

    func cue(_ start: Int64, _ end: Int64?, _ text: String, track: CaptionTrackID? = nil) -> CaptionEvent {
        CaptionEvent(track: track ?? self.track, start: MediaTime(value: start, timescale: 1000),
                     end: end.map { MediaTime(value: $0, timescale: 1000) } ?? .positiveInfinity,
                     content: .text(ASSDialogue(text: text)))
    }

    func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    @Test func aCueIsOnFromItsStartUntilJustBeforeItsEnd() {
        var timeline = CaptionTimeline()
        timeline.insert(cue(1000, 2000, "one"))
        #expect(timeline.active(track, at: ms(999)).isEmpty)
        #expect(timeline.active(track, at: ms(1000)).map(\.plainText) == ["one"])
        #expect(timeline.active(track, at: ms(1999)).map(\.plainText) == ["one"])
        #expect(timeline.active(track, at: ms(2000)).isEmpty)
    }

    @Test func overlappingCuesAreOnTogetherInStartOrder() {
        var timeline = CaptionTimeline()
        timeline.insert(cue(3000, 4000, "late"))
        timeline.insert(cue(0, 10_000, "long"))
        timeline.insert(cue(2500, 3500, "middle"))
        #expect(timeline.active(track, at: ms(3200)).map(\.plainText) == ["long", "middle", "late"])
        #expect(timeline.active(track, at: ms(9000)).map(\.plainText) == ["long"])
    }

    @Test func theSameCueReadTwiceIsKeptOnce() {
        var timeline = CaptionTimeline()
        let inserted1 = timeline.insert(cue(1000, 2000, "one"))
        #expect(inserted1)
        let inserted2 = timeline.insert(cue(1000, 2000, "one"))
        #expect(!inserted2)
        let inserted3 = timeline.insert(cue(1000, 2000, "other words"))
        #expect(inserted3)
        #expect(timeline.count(of: track) == 2)
    }

    @Test func cuesWithoutAValidSpanAreRefused() {
        var timeline = CaptionTimeline()
        let inserted4 = timeline.insert(cue(2000, 1000, "backwards"))
        #expect(!inserted4)
        let inserted5 = timeline.insert(cue(2000, 2000, "empty"))
        #expect(!inserted5)
        let inserted6 = timeline.insert(CaptionEvent(track: track, start: .invalid, end: ms(1), content: .text(ASSDialogue(text: "x"))))
        #expect(!inserted6)
        #expect(timeline.count(of: track) == 0)
    }

    @Test func anOpenCueLastsUntilItIsClosed() {
        var timeline = CaptionTimeline()
        timeline.insert(cue(500, nil, "roll-up"))
        #expect(timeline.active(track, at: ms(60_000)).map(\.plainText) == ["roll-up"])
        timeline.close(track, at: ms(1500))
        #expect(timeline.active(track, at: ms(1499)).map(\.plainText) == ["roll-up"])
        #expect(timeline.active(track, at: ms(1500)).isEmpty)
        #expect(timeline.events(of: track).first?.end == ms(1500))
    }

    @Test func closingBeforeAnOpenCueStartsRemovesIt() {
        var timeline = CaptionTimeline()
        timeline.insert(cue(5000, nil, "after the seek point"))
        timeline.close(track, at: ms(4000))
        #expect(timeline.count(of: track) == 0)
    }

    @Test func tracksAreApart() {
        var timeline = CaptionTimeline()
        let other = CaptionTrackID.sideloaded(0)
        timeline.insert(cue(0, 1000, "mine"))
        timeline.insert(cue(0, 1000, "theirs", track: other))
        #expect(timeline.active(track, at: ms(10)).map(\.plainText) == ["mine"])
        #expect(timeline.active(other, at: ms(10)).map(\.plainText) == ["theirs"])
        timeline.remove(other)
        #expect(timeline.active(other, at: ms(10)).isEmpty)
    }

    /// The cap of a small timeline (50 000 inserts would hold a concurrency thread for half a
    /// minute of a pinned core in a debug build); the default is the real one.
    @Test func aFullTrackRefusesMore() {
        #expect(CaptionTimeline().capacityPerTrack == CaptionTimeline.maximumEventsPerTrack)
        #expect(CaptionTimeline.maximumEventsPerTrack == 50_000)
        var timeline = CaptionTimeline(capacityPerTrack: 300)
        for i in 0..<Int64(300) {
            timeline.insert(cue(i * 10, i * 10 + 5, "x"))
        }
        let inserted7 = timeline.insert(cue(-100, -50, "one too many"))
        #expect(!inserted7)
        #expect(timeline.count(of: track) == 300)
        // Another track has its own room.
        let other = timeline.insert(CaptionEvent(track: CaptionTrackID("other"), start: MediaTime(value: 1, timescale: 1),
                                                 end: MediaTime(value: 2, timescale: 1), content: .text(ASSDialogue(text: "y"))))
        #expect(other)
    }

    /// Whatever the cues and the order they arrive in, `active` gives exactly the cues a full
    /// scan finds, in start order.
    @Test func activeAgreesWithAFullScan() async {
        let spans = Gen.int(in: 0...2000).array(of: 1...40).map { values in
            stride(from: 0, to: values.count - 1, by: 2).map { (Int64(values[$0]), Int64(values[$0 + 1] % 700 + 1)) }
        }
        await propertyCheck(input: spans, Gen.int(in: 0...2800).array(of: 1...20)) { spans, probes in
            var timeline = CaptionTimeline()
            var all: [CaptionEvent] = []
            for (index, (start, length)) in spans.enumerated() {
                let event = cue(start, index % 7 == 3 ? nil : start + length, "c\(index)")
                if timeline.insert(event) { all.append(event) }
            }
            for probe in probes {
                let time = ms(Int64(probe))
                let expected = all.filter { $0.isActive(at: time) }.sorted { $0.start < $1.start }
                let actual = timeline.active(track, at: time)
                #expect(Set(actual) == Set(expected))
                #expect(actual.map(\.start) == expected.map(\.start))
            }
        }
    }
}
