import Foundation
import ReelCore
@testable import ReelFeed
import ReelTestSupport
import Testing

@Suite struct DirectoryFeedSourceTests {
    private func makeTree() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reel-feed-\(UUID().uuidString)")
        let fm = FileManager.default
        for path in ["travel", "food", "album", "travel/trip_photos"] {
            try fm.createDirectory(at: root.appendingPathComponent(path), withIntermediateDirectories: true)
        }
        for file in ["a_first-clip.mp4", "a_first-clip.jpg", "b.webm", "notes.txt", ".hidden.mp4",
                     "travel/harbour.mp4", "travel/market.mov", "food/noodles.mkv",
                     "album/1.jpg", "album/2.png", "travel/trip_photos/x.jpg"] {
            try Data([1]).write(to: root.appendingPathComponent(file))
        }
        return root
    }

    @Test func videosAreItemsPictureFoldersArePostsAndVideoFoldersAreCategories() async throws {
        let root = try makeTree()
        defer { try? FileManager.default.removeItem(at: root) }
        let source = try DirectoryFeedSource(directory: root)
        #expect(try await source.categories().map(\.id) == ["food", "travel"])
        let all = try await source.page(category: nil, page: 1, size: 50)
        #expect(all.items.map(\.id) == ["a_first-clip.mp4", "b.webm", "album/", "food/noodles.mkv",
                                        "travel/harbour.mp4", "travel/market.mov", "travel/trip_photos/"])
        #expect(!all.hasMore)
        let first = all.items[0]
        #expect(first.title == "a first clip")
        #expect(first.coverURL?.lastPathComponent == "a_first-clip.jpg")
        #expect(all.items[1].coverURL == nil, "no cover: the first keyframe is the cover")
        let album = all.items[2]
        #expect(album.isImagePost && album.images.map(\.lastPathComponent) == ["1.jpg", "2.png"])
        let travel = try await source.page(category: "travel", page: 1, size: 2)
        #expect(travel.items.map(\.id) == ["travel/harbour.mp4", "travel/market.mov"])
        #expect(travel.hasMore)
        let rest = try await source.page(category: "travel", page: 2, size: 2)
        #expect(rest.items.map(\.id) == ["travel/trip_photos/"] && !rest.hasMore)
    }

    @Test func searchMatchesTitlesCaseInsensitively() async throws {
        let root = try makeTree()
        defer { try? FileManager.default.removeItem(at: root) }
        let source = try DirectoryFeedSource(directory: root)
        #expect(try await source.search(text: "HARBOUR", page: 1, size: 10).items.map(\.id) == ["travel/harbour.mp4"])
        #expect(try await source.search(text: "  ", page: 1, size: 10).items.isEmpty)
    }

    @Test func aMissingDirectoryIsAClearError() {
        #expect(throws: FeedError.self) { try DirectoryFeedSource(directory: URL(fileURLWithPath: "/nonexistent/reel")) }
    }
}

@Suite struct ManifestFeedSourceTests {
    static let manifest = """
    {
      "categories": [{"id": "travel", "title": "旅行"}, {"id": "food", "title": "Food"}],
      "items": [
        {"id": "1", "title": "Harbour at dawn", "uploader": "@lin", "video": "clips/harbour.mp4", "cover": "covers/harbour.jpg", "category": "travel"},
        {"id": "2", "title": "相册", "uploader": "@mei", "images": ["p/1.jpg", "https://cdn.example/p/2.jpg"], "category": "travel"},
        {"id": "3", "title": "Noodles", "video": "https://cdn.example/noodles.mp4", "category": "food"}
      ]
    }
    """

    @Test func readsThroughALoaderAndResolvesRelativeURLs() async throws {
        let loader = FakeResourceLoader()
        let url = URL(string: "https://feeds.example/v1/manifest.json")!
        loader.add(Data(Self.manifest.utf8), at: url)
        let source = try await ManifestFeedSource(url: url, loader: loader)
        #expect(try await source.categories() == [FeedCategory(id: "travel", title: "旅行"), FeedCategory(id: "food", title: "Food")])
        let travel = try await source.page(category: "travel", page: 1, size: 10)
        #expect(travel.items.count == 2)
        #expect(travel.items[0].videoURL?.absoluteString == "https://feeds.example/v1/clips/harbour.mp4")
        #expect(travel.items[0].coverURL?.absoluteString == "https://feeds.example/v1/covers/harbour.jpg")
        #expect(travel.items[1].isImagePost)
        #expect(travel.items[1].images.map(\.absoluteString) == ["https://feeds.example/v1/p/1.jpg", "https://cdn.example/p/2.jpg"])
        #expect(try await source.search(text: "noodles", page: 1, size: 10).items.map(\.id) == ["3"])
    }

    @Test(arguments: [
        ("{\"items\": [{\"title\": \"x\", \"video\": \"a.mp4\"}]}", "missing \"id\""),
        ("{\"items\": [{\"id\": \"1\", \"title\": \"x\"}]}", "neither a video nor images"),
        ("{\"items\": [{\"id\": \"1\", \"title\": \"x\", \"video\": \"a.mp4\"}, {\"id\": \"1\", \"title\": \"y\", \"video\": \"b.mp4\"}]}", "used twice"),
        ("not json", "not JSON"),
        ("{\"items\": 3}", "wrong type"),
    ])
    func malformedManifestsSayWhatIsWrong(_ text: String, _ expected: String) {
        do {
            _ = try ManifestFeedSource(manifest: Data(text.utf8), baseURL: URL(fileURLWithPath: "/feeds/m.json"))
            Issue.record("accepted a malformed manifest")
        } catch let error as FeedError {
            #expect(error.description.contains(expected), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func anUnreachableManifestIsUnavailable() async {
        let loader = FakeResourceLoader()
        await #expect(throws: FeedError.self) {
            _ = try await ManifestFeedSource(url: URL(string: "https://feeds.example/missing.json")!, loader: loader)
        }
    }

    @Test func pagesStopAtTheEnd() {
        let items = (1...5).map { FeedItem(id: "\($0)", title: "t\($0)", videoURL: URL(fileURLWithPath: "/v/\($0).mp4")) }
        #expect(ManifestFeedSource.slice(items, page: 1, size: 2).hasMore)
        #expect(ManifestFeedSource.slice(items, page: 3, size: 2).items.map(\.id) == ["5"])
        #expect(!ManifestFeedSource.slice(items, page: 3, size: 2).hasMore)
        #expect(ManifestFeedSource.slice(items, page: 4, size: 2).items.isEmpty)
        #expect(ManifestFeedSource.slice(items, page: 0, size: 2).items.isEmpty)
    }
}
