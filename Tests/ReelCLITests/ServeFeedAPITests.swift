import Foundation
import ReelCore
import ReelFeed
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel serve DIR` answers the feed API over the directory, and its item URLs play.
@Suite("reel serve: the feed API")
struct ServeFeedAPITests {
    @Test func aDirectoryIsServedAsAPagedFeedWhoseURLsLoad() async throws {
        let reel = try await ReelBinary.locate()
        let root = try Scratch("reel-feed-api")
        defer { root.remove() }
        let fm = FileManager.default
        try fm.createDirectory(at: root.url.appendingPathComponent("旅行"), withIntermediateDirectories: true)
        let clip = try Data(contentsOf: Fixtures.clip(ClipSpec(duration: 1)))
        for name in ["a.mp4", "b.mp4", "旅行/harbour at dawn.mp4", "旅行/market.mp4", "旅行/night.mp4"] {
            try clip.write(to: root.url.appendingPathComponent(name))
        }
        let server = try Child(reel, ["serve", root.path, "--port", "0"])
        defer { server.kill(SIGKILL) }
        let base = try await servedURL(server, attempts: 500)
        let origin = try #require(base, "reel serve printed no URL: \(server.output)")
        let http = HTTPLoader()
        let source = HTTPFeedSource(baseURL: origin.appendingPathComponent("api"), loader: http)
        do {
            #expect(try await source.categories().map(\.id) == ["旅行"])
            let first = try await source.page(category: "旅行", page: 1, size: 2)
            #expect(first.items.map(\.title) == ["harbour at dawn", "market"] && first.hasMore)
            let last = try await source.page(category: "旅行", page: 2, size: 2)
            #expect(last.items.map(\.title) == ["night"] && !last.hasMore)
            let all = try await source.page(category: nil, page: 1, size: 10)
            #expect(all.items.count == 5)
            #expect(try await source.search(text: "market", page: 1, size: 10).items.count == 1)
            let video = try #require(first.items.first?.videoURL)
            #expect(video.host == origin.host && video.port == origin.port)
            #expect(try await http.data(video) == clip, "the item's URL serves the file")
        } catch {
            await http.shutdown()
            throw error
        }
        await http.shutdown()
        server.kill(SIGTERM)
        #expect(await server.exitStatus() == 0)
    }
}
