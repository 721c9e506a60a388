import Testing
import ReelCore
import ReelCaptions

/// Provisional cues (the CEA-608 screen as it changed) and the settled cues that replace them.
@Suite struct ProvisionalCueTests {
    let track = CaptionTrackID.closedCaptions(1)

    func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    func cue(_ start: Int64, _ end: Int64?, _ text: String, provisional: Bool = false) -> CaptionEvent {
        CaptionEvent(track: track, start: ms(start), end: end.map(ms) ?? .positiveInfinity,
                     content: .text(ASSDialogue(text: text)), isProvisional: provisional)
    }

    @Test func aPopOnCaptionShowsFromItsStartAndItsSettledCueReplacesIt() {
        var timeline = CaptionTimeline()
        timeline.insert(cue(1000, nil, "Bip!", provisional: true))
        #expect(timeline.active(track, at: ms(1500)).map(\.isProvisional) == [true])
        // The next caption's frame: the screen changed (closing the first), and cc_dec settled it.
        timeline.close(track, at: ms(2000))
        timeline.insert(cue(2000, nil, "Bop!", provisional: true))
        timeline.insert(cue(1000, 2000, "Bip!"))
        #expect(timeline.events(of: track) == [cue(1000, 2000, "Bip!"), cue(2000, nil, "Bop!", provisional: true)])
        #expect(timeline.active(track, at: ms(1999)) == [cue(1000, 2000, "Bip!")])
        #expect(timeline.active(track, at: ms(2000)).map(\.plainText) == ["Bop!"])
    }

    @Test func aSettledCueFiledBeforeTheScreenChangeLeavesNothingStale() {
        var timeline = CaptionTimeline()
        timeline.insert(cue(1000, nil, "Bip!", provisional: true))
        timeline.insert(cue(1000, 2000, "Bip!"))
        // The provisional cue, still open, is kept from the settled one's end…
        #expect(timeline.active(track, at: ms(2500)).map(\.start) == [ms(2000)])
        // …until the screen's change ends it: an open cue starting at the close goes.
        timeline.close(track, at: ms(2000))
        timeline.insert(cue(2000, nil, "Bop!", provisional: true))
        #expect(timeline.events(of: track) == [cue(1000, 2000, "Bip!"), cue(2000, nil, "Bop!", provisional: true)])
    }

    @Test func rollUpScreensPaintedBeforeASettledCueGoAndTheLastStaysAfterIt() {
        var timeline = CaptionTimeline()
        timeline.insert(cue(1000, 1200, "Th", provisional: true))
        timeline.insert(cue(1200, 1400, "These are", provisional: true))
        timeline.insert(cue(1400, nil, "These are 608", provisional: true))
        timeline.insert(cue(0, 1500, "These are 608 captions"))
        let events = timeline.events(of: track)
        #expect(events.map(\.plainText) == ["These are 608 captions", "These are 608"])
        #expect(events.last?.start == ms(1500))
        #expect(timeline.active(track, at: ms(1300)).map(\.plainText) == ["These are 608 captions"])
        // The open one is still what a later close ends.
        timeline.close(track, at: ms(1800))
        #expect(timeline.events(of: track).last?.end == ms(1800))
    }

    @Test func settledCuesOfOtherTracksAndEarlierCuesAreUntouched() {
        var timeline = CaptionTimeline()
        let other = CaptionTrackID.stream(3)
        let subtitle = CaptionEvent(track: other, start: ms(0), end: ms(5000), content: .text(ASSDialogue(text: "sub")))
        timeline.insert(subtitle)
        timeline.insert(cue(0, 900, "before"))
        timeline.insert(cue(1000, nil, "now", provisional: true))
        timeline.insert(cue(500, 900, "late settled"))
        #expect(timeline.events(of: other) == [subtitle])
        #expect(timeline.events(of: track).map(\.plainText) == ["before", "late settled", "now"])
    }
}
