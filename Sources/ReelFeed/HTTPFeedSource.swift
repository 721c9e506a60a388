import Foundation
import ReelCore

/// The JSON of the paged feed API, as the client reads it and a server writes it.
///
/// - `GET {base}/categories` → `{"categories": [{"id": "travel", "title": "旅行"}]}`
/// - `GET {base}/feed?category=ID&current=N&size=S` → `{"items": [ITEM…]}`
/// - `GET {base}/search?text=T&current=N&size=S` → `{"items": [ITEM…]}`
///
/// `current` counts pages from 1. A page with fewer than `size` items is the last
/// ("no more data"). ITEM is `{"id", "title", "uploader", "video", "cover", "category",
/// "images"}` with absolute URLs (or URLs relative to the request).
public enum FeedAPIFormat {
    struct CategoryList: Codable {
        var categories: [FeedCategory]
    }

    struct ItemList: Codable {
        var items: [Item]
    }

    struct Item: Codable {
        var id: String
        var title: String
        var uploader: String?
        var video: String?
        var cover: String?
        var category: String?
        var images: [String]?
    }

    /// The body of a categories answer.
    public static func encodeCategories(_ categories: [FeedCategory]) throws -> Data {
        try JSONEncoder().encode(CategoryList(categories: categories))
    }

    /// The body of a page answer.
    public static func encodeItems(_ items: [FeedItem]) throws -> Data {
        try JSONEncoder().encode(ItemList(items: items.map {
            Item(id: $0.id, title: $0.title, uploader: $0.uploader, video: $0.videoURL?.absoluteString,
                 cover: $0.coverURL?.absoluteString, category: $0.category, images: $0.images.map(\.absoluteString))
        }))
    }

    /// The items of a page answer; relative URLs resolve against `base` (the request's URL).
    public static func decodeItems(_ data: Data, relativeTo base: URL) throws -> [FeedItem] {
        let list: ItemList
        do {
            list = try JSONDecoder().decode(ItemList.self, from: data)
        } catch {
            throw FeedError.malformed("feed page: \(error)")
        }
        return list.items.map { item in
            FeedItem(
                id: item.id, title: item.title, uploader: item.uploader ?? "",
                videoURL: item.video.flatMap { URL(string: $0, relativeTo: base)?.absoluteURL },
                coverURL: item.cover.flatMap { URL(string: $0, relativeTo: base)?.absoluteURL },
                category: item.category,
                images: (item.images ?? []).compactMap { URL(string: $0, relativeTo: base)?.absoluteURL }
            )
        }
    }
}

/// The paged HTTP feed API (see ``FeedAPIFormat``), read through a loader — an
/// `HTTPLoader` with a bearer token for authorised feeds. A 401 or 403 throws
/// ``FeedError/authorizationRequired`` (and calls `onAuthorizationRequired`), so the
/// app can sign in and retry.
public struct HTTPFeedSource: FeedSource {
    public let baseURL: URL
    private let loader: any ResourceLoader
    private let onAuthorizationRequired: (@Sendable () -> Void)?

    public init(baseURL: URL, loader: any ResourceLoader, onAuthorizationRequired: (@Sendable () -> Void)? = nil) {
        self.baseURL = baseURL
        self.loader = loader
        self.onAuthorizationRequired = onAuthorizationRequired
    }

    public func categories() async throws -> [FeedCategory] {
        let data = try await fetch(endpoint("categories", query: []))
        do {
            return try JSONDecoder().decode(FeedAPIFormat.CategoryList.self, from: data).categories
        } catch {
            throw FeedError.malformed("categories: \(error)")
        }
    }

    public func page(category: String?, page: Int, size: Int) async throws -> FeedPage {
        var query = [URLQueryItem(name: "current", value: String(page)), URLQueryItem(name: "size", value: String(size))]
        if let category { query.insert(URLQueryItem(name: "category", value: category), at: 0) }
        return try await items(endpoint("feed", query: query), size: size)
    }

    public func search(text: String, page: Int, size: Int) async throws -> FeedPage {
        let query = [URLQueryItem(name: "text", value: text), URLQueryItem(name: "current", value: String(page)),
                     URLQueryItem(name: "size", value: String(size))]
        return try await items(endpoint("search", query: query), size: size)
    }

    private func items(_ url: URL, size: Int) async throws -> FeedPage {
        let items = try FeedAPIFormat.decodeItems(try await fetch(url), relativeTo: url)
        return FeedPage(items: items, hasMore: items.count >= size)
    }

    private func endpoint(_ name: String, query: [URLQueryItem]) -> URL {
        var components = URLComponents(url: baseURL.appendingPathComponent(name), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query }
        return components.url!
    }

    private func fetch(_ url: URL) async throws -> Data {
        do {
            return try await loader.data(url)
        } catch let error as ResourceLoaderError {
            if case .unauthorized = error {
                onAuthorizationRequired?()
                throw FeedError.authorizationRequired
            }
            throw FeedError.unavailable(error.description)
        }
    }
}
