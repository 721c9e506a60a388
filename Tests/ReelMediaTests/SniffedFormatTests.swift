import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
@testable import ReelMedia
import ReelOrigin
import ReelTestSupport
import Testing

/// Formats known by what the server says and what the bytes say: an HLS playlist and a DASH
/// manifest served by the real loopback origin at URLs with no extension — with their own
/// `Content-Type`, a generic one, or none — play through Reel's own path (the variant loader,
/// DASH read by Reel and played as HLS), bit-exact; manifests Reel does not play end with a
/// `MediaError` naming what was refused, never a hang.
@Suite struct SniffedFormatTests {
    enum Typing: String, CaseIterable, Sendable {
        /// The format's own type (`application/dash+xml`, `application/vnd.apple.mpegurl`).
        case own
        /// `application/octet-stream`.
        case generic
        /// No `Content-Type` header at all.
        case none

        func header(for format: StreamPackager.Format) -> [(name: String, value: String)] {
            switch self {
            case .own: [("Content-Type", format == .dash ? "application/dash+xml; charset=UTF-8" : "application/vnd.apple.mpegURL")]
            case .generic: [("Content-Type", "application/octet-stream")]
            case .none: []
            }
        }
    }

    /// The origin serving `directory`, and `document` at `path` (no extension) with `headers`.
    static func origin(_ directory: URL, _ path: String, _ document: Data,
                       headers: [(name: String, value: String)]) async throws -> OriginServer {
        let route = OriginRoute(pathPrefix: path, methods: ["GET", "HEAD"]) { _ in
            OriginResponse(headers: headers, body: document)
        }
        let server = OriginServer(configuration: .init(root: directory, routes: [route]))
        _ = try await server.start()
        return server
    }

    @Test(arguments: [StreamPackager.Format.dash, .hlsFMP4], Typing.allCases)
    func aDocumentAtAURLWithNoExtensionPlaysBitExactThroughReelsPath(_ format: StreamPackager.Format, _ typing: Typing) async throws {
        let stream = try await offThePool { try PackagedStream.make(format) }
        defer { stream.remove() }
        let reference = try await offThePool {
            format == .dash ? try ffmpegFrameMD5s(stream.manifest) : try referenceFrames(stream.clip).map(\.md5)
        }
        #expect(reference.count >= 60, "the reference has \(reference.count) frames")
        let document = try Data(contentsOf: stream.manifest)
        let server = try await Self.origin(stream.directory, "/stream", document, headers: typing.header(for: format))
        let http = HTTPLoader()
        let loader = VariantSelectingLoader(upstream: http, bandwidth: nil)
        // As an API would name it: no extension, and a query.
        let item = URL(string: server.url(for: "stream").absoluteString + "?id=7&quality=auto")!
        let played = await Self.outcome { try decodedMD5sOnThisThread(item, loader: loader) }
        let paths = server.statistics.requests.map(\.path)
        let retries = http.statistics.retries
        await http.shutdown()
        await server.stop()
        #expect(try played.get() == reference, "\(format) \(typing)")
        // The document was read by Reel once on an idle machine (twice at most on a starved
        // core, see the refused manifests below, retries aside); the rest are the stream's own files (a DASH
        // item's playlists live in memory and are never asked for).
        let documentReads = paths.filter { $0 == "/stream" }.count
        #expect(documentReads >= 1 && documentReads <= 2 + retries, "\(paths), \(retries) retries")
        for path in paths where path != "/stream" {
            #expect(stream.files[String(path.dropFirst())] != nil, "\(path) is one of the stream's files: \(paths)")
        }
        #expect(paths.count > 2, "segments came through the loader: \(paths)")
    }

    /// Local files too: a manifest or playlist renamed to have no extension plays from its directory.
    @Test(arguments: [StreamPackager.Format.dash, .hlsFMP4])
    func aLocalDocumentWithNoExtensionPlays(_ format: StreamPackager.Format) async throws {
        let stream = try await offThePool { try PackagedStream.make(format) }
        defer { stream.remove() }
        let reference = try await offThePool {
            format == .dash ? try ffmpegFrameMD5s(stream.manifest) : try referenceFrames(stream.clip).map(\.md5)
        }
        let renamed = stream.directory.appendingPathComponent("document")
        try FileManager.default.copyItem(at: stream.manifest, to: renamed)
        let loader = RecordingLoader(FileLoaderForTests())
        let played = await Self.outcome { try decodedMD5sOnThisThread(renamed, loader: loader) }
        #expect(try played.get() == reference)
        #expect(!loader.urls.contains { $0.lastPathComponent.contains(".reel-dash-") }, "\(loader.urls)")
    }

