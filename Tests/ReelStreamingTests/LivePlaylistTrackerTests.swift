import Foundation
import ReelStreaming
import Testing

/// The live playlist tracker driven with playlists written here and a clock in seconds that
/// the test moves: nothing waits.
@Suite struct LivePlaylistTrackerTests {
    /// A live playlist of `count` 2 s segments from `first`, each of four 0.5 s parts when
    /// `parts` (kept on the last `partsKept`), `trailing` parts of the segment being written.
    static func playlist(first: Int64, count: Int, parts: Bool = false, partsKept: Int = 3, trailing: Int = 0,
                         control: String = "", skipped: Int = 0, final: Bool = false) -> HLSMediaPlaylist {
        var text = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:2\n"
        if parts { text += "#EXT-X-PART-INF:PART-TARGET=0.5\n" }
        if !control.isEmpty { text += "#EXT-X-SERVER-CONTROL:\(control)\n" }
        text += "#EXT-X-MEDIA-SEQUENCE:\(first)\n#EXT-X-MAP:URI=\"init.mp4\"\n"
        if skipped > 0 { text += "#EXT-X-SKIP:SKIPPED-SEGMENTS=\(skipped)\n" }
        for offset in skipped..<count {
            let sequence = first + Int64(offset)
            if parts, offset >= count - partsKept {
                for part in 0..<4 {
                    text += "#EXT-X-PART:DURATION=0.5,URI=\"p\(sequence).\(part).mp4\"\(part == 0 ? ",INDEPENDENT=YES" : "")\n"
                }
            }
            text += "#EXTINF:2,\ns\(sequence).mp4\n"
        }
        let next = first + Int64(count)
        for part in 0..<trailing {
            text += "#EXT-X-PART:DURATION=0.5,URI=\"p\(next).\(part).mp4\"\(part == 0 ? ",INDEPENDENT=YES" : "")\n"
        }
        if parts { text += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"p\(next).\(trailing).mp4\"\n" }
        if final { text += "#EXT-X-ENDLIST\n" }
        return HLSMediaPlaylist(Data(text.utf8))!
    }

    func uri(_ fetch: LivePlaylistTracker.Fetch) -> String? {
        switch fetch {
        case .segment(let segment, _): segment.uri
        case .part(_, _, let part, _): part.resource.uri
        case .waitForReload, .ended: nil
        }
    }

    /// Fetches everything the tracker offers now; returns the URIs in order.
    func drain(_ tracker: inout LivePlaylistTracker) -> [String] {
        var uris: [String] = []
        while let next = uri(tracker.next()) {
            uris.append(next)
            tracker.fetched(tracker.next())
        }
        return uris
    }

    @Test func joinsThreeTargetDurationsFromTheEndAndFetchesEachSegmentOnce() throws {
        var tracker = LivePlaylistTracker()
        try tracker.received(Self.playlist(first: 10, count: 6), at: 0)
        // 6 s back from the end of 10…15: segment 13.
        #expect(drain(&tracker) == ["s13.mp4", "s14.mp4", "s15.mp4"])
        #expect(tracker.next() == .waitForReload)
        var fetched = ["s13.mp4", "s14.mp4", "s15.mp4"]
        var now = 0.0
        // The window slides by one segment a reload for a minute.
        for step in 1...30 {
            let reload = tracker.nextReload()
            #expect(reload.blockingSequence == nil)
            #expect(reload.at == now + 2, "one target duration after a playlist that changed")
            now = reload.at
            try tracker.received(Self.playlist(first: 10 + Int64(step), count: 6), at: now)
            fetched += drain(&tracker)
            try tracker.checkStale(at: now)
        }
        #expect(fetched == (13...45).map { "s\($0).mp4" }, "every segment once, in order")
        #expect(Set(fetched).count == fetched.count)
        #expect(tracker.behindEdge == 0)
    }

    @Test func anUnchangedPlaylistIsReloadedSoonerAndThenIsStale() throws {
        var tracker = LivePlaylistTracker()
        let same = Self.playlist(first: 0, count: 4)
        try tracker.received(same, at: 0)
        #expect(tracker.nextReload().at == 2)
        try tracker.received(same, at: 2)
        #expect(tracker.nextReload().at == 3, "half a target duration after a playlist that did not change")
        try tracker.checkStale(at: 5.9)
        // Time alone (a long fetch, a client not scheduled) is not staleness: a load is.
        try tracker.checkStale(at: 100)
        try tracker.received(same, at: 5.9)
        try tracker.checkStale(at: 100)
        try tracker.received(same, at: 6)
        #expect(throws: LivePlaylistTracker.Failure.stale(seconds: 6)) { try tracker.checkStale(at: 6) }
        #expect(LivePlaylistTracker.Failure.stale(seconds: 6).description == "the live playlist has not changed for 6.0 s")
    }

