import Foundation
import ReelStreaming
import Testing

/// The chunk source (the scheduler's decisions for one rendition) driven by hand: playlists
/// written here, a clock in seconds that the test moves, no task, socket or file.
@Suite struct ChunkSourceTests {
    typealias Tracker = LivePlaylistTracker

    static func playlist(first: Int64, count: Int, control: String = "", final: Bool = false) -> HLSMediaPlaylist {
        LivePlaylistTrackerTests.playlist(first: first, count: count, control: control, final: final)
    }

    static func uri(_ action: ChunkSource.Action) -> String? {
        guard case .fetch(let chunk) = action, case .segment(let segment, _) = chunk.fetch else { return nil }
        return segment.uri
    }

    /// Fetches whole segments while the source asks for them; their URIs.
    static func drain(_ source: inout ChunkSource, at now: Double) -> [String] {
        var uris: [String] = []
        while case .fetch(let chunk) = source.nextAction(at: now), let uri = uri(.fetch(chunk)) {
            uris.append(uri)
            source.chunkStarted(chunk)
            source.chunkLoaded(chunk.fetch)
        }
        return uris
    }

    @Test func aStreamWithAnEndIsReadOnceThroughTheCacheFromItsStartAndThenEnds() {
        var source = ChunkSource(tracker: Tracker(), at: 5)
        let result1 = source.nextAction(at: 5)
        #expect(result1 == .reload(Tracker.Reload(at: 5), fromCache: true))
        let loaded = source.playlistLoaded(Self.playlist(first: 0, count: 3, final: true), at: 5)
        #expect(loaded?.positioned == .fromStart)
        #expect(Self.drain(&source, at: 6) == ["s0.mp4", "s1.mp4", "s2.mp4"])
        let result2 = source.nextAction(at: 7)
        #expect(result2 == .end(.endList))
        // Ended stays ended, whatever comes.
        let result3 = source.playlistLoaded(Self.playlist(first: 0, count: 4), at: 8)
        #expect(result3 == nil)
        let result4 = source.nextAction(at: 100)
        #expect(result4 == .end(.endList))
    }

    @Test func aStartTimeStartsAtTheSegmentHoldingIt() {
        var source = ChunkSource(tracker: Tracker(), configuration: .init(startTime: 4.5), at: 0)
        _ = source.playlistLoaded(Self.playlist(first: 0, count: 4, final: true), at: 0)
        #expect(Self.drain(&source, at: 0) == ["s2.mp4", "s3.mp4"])
        #expect(ChunkSource.segment(holding: 4.5, durations: [2, 2, 2])?.index == 2)
        #expect(ChunkSource.segment(holding: 99, durations: [2, 2])?.index == 1)
        #expect(ChunkSource.segment(holding: 1, durations: []) == nil)
    }

    @Test func aLiveStreamIsJoinedAtTheEdgeAndReloadedAfterATargetDurationOrHalfOne() {
        var source = ChunkSource(tracker: Tracker(), at: 0)
        let loaded = source.playlistLoaded(Self.playlist(first: 10, count: 6), at: 0)
        #expect(loaded?.changed == true && loaded?.skippedAhead == nil)
        #expect(loaded?.positioned == .joined(sequence: 13, part: 0))
        #expect(Self.drain(&source, at: 1) == ["s13.mp4", "s14.mp4", "s15.mp4"])
        // Changed: a target duration after the load, from the origin.
        let result5 = source.nextAction(at: 1)
        #expect(result5 == .reload(Tracker.Reload(at: 2), fromCache: false))
        let result6 = source.nextAction(at: 1.5)
        #expect(result6 == .reload(Tracker.Reload(at: 2), fromCache: false), "asked again: the same")
        let result7 = source.playlistLoaded(Self.playlist(first: 10, count: 6), at: 2)
        #expect(result7?.changed == false)
        let result8 = source.nextAction(at: 2)
        #expect(result8 == .reload(Tracker.Reload(at: 3), fromCache: false))
        // Nothing new for three target durations: stale.
        _ = source.playlistLoaded(Self.playlist(first: 10, count: 6), at: 6)
        let result9 = source.nextAction(at: 6)
        #expect(result9 == .end(.failed(.stale(seconds: 6))))
    }

    @Test func liveSeeksStartAtTheirSegmentOrTheOldestListed() {
        var inside = ChunkSource(tracker: Tracker(), configuration: .init(liveStart: .at(11)), at: 0)
        let result10 = inside.playlistLoaded(Self.playlist(first: 10, count: 6), at: 0)
        #expect(result10?.positioned == .seeked)
        #expect(Self.uri(inside.nextAction(at: 0)) == "s11.mp4")
        var gone = ChunkSource(tracker: Tracker(), configuration: .init(liveStart: .at(3)), at: 0)
        _ = gone.playlistLoaded(Self.playlist(first: 10, count: 6), at: 0)
        #expect(Self.uri(gone.nextAction(at: 0)) == "s10.mp4")
        var edge = ChunkSource(tracker: Tracker(), configuration: .init(liveStart: .edge), at: 0)
        let result11 = edge.playlistLoaded(Self.playlist(first: 10, count: 6), at: 0)
        #expect(result11?.positioned == .seeked)
        #expect(Self.uri(edge.nextAction(at: 0)) == "s13.mp4")
    }

