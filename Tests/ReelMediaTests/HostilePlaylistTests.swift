import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing

/// The closed door: playlists that point where their item may not go are refused with an
/// error naming the URL, and the loader's request log shows nothing outside the rules was read.
@Suite struct HostilePlaylistTests {
    static let base = URL(string: "https://origin.example/hostile/")!

    /// A media playlist whose second segment is `entry`, the first a real segment.
    static func playlist(_ entry: String) -> Data {
        Data("""
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:2
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXTINF:1.0,
        seg-0.ts
        #EXTINF:1.0,
        \(entry)
        #EXT-X-ENDLIST

        """.utf8)
    }

    func remote(_ entry: String) throws -> (FakeResourceLoader, URL, PackagedStream) {
        let stream = try PackagedStream.make(.hlsTS)
        let loader = FakeResourceLoader()
        stream.serve(on: loader, at: Self.base)
        let item = Self.base.appendingPathComponent("hostile.m3u8")
        loader.add(Self.playlist(entry), at: item)
        return (loader, item, stream)
    }

    func open(_ item: URL, _ loader: any ResourceLoader) async -> MediaError? {
        do {
            _ = try await decodedMD5s(item, loader: loader)
            return nil
        } catch {
            return error as? MediaError
        }
    }

    static let refusedEntries = [
        "file:///etc/passwd",
        "file:///tmp/local.ts",
        "data:video/mp2t;base64,AAAA",
        "pipe:0",
        "concat:seg-0.ts|seg-1.ts",
        "subfile,,start,0,end,100,,:seg-0.ts",
        "crypto+https://origin.example/hostile/seg-1.ts",
        "ftp://origin.example/seg-1.ts",
    ]

