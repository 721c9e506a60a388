import Foundation
import ReelCore

/// A feed described by a JSON manifest (a file or a URL, read through a loader):
///
/// ```json
/// {
///   "categories": [{"id": "travel", "title": "旅行"}],
///   "items": [
///     {"id": "1", "title": "Harbour at dawn", "uploader": "@lin", "video": "clips/harbour.mp4",
///      "cover": "covers/harbour.jpg", "category": "travel"},
///     {"id": "2", "title": "相册", "uploader": "@mei", "images": ["p/1.jpg", "p/2.jpg"], "category": "travel"}
///   ]
/// }
/// ```
///
/// `id` and `title` are required, and an item has a `video` or `images`. Relative
/// URLs resolve against the manifest's own URL. `categories` may be left out.
public struct ManifestFeedSource: FeedSource {
    /// Where the manifest was read from (``init(manifest:baseURL:)``'s `baseURL`): the
    /// URL its relative media URLs were resolved against.
    public let manifestURL: URL
    /// Every item of the manifest, in its order, with absolute media URLs; checked at init
    /// (unique non-empty ids, a video or pictures each).
    public let items: [FeedItem]
    private let tabs: [FeedCategory]

    /// Reads and checks the manifest at `url` through `loader` (a file URL, or an HTTP one
    /// with an `HTTPLoader`). Throws `FeedError.unavailable(_:)` when it cannot be read and
    /// `FeedError.malformed(_:)` as ``init(manifest:baseURL:)`` does.
    public init(url: URL, loader: any ResourceLoader) async throws {
        let data: Data
        do {
            data = try await loader.data(url)
        } catch {
            throw FeedError.unavailable("\(url.isFileURL ? url.path : url.absoluteString): \(error)")
        }
        try self.init(manifest: data, baseURL: url)
    }

    /// Parses a manifest whose relative URLs resolve against `baseURL`. Throws
    /// `FeedError.malformed(_:)`, naming the field, when the JSON does not have the shape
    /// above, an id is empty or used twice, an item has neither a video nor pictures, or a
    /// URL does not parse.
    public init(manifest data: Data, baseURL: URL) throws {
        self.manifestURL = baseURL
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch let error as DecodingError {
            throw FeedError.malformed(Self.explain(error))
        } catch {
            throw FeedError.malformed("\(error)")
        }
        var seen = Set<String>()
        var items: [FeedItem] = []
        for (index, entry) in document.items.enumerated() {
            guard !entry.id.isEmpty else { throw FeedError.malformed("item \(index) has an empty id") }
            guard seen.insert(entry.id).inserted else { throw FeedError.malformed("item id \"\(entry.id)\" is used twice") }
            let video = try entry.video.map { try Self.resolve($0, against: baseURL, field: "items[\(index)].video") }
            let images = try (entry.images ?? []).enumerated().map { try Self.resolve($1, against: baseURL, field: "items[\(index)].images[\($0)]") }
            guard video != nil || !images.isEmpty else {
                throw FeedError.malformed("item \"\(entry.id)\" has neither a video nor images")
            }
            items.append(FeedItem(
                id: entry.id, title: entry.title, uploader: entry.uploader ?? "", videoURL: video,
                coverURL: try entry.cover.map { try Self.resolve($0, against: baseURL, field: "items[\(index)].cover") },
                category: entry.category, images: images,
                captions: try (entry.captions ?? []).enumerated().map { number, caption in
                    FeedCaption(url: try Self.resolve(caption.url, against: baseURL, field: "items[\(index)].captions[\(number)].url"),
                                language: caption.language, label: caption.label)
                }
            ))
        }
        self.items = items
        self.tabs = document.categories ?? []
    }

    /// The manifest's `categories`, in its order (empty when it has none). Never throws.
    public func categories() async throws -> [FeedCategory] { tabs }

    /// Page `page` (1-based) of `size` ``items``: all of them when `category` is `nil`, else
    /// those whose `category` is that id. A page past the end is empty with `hasMore` false.
    /// Never throws.
    public func page(category: String?, page: Int, size: Int) async throws -> FeedPage {
        let chosen = category.map { id in items.filter { $0.category == id } } ?? items
        return Self.slice(chosen, page: page, size: size)
    }

    /// Page `page` (1-based) of the ``items`` whose title, uploader or category contains
    /// `text` (case-insensitively, surrounding blanks ignored; blank text matches nothing).
    /// Never throws.
    public func search(text: String, page: Int, size: Int) async throws -> FeedPage {
        Self.slice(Self.matching(items, text: text), page: page, size: size)
    }

    // MARK: The JSON shape

    /// Items are written as the feed API writes them (``FeedAPIFormat``).
    struct Document: Decodable {
        var categories: [FeedCategory]?
        var items: [FeedAPIFormat.Item]
    }

    private static func resolve(_ text: String, against base: URL, field: String) throws -> URL {
        if let absolute = URL(string: text), absolute.scheme != nil { return absolute }
        guard let relative = URL(string: text, relativeTo: base)?.absoluteURL, !text.isEmpty else {
            throw FeedError.malformed("\(field) is not a URL: \(text)")
        }
        return relative
    }

    private static func explain(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\" at \(path(context).isEmpty ? "the top" : path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "wrong type at \(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context): return "not JSON: \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
