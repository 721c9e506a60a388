import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing

/// What a command (looked up on the PATH) prints on standard output, or a thrown error naming
/// how it ended. Blocks the calling thread: call it from a thread of the test's own.
func commandOutput(_ command: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = command
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let end = process.waitForEndBlocking()
    guard end == ProcessEnd(status: 0, signalled: false) else { throw MediaError.encoding("\(command[0]): \(end)") }
    return String(decoding: data, as: UTF8.self)
}

/// `ffmpeg -f framemd5` of the first video stream of `url`, as FFmpeg's own demuxer plays it.
func ffmpegFrameMD5s(_ url: URL) throws -> [String] {
    try commandOutput(["ffmpeg", "-nostdin", "-v", "error", "-i", url.path, "-map", "0:v:0", "-f", "framemd5", "-"])
        .split(separator: "\n")
        .filter { !$0.hasPrefix("#") }
        .compactMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) }
}

/// DASH through the loader: Reel reads the manifest and plays its segments with FFmpeg's HLS
/// demuxer (FFmpeg's DASH demuxer opens segments itself), bit-exact against FFmpeg's own DASH
/// demuxer on the same files, behind the same closed door as HLS.
@Suite struct DASHStreamingTests {
    static let base = URL(string: "https://origin.example/dash/a/")!

    @Test func playsBitExactAgainstFFmpegsOwnDASHDemuxerThroughTheLoader() async throws {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        defer { stream.remove() }
        let reference = try await offThePool { try ffmpegFrameMD5s(stream.manifest) }
        #expect(reference.count >= 60, "FFmpeg decoded \(reference.count) frames")
        let loader = FakeResourceLoader()
        stream.serve(on: loader, at: Self.base)
        let item = Self.base.appendingPathComponent("manifest.mpd")
        let played = try await decodedMD5s(item, loader: loader)
        #expect(played == reference, "\(played.count) frames vs FFmpeg's \(reference.count)")
        // Every byte came through the loader, and only the stream's own files were asked for.
        let requested = Set(loader.requests.map(\.url))
        #expect(requested.contains(item))
        #expect(requested.contains(Self.base.appendingPathComponent("init-0.m4s")))
        #expect(requested.contains(Self.base.appendingPathComponent("chunk-0-00001.m4s")))
        for url in requested {
            #expect(stream.files[url.lastPathComponent] != nil && url.absoluteString.hasPrefix(Self.base.absoluteString), "\(url)")
        }
    }

    @Test func aLocalManifestPlaysFromItsOwnDirectory() async throws {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        defer { stream.remove() }
        let reference = try await offThePool { try ffmpegFrameMD5s(stream.manifest) }
        let loader = RecordingLoader(FileLoaderForTests())
        #expect(try await decodedMD5s(stream.manifest, loader: loader) == reference)
        let root = stream.directory.resolvingSymlinksInPath().path
        #expect(loader.urls.allSatisfy { $0.resolvingSymlinksInPath().path.hasPrefix(root) }, "\(loader.urls)")
    }