    @Test func aMediaSequenceThatGoesBackwardsIsRefused() throws {
        var tracker = LivePlaylistTracker()
        try tracker.received(Self.playlist(first: 50, count: 4), at: 0)
        #expect(throws: LivePlaylistTracker.Failure.mediaSequenceWentBackwards(from: 50, to: 20)) {
            try tracker.received(Self.playlist(first: 20, count: 4), at: 2)
        }
    }

    @Test func aWindowThatMovesPastTheCursorFailsClearly() throws {
        var tracker = LivePlaylistTracker()
        try tracker.received(Self.playlist(first: 0, count: 6), at: 0)
        #expect(throws: LivePlaylistTracker.Failure.fellBehind(wanted: 3, oldest: 10)) {
            try tracker.received(Self.playlist(first: 10, count: 6), at: 2)
        }
    }

    @Test func anEventPlaylistThatGrowsWithoutBoundKeepsItsMemoryBounded() throws {
        var tracker = LivePlaylistTracker()
        var now = 0.0
        for count in stride(from: 10, through: 2000, by: 10) {
            try tracker.received(Self.playlist(first: 0, count: count), at: now)
            _ = drain(&tracker)
            now += 2
        }
        #expect(tracker.segments.count <= 80, "the tracker forgot what is behind it: \(tracker.segments.count)")
        #expect(tracker.cursor?.sequence == 2000)
    }

    @Test func blockingReloadsAskForTheNextPartAndPartsAreNotFetchedTwice() throws {
        var tracker = LivePlaylistTracker()
        let control = "CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5"
        try tracker.received(Self.playlist(first: 0, count: 5, parts: true, trailing: 2, control: control), at: 0)
        // 1.5 s back from the end: segment 5's two parts (1 s) are not enough, and the first
        // independent part past it is segment 4's first: segment 4 is fetched whole (one
        // request, the same bytes), then segment 5 part by part.
        var fetched = drain(&tracker)
        #expect(fetched == ["s4.mp4", "p5.0.mp4", "p5.1.mp4"])
        let reload = tracker.nextReload()
        #expect(reload.at == 0, "a blocking reload goes at once")
        #expect(reload.blockingSequence == 5)
        #expect(reload.blockingPart == 2)
        #expect(reload.url(for: URL(string: "http://o.example/live.m3u8?token=1")!).absoluteString
            == "http://o.example/live.m3u8?token=1&_HLS_msn=5&_HLS_part=2")
        // Part 2 arrives, then segment 5 completes (its four parts listed) and segment 6 begins.
        try tracker.received(Self.playlist(first: 0, count: 5, parts: true, trailing: 3, control: control), at: 0.5)
        fetched += drain(&tracker)
        try tracker.received(Self.playlist(first: 0, count: 6, parts: true, trailing: 1, control: control), at: 1)
        fetched += drain(&tracker)
        #expect(fetched.suffix(3) == ["p5.2.mp4", "p5.3.mp4", "p6.0.mp4"],
                "the rest of segment 5 by parts, then segment 6's first: \(fetched)")
        #expect(!fetched.contains("s5.mp4"), "segment 5 came as parts, not again whole")
        #expect(tracker.nextReload().blockingSequence == 6)
        #expect(tracker.nextReload().blockingPart == 1)
        #expect(Set(fetched).count == fetched.count)
    }

    @Test func partsThatLieAboutTheirSegmentAreNotUsed() throws {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PART-INF:PART-TARGET=0.5\n#EXT-X-MEDIA-SEQUENCE:0\n"
        for sequence in 0..<4 {
            // Ten parts of 0.5 s claimed for a 2 s segment.
            for part in 0..<10 { text += "#EXT-X-PART:DURATION=0.5,URI=\"p\(sequence).\(part).mp4\",INDEPENDENT=YES\n" }
            text += "#EXTINF:2,\ns\(sequence).mp4\n"
        }
        var tracker = LivePlaylistTracker()
        try tracker.received(HLSMediaPlaylist(Data(text.utf8))!, at: 0)
        #expect(!tracker.usesParts)
        #expect(tracker.partsRefused == "segment 0's parts last 5.000 s, the segment 2.000 s")
        #expect(drain(&tracker) == ["s1.mp4", "s2.mp4", "s3.mp4"], "whole segments instead")
    }

    @Test func deltaUpdatesAreAskedForAndMerged() throws {
        var tracker = LivePlaylistTracker()
        let control = "CAN-SKIP-UNTIL=12"
        try tracker.received(Self.playlist(first: 0, count: 10, control: control), at: 0)
        _ = drain(&tracker)
        #expect(tracker.nextReload().skip, "the server may skip and a full playlist is known")
        #expect(tracker.nextReload().url(for: URL(string: "http://o.example/live.m3u8")!).absoluteString
            == "http://o.example/live.m3u8?_HLS_skip=YES")
        // The delta skips 0…5 and lists 6…10.
        try tracker.received(Self.playlist(first: 0, count: 11, control: control, skipped: 6), at: 2)
        #expect(drain(&tracker) == ["s10.mp4"])
        // A delta that skips past what is known (8 skipped from 20: 20…27 never seen) asks for
        // a full playlist at once.
        var fresh = LivePlaylistTracker()
        #expect(try !fresh.received(Self.playlist(first: 20, count: 11, control: control, skipped: 8), at: 0))
        #expect(fresh.nextReload() == .init(at: 0, blockingSequence: nil, blockingPart: nil, skip: false))
    }

    /// A server that answers the request for the whole playlist with a delta update again:
    /// asking once more would be asking for ever.
    @Test func aDeltaUpdateAnsweringARequestForTheWholePlaylistIsRefused() throws {
        let control = "CAN-SKIP-UNTIL=12"
        var tracker = LivePlaylistTracker()
        #expect(try !tracker.received(Self.playlist(first: 20, count: 11, control: control, skipped: 8), at: 0))
        #expect(!tracker.nextReload().skip, "the whole playlist asked for")
        #expect(throws: LivePlaylistTracker.Failure.unaskedDeltaUpdate(skipped: 8)) {
            try tracker.received(Self.playlist(first: 20, count: 11, control: control, skipped: 8), at: 0.1)
        }
        // A delta that does fit what is known after the whole playlist came is merged as ever.
        var recovered = LivePlaylistTracker()
        #expect(try !recovered.received(Self.playlist(first: 20, count: 11, control: control, skipped: 8), at: 0))
        try recovered.received(Self.playlist(first: 20, count: 11, control: control), at: 0.1)
        try recovered.received(Self.playlist(first: 20, count: 12, control: control, skipped: 8), at: 2)
        #expect(recovered.segments.last?.sequence == 31)
    }

    /// A part list that lies: the parts of the segment being written shrink and grow back from
    /// one playlist to the next. Only media newer than any listed before is a change, so the
    /// playlist goes stale instead of being reloaded at once for ever.
    @Test func aPartListThatShrinksAndGrowsBackIsNoChange() throws {
        var tracker = LivePlaylistTracker()
        let control = "CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5"
        #expect(try tracker.received(Self.playlist(first: 0, count: 4, parts: true, trailing: 3, control: control), at: 0))
        _ = drain(&tracker)
        var at = 0.0
        for trailing in [1, 3, 2, 3, 1, 3, 0, 3, 1, 3, 2, 3] {
            at += 0.5
            #expect(try !tracker.received(Self.playlist(first: 0, count: 4, parts: true, trailing: trailing, control: control), at: at),
                    "\(trailing) parts of segment 4 after 3 of them were listed")
            #expect(drain(&tracker).isEmpty, "nothing fetched again")
        }
        #expect(throws: LivePlaylistTracker.Failure.stale(seconds: 6)) { try tracker.checkStale(at: at) }
        // The next part is news.
        var growing = LivePlaylistTracker()
        try growing.received(Self.playlist(first: 0, count: 4, parts: true, trailing: 3, control: control), at: 0)
        #expect(try !growing.received(Self.playlist(first: 0, count: 4, parts: true, trailing: 1, control: control), at: 0.5))
        #expect(try growing.received(Self.playlist(first: 0, count: 4, parts: true, trailing: 4, control: control), at: 1))
    }

    @Test func anEndedPlaylistEnds() throws {
        var tracker = LivePlaylistTracker()
        try tracker.received(Self.playlist(first: 0, count: 3), at: 0)
        _ = drain(&tracker)
        try tracker.received(Self.playlist(first: 0, count: 4, final: true), at: 2)
        #expect(drain(&tracker) == ["s3.mp4"])
        #expect(tracker.next() == .ended)
        try tracker.checkStale(at: 1000)
    }

    @Test func aVODPlaylistIsReadFromItsStartAndMovingToASegmentNamesItsInitSectionAgain() throws {
        var tracker = LivePlaylistTracker()
        try tracker.received(Self.playlist(first: 0, count: 6, final: true), at: 0)
        guard case .segment(let first, let initSection) = tracker.next() else { Issue.record("a segment first"); return }
        #expect(first.sequence == 0, "a playlist with an end is read from its start")
        #expect(initSection?.uri == "init.mp4")
        tracker.fetched(tracker.next())
        let moved = tracker.move(to: 4)
        #expect(moved, "a switch of variant carries on at segment 4")
        guard case .segment(let next, let again) = tracker.next() else { Issue.record("a segment next"); return }
        #expect(next.sequence == 4)
        #expect(again?.uri == "init.mp4", "the new section starts with its init section")
        let movedPast = tracker.move(to: 9)
        #expect(!movedPast, "a segment the playlist does not list")
        #expect(drain(&tracker) == ["s4.mp4", "s5.mp4"])
        #expect(tracker.next() == .ended)
    }

    @Test func aPlaylistWithoutATargetDurationIsRefused() {
        var tracker = LivePlaylistTracker()
        let playlist = HLSMediaPlaylist(Data("#EXTM3U\n#EXTINF:2,\na.ts\n".utf8))!
        #expect(throws: LivePlaylistTracker.Failure.noTargetDuration) { try tracker.received(playlist, at: 0) }
    }
}
