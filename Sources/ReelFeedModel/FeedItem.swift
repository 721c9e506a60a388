import Foundation

/// One entry of a feed: a video, or an image post (a carousel of pictures).
public struct FeedItem: Sendable, Hashable, Codable, Identifiable {
    public var id: String
    public var title: String
    public var uploader: String
    /// The video, for a video item.
    public var videoURL: URL?
    /// The cover picture; when absent the first keyframe of the video is the cover.
    public var coverURL: URL?
    /// The category's id, when the item belongs to one.
    public var category: String?
    /// The pictures of an image post, in order (empty for a video).
    public var images: [URL]
    /// Caption files for the video (SubRip, WebVTT, ASS), each with its language and label.
    public var captions: [FeedCaption]
    /// The video's integrated loudness (LUFS, ITU-R BS.1770 / EBU R128) and true peak (dBTP),
    /// when the backend measured them (once per upload): the player levels the item by them
    /// instead of measuring it. Absent in older feeds.
    public var loudness: Double?
    public var truePeak: Double?

    public init(id: String, title: String, uploader: String = "", videoURL: URL? = nil, coverURL: URL? = nil,
                category: String? = nil, images: [URL] = [], captions: [FeedCaption] = [],
                loudness: Double? = nil, truePeak: Double? = nil) {
        self.loudness = loudness
        self.truePeak = truePeak
        self.id = id
        self.title = title
        self.uploader = uploader
        self.videoURL = videoURL
        self.coverURL = coverURL
        self.category = category
        self.images = images
        self.captions = captions
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        uploader = try container.decode(String.self, forKey: .uploader)
        videoURL = try container.decodeIfPresent(URL.self, forKey: .videoURL)
        coverURL = try container.decodeIfPresent(URL.self, forKey: .coverURL)
        category = try container.decodeIfPresent(String.self, forKey: .category)
        images = try container.decode([URL].self, forKey: .images)
        // Items written before captions existed have none.
        captions = try container.decodeIfPresent([FeedCaption].self, forKey: .captions) ?? []
        // Items written before loudness existed have none.
        loudness = try container.decodeIfPresent(Double.self, forKey: .loudness)
        truePeak = try container.decodeIfPresent(Double.self, forKey: .truePeak)
    }

    /// The uploader as a handle to show: `@name` (feeds write it with or without the
    /// `@`), empty when there is none.
    public var uploaderHandle: String {
        let name = uploader.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return "" }
        return name.hasPrefix("@") ? name : "@" + name
    }

    /// Whether the item is an image post rather than a video.
    public var isImagePost: Bool { videoURL == nil && !images.isEmpty }
}

/// A tab of the feed.
public struct FeedCategory: Sendable, Hashable, Codable, Identifiable {
    public var id: String
    public var title: String

    public init(id: String, title: String) {
        self.id = id
        self.title = title
    }
}

/// One page of items, and whether more follow.
public struct FeedPage: Sendable, Hashable {
    public var items: [FeedItem]
    /// `false` once a page came back shorter than asked for ("no more data").
    public var hasMore: Bool

    public init(items: [FeedItem], hasMore: Bool) {
        self.items = items
        self.hasMore = hasMore
    }
}

/// Why a feed could not be read.
public enum FeedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The source is not usable (a missing directory, an unreadable manifest).
    case unavailable(String)
    /// The manifest or API answer is not in the expected shape.
    case malformed(String)
    /// The feed API wants a (new) bearer token.
    case authorizationRequired

    public var description: String {
        switch self {
        case .unavailable(let reason): "feed unavailable: \(reason)"
        case .malformed(let reason): "feed malformed: \(reason)"
        case .authorizationRequired: "the feed needs authorization"
        }
    }
}

/// Where feed items come from: a directory, a manifest, a paged HTTP API. Pages
/// count from 1, like the API they model; a page shorter than `size` is the last.
public protocol FeedSource: Sendable {
    func categories() async throws -> [FeedCategory]
    func page(category: String?, page: Int, size: Int) async throws -> FeedPage
    func search(text: String, page: Int, size: Int) async throws -> FeedPage
}

extension FeedSource {
    /// Pages of a fixed list: the common part of sources that hold everything at once.
    public static func slice(_ items: [FeedItem], page: Int, size: Int) -> FeedPage {
        guard page >= 1, size >= 1 else { return FeedPage(items: [], hasMore: false) }
        let start = (page - 1) * size
        guard start < items.count else { return FeedPage(items: [], hasMore: false) }
        let slice = Array(items[start..<min(items.count, start + size)])
        return FeedPage(items: slice, hasMore: start + size < items.count)
    }

    /// Items whose title, uploader or category contains `text`, case-insensitively.
    public static func matching(_ items: [FeedItem], text: String) -> [FeedItem] {
        let needle = text.trimmingCharacters(in: .whitespaces)
        guard !needle.isEmpty else { return [] }
        return items.filter {
            $0.title.localizedCaseInsensitiveContains(needle)
                || $0.uploader.localizedCaseInsensitiveContains(needle)
                || ($0.category?.localizedCaseInsensitiveContains(needle) ?? false)
        }
    }
}

/// A caption file of a feed item: where it is, and how a picker names it.
public struct FeedCaption: Sendable, Hashable, Codable {
    public var url: URL
    /// A BCP 47 tag (`en`, `zh-Hans`), if the feed gives one.
    public var language: String?
    public var label: String?

    public init(url: URL, language: String? = nil, label: String? = nil) {
        self.url = url
        self.language = language
        self.label = label
    }
}