    @Test func aMissingSegmentFailsCleanlyNamingIt() async throws {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        defer { stream.remove() }
        let loader = FakeResourceLoader()
        stream.serve(on: loader, at: Self.base)
        let missing = Self.base.appendingPathComponent("chunk-0-00002.m4s")
        loader.remove(missing)
        await #expect(throws: MediaError.loading(.notFound(url: missing))) {
            try await decodedMD5s(Self.base.appendingPathComponent("manifest.mpd"), loader: loader)
        }
    }

    @Test func aWarmReplayFromTheCacheSendsNoBodyBytes() async throws {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        defer { stream.remove() }
        let origin = FakeResourceLoader()
        stream.serve(on: origin, at: Self.base)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-dash-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try RangeCache(configuration: .init(directory: directory))
        defer { cache.close() }
        let loader = CachingLoader(upstream: origin, cache: cache)
        let item = Self.base.appendingPathComponent("manifest.mpd")
        let cold = try await decodedMD5s(item, loader: loader)
        #expect(origin.bytesServed > 0)
        origin.resetCounts()
        #expect(try await decodedMD5s(item, loader: loader) == cold)
        #expect(origin.bytesServed == 0, "warm replay: \(origin.requests.map(\.url.lastPathComponent))")
    }

    // MARK: The closed door

    /// A manifest of the packaged stream's video whose initialization is `initialization`,
    /// with `baseURL` as the Representation's BaseURL.
    static func manifest(initialization: String = "init-0.m4s", media: String = "chunk-0-$Number%05d$.m4s",
                         baseURL: String? = nil, timeline: String = "<S t=\"0\" d=\"15360\" r=\"2\"/>") -> Data {
        Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT3.0S">
          <Period id="0">
            <AdaptationSet contentType="video">
              <Representation id="0" mimeType="video/mp4" bandwidth="400000" width="320" height="240">
                \(baseURL.map { "<BaseURL>\($0)</BaseURL>" } ?? "")
                <SegmentTemplate timescale="15360" initialization="\(initialization)" media="\(media)" startNumber="1">
                  <SegmentTimeline>\(timeline)</SegmentTimeline>
                </SegmentTemplate>
              </Representation>
            </AdaptationSet>
          </Period>
        </MPD>

        """.utf8)
    }

    func open(_ item: URL, _ loader: any ResourceLoader) async -> MediaError? {
        do {
            _ = try await decodedMD5s(item, loader: loader)
            return nil
        } catch {
            return error as? MediaError
        }
    }

    func remote(_ manifest: Data) async throws -> (FakeResourceLoader, URL, PackagedStream) {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        let loader = FakeResourceLoader()
        stream.serve(on: loader, at: Self.base)
        let item = Self.base.appendingPathComponent("hostile.mpd")
        loader.add(manifest, at: item)
        return (loader, item, stream)
    }

    @Test func theHostileManifestStillPlaysWhenItNamesNothingHostile() async throws {
        let (loader, item, stream) = try await remote(Self.manifest())
        defer { stream.remove() }
        let reference = try await offThePool { try ffmpegFrameMD5s(stream.manifest) }
        #expect(try await decodedMD5s(item, loader: loader) == reference)
    }

    static let refusedReferences = [
        "file:///etc/passwd",
        "file:///tmp/local.m4s",
        "data:video/mp4;base64,AAAA",
        "pipe:0",
        "concat:init-0.m4s|chunk-0-00001.m4s",
        "subfile,,start,0,end,100,,:init-0.m4s",
        "crypto+https://origin.example/dash/a/init-0.m4s",
        "ftp://origin.example/init-0.m4s",
    ]

    @Test(arguments: refusedReferences)
    func aRemoteManifestMayOpenOnlyHTTP(_ reference: String) async throws {
        for manifest in [Self.manifest(initialization: reference), Self.manifest(media: reference + "-$Number$")] {
            let (loader, item, stream) = try await remote(manifest)
            defer { stream.remove() }
            let error = await open(item, loader)
            guard case .refusedURL(let url, let refusedItem, _) = error else {
                Issue.record("\(reference): expected a refusal, got \(String(describing: error))")
                continue
            }
            let scheme = String(reference.prefix { $0 != ":" })
            #expect(url.hasPrefix(scheme + ":"), "\(url)")
            #expect(refusedItem == item)
            #expect(error!.description.contains(scheme))
            // Only the manifest was read: nothing it names.
            #expect(loader.requests.map(\.url) == [item])
        }
    }

    @Test(arguments: ["file:///etc/", "pipe:", "data:text/plain,"])
    func aRemoteBaseURLMayNotLeaveHTTP(_ baseURL: String) async throws {
        let (loader, item, stream) = try await remote(Self.manifest(baseURL: baseURL))
        defer { stream.remove() }
        let error = await open(item, loader)
        guard case .refusedURL = error else {
            Issue.record("\(baseURL): expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(loader.requests.map(\.url) == [item])
    }

    @Test func anAbsolutePathInARemoteManifestStaysOnTheOrigin() async throws {
        let (loader, item, stream) = try await remote(Self.manifest(initialization: "/var/media/init-0.m4s"))
        defer { stream.remove() }
        let error = await open(item, loader)
        #expect(error == .loading(.notFound(url: URL(string: "https://origin.example/var/media/init-0.m4s")!)))
        #expect(loader.requests.allSatisfy { $0.url.host == "origin.example" })
    }

    @Test(arguments: ["hostile.mpd", "other.mpd", "v0/index.m3u8"])
    func aManifestThatNamesItselfOrAnotherDocumentIsRefused(_ reference: String) async throws {
        let (loader, item, stream) = try await remote(Self.manifest(initialization: reference))
        defer { stream.remove() }
        let error = await open(item, loader)
        guard case .refusedURL(let url, _, let reason) = error else {
            Issue.record("\(reference): expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(url.hasSuffix(reference))
        #expect(reason.contains("manifest"))
        #expect(loader.requests.map(\.url) == [item])
    }

    @Test func aManifestOfAHundredMillionSegmentsIsRefused() async throws {
        let (loader, item, stream) = try await remote(Self.manifest(timeline: "<S t=\"0\" d=\"1\" r=\"100000000\"/>"))
        defer { stream.remove() }
        let error = await open(item, loader)
        #expect(error == .streamLimit(what: "number of playlist entries", limit: NestedAccessPolicy.Limits.default.maxPlaylistEntries, url: item))
        #expect(loader.requests.map(\.url) == [item])
    }

    @Test func aHugeManifestIsRefusedBeforeItIsParsed() async throws {
        var text = String(decoding: Self.manifest(), as: UTF8.self)
        text += "<!--" + String(repeating: "x", count: Int(NestedAccessPolicy.Limits.default.maxDocumentBytes)) + "-->\n"
        let (loader, item, stream) = try await remote(Data(text.utf8))
        defer { stream.remove() }
        let error = await open(item, loader)
        #expect(error == .streamLimit(what: "manifest size in bytes", limit: Int(NestedAccessPolicy.Limits.default.maxDocumentBytes), url: item))
        #expect(loader.requests.map(\.url) == [item])
    }

    @Test func aManifestWithEntitiesOrLiveIsRefusedClearly() async throws {
        let entities = Data("<?xml version=\"1.0\"?><!DOCTYPE MPD [<!ENTITY a SYSTEM \"file:///etc/passwd\">]><MPD><Period>&a;</Period></MPD>".utf8)
        let live = Data(String(decoding: Self.manifest(), as: UTF8.self).replacingOccurrences(of: "type=\"static\"", with: "type=\"dynamic\"").utf8)
        for (manifest, words) in [(entities, "document type"), (live, "live")] {
            let (loader, item, stream) = try await remote(manifest)
            defer { stream.remove() }
            let error = await open(item, loader)
            guard case .unsupportedStream(let url, let reason) = error else {
                Issue.record("expected unsupportedStream, got \(String(describing: error))")
                continue
            }
            #expect(url == item)
            #expect(reason.contains(words), "\(reason)")
            #expect(loader.requests.map(\.url) == [item])
        }
    }

    @Test(arguments: ["../outside.m4s", "../../../../../../etc/passwd", "/etc/passwd", "file:///etc/passwd",
                      "https://origin.example/init-0.m4s", "sub/../../outside.m4s"])
    func aLocalManifestMayOpenOnlyFilesInItsDirectory(_ reference: String) async throws {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        defer { stream.remove() }
        let item = stream.directory.appendingPathComponent("hostile.mpd")
        try Self.manifest(initialization: reference).write(to: item)
        let outside = stream.directory.deletingLastPathComponent().appendingPathComponent("outside.m4s")
        try? stream.files["init-0.m4s"]!.write(to: outside)
        defer { try? FileManager.default.removeItem(at: outside) }
        let loader = RecordingLoader(FileLoaderForTests())
        let error = await open(item, loader)
        guard case .refusedURL = error else {
            Issue.record("\(reference): expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(loader.urls == [item], "\(loader.urls)")
    }

    @Test func aLocalBaseURLOutOfTheDirectoryIsRefused() async throws {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        defer { stream.remove() }
        let item = stream.directory.appendingPathComponent("hostile.mpd")
        try Self.manifest(baseURL: "../").write(to: item)
        let loader = RecordingLoader(FileLoaderForTests())
        let error = await open(item, loader)
        guard case .refusedURL = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(loader.urls == [item])
    }
}
