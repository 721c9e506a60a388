import Testing
import ReelCore
import ReelCaptions
import Foundation

@Suite struct CaptionSelectionTests {
    func track(_ id: String, _ language: String?, isDefault: Bool = false) -> CaptionTrack {
        CaptionTrack(id: CaptionTrackID(id), origin: .inBand(stream: 0), format: .subrip, language: language, isDefault: isDefault)
    }

    @Test func offChoosesNothing() {
        #expect(CaptionSelection.off.choose(from: [track("s:2", "eng")]) == nil)
        #expect(CaptionSelection().choose(from: []) == nil)
    }

    @Test func aPreferredLanguageMatchesHoweverItIsWritten() {
        let tracks = [track("s:2", "eng"), track("s:3", "chi"), track("side:0", "zh-Hans")]
        #expect(CaptionSelection(preferredLanguages: ["zh"]).choose(from: tracks) == CaptionTrackID("s:3"))
        #expect(CaptionSelection(preferredLanguages: ["zh-Hant", "en"]).choose(from: tracks) == CaptionTrackID("s:3"))
        #expect(CaptionSelection(preferredLanguages: ["fr", "en-GB"]).choose(from: tracks) == CaptionTrackID("s:2"))
    }

    @Test func anExplicitTrackWinsWhileOffered() {
        let tracks = [track("s:2", "eng"), track("s:3", "fre")]
        let selection = CaptionSelection(preferredLanguages: ["en"], track: CaptionTrackID("s:3"))
        #expect(selection.choose(from: tracks) == CaptionTrackID("s:3"))
        #expect(selection.choose(from: [track("s:2", "eng")]) == CaptionTrackID("s:2"))
    }

    @Test func withoutAMatchTheDefaultThenTheFirstTrackShows() {
        #expect(CaptionSelection(preferredLanguages: ["ja"]).choose(from: [track("s:2", "eng"), track("s:3", "fre", isDefault: true)]) == CaptionTrackID("s:3"))
        #expect(CaptionSelection().choose(from: [track("s:2", nil), track("s:3", "und")]) == CaptionTrackID("s:2"))
    }
}

@Suite struct CaptionPresentationTests {
    let english = CaptionTrack(id: .stream(2), origin: .inBand(stream: 2), format: .subrip, language: "eng")
    let chinese = CaptionTrack(id: .sideloaded(0), origin: .sideloaded(URL(fileURLWithPath: "/c.srt")), format: .subrip, language: "zh")

    func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    func cue(_ track: CaptionTrack, _ start: Int64, _ end: Int64?, _ text: String) -> CaptionEvent {
        CaptionEvent(track: track.id, start: ms(start), end: end.map(ms) ?? .positiveInfinity, content: .text(ASSDialogue(text: text)))
    }

    @Test func aScreenIsHandedOnlyWhenWhatIsOnItChanges() {
        var presentation = CaptionPresentation()
        presentation.add(english)
        presentation.insert([cue(english, 500, 1500, "one"), cue(english, 2000, 3000, "two")])
        let screen1 = presentation.presented(at: ms(0))
        #expect(screen1 == nil)
        let screen2 = presentation.presented(at: ms(500))
        #expect(screen2?.plainText == "one")
        let screen3 = presentation.presented(at: ms(1000))
        #expect(screen3 == nil)
        let screen4 = presentation.presented(at: ms(1500))
        #expect(screen4?.events == [])
        let screen5 = presentation.presented(at: ms(1700))
        #expect(screen5 == nil)
        let screen6 = presentation.presented(at: ms(2500))
        #expect(screen6?.plainText == "two")
    }

    @Test func choosingAnotherTrackChangesTheScreenWithoutANewFrame() {
        var presentation = CaptionPresentation(selection: CaptionSelection(preferredLanguages: ["en"]))
        presentation.add(english)
        presentation.insert([cue(english, 0, 5000, "hello")])
        let screen7 = presentation.presented(at: ms(100))
        #expect(screen7?.plainText == "hello")
        presentation.add(chinese)
        presentation.insert([cue(chinese, 0, 5000, "你好")])
        #expect(!presentation.needsRefresh)
        presentation.select(CaptionSelection(preferredLanguages: ["zh"]))
        #expect(presentation.needsRefresh)
        let screen8 = presentation.refresh()
        #expect(screen8?.plainText == "你好")
        presentation.select(.off)
        let screen9 = presentation.refresh()
        #expect(screen9?.events == [])
    }

    @Test func aCueArrivingForTheCurrentTimeAsksForARefresh() {
        var presentation = CaptionPresentation()
        presentation.add(english)
        _ = presentation.presented(at: ms(1000))
        presentation.insert([cue(english, 3000, 4000, "later")])
        #expect(!presentation.needsRefresh)
        presentation.insert([cue(english, 900, 1200, "now")])
        #expect(presentation.needsRefresh)
        let screen10 = presentation.refresh()
        #expect(screen10?.plainText == "now")
    }