    /// A manifest whose `<MPD` comes after more than the sniffing limit of comments is not known
    /// as DASH (and nothing else says so): FFmpeg would probe it as DASH, and its DASH demuxer,
    /// which would open the segments itself, is not allowed. It fails, having read only itself.
    @Test(arguments: [false, true])
    func aManifestReelDidNotRecogniseNeverReachesFFmpegsDASHDemuxer(_ live: Bool) async throws {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        defer { stream.remove() }
        var manifest = String(decoding: try Data(contentsOf: stream.manifest), as: UTF8.self)
        if live { manifest = manifest.replacingOccurrences(of: "type=\"static\"", with: "type=\"dynamic\" availabilityStartTime=\"2026-01-01T00:00:00Z\"") }
        #expect(manifest.contains(live ? "dynamic" : "static"))
        let padding = "<!-- " + String(repeating: "padding ", count: StreamingFormat.sniffLimit / 8) + "-->\n"
        let hidden = manifest.replacingOccurrences(of: "<MPD", with: padding + "<MPD")
        let server = try await Self.origin(stream.directory, "/hidden", Data(hidden.utf8), headers: [])
        let http = HTTPLoader()
        let item = server.url(for: "hidden")
        let outcome = await Self.outcome { try decodedMD5sOnThisThread(item, loader: VariantSelectingLoader(upstream: http, bandwidth: nil)) }
        let paths = server.statistics.requests.map(\.path)
        let retries = http.statistics.retries
        await http.shutdown()
        await server.stop()
        switch outcome {
        case .success(let frames): Issue.record("played \(frames.count) frames")
        case .failure(let error):
            // FFmpeg's probe took it for DASH, and the whitelist refused its DASH demuxer.
            guard case .unrecognizedFormat(let url, let message) = error as? MediaError else {
                Issue.record("\(error)")
                break
            }
            #expect(url == item)
            #expect(message.contains("MPD"), "\(message)")
        }
        // Only the document: once on an idle machine, twice at most on a starved core (see the
        // refused manifests below), retries aside.
        #expect(paths.allSatisfy { $0 == "/hidden" } && paths.count <= 2 + retries, "only the document was read, by Reel: \(paths), \(retries) retries")
    }

    /// Media at a URL with no extension passes through the variant loader's look at it, whole,
    /// and plays; the second time the loader knows it is media.
    @Test func mediaWithNoExtensionPlaysThroughTheVariantLoader() async throws {
        let clip = try Fixtures.clip(StreamingTests.spec)
        let reference = try await offThePool { try referenceFrames(clip).map(\.md5) }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sniff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.copyItem(at: clip, to: scratch.appendingPathComponent("video"))
        let server = OriginServer(configuration: .init(root: scratch))
        _ = try await server.start()
        let http = HTTPLoader()
        let loader = VariantSelectingLoader(upstream: http, bandwidth: nil)
        let item = server.url(for: "video")
        for _ in 0..<2 {
            let played = await Self.outcome { try decodedMD5sOnThisThread(item, loader: loader) }
            #expect(try played.get() == reference)
        }
        let paths = server.statistics.requests.map(\.path)
        await http.shutdown()
        await server.stop()
        #expect(paths.allSatisfy { $0 == "/video" }, "\(paths)")
        #expect(loader.choice(for: item) == nil)
    }

    /// What every open allows: every demuxer of this FFmpeg but its DASH one (which opens
    /// segments with its own protocols), the HLS one and the containers segments come in included.
    @Test func opensAllowEveryDemuxerButDASH() {
        let allowed = Set(Demuxer.formatWhitelist.split(separator: ",").map(String.init))
        #expect(!allowed.contains("dash"))
        for name in ["hls", "mov", "mp4", "mpegts", "matroska", "webm", "aac", "mp3", "wav", "flac", "ogg"] {
            #expect(allowed.contains(name), "\(name)")
        }
    }

