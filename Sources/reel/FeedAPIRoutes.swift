import Foundation
import ReelFeed
import ReelOrigin

/// The paged feed API (`ReelFeed.FeedAPIFormat`) over a directory, as `reel serve`
/// answers it under `/api/`: `categories`, `feed?category=&current=&size=` and
/// `search?text=&current=&size=`. Item URLs are paths on the same server, so a client
/// resolves them against the address it asked.
enum FeedAPIRoutes {
    static func routes(serving root: URL) throws -> [OriginRoute] {
        routes(source: try DirectoryFeedSource(directory: root), root: root)
    }

    /// The feed API answering from `source`, whose file URLs under `root` become paths on the server.
    static func routes(source: any FeedSource, root: URL) -> [OriginRoute] {
        let rootPath = root.standardizedFileURL.path
        /// A file URL under the root as an absolute path on the server (`/travel/a.mp4`).
        @Sendable func served(_ url: URL?) -> URL? {
            guard let url else { return nil }
            // Already a path on this server (uploads).
            if url.scheme == nil { return url }
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(rootPath) else { return nil }
            var relative = String(path.dropFirst(rootPath.count))
            if !relative.hasPrefix("/") { relative = "/" + relative }
            let encoded = relative.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0) }
                .joined(separator: "/")
            return URL(string: encoded)
        }
        @Sendable func onServer(_ page: FeedPage) -> [FeedItem] {
            page.items.map { item in
                var copy = item
                copy.videoURL = served(item.videoURL)
                copy.coverURL = served(item.coverURL)
                copy.images = item.images.compactMap(served)
                copy.captions = item.captions.compactMap { caption in
                    served(caption.url).map { FeedCaption(url: $0, language: caption.language, label: caption.label) }
                }
                return copy
            }
        }
        @Sendable func paging(_ request: OriginRequest) -> (page: Int, size: Int)? {
            let query = request.queryItems
            let page = Int(query["current"] ?? "1") ?? 0
            let size = Int(query["size"] ?? "10") ?? 0
            guard page >= 1, (1...100).contains(size) else { return nil }
            return (page, size)
        }
        let categories = OriginRoute(pathPrefix: "/api/categories", methods: ["GET", "HEAD"]) { _ in
            .json(try FeedAPIFormat.encodeCategories(try await source.categories()))
        }
        let feed = OriginRoute(pathPrefix: "/api/feed", methods: ["GET", "HEAD"]) { request in
            guard let (page, size) = paging(request) else { return .text("current must be ≥ 1 and size 1…100\n", status: 400) }
            let category = request.queryItems["category"].flatMap { $0.isEmpty ? nil : $0 }
            return .json(try FeedAPIFormat.encodeItems(onServer(try await source.page(category: category, page: page, size: size))))
        }
        let search = OriginRoute(pathPrefix: "/api/search", methods: ["GET", "HEAD"]) { request in
            guard let (page, size) = paging(request) else { return .text("current must be ≥ 1 and size 1…100\n", status: 400) }
            let text = request.queryItems["text"] ?? ""
            return .json(try FeedAPIFormat.encodeItems(onServer(try await source.search(text: text, page: page, size: size))))
        }
        return [categories, feed, search]
    }
}
