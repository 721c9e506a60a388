import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelOrigin
import ReelTestSupport
import Testing

/// `reel play` of manifests and playlists at URLs with no extension, as some CDNs and APIs
/// serve them: the Content-Type and the first bytes decide the format; a manifest Reel does not
/// play ends with exit 3 and one line, never a hang.
@Suite("reel play: formats known by content")
struct SniffedFormatCommandTests {
    /// How long a refusal may take before the test calls it a hang (a watchdog: the refusals
    /// take well under a second on an idle machine; before, they never ended).
    static let watchdog: Duration = Child.watchdog

    func origin(_ root: URL, _ path: String, _ document: Data, type: String?) async throws -> OriginServer {
        let route = OriginRoute(pathPrefix: path, methods: ["GET", "HEAD"]) { _ in
            OriginResponse(headers: type.map { [("Content-Type", $0)] } ?? [], body: document)
        }
        let server = OriginServer(configuration: .init(root: root, routes: [route]))
        _ = try await server.start()
        return server
    }

    @Test(arguments: [(StreamPackager.Format.dash, nil), (.dash, "application/octet-stream"), (.hlsFMP4, nil),
                      (.hlsFMP4, "application/x-mpegURL")] as [(StreamPackager.Format, String?)])
    func aDocumentWithNoExtensionPlaysBitExact(_ format: StreamPackager.Format, _ type: String?) async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-sniff-play")
        defer { scratch.remove() }
        let clip = try Fixtures.clip(StreamingCommandTests.clip)
        let manifest = try StreamPackager.package(clip, loader: FileLoader(), format: format, into: scratch.url, segmentSeconds: 1)
        let server = try await origin(scratch.url, "/play", try Data(contentsOf: manifest), type: type)
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", server.url(for: "play").absoluteString, "--headless", "--clock", "fast",
                                                    "--no-cache", "--trace", trace], timeout: Self.watchdog)
        let paths = server.statistics.requests.map(\.path)
        await server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let shown = frames(try traceObjects(trace)).compactMap { $0["md5"] as? String }
        #expect(shown == (try referenceMD5s(clip)))
        // Read once by Reel; a child on a starved core may see a request time out and retry it
        // (the in-process SniffedFormatTests hold the count to the loader's own retries).
        #expect((1...HTTPLoader.Configuration().maxAttemptsWithoutProgress).contains(paths.filter { $0 == "/play" }.count), "\(paths)")
    }

    @Test(arguments: [
        ("live", #"type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z""#, "", "live manifest"),
        ("malformed", #"type="static""#, "<AdaptationSet>", "not well-formed XML"),
        ("namespace", #"type="static""#, #"<AdaptationSet contentType="video"><cenc:pssh>AAAA</cenc:pssh></AdaptationSet>"#, "not well-formed XML"),
    ])
    func aManifestReelDoesNotPlayExitsThreeWithOneLine(_ name: String, _ attributes: String, _ body: String, _ says: String) async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-sniff-refused")
        defer { scratch.remove() }
        let document = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" \(attributes) mediaPresentationDuration="PT2S">
          <Period id="0">\(body)
            <AdaptationSet contentType="video"><Representation id="0" bandwidth="1000">
              <SegmentTemplate timescale="1000" duration="1000" initialization="init.m4s" media="$Number$.m4s"/>
            </Representation></AdaptationSet>
          </Period>
        </MPD>

        """.utf8)
        for type in [nil, "application/dash+xml"] as [String?] {
            let server = try await origin(scratch.url, "/\(name)", document, type: type)
            let url = server.url(for: name).absoluteString
            let started = ContinuousClock.now
            let result = try await runSeparately(reel, ["play", url, "--headless", "--clock", "fast", "--no-cache"], timeout: Self.watchdog)
            let took = ContinuousClock.now - started
            let paths = server.statistics.requests.map(\.path)
            await server.stop()
            #expect(result.status == 3, "\(name) \(type ?? "untyped") after \(took): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "one line: \(result.stderr)")
            #expect(result.stderr.contains(url) && result.stderr.contains(says), "\(result.stderr)")
            // Only the manifest, nothing it names (a retry after a time-out on a starved core aside).
            #expect(!paths.isEmpty && paths.allSatisfy { $0 == "/\(name)" }
                    && paths.count <= HTTPLoader.Configuration().maxAttemptsWithoutProgress, "\(paths)")
        }
    }
}