    /// A master (or a manifest of three Representations) at a URL with no extension and no
    /// type still gets the variant choice: only the chosen variant's files are asked for.
    @Test(arguments: [StreamPackager.Format.hlsFMP4, .dash])
    func aMasterWithNoExtensionGetsTheVariantChoice(_ format: StreamPackager.Format) async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), format: format) }
        defer { ladder.remove() }
        let reference = try await offThePool { try referenceFrames(ladder.clips[0]).map(\.md5) }
        let server = try await Self.origin(ladder.directory, "/master", try Data(contentsOf: ladder.master), headers: [])
        let http = HTTPLoader()
        let loader = VariantSelectingLoader(upstream: http, bandwidth: nil)
        let item = server.url(for: "master")
        let played = await Self.outcome { try decodedMD5sOnThisThread(item, loader: loader) }
        let paths = server.statistics.requests.map(\.path)
        await http.shutdown()
        await server.stop()
        #expect(try played.get() == reference)
        let choice = try #require(loader.choice(for: item), "no variant was chosen for \(item)")
        #expect(choice.rank == 0, "nothing measured: the lowest")
        #expect(paths.filter { $0 == "/master" }.count == 1, "\(paths)")
        for path in paths where path != "/master" {
            #expect(path.hasPrefix("/v0/"), "\(path) requested while starting on v0: \(paths)")
        }
    }

    static func manifest(_ attributes: String = #"type="static" mediaPresentationDuration="PT2S""#,
                         namespaces: String = #"xmlns="urn:mpeg:dash:schema:mpd:2011""#, body: String = "") -> Data {
        Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <MPD \(namespaces) \(attributes) minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
          <Period id="0" start="PT0S">
            <AdaptationSet contentType="video" mimeType="video/mp4">\(body)
              <Representation id="0" bandwidth="400000" width="320" height="240">
                <SegmentTemplate timescale="1000" duration="1000" initialization="init-0.m4s" media="chunk-0-$Number%05d$.m4s" startNumber="1"/>
              </Representation>
            </AdaptationSet>
          </Period>
        </MPD>

        """.utf8)
    }

    /// What each refused manifest must say (a part of the one line).
    static let refused: [(name: String, document: Data, says: String)] = [
        ("live", manifest(#"type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z""#), "live manifest"),
        ("malformed", Data(String(decoding: manifest(), as: UTF8.self).replacingOccurrences(of: "</Period>", with: "").utf8), "not well-formed XML"),
        ("namespace", manifest(body: #"<cenc:pssh>AAAA</cenc:pssh><ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" cenc:default_KID="1"/>"#),
         "not well-formed XML"),
    ]

    @Test(arguments: [0, 1, 2], Typing.allCases)
    func aManifestReelDoesNotPlayEndsWithAnErrorNamingIt(_ index: Int, _ typing: Typing) async throws {
        let (name, document, says) = Self.refused[index]
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sniff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try await Self.origin(scratch, "/\(name)", document, headers: typing.header(for: .dash))
        let http = HTTPLoader()
        let item = server.url(for: name)
        let outcome = await Self.outcome { try decodedMD5sOnThisThread(item, loader: VariantSelectingLoader(upstream: http, bandwidth: nil)) }
        let paths = server.statistics.requests.map(\.path)
        let retries = http.statistics.retries
        await http.shutdown()
        await server.stop()
        switch outcome {
        case .success(let frames):
            Issue.record("\(name) played \(frames.count) frames")
        case .failure(let error):
            let media = try #require(error as? MediaError, "\(error)")
            guard case .unsupportedStream(let url, let reason) = media else {
                Issue.record("\(name): \(media)")
                return
            }
            #expect(url == item)
            #expect(reason.contains(says), "\(name): \(reason)")
            #expect(!media.description.contains("\n"))
        }
        // Only the manifest was read. Once on an idle machine; on a starved core a second read
        // can come after the variant loader's first inspection has finished, and fetch it again
        // (open: the inspected document is not kept for a later reader of the same item).
        #expect(paths.allSatisfy { $0 == "/\(name)" } && paths.count <= 2 + retries, "nothing the manifest names was read: \(paths), \(retries) retries")
    }

    /// Not a manifest at all, though the server says so: the bytes win, FFmpeg finds nothing
    /// it reads (and its DASH demuxer is never asked).
    @Test func aPageServedAsAManifestIsNotMedia() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sniff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let page = Data("<!DOCTYPE html>\n<html><body><MPD>not here</MPD></body></html>\n".utf8)
        let server = try await Self.origin(scratch, "/page", page, headers: [("Content-Type", "application/dash+xml")])
        let http = HTTPLoader()
        let item = server.url(for: "page")
        let outcome = await Self.outcome { try decodedMD5sOnThisThread(item, loader: VariantSelectingLoader(upstream: http, bandwidth: nil)) }
        await http.shutdown()
        await server.stop()
        #expect(throws: MediaError.self) { try outcome.get() }
        if case .failure(let error) = outcome {
            guard case .unrecognizedFormat = error as? MediaError else {
                Issue.record("\(error)")
                return
            }
        }
    }

    /// Runs `body` on a thread of its own; a hang is caught by the watchdog, not waited out.
    /// The watchdog is three times the usual: the body decodes a whole clip, and on one core
    /// beside the whole suite a thread of its own gets a few percent of it (one run had not
    /// finished in 300 s).
    static func outcome<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error> {
        let box = ResultBox<Result<T, any Error>>()
        Thread.detachNewThread { box.set(Result { try body() }) }
        guard await eventually(timeout: hangWatchdog * 3, { box.value != nil }), let result = box.value else {
            return .failure(MediaError.encoding("still running after the watchdog"))
        }
        return result
    }
}
