import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelTestSupport
import Testing

/// `reel play` of DASH from the real origin: the starting Representation, the cache, and the
/// closed door as users meet it.
@Suite("reel play: DASH")
struct DASHCommandTests {
    /// A three-Representation manifest from the real origin: a fresh process starts on the
    /// lowest; with an initial estimate that carries the top one it starts there. The origin
    /// sees the manifest and only the chosen Representation's (and the audio's) files; the trace
    /// says which and why; a warm replay sends no body bytes.
    @Test(arguments: [(nil, 0), (50_000_000, 2)] as [(Int64?, Int)])
    func aManifestStartsOnOneRepresentationAndAWarmReplaySendsNoBodyBytes(_ initialBandwidth: Int64?, _ expected: Int) async throws {
        let reel = try await ReelBinary.locate()
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), format: .dash) }
        defer { ladder.remove() }
        let server = OriginServer(configuration: .init(root: ladder.directory))
        _ = try await server.start()
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("reel-dash-trace-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("reel-dash-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        // Held on the Representation it starts on (Reel's scheduler would otherwise switch as
        // the link and the buffer say: a fast clock on a loaded machine drains the buffer).
        var arguments = ["play", server.url(for: "manifest.mpd").absoluteString, "--headless", "--clock", "fast", "--cache-dir", cache,
                         "--no-adaptive"]
        if let initialBandwidth { arguments += ["--initial-bandwidth", String(initialBandwidth)] }
        let result = try await runSeparately(reel, arguments + ["--trace", trace])
        let statistics = server.statistics
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try traceObjects(trace)
        let variants = objects.filter { $0["type"] as? String == "variant" }
        #expect(variants.count == 1, "\(variants)")
        let event = try #require(variants.first)
        let expected = expectedVariant(event, initialBandwidth: initialBandwidth, expected: expected, ladder: ladder)
        let chosen = ladder.renditions[expected].directory
        let paths = statistics.requests.map(\.path)
        #expect(paths.first == "/manifest.mpd")
        #expect(paths.filter { $0 == "/manifest.mpd" }.count == 1)
        for path in paths.dropFirst() {
            let video = path.hasPrefix("/\(chosen)/init-0.") || path.hasPrefix("/\(chosen)/chunk-0-")
            let audio = path.hasPrefix("/v0/init-1.") || path.hasPrefix("/v0/chunk-1-")
            #expect(video || audio, "\(path) requested while starting on \(chosen): \(paths)")
        }
        #expect(paths.contains("/\(chosen)/init-0.m4s"))
        #expect((event["bandwidth"] as? NSNumber)?.int64Value == ladder.renditions[expected].bandwidth)
        #expect(event["representation"] as? String == "v\(expected)")
        #expect((event["rank"] as? NSNumber)?.intValue == expected)
        #expect((event["why"] as? String)?.isEmpty == false)
        let shown = frames(objects).compactMap { $0["md5"] as? String }
        #expect(shown == (try referenceMD5s(ladder.clips[expected])))

        server.resetStatistics()
        // The replay checks the cache, so it starts where the first run did: not from the
        // estimate the first run may have saved (on a loaded machine its transfers can last
        // long enough to make one, which carries a higher Representation, not cached).
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: cache).appendingPathComponent(SavedBandwidthEstimate.fileName))
        let again = try await runSeparately(reel, arguments)
        let warm = server.statistics
        await server.stop()
        #expect(again.status == 0, "\(again.stderr)")
        #expect(warm.bytesServed == 0, "\(warm.requests.map { "\($0.method) \($0.path) \($0.status)" })")
    }

    @Test func aServedManifestNamingALocalFileExitsThreeNamingIt() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-dash-hostile")
        defer { scratch.remove() }
        let local = try Fixtures.clip(StreamingCommandTests.clip)
        let hostile = """
        <?xml version="1.0"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S">
          <Period><AdaptationSet contentType="video"><Representation id="0" bandwidth="1000">
            <BaseURL>\(local.absoluteString)</BaseURL>
          </Representation></AdaptationSet></Period>
        </MPD>
        """
        try Data(hostile.utf8).write(to: scratch.url.appendingPathComponent("hostile.mpd"))
        let server = OriginServer(configuration: .init(root: scratch.url))
        _ = try await server.start()
        let url = server.url(for: "hostile.mpd")
        let result = try await runSeparately(reel, ["play", url.absoluteString, "--headless", "--clock", "fast", "--no-cache"])
        let paths = server.statistics.requests.map(\.path)
        await server.stop()
        #expect(result.status == 3, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains(local.absoluteString) && result.stderr.contains("refused"), "\(result.stderr)")
        #expect(paths == ["/hostile.mpd"])
    }
}
