import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelTestSupport
import Testing

/// `reel play` of HLS from the real origin and from files, and the closed door as users meet it.
@Suite("reel play: HLS and the closed door")
struct StreamingCommandTests {
    static let clip = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 3, keyframeInterval: 15)

    func package(_ format: StreamPackager.Format, into scratch: Scratch) throws -> URL {
        try StreamPackager.package(try Fixtures.clip(Self.clip), loader: FileLoader(), format: format,
                                   into: scratch.url, segmentSeconds: 1)
    }

    @Test(arguments: [StreamPackager.Format.hlsFMP4, .hlsTS])
    func playsHLSFromTheOriginBitExact(_ format: StreamPackager.Format) async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-hls")
        defer { scratch.remove() }
        let manifest = try package(format, into: scratch)
        let server = OriginServer(configuration: .init(root: scratch.url))
        _ = try await server.start()
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hls-trace-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let url = server.url(for: manifest.lastPathComponent)
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hls-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: scratch.path).map { "/" + $0 })
        let result = try await runSeparately(reel, ["play", url.absoluteString, "--headless", "--clock", "fast", "--trace", trace,
                                                    "--cache-dir", cache])
        let statistics = server.statistics
        #expect(result.status == 0, "\(result.stderr)")
        let shown = frames(try traceObjects(trace)).compactMap { $0["md5"] as? String }
        #expect(shown == (try referenceMD5s(try Fixtures.clip(Self.clip))))
        // The origin saw the playlist, the segments (and the init segment), every one a file of the stream.
        let paths = Set(statistics.requests.map(\.path))
        #expect(paths.count >= 3, "\(paths)")
        #expect(paths.isSubset(of: files), "\(paths) ⊄ \(files)")
        #expect(statistics.requests.allSatisfy { $0.status == 200 || $0.status == 206 })

        // A warm replay comes from the range cache: no body bytes from the origin.
        server.resetStatistics()
        let again = try await runSeparately(reel, ["play", url.absoluteString, "--headless", "--clock", "fast", "--cache-dir", cache])
        let warm = server.statistics
        await server.stop()
        #expect(again.status == 0, "\(again.stderr)")
        #expect(warm.bytesServed == 0, "\(warm.requests.map { "\($0.method) \($0.path) \($0.status)" })")
        // Each playlist and segment is a cache resource.
        let stats = try await runSeparately(reel, ["cache", "stats", "--cache-dir", cache])
        #expect(stats.stdout.contains("resources  \(paths.count) (\(paths.count) complete)"), "\(stats.stdout)")
    }

    @Test func playsALocalPlaylistFromAnotherWorkingDirectory() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-hls-local")
        defer { scratch.remove() }
        let manifest = try package(.hlsTS, into: scratch)
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", manifest.path, "--headless", "--clock", "fast", "--trace", trace])
        #expect(result.status == 0, "\(result.stderr)")
        let shown = frames(try traceObjects(trace)).compactMap { $0["md5"] as? String }
        #expect(shown == (try referenceMD5s(try Fixtures.clip(Self.clip))))
    }

    @Test func aServedPlaylistNamingALocalFileExitsThreeNamingIt() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-hls-hostile")
        defer { scratch.remove() }
        _ = try package(.hlsTS, into: scratch)
        let local = try Fixtures.clip(Self.clip)
        let hostile = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:1.0,\nseg-0.ts\n#EXTINF:1.0,\n\(local.absoluteString)\n#EXT-X-ENDLIST\n"
        try Data(hostile.utf8).write(to: scratch.url.appendingPathComponent("hostile.m3u8"))
        let server = OriginServer(configuration: .init(root: scratch.url))
        _ = try await server.start()
        let url = server.url(for: "hostile.m3u8")
        let result = try await runSeparately(reel, ["play", url.absoluteString, "--headless", "--clock", "fast", "--no-cache"])
        await server.stop()
        #expect(result.status == 3, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains(local.absoluteString) && result.stderr.contains("refused"), "\(result.stderr)")
    }

    /// A served playlist whose segment is not media fails in one line that names the playlist
    /// the user gave, not the segment reader's own `reel-live://` URL.
    @Test func aPlaylistOfJunkExitsThreeNamingThePlaylist() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-hls-junk")
        defer { scratch.remove() }
        try Data(repeating: 0x5A, count: 4096).write(to: scratch.url.appendingPathComponent("junk.ts"))
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\njunk.ts\n#EXT-X-ENDLIST\n".utf8)
            .write(to: scratch.url.appendingPathComponent("junk.m3u8"))
        let server = OriginServer(configuration: .init(root: scratch.url))
        _ = try await server.start()
        let url = server.url(for: "junk.m3u8")
        let result = try await runSeparately(reel, ["play", url.absoluteString, "--headless", "--clock", "fast", "--no-cache"])
        await server.stop()
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains(url.absoluteString) && !result.stderr.contains("reel-live"), "\(result.stderr)")
    }

    /// A master playlist with three renditions from the real origin, its variant held
    /// (`--no-adaptive`; `AdaptiveCommandTests` switches): a fresh process knows
    /// nothing of the network and starts on the lowest; with an initial estimate that carries
    /// the top one it starts there. Either way the origin sees the master and only the chosen
    /// variant's playlist, init segment and segments, and the trace says which and why.
    /// The master's own transfer is measured too: when it took longer than the meter's 2 s
    /// (a starved core), the measurement replaced the estimate, and the choice must be the
    /// rule's for what was measured.
    @Test(arguments: [(nil, 0), (50_000_000, 2)] as [(Int64?, Int)])
    func aMasterStartsOnOneVariantAndTheOriginSeesOnlyIt(_ initialBandwidth: Int64?, _ expected: Int) async throws {
        let reel = try await ReelBinary.locate()
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader()) }
        defer { ladder.remove() }
        let server = OriginServer(configuration: .init(root: ladder.directory))
        _ = try await server.start()
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("reel-variant-trace-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: trace) }
        var arguments = ["play", server.url(for: "master.m3u8").absoluteString, "--headless", "--clock", "fast", "--trace", trace, "--no-cache",
                         "--no-adaptive"]
        if let initialBandwidth { arguments += ["--initial-bandwidth", String(initialBandwidth)] }
        let result = try await runSeparately(reel, arguments)
        let statistics = server.statistics
        await server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try traceObjects(trace)
        let variants = objects.filter { $0["type"] as? String == "variant" }
        #expect(variants.count == 1, "\(variants)")
        let event = try #require(variants.first)
        let expected = expectedVariant(event, initialBandwidth: initialBandwidth, expected: expected, ladder: ladder)
        let chosen = ladder.renditions[expected]
        let paths = statistics.requests.map(\.path)
        #expect(paths.first == "/master.m3u8")
        #expect(paths.filter { $0 == "/master.m3u8" }.count == 1)
        for path in paths.dropFirst() {
            #expect(path.hasPrefix("/\(chosen.directory)/"), "\(path) requested while starting on \(chosen.directory): \(paths)")
        }
        #expect(paths.contains("/\(chosen.playlist)"))
        #expect(paths.contains("/\(chosen.directory)/init.mp4"))
        #expect((event["bandwidth"] as? NSNumber)?.int64Value == chosen.bandwidth)
        #expect(event["resolution"] as? String == "\(chosen.width ?? 0)x\(chosen.height ?? 0)")
        #expect((event["why"] as? String)?.isEmpty == false)
        #expect((event["rank"] as? NSNumber)?.intValue == expected)
        let shown = frames(objects).compactMap { $0["md5"] as? String }
        #expect(shown == (try referenceMD5s(ladder.clips[expected])))
    }
}

