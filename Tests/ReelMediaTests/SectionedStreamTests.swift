import Foundation
import ReelCore
import ReelMedia
import ReelStreaming
import ReelLoading
import ReelTestSupport
import Synchronization
import Testing

/// A stream in sections (Reel's segment scheduler, `LiveMediaLoader`) through the engine, on the
/// manual clock with the fake loader: switches of variant reopen the demuxer and decoders at
/// the seam, and a seek starts the scheduler again from the segment holding the target.
@Suite struct SectionedStreamTests {
    /// Two sizes, 4 s, 1 s segments with a keyframe each and B-frames.
    static let specs = [
        ClipSpec(width: 160, height: 120, frameRate: 30, duration: 4, keyframeInterval: 30, bFrames: 3),
        ClipSpec(width: 320, height: 240, frameRate: 30, duration: 4, keyframeInterval: 30, bFrames: 3),
    ]
    static let base = URL(string: "https://origin.example/ladder/")!

    struct Setup {
        var ladder: StreamLadder
        var clock = ManualClock()
        var loader: FakeResourceLoader
        var live: LiveMediaLoader
        var video = RecordingVideoSink()
        var player: Player
        var driver: ManualClockDriver
        /// Each variant's frames as FFmpeg decodes it, lowest first, and their times (the same in each).
        var references: [[String]]
        var times: [MediaTime]
    }