    @Test func aSeekEndsOpenCuesWhereThePlayerWas() {
        var presentation = CaptionPresentation()
        presentation.add(english)
        presentation.insert([cue(english, 1000, nil, "roll-up")])
        let screen11 = presentation.presented(at: ms(2000))
        #expect(screen11?.plainText == "roll-up")
        presentation.seeked()
        // A seek back into the cue shows it; past where the player was, it has ended.
        let screen12 = presentation.presented(at: ms(1500))
        #expect(screen12?.plainText == "roll-up")
        let screen13 = presentation.presented(at: ms(2500))
        #expect(screen13?.events == [])
        #expect(presentation.timeline.events(of: english.id).first?.end == ms(2000))
    }

    @Test func theTrackListChangeIsTakenOnce() {
        var presentation = CaptionPresentation()
        let changed14 = presentation.takeTracksChanged()
        #expect(!changed14)
        presentation.add(english)
        let changed15 = presentation.takeTracksChanged()
        #expect(changed15)
        let changed16 = presentation.takeTracksChanged()
        #expect(!changed16)
        #expect(presentation.selected == english.id)
    }
}

@Suite struct CaptionBitmapBoundsTests {
    let pgs = CaptionTrack(id: .stream(3), origin: .inBand(stream: 3), format: .pgs)
    let other = CaptionTrack(id: .stream(4), origin: .inBand(stream: 4), format: .pgs)

    func picture(_ track: CaptionTrack, _ second: Int64, bytes: Int) -> CaptionEvent {
        CaptionEvent(track: track.id, start: MediaTime(value: second, timescale: 1), end: MediaTime(value: second + 1, timescale: 1),
                     content: .bitmap(CaptionBitmap(x: 0, y: 0, width: bytes, height: 1, canvasWidth: bytes, canvasHeight: 1,
                                                    indices: [UInt8](repeating: 1, count: bytes), palette: [0xFFFF_FFFF])))
    }

    @Test func pictureCuesOfATrackNotShownAreNotKept() {
        var presentation = CaptionPresentation(selection: CaptionSelection(track: CaptionTrackID("s:3")))
        presentation.add(pgs)
        presentation.add(other)
        presentation.insert([picture(pgs, 1, bytes: 100), picture(other, 1, bytes: 100)])
        #expect(presentation.timeline.count(of: pgs.id) == 1)
        #expect(presentation.timeline.count(of: other.id) == 0)
    }

    @Test func aTracksPicturesStayWithinTheirBudgetAndTheCurrentOnesStay() {
        var presentation = CaptionPresentation()
        presentation.add(pgs)
        _ = presentation.presented(at: MediaTime(value: 100, timescale: 1))
        let size = 4 << 20
        // 20 cues of 4 MiB: 80 MiB offered against a 32 MiB budget.
        for second in stride(from: Int64(0), to: 200, by: 10) { presentation.insert([picture(pgs, second, bytes: size)]) }
        let kept = presentation.timeline.events(of: pgs.id)
        let bytes = kept.reduce(0) { $0 + $1.bitmapBytes }
        #expect(bytes <= CaptionPresentation.bitmapBytesPerTrack)
        #expect(kept.contains { $0.start == MediaTime(value: 100, timescale: 1) }, "the cue at the current time")
        #expect(!kept.contains { $0.start == MediaTime(value: 0, timescale: 1) }, "long past cues go first")
    }
}

@Suite struct CaptionCyclingTests {
    let tracks = [
        CaptionTrack(id: .stream(2), origin: .inBand(stream: 2), format: .subrip, language: "eng", label: "English"),
        CaptionTrack(id: .sideloaded(0), origin: .sideloaded(URL(fileURLWithPath: "/x.srt")), format: .subrip, language: "zh-Hans"),
    ]

    @Test func cOffThenEachTrackThenOff() {
        var selection = CaptionSelection.off
        var seen: [CaptionTrackID?] = []
        for _ in 0..<4 {
            selection = selection.cycled(through: tracks)
            seen.append(selection.choose(from: tracks))
        }
        #expect(seen == [.stream(2), .sideloaded(0), nil, .stream(2)])
    }

    @Test func aTrackChosenByCyclingBecomesThePreferredLanguage() {
        // English shows (preferred); c moves on to the Chinese track.
        let selection = CaptionSelection(preferredLanguages: ["en"]).cycled(through: tracks)
        #expect(selection.choose(from: tracks) == .sideloaded(0))
        #expect(selection.preferredLanguages == ["zh-Hans", "en"])
        // The next item, in Chinese too, with other ids: its Chinese track starts shown.
        let next = [CaptionTrack(id: .stream(5), origin: .inBand(stream: 5), format: .ass, language: "fre"),
                    CaptionTrack(id: .stream(6), origin: .inBand(stream: 6), format: .ass, language: "chi")]
        #expect(selection.choose(from: next) == .stream(6))
    }

    @Test func withoutTracksItOnlyTurnsCaptionsOnAndOff() {
        #expect(CaptionSelection().cycled(through: []).isEnabled == false)
        #expect(CaptionSelection.off.cycled(through: []).isEnabled == true)
    }
}