    @Test func blockingReloadsGoAtOnceButNotInASpinAndArePlainWhenTheyCouldBeHeldTooLong() {
        let control = "CAN-BLOCK-RELOAD=YES"
        var source = ChunkSource(tracker: Tracker(), at: 0)
        _ = source.playlistLoaded(Self.playlist(first: 10, count: 6, control: control), at: 0)
        _ = Self.drain(&source, at: 0.5)
        let result12 = source.nextAction(at: 0.5)
        #expect(result12 == .reload(Tracker.Reload(at: 0, blockingSequence: 16), fromCache: false))
        // Answered at once with nothing new: the next waits half a target duration.
        _ = source.playlistLoaded(Self.playlist(first: 10, count: 6, control: control), at: 0.6)
        let result13 = source.nextAction(at: 0.6)
        #expect(result13 == .reload(Tracker.Reload(at: 1.6, blockingSequence: 16), fromCache: false))

        // Three target durations (6 s) past what a response may take (5 s): plain reloads.
        var short = ChunkSource(tracker: Tracker(), configuration: .init(maximumBlockingWait: 5), at: 0)
        _ = short.playlistLoaded(Self.playlist(first: 10, count: 6, control: control), at: 0)
        _ = Self.drain(&short, at: 0.5)
        let result14 = short.nextAction(at: 0.5)
        #expect(result14 == .reload(Tracker.Reload(at: 2.5), fromCache: false))
    }

    @Test func aBlockingReloadLeftUnansweredIsFollowedByPlainReloadsTheFirstAtOnce() {
        let control = "CAN-BLOCK-RELOAD=YES"
        var source = ChunkSource(tracker: Tracker(), at: 0)
        _ = source.playlistLoaded(Self.playlist(first: 10, count: 6, control: control), at: 0)
        _ = Self.drain(&source, at: 0)
        let result15 = source.nextAction(at: 0)
        #expect(result15 == .reload(Tracker.Reload(at: 0, blockingSequence: 16), fromCache: false))
        source.reloadUnanswered(at: 7)
        #expect(source.blockingGivenUp)
        let result16 = source.nextAction(at: 7)
        #expect(result16 == .reload(Tracker.Reload(at: 7), fromCache: false))
        _ = source.playlistLoaded(Self.playlist(first: 11, count: 6, control: control), at: 7)
        #expect(Self.drain(&source, at: 7) == ["s16.mp4"])
        let result17 = source.nextAction(at: 7.5)
        #expect(result17 == .reload(Tracker.Reload(at: 9), fromCache: false))
    }

    @Test func aWindowThatMovedPastTheCursorGoesOnFromTheOldestWithATimelineRestart() {
        var source = ChunkSource(tracker: Tracker(), at: 0)
        _ = source.playlistLoaded(Self.playlist(first: 10, count: 6), at: 0)
        _ = source.nextAction(at: 0)
        // A long wait for room on a live stream: the playlist is read again first.
        let result18 = source.waitedForRoom(since: 0, at: 7)
        #expect(!result18)
        let result19 = source.nextAction(at: 7)
        #expect(result19 == .reload(Tracker.Reload(at: 7), fromCache: false))
        let loaded = source.playlistLoaded(Self.playlist(first: 20, count: 6), at: 7)
        #expect(loaded?.skippedAhead?.from == 13 && loaded?.skippedAhead?.to == 20)
        #expect(loaded?.changed == true)
        guard case .fetch(let chunk) = source.nextAction(at: 7) else { Issue.record("no fetch"); return }
        #expect(chunk.restartsTimeline)
        source.chunkStarted(chunk)
        source.chunkLoaded(chunk.fetch)
        guard case .fetch(let after) = source.nextAction(at: 7) else { Issue.record("no fetch"); return }
        #expect(!after.restartsTimeline)
        #expect(Self.uri(.fetch(after)) == "s21.mp4")
        let result20 = source.waitedForRoom(since: 7, at: 8)
        #expect(result20, "a short wait fetches on")
    }

    @Test func theForwardBufferWaitsInStepsOfAtMostASecond() {
        let source = ChunkSource(tracker: Tracker(), configuration: .init(maximumBuffer: 12), at: 0)
        #expect(source.roomWait(ahead: 11.9) == nil)
        #expect(source.roomWait(ahead: 12) == 0.05)
        #expect(source.roomWait(ahead: 12.5) == 0.5)
        #expect(source.roomWait(ahead: 30) == 1)
        var final = ChunkSource(tracker: Tracker(), at: 0)
        _ = final.playlistLoaded(Self.playlist(first: 0, count: 3, final: true), at: 0)
        _ = final.nextAction(at: 0)
        let result21 = final.waitedForRoom(since: 0, at: 100)
        #expect(result21, "a stream with an end has no window to fall behind")
    }
}

