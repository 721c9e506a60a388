import Foundation
import ReelMedia
import ReelMediaTools
@testable import ReelDemo
import Testing

/// The demo feed's recipe lives in the top-level `demo/feed.json` and is embedded in ReelDemo.
@Suite("DemoRecipe")
struct DemoRecipeTests {
    static let recipeFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("demo/feed.json")

    @Test func theEmbeddedRecipeIsDemoFeedJSON() throws {
        let onDisk = try DemoLibrary.Recipe(json: Data(contentsOf: Self.recipeFile))
        let embedded = DemoLibrary.recipe
        #expect(embedded.version == onDisk.version)
        #expect(embedded.categories == onDisk.categories)
        #expect(embedded.entries.map(\.id) == onDisk.entries.map(\.id))
        #expect(embedded.entries.map(\.title) == onDisk.entries.map(\.title))
        #expect(DemoLibrary.catalogueCount == onDisk.entries.count)
    }

    /// A small library (the first five entries) still has HEVC, moov at the end, landscape,
    /// an image post and an HLS stream; every category is used.
    @Test func theFirstEntriesCoverEveryKind() {
        let first = DemoLibrary.catalogue.prefix(5)
        var codecs = Set<ClipSpec.VideoCodec>(), containers = Set<ClipSpec.Container>(), images = false, streams = false
        for entry in first {
            switch entry.kind {
            case .video(let codec, let container, _): codecs.insert(codec); containers.insert(container)
            case .stream(let codec, _, _): codecs.insert(codec); streams = true
            case .images: images = true
            }
        }
        #expect(streams)
        #expect(codecs.contains(.hevc) && codecs.contains(.h264))
        #expect(containers.contains(.mp4MoovAtEnd))
        #expect(first.contains { !$0.portrait })
        #expect(images)
        #expect(Set(DemoLibrary.catalogue.map(\.category)) == Set(DemoLibrary.categories.map(\.id)))
        // The whole feed holds one adaptive stream and one live one.
        let lives = DemoLibrary.catalogue.compactMap { entry -> Bool? in
            if case .stream(_, _, let live) = entry.kind { return live }
            return nil
        }
        #expect(lives.sorted { !$0 && $1 } == [false, true], "\(lives)")
        // Titles carry Chinese beside the English.
        #expect(DemoLibrary.catalogue.allSatisfy { $0.title.unicodeScalars.contains { $0.value >= 0x2E80 } })
    }

    @Test(arguments: [
        ("{", "not a demo recipe"),
        (#"{"version": 1, "categories": [], "items": []}"#, "no items"),
        (#"{"version": 1, "categories": [{"id": "a", "title": "A"}], "items": [{"id": "x", "title": "X", "uploader": "@u", "category": "b", "portrait": true, "images": [{"pattern": "rgb"}]}]}"#, "no category b"),
        (#"{"version": 1, "categories": [{"id": "a", "title": "A"}], "items": [{"id": "x", "title": "X", "uploader": "@u", "category": "a", "portrait": true, "duration": 2, "video": {"codec": "theora", "container": "mp4", "pattern": "rgb"}}]}"#, "no codec theora"),
        (#"{"version": 1, "categories": [{"id": "a", "title": "A"}], "items": [{"id": "x", "title": "X", "uploader": "@u", "category": "a", "portrait": true, "video": {"codec": "h264", "container": "mp4", "pattern": "rgb"}}]}"#, "needs a duration"),
        (#"{"version": 1, "categories": [{"id": "a", "title": "A"}], "items": [{"id": "x", "title": "X", "uploader": "@u", "category": "a", "portrait": true, "images": [{"pattern": "plasma"}]}]}"#, "no pattern plasma"),
        (#"{"version": 1, "categories": [{"id": "a", "title": "A"}], "items": [{"id": "x", "title": "X", "uploader": "@u", "category": "a", "portrait": true, "images": [{"pattern": "gradients", "colours": ["white"]}]}]}"#, "two colours"),
        (#"{"version": 1, "categories": [{"id": "a", "title": "A"}], "items": [{"id": "x", "title": "X", "uploader": "@u", "category": "a", "portrait": true}]}"#, "needs a video or images"),
        (#"{"version": 1, "categories": [{"id": "a", "title": "A"}], "items": [{"id": "x", "title": "X", "uploader": "@u", "category": "a", "portrait": true, "images": [{"pattern": "rgb"}]}, {"id": "x", "title": "Y", "uploader": "@u", "category": "a", "portrait": true, "images": [{"pattern": "rgb"}]}]}"#, "id used twice"),
    ])
    func aBrokenRecipeSaysWhatIsWrong(json: String, problem: String) {
        #expect {
            _ = try DemoLibrary.Recipe(json: Data(json.utf8))
        } throws: { error in
            "\(error)".contains(problem)
        }
    }
}