    @Test(arguments: refusedEntries)
    func aRemotePlaylistMayOpenOnlyHTTP(_ entry: String) async throws {
        let (loader, item, stream) = try remote(entry)
        defer { stream.remove() }
        let error = await open(item, loader)
        guard case .refusedURL(let url, let refusedItem, _) = error else {
            Issue.record("\(entry): expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(url == entry)
        #expect(refusedItem == item)
        #expect(error!.description.contains(entry))
        // Only the playlist itself was read: nothing it names before the refusal.
        #expect(loader.requests.allSatisfy { $0.url.absoluteString.hasPrefix(Self.base.absoluteString) })
    }

    @Test func anAbsolutePathInARemotePlaylistStaysOnTheOrigin() async throws {
        let (loader, item, stream) = try remote("/var/media/seg-9.ts")
        defer { stream.remove() }
        let error = await open(item, loader)
        let expected = URL(string: "https://origin.example/var/media/seg-9.ts")!
        #expect(error == .loading(.notFound(url: expected)))
        #expect(loader.requests.allSatisfy { $0.url.host == "origin.example" })
        // A name without a media extension is refused by FFmpeg's own check before any open.
        let (other, otherItem, otherStream) = try remote("/etc/passwd")
        defer { otherStream.remove() }
        #expect(await open(otherItem, other) != nil)
        #expect(other.requests.allSatisfy { $0.url.host == "origin.example" && $0.url.path != "/etc/passwd" })
    }

    @Test func aPlaylistThatNamesItselfStopsAtTheDepthLimit() async throws {
        let loader = FakeResourceLoader()
        let item = Self.base.appendingPathComponent("self.m3u8")
        loader.add(Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nself.m3u8\n".utf8), at: item)
        let error = await open(item, loader)
        // FFmpeg 9's HLS demuxer (libavformat 63) refuses a master playlist's tag inside a
        // variant's playlist itself ("Master Playlist tag found in a Media Playlist"): there the
        // first nested read ends it, before Reel's depth limit is reached.
        let libavformat = MediaLibraries.libraryVersions.first { $0.name == "libavformat" }?.version ?? ""
        if let major = Int(libavformat.prefix { $0 != "." }), major >= 63 {
            guard case .unrecognizedFormat(let url, _) = error else {
                Issue.record("expected FFmpeg to refuse the nested master playlist, got \(String(describing: error))")
                return
            }
            #expect(url == item)
            #expect(loader.requestCount == 2)
        } else {
            #expect(error == .streamLimit(what: "nesting depth", limit: NestedAccessPolicy.Limits.default.maxDepth, url: item))
        }
        #expect(loader.requestCount <= NestedAccessPolicy.Limits.default.maxDepth + 1)
    }

    @Test func aMasterWithTooManyRenditionsIsRefused() async throws {
        let loader = FakeResourceLoader()
        let item = Self.base.appendingPathComponent("many.m3u8")
        var master = "#EXTM3U\n"
        for i in 0..<100 {
            master += "#EXT-X-STREAM-INF:BANDWIDTH=\(100_000 + i)\nv\(i).m3u8\n"
            loader.add(Data("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nmissing.ts\n#EXT-X-ENDLIST\n".utf8),
                       at: Self.base.appendingPathComponent("v\(i).m3u8"))
        }
        loader.add(Data(master.utf8), at: item)
        let limits = NestedAccessPolicy.Limits.default
        let error = await open(item, loader)
        #expect(error == .streamLimit(what: "number of playlists", limit: limits.maxRenditions, url: item))
        #expect(Set(loader.requests.map(\.url)).count <= limits.maxRenditions + 2)
    }

    @Test func aPlaylistOfAHundredThousandSegmentsIsRefused() async throws {
        let loader = FakeResourceLoader()
        let item = Self.base.appendingPathComponent("huge.m3u8")
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        text.reserveCapacity(100_000 * 24)
        for i in 0..<100_000 { text += "#EXTINF:1.0,\ns\(i).ts\n" }
        text += "#EXT-X-ENDLIST\n"
        loader.add(Data(text.utf8), at: item)
        let error = await open(item, loader)
        #expect(error == .streamLimit(what: "number of playlist entries",
                                      limit: NestedAccessPolicy.Limits.default.maxPlaylistEntries, url: item))
        #expect(loader.requests.allSatisfy { $0.url == item }, "no segment was read")
    }

    // MARK: Local items

    func local(_ entry: String) throws -> (URL, PackagedStream) {
        let stream = try PackagedStream.make(.hlsTS)
        let item = stream.directory.appendingPathComponent("hostile.m3u8")
        try Self.playlist(entry).write(to: item)
        return (item, stream)
    }

    @Test(arguments: ["../outside.ts", "../../../../../../etc/passwd", "/etc/passwd", "file:///etc/passwd",
                      "https://origin.example/seg-1.ts", "sub/../../outside.ts"])
    func aLocalPlaylistMayOpenOnlyFilesInItsDirectory(_ entry: String) async throws {
        let (item, stream) = try local(entry)
        defer { stream.remove() }
        // A real file just outside the directory: it must not be read.
        let outside = stream.directory.deletingLastPathComponent().appendingPathComponent("outside.ts")
        try? stream.files["seg-1.ts"]!.write(to: outside)
        defer { try? FileManager.default.removeItem(at: outside) }
        let loader = RecordingLoader(FileLoaderForTests())
        let error = await open(item, loader)
        guard case .refusedURL = error else {
            Issue.record("\(entry): expected a refusal, got \(String(describing: error))")
            return
        }
        let root = stream.directory.resolvingSymlinksInPath().path + "/"
        #expect(loader.urls.allSatisfy { $0.isFileURL && $0.resolvingSymlinksInPath().path.hasPrefix(root) }, "\(loader.urls)")
    }

    @Test func aSymlinkOutOfTheDirectoryIsRefused() async throws {
        let (item, stream) = try local("link.ts")
        defer { stream.remove() }
        let outside = stream.directory.deletingLastPathComponent().appendingPathComponent("outside-\(UUID().uuidString).ts")
        try stream.files["seg-1.ts"]!.write(to: outside)
        defer { try? FileManager.default.removeItem(at: outside) }
        try FileManager.default.createSymbolicLink(at: stream.directory.appendingPathComponent("link.ts"), withDestinationURL: outside)
        let loader = RecordingLoader(FileLoaderForTests())
        let error = await open(item, loader)
        guard case .refusedURL = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(!loader.urls.contains { $0.resolvingSymlinksInPath().path == outside.resolvingSymlinksInPath().path })
    }

    @Test func thePolicyAdmitsAndRefuses() async {
        let remote = NestedAccessPolicy(item: URL(string: "https://a.example/x/index.m3u8")!)
        #expect((try? remote.admit("https://b.example/seg.ts").get()) == URL(string: "https://b.example/seg.ts"))
        #expect((try? remote.admit("http://a.example/seg.ts").get()) != nil)
        for raw in ["file:///etc/passwd", "/etc/passwd", "seg.ts", "data:,x", "HTTP+x://a", "https://"] {
            #expect((try? remote.admit(raw).get()) == nil, "\(raw)")
        }
        let local = NestedAccessPolicy(item: URL(fileURLWithPath: "/tmp/reel-policy/a/index.m3u8"))
        #expect((try? local.admit("file:///tmp/reel-policy/a/seg.ts").get()) != nil)
        #expect((try? local.admit("file:///tmp/reel-policy/a/sub/../seg.ts").get()) != nil)
        #expect((try? local.admit("file:///tmp/reel-policy/a/../b/seg.ts").get()) == nil)
        #expect((try? local.admit("file:///tmp/reel-policy/ab/seg.ts").get()) == nil)
        #expect((try? local.admit("https://a.example/seg.ts").get()) == nil)
    }
}