/// The seams the chunk source decides: where a section starts, the init section sent first,
/// and which chunks may be abandoned.
@Suite struct ChunkSourceSeamTests {
    static func next(_ source: inout ChunkSource) -> ChunkSource.Chunk? {
        guard case .fetch(let chunk) = source.nextAction(at: 0) else { return nil }
        return chunk
    }

    /// Starts, sends (the init section when the chunk names one) and loads `chunk`.
    static func send(_ chunk: ChunkSource.Chunk, into source: inout ChunkSource) {
        source.chunkStarted(chunk)
        if let sent = chunk.sendsInit { source.initSectionSent(sent) }
        source.mediaSent()
        source.chunkLoaded(chunk.fetch)
    }

    static let twoInits = HLSMediaPlaylist(Data("""
        #EXTM3U
        #EXT-X-TARGETDURATION:2
        #EXT-X-MAP:URI="a.mp4"
        #EXTINF:2,
        s0.mp4
        #EXTINF:2,
        s1.mp4
        #EXT-X-DISCONTINUITY
        #EXTINF:2,
        s2.mp4
        #EXT-X-MAP:URI="b.mp4"
        #EXTINF:2,
        s3.mp4
        #EXT-X-ENDLIST

        """.utf8))!

    @Test func aSectionBeginsWithItsInitSectionAndOnlyChunksInsideOneMayBeAbandoned() throws {
        var source = ChunkSource(tracker: LivePlaylistTracker(), at: 0)
        _ = source.playlistLoaded(Self.twoInits, at: 0)
        let first = try #require(Self.next(&source))
        #expect(first.sendsInit?.uri == "a.mp4" && !first.startsSection && !first.abandonable)
        Self.send(first, into: &source)
        let second = try #require(Self.next(&source))
        #expect(second.sendsInit == nil && !second.startsSection && second.abandonable)
        Self.send(second, into: &source)
        // A discontinuity: a new section whose timeline restarts, with the init section again.
        let third = try #require(Self.next(&source))
        #expect(third.restartsTimeline && third.startsSection && third.sendsInit?.uri == "a.mp4" && !third.abandonable)
        Self.send(third, into: &source)
        // Another init section: a new section that begins with it.
        let fourth = try #require(Self.next(&source))
        #expect(fourth.startsSection && !fourth.restartsTimeline && fourth.sendsInit?.uri == "b.mp4" && !fourth.abandonable)
        Self.send(fourth, into: &source)
        let result = source.nextAction(at: 0)
        #expect(result == .end(.endList))
    }

    @Test func aSwitchStartsASectionWithTheNewVariantsInitSection() throws {
        var source = ChunkSource(tracker: LivePlaylistTracker(), at: 0)
        _ = source.playlistLoaded(LivePlaylistTrackerTests.playlist(first: 0, count: 4, final: true), at: 0)
        Self.send(try #require(Self.next(&source)), into: &source)
        var other = LivePlaylistTracker()
        try other.received(LivePlaylistTrackerTests.playlist(first: 0, count: 4, final: true), at: 0)
        let moved = other.move(to: 1)
        #expect(moved)
        source.switched(to: other)
        let chunk = try #require(Self.next(&source))
        #expect(chunk.startsSection && chunk.sendsInit?.uri == "init.mp4" && !chunk.abandonable && !chunk.restartsTimeline)
        // Asked again before it started (the driver's switch rule said no): the same seam.
        let again = try #require(Self.next(&source))
        #expect(again == chunk)
        Self.send(chunk, into: &source)
        let after = try #require(Self.next(&source))
        #expect(after.abandonable)
    }
}

/// The scheduler's own throughput samples.
@Suite struct ThroughputSamplesTests {
    @Test func smallTransfersSetTheLastButNotTheEstimateWhichIsTheHarmonicMeanOfTheLastThree() {
        var samples = ThroughputSamples()
        samples.transferred(bytes: 100_000, seconds: 0.0005)
        #expect(samples.last == nil, "under a millisecond says nothing")
        samples.transferred(bytes: 1_000, seconds: 0.1)
        #expect(samples.last == 80_000 && samples.recent.isEmpty && samples.estimate == nil)
        samples.transferred(bytes: 100_000, seconds: 1)
        #expect(samples.estimate == nil, "one sample is not an estimate")
        samples.transferred(bytes: 100_000, seconds: 0.25)
        // 800 kb/s and 3.2 Mb/s: the harmonic mean weighs the slow one most.
        #expect(samples.estimate == 1_280_000)
        samples.abandoned(at: 400_000)
        samples.transferred(bytes: 1 << 20, seconds: 1)
        #expect(samples.recent == [3_200_000, 400_000, 8_388_608])
        #expect(samples.last == 8_388_608)
    }
}
