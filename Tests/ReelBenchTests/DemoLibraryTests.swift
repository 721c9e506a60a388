import Foundation
import ReelCore
import ReelStreaming
import ReelDemo
import ReelFeed
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing

/// The demo feed: playable clips of every kind, a manifest ManifestFeedSource reads, reused once made.
@Suite("DemoLibrary")
struct DemoLibraryTests {
    static let small = DemoLibrary.Configuration(count: 5, shortSide: 64, maxDuration: 1, frameRate: 10)

    @Test func aSmallLibraryIsPlayableReadableAndReused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-demo-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let calls = LockedValue(0)
        let manifest = try await DemoLibrary.prepare(directory: directory, configuration: Self.small) { _ in
            calls.set(calls.value + 1)
        }
        #expect(calls.value > 0, "progress is reported while encoding")
        #expect(DemoLibrary.isPrepared(directory: directory, configuration: Self.small))

        let source = try await ManifestFeedSource(url: manifest, loader: FileLoader())
        #expect(source.items.count == 5)
        #expect(try await source.categories().isEmpty == false)
        #expect(source.items.contains { $0.isImagePost && $0.images.count >= 2 })
        #expect(source.items.contains { $0.title.unicodeScalars.contains { $0.value >= 0x4E00 && $0.value <= 0x9FFF } })
        var codecs: Set<String> = []
        var orientations: Set<Bool> = []
        for item in source.items {
            for image in item.images { #expect(FileManager.default.fileExists(atPath: image.path)) }
            guard let video = item.videoURL else { continue }
            let info = try await MediaProbe.probe(video, loader: FileLoader())
            let stream = try #require(info.videoStream)
            codecs.insert(stream.codec)
            orientations.insert((stream.height ?? 0) > (stream.width ?? 0))
            #expect(info.audioStream != nil, "\(item.title) has a tone")
            let frames = try SequentialDecoder.decodeVideo(video, loader: FileLoader()) { _ in true }
            #expect(frames >= 5, "\(item.title) decodes")
            if let cover = item.coverURL { #expect(FileManager.default.fileExists(atPath: cover.path)) }
        }
        #expect(codecs == ["h264", "hevc"])
        #expect(orientations == [true, false], "portrait and landscape")
        // The streamed item: a master playlist naming three renditions, each of Reel's encoding.
        let streamed = try #require(source.items.first { $0.id == "streamed" }?.videoURL)
        #expect(streamed.pathExtension == "m3u8")
        let master = try #require(HLSMasterPlaylist(try Data(contentsOf: streamed)))
        #expect(master.variants.count == 3)
        #expect(Set(master.variants.map(\.bandwidth)).count == 3)
        #expect(master.variants.map(\.bandwidth) == master.variants.map(\.bandwidth).sorted())
        let moovAtEnd = try #require(source.items.first { $0.id == "moov-at-end" }?.videoURL)
        #expect(try Self.moovFollowsMdat(moovAtEnd))

        // A second call reuses the library: nothing is encoded again.
        let before = try FileManager.default.attributesOfItem(atPath: manifest.path)[.modificationDate] as? Date
        calls.set(0)
        let again = try await DemoLibrary.prepare(directory: directory, configuration: Self.small) { _ in calls.set(calls.value + 1) }
        #expect(again == manifest)
        #expect(calls.value == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: manifest.path)[.modificationDate] as? Date == before)
    }

    @Test func anInterruptedLibraryIsMadeAgain() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-demo-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let one = DemoLibrary.Configuration(count: 1, shortSide: 64, maxDuration: 1, frameRate: 10)
        let manifest = try await DemoLibrary.prepare(directory: directory, configuration: one)
        // A clip went missing (an interrupted or damaged library): not reused.
        let source = try await ManifestFeedSource(url: manifest, loader: FileLoader())
        try FileManager.default.removeItem(at: try #require(source.items.first?.videoURL))
        #expect(!DemoLibrary.isPrepared(directory: directory, configuration: one))
        _ = try await DemoLibrary.prepare(directory: directory, configuration: one)
        #expect(DemoLibrary.isPrepared(directory: directory, configuration: one))
        // Another configuration (or version) is not this one.
        #expect(!DemoLibrary.isPrepared(directory: directory, configuration: Self.small))
    }

    @Test func theDefaultDirectoryIsInsideTheCacheDirectory() {
        let directory = DemoLibrary.defaultDirectory(environment: ["XDG_CACHE_HOME": "/tmp/xdg"])
        #expect(directory.path == "/tmp/xdg/reel/demo-feed")
        #expect(DemoLibrary.catalogueCount >= 12)
    }

    /// Whether the file's top-level `moov` box comes after its `mdat`.
    static func moovFollowsMdat(_ url: URL) throws -> Bool {
        let data = try Data(contentsOf: url)
        var offset = 0
        var sawMdat = false
        while offset + 8 <= data.count {
            let size = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: data[offset + 4..<offset + 8], as: UTF8.self)
            if type == "moov" { return sawMdat }
            if type == "mdat" { sawMdat = true }
            guard size >= 8 else { return false }
            offset += size
        }
        return false
    }
}