extension StreamingCommandTests {
    /// The estimate outlives the process: a first `reel play` reads a 1 MB file from the origin
    /// through a cache directory and leaves its measurement there; a second one, of a master,
    /// starts on the top variant from that saved estimate with nothing measured of its own, and
    /// the trace says so. `--initial-bandwidth` still overrides it; `--no-cache` neither reads
    /// nor writes it.
    @Test func aSecondPlayStartsFromTheEstimateTheFirstMeasured() async throws {
        let reel = try await ReelBinary.locate()
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader()) }
        defer { ladder.remove() }
        // Encoding it takes seconds of CPU: off the concurrency pool (one thread on a pinned core).
        let big = try await offThePool {
            try Fixtures.clip(ClipSpec(width: 640, height: 360, frameRate: 30, duration: 3, keyframeInterval: 30, bitRateKbps: 3_000))
        }
        try FileManager.default.copyItem(at: big, to: ladder.directory.appendingPathComponent("big.mp4"))
        let server = OriginServer(configuration: .init(root: ladder.directory))
        _ = try await server.start()
        let scratch = try Scratch("reel-saved-estimate")
        defer { scratch.remove() }
        let cache = scratch.file("cache")
        let first = try await runSeparately(reel, ["play", server.url(for: "big.mp4").absoluteString, "--headless", "--clock", "fast",
                                                   "--cache-dir", cache])
        #expect(first.status == 0, "\(first.stderr)")
        let saved = try #require(SavedBandwidthEstimate.load(from: URL(fileURLWithPath: cache)), "the first run saved its measurement")
        #expect(saved.bitsPerSecond > 0)

        func variant(_ extra: [String]) async throws -> [String: Any] {
            let trace = scratch.file("trace-\(UUID().uuidString).jsonl")
            let result = try await runSeparately(reel, ["play", server.url(for: "master.m3u8").absoluteString, "--headless", "--clock", "fast",
                                                        "--trace", trace] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            return try #require(try traceObjects(trace).first { $0["type"] as? String == "variant" })
        }
        let second = try await variant(["--cache-dir", cache])
        // The master's own transfer on a starved core can measure first; otherwise it is the saved one.
        if second["estimateSource"] as? String != "measured" {
            #expect(second["estimateSource"] as? String == "saved", "\(second)")
            #expect((second["estimateAgeSeconds"] as? NSNumber).map { $0.doubleValue >= 0 && $0.doubleValue < 600 } == true)
            #expect((second["rank"] as? NSNumber)?.intValue == 2, "loopback carries the top variant: \(second)")
        }
        let given = try await variant(["--cache-dir", cache, "--initial-bandwidth", "100000"])
        await server.stop()
        #expect(["initial", "measured"].contains(given["estimateSource"] as? String ?? ""), "\(given)")
    }
}

/// The variant a `variant` trace event must name: `expected` while the estimate was the one
/// given (`--initial-bandwidth`, or none); when the transfers measured so far (the master's
/// or manifest's own, slower than the meter's 2 s on a starved core) replaced it, the one the
/// rule picks for what was measured.
func expectedVariant(_ event: [String: Any], initialBandwidth: Int64?, expected: Int, ladder: StreamLadder) -> Int {
    guard event["estimateSource"] as? String == "measured" else {
        #expect(event["estimateSource"] as? String == (initialBandwidth == nil ? "unknown" : "initial"))
        return expected
    }
    let measured = BandwidthEstimate(bitsPerSecond: (event["estimate"] as? NSNumber)?.int64Value, source: .measured)
    return VariantPolicy().pick(ladder.renditions.map(\.bandwidth), isLocal: false, estimate: measured).offset
}