    static func setUp(plan: [Int: Int], seconds: Double = 4) async throws -> Setup {
        let specs = Self.specs.map { spec -> ClipSpec in
            var spec = spec
            spec.duration = seconds
            return spec
        }
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), specs: specs, segmentSeconds: 1) }
        let clock = ManualClock()
        let loader = FakeResourceLoader(clock: clock)
        ladder.serve(on: loader, at: base)
        var references: [[String]] = []
        var times: [MediaTime] = []
        for rendition in ladder.renditions {
            let playlist = try HLSMediaPlaylist.parse(ladder.files[rendition.playlist]!)
            var whole = ladder.files[rendition.directory + "/" + playlist.initSection!.uri]!
            for segment in playlist.segments { whole += ladder.files[rendition.directory + "/" + segment.uri]! }
            let file = ladder.directory.appendingPathComponent("whole-\(rendition.directory).mp4")
            try whole.write(to: file)
            let frames = try await offThePool { try referenceFrames(file) }
            references.append(frames.map(\.md5))
            times = frames.map(\.pts)
        }
        let live = LiveMediaLoader(upstream: loader)
        let variants = ladder.renditions.map {
            LiveSegmentReader.Variant(playlist: base.appendingPathComponent($0.playlist), bandwidth: $0.bandwidth)
        }
        let url = live.register(variants: variants, startRank: 0, switching: .plan(plan))
        let video = RecordingVideoSink()
        let player = Player(clock: clock, videoSink: video, audioSink: RecordingAudioSink())
        let driver = ManualClockDriver(clock: clock, players: [player])
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: live))
        return Setup(ladder: ladder, clock: clock, loader: loader, live: live, video: video, player: player, driver: driver,
                     references: references, times: times)
    }

    /// An exact seek to `target` seconds, the clock driven until it finishes: whether it did
    /// (`nil`: not within 10 s of clock time).
    static func seekExactly(_ setup: Setup, to target: Double) async -> Bool? {
        let result = ResultBox<Bool>()
        setup.player.seek(to: seconds(target), toleranceBefore: .zero, toleranceAfter: .zero) { result.set($0) }
        await setup.driver.run(upTo: seconds(10)) { result.value != nil }
        return result.value
    }

    /// The variant each shown frame is (by its bytes, at its place), or -1.
    static func variants(_ frames: [RecordingVideoSink.Record], from first: Int, _ references: [[String]]) -> [Int] {
        frames.enumerated().map { offset, frame in
            references.indices.first { first + offset < references[$0].count && references[$0][first + offset] == frame.md5 } ?? -1
        }
    }

    @Test func switchesShowEveryFrameOnceFromItsVariantAndTheDurationIsThePlaylists() async throws {
        let setup = try await Self.setUp(plan: [1: 1, 3: 0])
        defer { setup.ladder.remove() }
        #expect(await setup.driver.run(upTo: seconds(2)) { setup.player.status == .readyToPlay })
        #expect(abs(setup.player.duration.seconds - 4) < 0.1, "the duration is the playlist's: \(setup.player.duration.seconds)")
        setup.player.play()
        #expect(await setup.driver.run(upTo: seconds(10)) { setup.video.frames.count >= 120 })
        let shown = setup.video.frames
        #expect(shown.count == 120)
        let expected = Array(repeating: 0, count: 30) + Array(repeating: 1, count: 60) + Array(repeating: 0, count: 30)
        #expect(Self.variants(shown, from: 0, setup.references) == expected)
        #expect(shown.map(\.width) == expected.map { $0 == 0 ? 160 : 320 }, "each frame at its own size")
        setup.player.replaceCurrentItem(with: nil)
    }

    /// The engine itself hands a master to the scheduling loader: the item is the master's own
    /// URL, and what plays is the scheduler's stream of its variants (here on a plan), every
    /// frame once from its variant, with the playlist's duration; the master is read once.
    @Test func theEngineOffersAMasterToTheSchedulerAndPlaysItsVariants() async throws {
        let setup = try await Self.setUp(plan: [:])
        defer { setup.ladder.remove() }
        let variants = VariantSelectingLoader(upstream: setup.loader, bandwidth: nil)
        let scheduling = HLSSchedulingLoader(upstream: variants, variants: variants, configuration: .init(plan: [1: 1, 3: 0]))
        let master = Self.base.appendingPathComponent("master.m3u8")
        setup.player.replaceCurrentItem(with: nil)
        setup.video.reset()
        let before = setup.loader.requests.count
        setup.player.replaceCurrentItem(with: PlayerItem(url: master, loader: scheduling))
        #expect(await setup.driver.run(upTo: seconds(2)) { setup.player.status == .readyToPlay })
        #expect(abs(setup.player.duration.seconds - 4) < 0.1, "the duration is the playlist's: \(setup.player.duration.seconds)")
        #expect(!setup.player.isLive)
        #expect(scheduling.isSectioned(master))
        setup.player.play()
        #expect(await setup.driver.run(upTo: seconds(10)) { setup.video.frames.count >= 120 })
        let shown = setup.video.frames
        #expect(shown.count == 120)
        let expected = Array(repeating: 0, count: 30) + Array(repeating: 1, count: 60) + Array(repeating: 0, count: 30)
        #expect(Self.variants(shown, from: 0, setup.references) == expected)
        let requests = setup.loader.requests.dropFirst(before).map(\.url.lastPathComponent)
        #expect(requests.filter { $0 == "master.m3u8" }.count == 1, "\(requests)")
        setup.player.replaceCurrentItem(with: nil)
    }

    /// The default path of `reel play` and the feed, on a manual clock: the choice knows
    /// nothing and starts on the lowest variant; the scheduler's rule, with an estimate that
    /// carries the top one, steps up once 4 s are buffered (nothing is shown before the clock
    /// moves, so what is fetched stays buffered), and every frame is still its variant's.
    @Test func byDefaultTheSchedulerStepsUpOnceEnoughIsBuffered() async throws {
        let setup = try await Self.setUp(plan: [:], seconds: 6)
        defer { setup.ladder.remove() }
        let variants = VariantSelectingLoader(upstream: setup.loader, bandwidth: nil)
        let events = Mutex<[LiveSegmentReader.Switch]>([])
        var configuration = HLSSchedulingLoader.Configuration(
            estimate: FixedBandwidth(bitsPerSecond: 100_000_000),
            observer: { event in if case .switched(let change) = event { events.withTrackedLock { $0.append(change) } } })
        // No panic step: the reader times its transfers in real time while the player plays on
        // the manual clock, so on a starved machine a segment can seem slow just as the buffer
        // looks low, and the rule would step straight back down (AdaptiveVariantRuleTests
        // covers the panic step).
        configuration.rule.panicBuffer = 0
        let scheduling = HLSSchedulingLoader(upstream: variants, variants: variants, configuration: configuration)
        setup.player.replaceCurrentItem(with: nil)
        setup.video.reset()
        setup.player.replaceCurrentItem(with: PlayerItem(url: Self.base.appendingPathComponent("master.m3u8"), loader: scheduling))
        #expect(await setup.driver.run(upTo: seconds(2)) { setup.player.status == .readyToPlay })
        setup.player.play()
        #expect(await setup.driver.run(upTo: seconds(12)) { setup.video.frames.count >= 180 })
        let shown = setup.video.frames
        #expect(shown.count == 180)
        let switches = events.withTrackedLock { $0 }
        // Before the first frame the reader's own playhead runs in real time from the first
        // delivery: a hair under 4 s may be buffered at segment 4, then 5 s at segment 5.
        let change = try #require(switches.first, "it steps up")
        #expect(switches.count == 1 && change.to == 1 && [4, 5].contains(change.sequence), "\(switches)")
        #expect(change.why.hasPrefix("up:"), "\(change.why)")
        let at = Int(change.sequence) * 30
        #expect(Self.variants(shown, from: 0, setup.references) == Array(repeating: 0, count: at) + Array(repeating: 1, count: 180 - at))
        setup.player.replaceCurrentItem(with: nil)
    }

    /// The lowest variant's media playlist without its end, registered in `setup.live`: a live
    /// one (joined three target durations back). It never changes: its tracker calls it stale
    /// only after a very long time, so the real-time reloads of a starved process cannot fail
    /// it before the manual clock moves.
    static func liveStream(_ setup: Setup) -> URL {
        let rendition = setup.ladder.renditions[0]
        let text = String(decoding: setup.ladder.files[rendition.playlist]!, as: UTF8.self)
            .replacingOccurrences(of: "#EXT-X-ENDLIST", with: "").replacingOccurrences(of: "#EXT-X-PLAYLIST-TYPE:VOD", with: "")
        let livePlaylist = base.appendingPathComponent(rendition.directory + "/live.m3u8")
        setup.loader.add(Data(text.utf8), at: livePlaylist)
        return setup.live.register(LiveSegmentReader(playlist: livePlaylist, loader: setup.loader,
                                                     tracker: LivePlaylistTracker(staleAfter: 1_000_000)))
    }

    @Test func aStreamWithAnEndIsNotLiveAndOneWithoutIsLiveWithNoDuration() async throws {
        let vod = try await Self.setUp(plan: [:])
        defer { vod.ladder.remove() }
        #expect(await vod.driver.run(upTo: seconds(2)) { vod.player.status == .readyToPlay })
        #expect(!vod.player.isLive)
        vod.player.replaceCurrentItem(with: nil)
        vod.player.replaceCurrentItem(with: PlayerItem(url: Self.liveStream(vod), loader: vod.live))
        #expect(await vod.driver.run(upTo: seconds(2)) { vod.player.status == .readyToPlay })
        #expect(vod.player.isLive)
        #expect(!vod.player.duration.isNumeric, "a live stream has no duration")
        vod.player.replaceCurrentItem(with: nil)
    }

    /// A live stream seeks within its window: its first frame shown places the window on the
    /// stream's clock (joined three target durations back, at 3 s of a 6 s window); an exact
    /// seek back starts the scheduler again from the segment holding the target, which plays
    /// on from there, every frame FFmpeg's decode at its place; a seek past the join point is
    /// held to it.
    @Test(arguments: [0.4, 1.5, 2.5])
    func aLiveStreamSeeksWithinItsWindow(_ target: Double) async throws {
        let setup = try await Self.setUp(plan: [:], seconds: 6)
        defer { setup.ladder.remove() }
        setup.player.replaceCurrentItem(with: nil)
        setup.video.reset()
        setup.player.replaceCurrentItem(with: PlayerItem(url: Self.liveStream(setup), loader: setup.live))
        #expect(await setup.driver.run(upTo: seconds(2)) { setup.player.status == .readyToPlay })
        #expect(setup.player.isLive)
        setup.player.play()
        // Joined at segment 3: its frames, then nothing more until the playlist grows (the
        // last few stay in the decoder, which a live stream never drains).
        _ = await setup.driver.run(upTo: seconds(10)) { setup.video.frames.count >= 90 }
        let joined = setup.video.frames
        let held = 90 - joined.count
        #expect((0...6).contains(held), "\(joined.count) frames of the last three segments")
        #expect(Self.variants(joined, from: 90, setup.references).allSatisfy { $0 == 0 }, "joined at 3 s")
        // On the stream's clock, as its frames are: from the first segment's first frame to the
        // join point (segment 3's).
        let window = try #require(setup.player.seekableRange)
        #expect(abs(window.start.seconds - setup.times[0].seconds) < 0.001 && abs(window.end.seconds - setup.times[90].seconds) < 0.001,
                "the window from the first segment to the join point: \(window)")
        setup.player.pause()
        let requestsBefore = setup.loader.requests.count
        setup.video.reset()
        #expect(await Self.seekExactly(setup, to: target) == true)
        setup.player.play()
        let first = try #require(setup.times.lastIndex { $0 <= seconds(target) })
        let remaining = 180 - first - held
        _ = await setup.driver.run(upTo: seconds(20)) { setup.video.frames.count >= remaining }
        let shown = setup.video.frames
        #expect(shown.count == remaining, "\(shown.count) frames after a seek to \(target)")
        #expect(Self.variants(shown, from: first, setup.references).allSatisfy { $0 == 0 },
                "every frame from the target on is FFmpeg's decode at its place")
        #expect(shown.first.map { abs($0.pts.seconds - setup.times[first].seconds) < 0.001 } == true)
        // The segments from the target's on, fetched again; nothing else but the playlist.
        let again = setup.loader.requests.dropFirst(requestsBefore).map(\.url.lastPathComponent)
        #expect(again.filter { $0.hasSuffix(".m4s") }.count == 6 - Int(target), "\(again)")
        // A seek past the join point is held there.
        #expect(await Self.seekExactly(setup, to: 60) == true)
        #expect(abs(setup.player.currentTime.seconds - setup.times[90].seconds) < 0.001, "\(setup.player.currentTime.seconds)")
        setup.player.replaceCurrentItem(with: nil)
    }

    /// A stream with an end whose second half is the first again after a discontinuity (its
    /// timestamps start again at zero, as stitched clips' and ads' do): an exact seek into the
    /// second half lands on the target on the item's timeline and plays on to the end, every
    /// frame the clip's own in order; before, the restarted section kept its own timestamps,
    /// the engine dropped every frame as before the target, and the item ended.
    @Test(arguments: [5.5, 7.2])
    func aSeekPastADiscontinuityIsPlacedOnTheItemsTimeline(_ target: Double) async throws {
        let setup = try await Self.setUp(plan: [:])
        defer { setup.ladder.remove() }
        setup.player.replaceCurrentItem(with: nil)
        setup.video.reset()
        let rendition = setup.ladder.renditions[0]
        let lines = String(decoding: setup.ladder.files[rendition.playlist]!, as: UTF8.self).split(separator: "\n").map(String.init)
        let segments = lines.filter { $0.hasPrefix("#EXTINF") || $0.hasSuffix(".m4s") }
        let head = lines.filter { !segments.contains($0) && $0 != "#EXT-X-ENDLIST" }
        let text = (head + segments + ["#EXT-X-DISCONTINUITY"] + segments + ["#EXT-X-ENDLIST"]).joined(separator: "\n") + "\n"
        let playlist = Self.base.appendingPathComponent(rendition.directory + "/twice.m3u8")
        setup.loader.add(Data(text.utf8), at: playlist)
        setup.player.replaceCurrentItem(with: PlayerItem(url: setup.live.register(playlist: playlist), loader: setup.live))
        #expect(await setup.driver.run(upTo: seconds(2)) { setup.player.status == .readyToPlay })
        #expect(abs(setup.player.duration.seconds - 8) < 0.1)
        #expect(await Self.seekExactly(setup, to: target) == true)
        setup.video.reset()
        setup.player.play()
        _ = await setup.driver.run(upTo: seconds(20)) { setup.player.timeControlStatus == .paused && setup.video.frames.count > 0 }
        let shown = setup.video.frames
        let first = try #require(shown.first)
        #expect(abs(first.pts.seconds - target) < 0.07, "the frame at the target on the item's timeline: \(first.pts.seconds)")
        // The clip's own frames, from about the target's place in the second pass to its end.
        let clip = setup.references[0]
        let start = try #require(clip.firstIndex(of: first.md5), "the first frame is the clip's")
        #expect(abs(start - Int((target - 4) * 30)) <= 2, "\(start)")
        #expect(shown.map(\.md5) == Array(clip[start...]), "every frame after it once, in order, to the end")
        #expect(zip(shown, shown.dropFirst()).allSatisfy { $0.pts < $1.pts })
        setup.player.replaceCurrentItem(with: nil)
    }

    @Test(arguments: [0.4, 2.5, 3.9])
    func anExactSeekStartsTheSchedulerAgainAndLandsOnTheTarget(_ target: Double) async throws {
        let setup = try await Self.setUp(plan: [1: 1])
        defer { setup.ladder.remove() }
        setup.player.play()
        #expect(await setup.driver.run(upTo: seconds(10)) { setup.video.frames.count >= 40 })
        setup.player.pause()
        let requestsBefore = setup.loader.requests.count
        setup.video.reset()
        #expect(await Self.seekExactly(setup, to: target) == true)
        setup.player.play()
        // The frame whose interval holds the target, then every frame to the end, in order.
        let first = try #require(setup.times.lastIndex { $0 <= seconds(target) })
        let remaining = 120 - first
        _ = await setup.driver.run(upTo: seconds(20)) { setup.video.frames.count >= remaining }
        let shown = setup.video.frames
        #expect(shown.count == remaining, "\(shown.count) frames after a seek to \(target)")
        #expect(Self.variants(shown, from: first, setup.references).allSatisfy { $0 >= 0 },
                "every frame from the target on is FFmpeg's decode of one variant at its place")
        // Only the segments from the target's on were fetched again.
        let again = setup.loader.requests.dropFirst(requestsBefore).map(\.url.lastPathComponent).filter { $0.hasSuffix(".m4s") }
        #expect(again.count == 4 - Int(target), "\(again)")
        setup.player.replaceCurrentItem(with: nil)
    }
}
