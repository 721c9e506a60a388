import Foundation
import ReelCore

/// The paged HTTP feed API (see `FeedAPIFormat`), read through a loader — an
/// `HTTPLoader` with a bearer token for authorised feeds. A 401 or 403 throws
/// `FeedError.authorizationRequired` (and calls `onAuthorizationRequired`), so the
/// app can sign in and retry.
public struct HTTPFeedSource: FeedSource {
    /// The API's root: the endpoints are `categories`, `feed` and `search` under it (a
    /// request is `GET <baseURL>/feed?category=…&current=…&size=…`).
    public let baseURL: URL
    private let loader: any ResourceLoader
    private let onAuthorizationRequired: (@Sendable () -> Void)?

    /// A source asking the API at `baseURL` through `loader` (which carries any bearer
    /// token; the source adds no headers of its own). `onAuthorizationRequired` is called,
    /// on the task that made the request, each time the API answers 401 or 403, before the
    /// call throws `FeedError.authorizationRequired`.
    public init(baseURL: URL, loader: any ResourceLoader, onAuthorizationRequired: (@Sendable () -> Void)? = nil) {
        self.baseURL = baseURL
        self.loader = loader
        self.onAuthorizationRequired = onAuthorizationRequired
    }

    /// `GET <baseURL>/categories`: the API's tabs, in its order. Throws
    /// `FeedError.authorizationRequired` on 401 or 403, `FeedError.unavailable(_:)` when the
    /// request fails (the loader's message: status, timeout, refused connection) and
    /// `FeedError.malformed(_:)` when the answer is not the categories JSON.
    public func categories() async throws -> [FeedCategory] {
        let data = try await fetch(endpoint("categories", query: []))
        do {
            return try FeedAPIFormat.decodeCategories(data)
        } catch {
            throw FeedError.malformed("categories: \(error)")
        }
    }

    /// `GET <baseURL>/feed?category=…&current=page&size=size` (no `category` when it is
    /// `nil`): page `page`, 1-based, of at most `size` items, with relative media URLs made
    /// absolute against the request's URL. `hasMore` is true when the page came full (the
    /// API does not say). Throws as ``categories()`` does.
    public func page(category: String?, page: Int, size: Int) async throws -> FeedPage {
        var query = [URLQueryItem(name: "current", value: String(page)), URLQueryItem(name: "size", value: String(size))]
        if let category { query.insert(URLQueryItem(name: "category", value: category), at: 0) }
        return try await items(endpoint("feed", query: query), size: size)
    }

    /// `GET <baseURL>/search?text=…&current=page&size=size`: page `page`, 1-based, of the
    /// items the API finds for `text` (the matching is the server's). `hasMore` and the
    /// errors are as in ``page(category:page:size:)``.
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
