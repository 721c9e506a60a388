import Foundation
import ReelCore
@testable import ReelStreaming
import Testing

/// Joining a live stream at its target offset: where fetching starts (an independent part or a
/// whole segment) and how far from there the target is, and what the sections tell the player
/// (where to start showing, where the edge is). Values only: no threads, files or sockets.
@Suite struct LiveJoinTests {
    typealias Playlists = LivePlaylistTrackerTests

    @Test func aJoinBeforeTheTargetSaysHowFarTheTargetIs() throws {
        var tracker = LivePlaylistTracker()
        // 5 segments and 2 parts: 11 s listed; PART-HOLD-BACK 1.5 puts the target at 9.5 s, in
        // segment 4 (8–10 s), whose only independent part is its first.
        try tracker.received(Playlists.playlist(first: 0, count: 5, parts: true, trailing: 2, control: "CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5"), at: 0)
        #expect(tracker.cursor?.sequence == 4 && tracker.cursor?.part == 0)
        #expect(tracker.joinSkip == 1.5)
        // Moved elsewhere (a switch, a seek), nothing is skipped.
        tracker.move(to: 3)
        #expect(tracker.joinSkip == 0)
    }

    @Test func aJoinAtAnIndependentPartSkipsNothing() throws {
        var tracker = LivePlaylistTracker()
        // 2 s of trailing parts: 1.5 s back is part 1 of segment 5, not independent; segment
        // 5's first part is, 0.5 s before the target.
        try tracker.received(Playlists.playlist(first: 0, count: 5, parts: true, trailing: 4, control: "PART-HOLD-BACK=1.5"), at: 0)
        #expect(tracker.cursor?.sequence == 5 && tracker.cursor?.part == 0)
        #expect(tracker.joinSkip == 0.5)
        var exact = LivePlaylistTracker()
        try exact.received(Playlists.playlist(first: 0, count: 5, parts: true, trailing: 4, control: "PART-HOLD-BACK=2"), at: 0)
        #expect(exact.cursor?.sequence == 5 && exact.cursor?.part == 0)
        #expect(exact.joinSkip == 0)
    }

    @Test func withoutPartsTheTargetIsHoldBackOrTheUsersOffset() throws {
        var tracker = LivePlaylistTracker()
        try tracker.received(Playlists.playlist(first: 10, count: 6), at: 0)
        // 12 s listed, three target durations back: segment 13's start exactly.
        #expect(tracker.cursor?.sequence == 13)
        #expect(tracker.joinSkip == 0)
        #expect(tracker.joinHoldBack == 6)
        var chosen = LivePlaylistTracker(liveOffset: 5)
        try chosen.received(Playlists.playlist(first: 10, count: 6), at: 0)
        // 5 s back from 12 s is 7 s: a second into segment 13 (6–8 s).
        #expect(chosen.cursor?.sequence == 13)
        #expect(chosen.joinSkip == 1)
        #expect(chosen.joinHoldBack == 5)
        var held = LivePlaylistTracker()
        try held.received(Playlists.playlist(first: 10, count: 6, control: "HOLD-BACK=7"), at: 0)
        #expect(held.cursor?.sequence == 12 && held.joinSkip == 1)
    }

    @Test func theSectionsPresentFromTheTargetAsTheEdgeMovedAndPlaceTheEdge() {
        let sections = StreamSections(information: ContentInformation(length: nil, isByteRangeAccessSupported: false, finalURL: nil))
        sections.listed(Playlists.playlist(first: 0, count: 5).segments, targetDuration: 2, holdBack: 1.5)
        sections.edgeListed(trailing: 1, at: 10)
        #expect(sections.liveEdge(now: 10.5) == nil, "not placed before a frame anchors the timeline")
        sections.joined(skip: 1.5, at: 10, targetDuration: 2, target: 1.5)
        sections.started(at: 4, offset: 0)
        // The first frame (segment 4's first) decoded 0.4 s after the joining playlist, no
        // playlist since: shown from the join's target.
        let start = sections.presentationStart(firstDecoded: 108, now: 10.4)
        #expect(abs((start ?? 0) - 109.5) < 1e-9)
        #expect(sections.presentationStart(firstDecoded: 108, now: 10.5) == nil, "asked once")
        #expect(sections.live.start(of: 4) == 108, "the first decoded frame placed its segment")
        let edge = sections.liveEdge(now: 10.5)
        #expect(edge?.newest == 111, "segments to 110 on the stream's clock, a second of parts after")
        #expect(edge?.age == 0.5)
        #expect(edge?.holdBack == 1.5)
    }

    @Test func aLateFirstFrameSkipsAtMostTwoTargetDurationsMore() {
        let sections = StreamSections(information: ContentInformation(length: nil, isByteRangeAccessSupported: false, finalURL: nil))
        sections.listed(Playlists.playlist(first: 7, count: 1).segments, targetDuration: 2, holdBack: 6)
        sections.joined(skip: 0, at: 3, targetDuration: 2, target: 6)
        sections.edgeListed(trailing: 0, at: 3, sinceJoin: 6)
        sections.edgeListed(trailing: 0, at: 5, sinceJoin: 8)
        sections.started(at: 7, offset: 0)
        #expect(sections.presentationStart(firstDecoded: 14, now: 13) == 18)
    }

    @Test func aPlaylistThatNeverGrowsMovesNoTarget() {
        let sections = StreamSections(information: ContentInformation(length: nil, isByteRangeAccessSupported: false, finalURL: nil))
        sections.joined(skip: 0.5, at: 1, targetDuration: 2, target: 6)
        for at in [1.0, 2, 3, 4] { sections.edgeListed(trailing: 0, at: at, sinceJoin: 6.5) }
        sections.started(at: 0, offset: 0)
        #expect(sections.presentationStart(firstDecoded: 20, now: 9) == 20.5)
    }

    @Test func aLaterPlaylistPlacesTheEdgeCloserThanTheJoiningOne() {
        let sections = StreamSections(information: ContentInformation(length: nil, isByteRangeAccessSupported: false, finalURL: nil))
        // Joined 6 s behind 6 s of listed media at 1.0 (the segment after them was 1.2 s
        // along, unlisted); a blocking reload at 1.8 lists it the moment it is out: 8 s.
        sections.joined(skip: 0, at: 1, targetDuration: 2, target: 6)
        sections.edgeListed(trailing: 0, at: 1, sinceJoin: 6)
        sections.edgeListed(trailing: 0, at: 1.8, sinceJoin: 8)
        sections.started(at: 0, offset: 0)
        // At 2.0 the edge is 8.2 s from the join's start: the target is 2.2 s in.
        let start = sections.presentationStart(firstDecoded: 50, now: 2)
        #expect(abs((start ?? 0) - 52.2) < 1e-9)
    }
}
