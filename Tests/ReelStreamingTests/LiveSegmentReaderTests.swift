import Foundation
import ReelCore
import ReelLoading
import ReelOrigin
import ReelStreaming
import ReelTestSupport
import Synchronization
import Testing

/// The live segment reader against a real live origin (ReelOrigin's live route, blocking
/// reloads) through the HTTP loader. The origin's time moves with the requests, so what the
/// reader sees does not depend on how loaded the machine is.
@Suite struct LiveSegmentReaderTests {
    /// A directory with `init.mp4` and 24 segments whose bytes say which they are
    /// (segment `big`, if given, is 2 MB instead).
    static func files(big: Int? = nil, count: Int = 24) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("INIT;".utf8).write(to: directory.appendingPathComponent("init.mp4"))
        for index in 0..<count {
            let bytes = index == big ? Data(count: 2 << 20) : Data("SEG-\(index);".utf8)
            try bytes.write(to: directory.appendingPathComponent("s\(index).m4s"))
        }
        return directory
    }

    /// 24 segments of 0.25 s (a target duration of 1 s), one pass or looping.
    static func stream(stallsAfter: Double? = nil, loops: Bool = false) throws -> LiveHLSStream {
        try LiveHLSStream(segments: (0..<24).map { .init(uri: "/s\($0).m4s", duration: 0.25) }, initSection: "/init.mp4",
                          window: 4, stallsAfter: stallsAfter, loops: loops)
    }

    /// 2.5 s in at the first reload: segment 10 is the newest, 7…10 are listed (a window of
    /// 4), and three target durations back reaches past the first listed: the join is 7.
    static let time = LiveHLSTime.perRequest(start: 2.5, step: 0.25)

    @Test func followsTheLiveEdgeFetchingEachSegmentOnceToTheEnd() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(), time: Self.time)]))
        let port = try await server.start()
        let http = HTTPLoader()
        let events = Mutex<[LiveSegmentReader.Event]>([])
        var reader = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http) { event in
            events.withTrackedLock { $0.append(event) }
        }
        // The watchdogs wait the hang watchdog, not the stream's 4 s: on one starved core the
        // reader counted 13 reloads, as it would if a blocking reload were given up at 4 s of
        // wall time (no playlist event; the origin's time has moved on for it, so the next
        // reload sees two new segments). The deadlines have tests of their own.
        reader.watchdog = { _ in try await Task.sleep(for: hangWatchdog) }
        let media = reader.stream()
        let bytes = try await media.collect()
        await http.shutdown()
        await server.stop()
        let tokens = String(decoding: bytes, as: UTF8.self).split(separator: ";").map(String.init)
        #expect(tokens.first == "INIT", "the init section first, once")
        #expect(tokens.dropFirst().allSatisfy { $0.hasPrefix("SEG-") })
        let indices = tokens.dropFirst().compactMap { Int($0.dropFirst(4)) }
        let first = try #require(indices.first)
        #expect(first == 7, "it joined at the edge of the first playlist it saw")
        #expect(indices == Array(7..<24), "from the join to the end, in order, none twice, none skipped")
        let seen = events.withTrackedLock { $0 }
        let fetched = seen.compactMap { event -> Double? in if case .fetched(_, _, _, let behind) = event { behind } else { nil } }
        #expect(fetched.count == indices.count)
        let reloads = seen.filter { if case .playlist = $0 { true } else { false } }.count
        #expect(reloads >= 14, "it reloaded the playlist as it grew: one blocking reload per segment")
    }

    @Test func longTargetDurationsAreReloadedPlainlyNotHeldPastTheResponseTimeout() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        // 5.5 s segments: a target duration of 6 s, which a server may hold a blocking reload
        // for three times over (18 s, near the loader's 20 s response timeout).
        let stream = try LiveHLSStream(segments: (0..<24).map { .init(uri: "/s\($0).m4s", duration: 5.5) }, initSection: "/init.mp4",
                                       window: 4, loops: false)
        let server = OriginServer(configuration: .init(root: root, routes: [
            .liveHLS("/live.m3u8", stream: stream, time: .perRequest(start: 50, step: 5.5)),
        ]))
        let port = try await server.start()
        let http = HTTPLoader()
        let urls = Mutex<[URL]>([])
        var reader = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http) { event in
            if case .playlist(let url, _, _) = event { urls.withTrackedLock { $0.append(url) } }
        }
        reader.sleep = { _ in await Task.yield() }
        let bytes = try await reader.stream().collect()
        await http.shutdown()
        await server.stop()
        let tokens = String(decoding: bytes, as: UTF8.self).split(separator: ";").map(String.init)
        #expect(tokens.last == "SEG-23", "it followed the stream to its end")
        let loaded = urls.withTrackedLock { $0 }
        #expect(loaded.count > 2)
        #expect(loaded.allSatisfy { $0.query?.contains("_HLS_msn") != true }, "no blocking reload: \(loaded)")
    }

    @Test func deltaUpdatesFromTheOriginAreMergedAndEverySegmentIsFetchedOnce() async throws {
        let root = try Self.files(count: 60)
        defer { try? FileManager.default.removeItem(at: root) }
        // 60 segments of 0.5 s, a window of 24 (12 s), delta updates skipping what starts more
        // than 6 s (six target durations) before the end.
        var stream = try LiveHLSStream(segments: (0..<60).map { .init(uri: "/s\($0).m4s", duration: 0.5) }, initSection: "/init.mp4",
                                       window: 24, loops: false)
        stream.canSkipUntil = 6
        let delta = try HLSMediaPlaylist.parse(Data(stream.playlist(at: 20, skip: true).utf8))
        let full = try HLSMediaPlaylist.parse(Data(stream.playlist(at: 20).utf8))
        #expect(delta.skippedSegments == 12, "the older half of the window is left out")
        #expect(delta.mediaSequence == full.mediaSequence)
        #expect(delta.segments == Array(full.segments.suffix(12)), "the rest as the full playlist lists it")
        let server = OriginServer(configuration: .init(root: root, routes: [
            .liveHLS("/live.m3u8", stream: stream, time: .perRequest(start: 14, step: 0.5)),
        ]))
        let port = try await server.start()
        let http = HTTPLoader()
        let urls = Mutex<[URL]>([])
        let reader = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http) { event in
            if case .playlist(let url, _, _) = event { urls.withTrackedLock { $0.append(url) } }
        }
        let bytes = try await reader.stream().collect()
        await http.shutdown()
        await server.stop()
        let indices = String(decoding: bytes, as: UTF8.self).split(separator: ";").dropFirst().compactMap { Int($0.dropFirst(4)) }
        let first = try #require(indices.first)
        #expect(indices == Array(first..<60), "from the join to the end, in order, none twice, none skipped")
        let loaded = urls.withTrackedLock { $0 }
        #expect(loaded.first?.query == nil, "a full playlist first")
        #expect(loaded.dropFirst().contains { $0.query?.contains("_HLS_skip=YES") == true }, "then delta updates: \(loaded)")
    }

    @Test func aDiscontinuityStartsANewSectionWhoseTimelineRestarts() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(loops: true), time: Self.time)]))
        let port = try await server.start()
        let http = HTTPLoader()
        let sections = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http).sections()
        let first = try await #require(sections.take(0)).collect()
        #expect(sections.take(0) == nil, "a section is taken once")
        let tokens = String(decoding: first, as: UTF8.self).split(separator: ";").map(String.init)
        #expect(tokens == ["INIT"] + (7..<24).map { "SEG-\($0)" }, "the first pass, up to the loop's discontinuity")
        #expect(sections.restartsTimeline(after: 0) == true, "the next section was announced before this one ended")
        // The next section starts again with the init section, then the loop's first segment.
        let next = try #require(sections.take(1))
        let start = try await next.collect(limit: 10)
        #expect(String(decoding: start, as: UTF8.self).hasPrefix("INIT;SEG-0;"))
        next.cancel()
        await http.shutdown()
        await server.stop()
    }

    /// Two VOD variants of 6 segments whose bytes say which variant and segment they are
    /// (`hiPadding`: the top variant's padding, when it differs).
    static func ladder(padding: Int = 0, hiPadding: Int? = nil) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-ladder-\(UUID().uuidString)")
        for name in ["lo", "hi"] {
            let padding = name == "hi" ? hiPadding ?? padding : padding
            let variant = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: variant, withIntermediateDirectories: true)
            try Data("\(name)-INIT;".utf8).write(to: variant.appendingPathComponent("init.mp4"))
            var playlist = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=\"init.mp4\"\n"
            for index in 0..<6 {
                try (Data("\(name)-\(index);".utf8) + Data(repeating: 0x20, count: padding)).write(to: variant.appendingPathComponent("s\(index).m4s"))
                playlist += "#EXTINF:1.0,\ns\(index).m4s\n"
            }
            try Data((playlist + "#EXT-X-ENDLIST\n").utf8).write(to: variant.appendingPathComponent("index.m3u8"))
        }
        return directory
    }

    static func variants(_ port: Int) -> [LiveSegmentReader.Variant] {
        [.init(playlist: URL(string: "http://127.0.0.1:\(port)/hi/index.m3u8")!, bandwidth: 2_000_000),
         .init(playlist: URL(string: "http://127.0.0.1:\(port)/lo/index.m3u8")!, bandwidth: 200_000)]
    }

    static func sectionTokens(_ sections: StreamSections) async throws -> [[String]] {
        try await sections.collectAll().map { String(decoding: $0, as: UTF8.self).split(separator: ";").map(String.init) }
    }

    @Test func aPlanSwitchesVariantsAtSegmentsAndEachSectionStartsWithItsInitSection() async throws {
        let root = try Self.ladder()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root))
        let port = try await server.start()
        let http = HTTPLoader()
        let switches = Mutex<[LiveSegmentReader.Switch]>([])
        let reader = LiveSegmentReader(variants: Self.variants(port), startRank: 0, switching: .plan([2: 1, 4: 0]), loader: http) { event in
            if case .switched(let change) = event { switches.withTrackedLock { $0.append(change) } }
        }
        #expect(reader.variants.map(\.bandwidth) == [200_000, 2_000_000], "lowest first")
        let sections = reader.sections()
        let tokens = try await Self.sectionTokens(sections)
        await http.shutdown()
        await server.stop()
        #expect(tokens == [["lo-INIT", "lo-0", "lo-1"], ["hi-INIT", "hi-2", "hi-3"], ["lo-INIT", "lo-4", "lo-5"]])
        #expect(sections.restartsTimeline(after: 0) == false, "a switch follows on: the timeline does not restart")
        let seen = switches.withTrackedLock { $0 }
        #expect(seen.map(\.sequence) == [2, 4])
        #expect(seen.map(\.to) == [1, 0])
        #expect(seen.map(\.section) == [1, 2])
    }

    @Test func theAdaptiveRuleStepsUpOnceEnoughIsBufferedAndDownWhenTheEstimateFalls() async throws {
        let root = try Self.ladder()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root))
        let port = try await server.start()
        let http = HTTPLoader()
        func run(start: Int, estimate: Int64) async throws -> ([[String]], [LiveSegmentReader.Switch]) {
            let switches = Mutex<[LiveSegmentReader.Switch]>([])
            var reader = LiveSegmentReader(variants: Self.variants(port), startRank: start,
                                           switching: .adaptive(AdaptiveVariantRule(), estimate: FixedBandwidth(bitsPerSecond: estimate)),
                                           loader: http) { event in
                if case .switched(let change) = event { switches.withTrackedLock { $0.append(change) } }
            }
            // The player has shown nothing yet and stands at 0: all that is fetched is buffered.
            reader.playhead = { 0 }
            return (try await Self.sectionTokens(reader.sections()), switches.withTrackedLock { $0 })
        }
        // A fast link: up once 4 s (the rule's minimum) are buffered, and never down again.
        let (up, upSwitches) = try await run(start: 0, estimate: 10_000_000)
        #expect(up == [["lo-INIT", "lo-0", "lo-1", "lo-2", "lo-3"], ["hi-INIT", "hi-4", "hi-5"]])
        #expect(upSwitches.count == 1)
        #expect(upSwitches.first?.why.hasPrefix("up:") == true, "\(upSwitches)")
        #expect(upSwitches.first?.estimate == 10_000_000)
        // A slow link: down at the first decision.
        let (down, downSwitches) = try await run(start: 1, estimate: 250_000)
        #expect(down == [["hi-INIT", "hi-0"], ["lo-INIT", "lo-1", "lo-2", "lo-3", "lo-4", "lo-5"]])
        #expect(downSwitches.map { String($0.why.prefix(5)) } == ["down:"])
        await http.shutdown()
        await server.stop()
    }

    @Test func beforeTheMeterHasAnEstimateTheSegmentsOwnThroughputIsUsed() async throws {
        // 32 KiB segments: large enough to count as a measurement of the link.
        let root = try Self.ladder(padding: 32 << 10)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root))
        let port = try await server.start()
        let http = HTTPLoader()
        let switches = Mutex<[LiveSegmentReader.Switch]>([])
        var reader = LiveSegmentReader(variants: Self.variants(port), startRank: 0,
                                       switching: .adaptive(AdaptiveVariantRule(), estimate: FixedBandwidth(bitsPerSecond: nil)),
                                       loader: http) { event in
            if case .switched(let change) = event { switches.withTrackedLock { $0.append(change) } }
        }
        reader.playhead = { 0 }
        // A clock that moves 10 ms each time it is read: every transfer takes 10 ms whatever
        // the machine's load, a link far faster than the top variant needs.
        let ticks = Mutex(0.0)
        reader.now = { ticks.withTrackedLock { $0 += 0.01; return $0 } }
        _ = try await reader.sections().collectAll()
        await http.shutdown()
        await server.stop()
        let seen = switches.withTrackedLock { $0 }
        #expect(seen.count == 1, "\(seen)")
        #expect(seen.first?.sequence == 4, "up once 4 s are buffered")
        #expect(seen.first?.why.contains("estimated from the last segments' throughput") == true, "\(seen)")
        #expect((seen.first?.estimate ?? 0) > 2_000_000)
    }

    /// The top variant's third segment stalls after its first 8 KiB with 2 s buffered: at that
    /// rate it would arrive long after the buffer runs dry, the lower variant's in time, so the
    /// reader gives it up and fetches that segment from the lower variant; nothing of the
    /// abandoned transfer reaches the stream.
    @Test func aSegmentThatWouldArriveAfterTheBufferRunsDryIsAbandonedForALowerVariant() async throws {
        let root = try Self.ladder(padding: 2 << 10, hiPadding: 200 << 10)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root))
        let port = try await server.start()
        let http = HTTPLoader()
        // The reader's clock moves only while the stalled transfer waits (0.1 s each 5 ms): the
        // other transfers take no time at all, whatever the machine's load.
        let clock = Mutex(0.0)
        let loader = StallingLoader(upstream: http, stalls: "/hi/s2.m4s", after: 8 << 10) { clock.withTrackedLock { $0 += 0.1 } }
        let switches = Mutex<[LiveSegmentReader.Switch]>([])
        var reader = LiveSegmentReader(variants: Self.variants(port), startRank: 1,
                                       switching: .adaptive(AdaptiveVariantRule(), estimate: FixedBandwidth(bitsPerSecond: 10_000_000)),
                                       loader: loader) { event in
            if case .switched(let change) = event { switches.withTrackedLock { $0.append(change) } }
        }
        // Nothing shown: all that is fetched stays buffered. The watchdog looks every millisecond.
        reader.playhead = { 0 }
        reader.now = { clock.withTrackedLock { $0 } }
        reader.sleep = { _ in try await Task.sleep(for: .milliseconds(1)) }
        // The padding after each segment's name is not a token.
        let tokens = try await Self.sectionTokens(reader.sections()).map {
            $0.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        await http.shutdown()
        await server.stop()
        #expect(tokens.first == ["hi-INIT", "hi-0", "hi-1"], "\(tokens)")
        #expect(tokens.count > 1 && Array(tokens[1].prefix(2)) == ["lo-INIT", "lo-2"], "the same segment, from below: \(tokens)")
        #expect(!tokens.joined().contains("hi-2"), "nothing of the abandoned segment: \(tokens)")
        let first = try #require(switches.withTrackedLock { $0.first })
        #expect(first.sequence == 2 && first.to == 0, "\(first)")
        #expect(first.why.hasPrefix("down: abandoned s2.m4s"), "\(first.why)")
    }

    @Test func noSegmentIsFetchedWhileTheForwardBufferIsFull() async throws {
        let root = try Self.ladder()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root))
        let port = try await server.start()
        let http = HTTPLoader()
        let position = Mutex<Double?>(nil)
        let asked = Mutex(0)
        let fetched = Mutex(0)
        var reader = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/lo/index.m3u8")!, loader: http) { event in
            if case .fetched = event { fetched.withTrackedLock { $0 += 1 } }
        }
        reader.maximumBuffer = 3
        reader.playhead = {
            asked.withTrackedLock { $0 += 1 }
            return position.withTrackedLock { $0 }
        }
        reader.sleep = { _ in try await Task.sleep(for: .milliseconds(1)) }
        // Time stands still: the virtual playhead (before the first frame) does not move either.
        reader.now = { 0 }
        let sections = reader.sections()
        let media = try #require(sections.take(0))
        let all = Task { try await media.collect() }
        // Nothing shown yet: it fetches what the first frames need (3 s), then waits.
        while asked.withTrackedLock({ $0 }) < 50 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(fetched.withTrackedLock { $0 } == 3, "3 s buffered, none shown: it waits")
        // The player shows 2 s: room for 2 more.
        position.withTrackedLock { $0 = 2 }
        let before = asked.withTrackedLock { $0 }
        while asked.withTrackedLock({ $0 }) < before + 50 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(fetched.withTrackedLock { $0 } == 5)
        position.withTrackedLock { $0 = 5 }
        let bytes = try await all.value
        #expect(String(decoding: bytes, as: UTF8.self) == "lo-INIT;lo-0;lo-1;lo-2;lo-3;lo-4;lo-5;")
        await http.shutdown()
        await server.stop()
    }

    /// A player paused behind the edge for longer than the window holds: when it plays on, the
    /// reader reads the playlist again before fetching from what it listed then, finds the
    /// window moved past what was still to fetch, and goes on from the oldest segment listed in
    /// a new section whose timeline restarts (the engine follows on, as after a discontinuity)
    /// instead of ending the stream. The segments gone from the playlist (and the origin) are
    /// never asked for.
    @Test func aWindowThatSlidPastWhatWasStillToFetchGoesOnFromItsOldestSegment() async throws {
        let loader = FakeResourceLoader()
        let base = URL(string: "https://origin.example/live/")!
        func publish(_ range: Range<Int>) {
            var text = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:\(range.lowerBound)\n#EXT-X-MAP:URI=\"init.mp4\"\n"
            for index in range { text += "#EXTINF:1.0,\ns\(index).m4s\n" }
            loader.add(Data(text.utf8), at: base.appendingPathComponent("index.m3u8"))
        }
        loader.add(Data("INIT;".utf8), at: base.appendingPathComponent("init.mp4"))
        for index in 0..<16 { loader.add(Data("SEG-\(index);".utf8), at: base.appendingPathComponent("s\(index).m4s")) }
        publish(0..<6)
        let clock = Mutex(0.0)
        let played = Mutex<Double?>(nil)
        // The playlist stops growing once the test has what it wants: stale only much later.
        let skips = Mutex<[LiveSegmentReader.Event]>([])
        var reader = LiveSegmentReader(playlist: base.appendingPathComponent("index.m3u8"), loader: loader,
                                       tracker: LivePlaylistTracker(staleAfter: 1_000_000)) { event in
            if case .skippedAhead = event { skips.withTrackedLock { $0.append(event) } }
        }
        reader.maximumBuffer = 1.5
        reader.playhead = { played.withTrackedLock { $0 } }
        reader.now = { clock.withTrackedLock { $0 } }
        // Waiting moves the clock; nothing else does.
        reader.sleep = { seconds in
            clock.withTrackedLock { $0 += seconds }
            try await Task.sleep(for: .milliseconds(1))
        }
        let sections = reader.sections()
        let first = try #require(sections.take(0))
        // Joined three segments back (at 3); 3 and 4 fill the buffer and the player pauses at 0.
        played.withTrackedLock { $0 = 0 }
        // Read through one iterator kept to the end: dropping it would cancel the stream.
        var chunks = first.makeAsyncIterator()
        var head = Data()
        while head.count < "INIT;SEG-3;SEG-4;".utf8.count, let chunk = try await chunks.next() { head += chunk }
        #expect(String(decoding: head, as: UTF8.self) == "INIT;SEG-3;SEG-4;")
        // Paused long enough for the window to move on by ten segments; then it plays on.
        publish(10..<16)
        for index in 0..<10 { loader.remove(base.appendingPathComponent("s\(index).m4s")) }
        while clock.withTrackedLock({ $0 }) < 5 { try await Task.sleep(for: .milliseconds(1)) }
        played.withTrackedLock { $0 = 100 }
        // The first section ends at the jump (it would fail, were the stream to end there),
        // the next one announced before it.
        #expect(try await chunks.next() == nil, "the first section ended at the jump")
        let next = try #require(sections.take(1))
        #expect(sections.restartsTimeline(after: 0) == true, "the timeline starts again after the jump")
        var rest = next.makeAsyncIterator()
        var after = Data()
        while after.count < "INIT;SEG-10;SEG-11;".utf8.count, let chunk = try await rest.next() { after += chunk }
        next.cancel()
        #expect(String(decoding: after, as: UTF8.self) == "INIT;SEG-10;SEG-11;")
        #expect(skips.withTrackedLock { $0 } == [.skippedAhead(from: 5, to: 10)], "the jump is told")
        let gone = loader.requests.map(\.url.lastPathComponent).filter { ["s5.m4s", "s6.m4s", "s9.m4s"].contains($0) }
        #expect(gone.isEmpty, "\(gone)")
    }

    @Test(arguments: ["file:///etc/passwd", "data:text/plain,x", "ftp://127.0.0.1/s.m4s"])
    func aPlaylistNamingAnythingButHTTPIsRefused(_ uri: String) async throws {
        let root = try Self.ladder()
        defer { try? FileManager.default.removeItem(at: root) }
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nlo/s0.m4s\n#EXTINF:1.0,\n\(uri)\n#EXT-X-ENDLIST\n"
        try Data(playlist.utf8).write(to: root.appendingPathComponent("evil.m3u8"))
        let server = OriginServer(configuration: .init(root: root))
        let port = try await server.start()
        let http = HTTPLoader()
        let media = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/evil.m3u8")!, loader: http).stream()
        await #expect(throws: LiveSegmentReader.Failure.refusedURL(uri)) { _ = try await media.collect() }
        await http.shutdown()
        await server.stop()
    }

    @Test func aVirtualPlayheadPlaysAtOneTimesAndWaitsWhenItRunsDry() {
        var playhead = VirtualPlayhead()
        #expect(playhead.buffered(at: 5) == 0)
        playhead.deliver(2, at: 10)
        #expect(playhead.buffered(at: 10) == 2)
        #expect(playhead.buffered(at: 11) == 1)
        playhead.deliver(2, at: 11)
        #expect(playhead.buffered(at: 11) == 3)
        // It ran dry at 14 and waited until the next delivery at 16.
        #expect(playhead.position(at: 16) == 4)
        playhead.deliver(1, at: 16)
        #expect(playhead.stalled == 2)
        #expect(playhead.buffered(at: 16) == 1)
        #expect(playhead.position(at: 16.5) == 4.5)
    }

    @Test func aPlaylistOrASegmentLargerThanItsLimitEndsTheStream() async throws {
        // The first segment fetched is 2 MB where the limit is 1 MB (a segment that never ends, cut short).
        let root = try Self.files(big: 7)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(), time: Self.time)]))
        let port = try await server.start()
        let http = HTTPLoader()
        let url = URL(string: "http://127.0.0.1:\(port)/live.m3u8")!
        var reader = LiveSegmentReader(playlist: url, loader: http)
        reader.maximumSegmentBytes = 1 << 20
        await #expect(throws: LiveSegmentReader.Failure.tooLarge(what: "the segment", url: URL(string: "http://127.0.0.1:\(port)/s7.m4s")!, limit: 1 << 20)) {
            _ = try await reader.stream().collect()
        }
        // A playlist past its limit (a live playlist that grew without bound).
        var small = LiveSegmentReader(playlist: url, loader: http)
        small.maximumPlaylistBytes = 100
        await #expect(throws: LiveSegmentReader.Failure.tooLarge(what: "the playlist", url: url, limit: 100)) {
            _ = try await small.stream().collect()
        }
        await http.shutdown()
        await server.stop()
    }

    /// A live audio rendition that stops listing what the video lists (its packager fell
    /// behind) ends the stream with a sentence naming the segment, after reading its playlist
    /// again every half target duration for three target durations; nothing of the video is
    /// sent without the audio that goes before it.
    @Test func aLiveAudioRenditionThatNeverListsTheVideosSegmentEndsTheStreamClearly() async throws {
        let base = URL(string: "https://origin.example/live/")!
        let loader = FakeResourceLoader()
        func playlist(_ count: Int) -> Data {
            Data(("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-MAP:URI=\"init.mp4\"\n"
                + (0..<count).map { "#EXTINF:1.0,\nseg-\($0).m4s\n" }.joined()).utf8)
        }
        for directory in ["video", "audio"] {
            loader.add(playlist(directory == "video" ? 6 : 3), at: base.appendingPathComponent("\(directory)/index.m3u8"))
            loader.add(Data("INIT;".utf8), at: base.appendingPathComponent("\(directory)/init.mp4"))
            for index in 0..<6 { loader.add(Data("SEG-\(index);".utf8), at: base.appendingPathComponent("\(directory)/seg-\(index).m4s")) }
        }
        let audioURL = base.appendingPathComponent("audio/index.m3u8")
        let audioReads = Mutex(0)
        var reader = LiveSegmentReader(playlist: base.appendingPathComponent("video/index.m3u8"), loader: loader,
                                       tracker: LivePlaylistTracker(staleAfter: 1_000_000)) { event in
            if case .playlist(let url, _, _) = event, url == audioURL { audioReads.withTrackedLock { $0 += 1 } }
        }
        reader.audio = audioURL
        let clock = Mutex(0.0)
        reader.now = { clock.withTrackedLock { $0 } }
        reader.sleep = { seconds in
            clock.withTrackedLock { $0 += seconds }
            await Task.yield()
        }
        var sent = Data()
        do {
            for try await chunk in reader.stream() { sent.append(chunk) }
            Issue.record("the stream ended without a failure")
        } catch let failure as LiveSegmentReader.Failure {
            #expect(failure == .unsupportedAudio("its playlist has not listed segment 3 for 3 s"))
            #expect(failure.description.hasPrefix("the audio rendition cannot be played beside the video"))
        }
        #expect(sent.isEmpty, "\(String(decoding: sent, as: UTF8.self))")
        #expect(audioReads.withTrackedLock { $0 } >= 5, "read again every half target duration")
    }

    @Test func aStalledPlaylistEndsTheStreamWithAStaleError() async throws {
        let root = try Self.files()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = OriginServer(configuration: .init(root: root, routes: [.liveHLS("/live.m3u8", stream: try Self.stream(stallsAfter: 0.7), time: Self.time)]))
        let port = try await server.start()
        let http = HTTPLoader()
        let reader = LiveSegmentReader(playlist: URL(string: "http://127.0.0.1:\(port)/live.m3u8")!, loader: http)
        let media = reader.stream()
        var failure: (any Error)?
        do {
            for try await _ in media {}
        } catch {
            failure = error
        }
        await http.shutdown()
        await server.stop()
        guard case .stale(let seconds)? = failure as? LivePlaylistTracker.Failure else {
            Issue.record("expected a stale playlist, got \(String(describing: failure))")
            return
        }
        #expect(seconds >= 3, "three target durations (1 s each) without a change")
    }
}

/// A loader that passes everything through but one path, whose response stops after its
/// first `after` bytes for 5 s, or until the read is cancelled, calling `waiting` every 5 ms.
private struct StallingLoader: ResourceLoader {
    let upstream: any ResourceLoader
    let stalls: String
    let after: Int
    let waiting: @Sendable () -> Void

    func read(_ url: URL, range: ByteRange) -> ByteStream {
        guard url.path == stalls else { return upstream.read(url, range: range) }
        let (stream, continuation) = ByteStream.makeStream()
        let task = Task {
            do {
                let source = upstream.read(url, range: range)
                let information = try await source.contentInformation()
                let data = try await source.collect()
                continuation.respond(with: information)
                continuation.yield(data.prefix(after))
                // Stalled for 5 s of real time (a reader that never gives up then gets the rest).
                for _ in 0..<1000 where !continuation.isCancelled {
                    try await Task.sleep(for: .milliseconds(5))
                    waiting()
                }
                continuation.yield(data.dropFirst(after))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onCancel { task.cancel() }
        return stream
    }

    func contentInformation(for url: URL) async throws -> ContentInformation {
        try await upstream.contentInformation(for: url)
    }
}
