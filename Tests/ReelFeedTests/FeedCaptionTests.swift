import Foundation
import ReelCore
@testable import ReelFeed
import ReelMedia
import ReelTestSupport
import Synchronization
import Testing

/// Captions in feeds: named by the feed API, a manifest or files beside the videos, read with the
/// page's item (so a pre-rendered page has its cues before it plays), behind the closed door.
@Suite struct FeedCaptionTests {
    static let srt = "1\n00:00:00,100 --> 00:00:01,500\n第一句 first line\n\n2\n00:00:01,600 --> 00:00:01,900\nsecond\n"

    @Test func theNextPageHasItsCaptionsBeforeItPlaysAndTheCurrentOneShowsThem() async throws {
        let captions = (0..<3).reduce(into: [Int: [FeedCaption]]()) { all, i in
            all[i] = [FeedCaption(url: URL(string: "https://fake.example/v\(i).srt")!, language: "zh", label: "中文")]
        }
        let harness = try FeedHarness(count: 3, captions: captions)
        for i in 0..<3 { harness.loader.add(Data(Self.srt.utf8), at: URL(string: "https://fake.example/v\(i).srt")!) }
        try await harness.start()
        let session = harness.session
        await harness.running(upTo: seconds(2)) {
            (session.player(at: 1)?.captionTracks.count ?? 0) == 1 && !(session.currentPlayer?.shownCaptions.isEmpty ?? true)
        }
        let next = try #require(session.player(at: 1))
        #expect(next.rate == 0, "the next page has not played")
        #expect(next.captionTracks.map(\.label) == ["中文"])
        #expect(next.captionEvents(of: .sideloaded(0)).map(\.plainText) == ["第一句 first line", "second"])
        #expect(session.currentPlayer?.shownCaptions.map(\.plainText) == ["第一句 first line"])
        #expect(harness.loader.requests.filter { $0.url.pathExtension == "srt" }.count == 2, "the current and the next page's")
        // Off for the feed: every page of the pool stops showing them.
        session.captionSelection.isEnabled = false
        await harness.running(upTo: seconds(0.2)) { session.currentPlayer?.shownCaptions.isEmpty ?? false }
        #expect(session.currentPlayer?.shownCaptions.isEmpty == true)
        #expect(session.player(at: 1)?.captionSelection.isEnabled == false)
    }

    @Test func aCaptionTheFeedNamesOutsideTheClosedDoorIsRefusedAndTheVideoPlays() async throws {
        let refused = URL(fileURLWithPath: "/etc/passwd")
        let harness = try FeedHarness(count: 2, captions: [0: [FeedCaption(url: refused)]])
        try await harness.start()
        await harness.running(upTo: seconds(3)) { harness.firstFrames.contains { $0.index == 0 } }
        #expect(harness.firstFrames.contains { $0.index == 0 })
        let player = try #require(harness.session.currentPlayer)
        #expect(player.captionTracks.isEmpty)
        #expect(!harness.loader.requests.contains { $0.url == refused })
    }
}

@Suite struct FeedCaptionSourceTests {
    @Test func sidecarsBesideAVideoBecomeItsCaptions() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sidecars-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        for name in ["clip.mp4", "clip.srt", "clip.en.srt", "clip.zh-Hans.vtt", "clip.backup.srt", "clipper.srt",
                     "clipper.mp4", "clip.notes.txt"] {
            try Data([1]).write(to: root.appendingPathComponent(name))
        }
        let items = try await DirectoryFeedSource(directory: root).page(category: nil, page: 1, size: 10).items
        let clip = try #require(items.first { $0.id == "clip.mp4" })
        #expect(clip.captions.map(\.url.lastPathComponent) == ["clip.srt", "clip.en.srt", "clip.zh-Hans.vtt"])
        #expect(clip.captions.map(\.language) == [nil, "en", "zh-Hans"])
        let clipper = try #require(items.first { $0.id == "clipper.mp4" })
        #expect(clipper.captions.map(\.url.lastPathComponent) == ["clipper.srt"])
    }

    @Test func theFeedAPIAndAManifestCarryCaptionsWithRelativeURLs() async throws {
        let base = URL(string: "https://feeds.example/v1/page?n=1")!
        let body = #"{"items": [{"id": "1", "title": "t", "video": "v/1.mp4", "captions": [{"url": "c/1.en.vtt", "language": "en", "label": "English"}, {"url": "https://cdn.example/1.srt"}]}, {"id": "2", "title": "old", "video": "v/2.mp4"}]}"#
        let items = try FeedAPIFormat.decodeItems(Data(body.utf8), relativeTo: base)
        #expect(items[0].captions == [
            FeedCaption(url: URL(string: "https://feeds.example/v1/c/1.en.vtt")!, language: "en", label: "English"),
            FeedCaption(url: URL(string: "https://cdn.example/1.srt")!),
        ])
        #expect(items[1].captions.isEmpty)
        // What the API writes reads back the same.
        let again = try FeedAPIFormat.decodeItems(try FeedAPIFormat.encodeItems(items), relativeTo: base)
        #expect(again == items)
        // A manifest (demo/feed.json's format) too.
        let loader = FakeResourceLoader()
        let manifest = URL(string: "https://feeds.example/v1/feed.json")!
        loader.add(Data(body.utf8), at: manifest)
        let source = try await ManifestFeedSource(url: manifest, loader: loader)
        let page = try await source.page(category: nil, page: 1, size: 10)
        #expect(page.items.first?.captions.first?.url.absoluteString == "https://feeds.example/v1/c/1.en.vtt")
    }
}
