import Foundation

/// The JSON of the paged feed API, as the client reads it and a server writes it.
///
/// - `GET {base}/categories` → `{"categories": [{"id": "travel", "title": "旅行"}]}`
/// - `GET {base}/feed?category=ID&current=N&size=S` → `{"items": [ITEM…]}`
/// - `GET {base}/search?text=T&current=N&size=S` → `{"items": [ITEM…]}`
///
/// `current` counts pages from 1. A page with fewer than `size` items is the last
/// ("no more data"). ITEM is `{"id", "title", "uploader", "video", "cover", "category",
/// "images", "captions", "loudness", "truePeak"}` with absolute URLs (or URLs relative to the
/// request); `loudness` (LUFS) and `truePeak` (dBTP) are optional numbers a backend measures
/// once per upload, by which the player levels the item before its first sound.
public enum FeedAPIFormat {
    struct CategoryList: Codable {
        var categories: [FeedCategory]
    }

    struct ItemList: Codable {
        var items: [Item]
    }

    /// One item as the API writes it (URLs as text; absolute, or relative to the request).
    public struct Item: Codable, Sendable {
        public var id: String
        public var title: String
        public var uploader: String?
        public var video: String?
        public var cover: String?
        public var category: String?
        public var images: [String]?
        /// `[{"url": "...", "language": "en", "label": "English"}]`; URLs as for `video`.
        public var captions: [Caption]?
        /// Integrated loudness in LUFS and true peak in dBTP, when measured.
        public var loudness: Double?
        public var truePeak: Double?
    }

    /// One caption file of an item as the API writes it.
    public struct Caption: Codable, Sendable {
        public var url: String
        public var language: String?
        public var label: String?
    }

    /// The body of a categories answer.
    public static func encodeCategories(_ categories: [FeedCategory]) throws -> Data {
        try JSONEncoder().encode(CategoryList(categories: categories))
    }

    /// The categories of a categories answer.
    public static func decodeCategories(_ data: Data) throws -> [FeedCategory] {
        try JSONDecoder().decode(CategoryList.self, from: data).categories
    }

    /// The body of a page answer.
    public static func encodeItems(_ items: [FeedItem]) throws -> Data {
        try JSONEncoder().encode(ItemList(items: items.map {
            Item(id: $0.id, title: $0.title, uploader: $0.uploader, video: $0.videoURL?.absoluteString,
                 cover: $0.coverURL?.absoluteString, category: $0.category, images: $0.images.map(\.absoluteString),
                 captions: $0.captions.isEmpty ? nil : $0.captions.map { Caption(url: $0.url.absoluteString, language: $0.language, label: $0.label) },
                 loudness: $0.loudness, truePeak: $0.truePeak)
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
                images: (item.images ?? []).compactMap { URL(string: $0, relativeTo: base)?.absoluteURL },
                captions: (item.captions ?? []).compactMap { caption in
                    URL(string: caption.url, relativeTo: base).map {
                        FeedCaption(url: $0.absoluteURL, language: caption.language, label: caption.label)
                    }
                },
                loudness: item.loudness.flatMap { $0.isFinite ? $0 : nil },
                truePeak: item.truePeak.flatMap { $0.isFinite ? $0 : nil }
            )
        }
    }
}
