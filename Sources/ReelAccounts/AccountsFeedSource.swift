import Foundation
import ReelFeedModel

/// A feed that shows uploads beside another source's items: each category's uploads
/// (newest first) come before the base's items of that category, categories that only
/// uploads have become tabs, and search covers both (title, uploader, category).
public struct AccountsFeedSource: FeedSource {
    public let base: any FeedSource
    public let service: AccountsService
    /// Whether uploads come before the base's items (else after: the demo keeps its
    /// curated clips first).
    public let uploadsFirst: Bool

    public init(base: any FeedSource, service: AccountsService, uploadsFirst: Bool = true) {
        self.base = base
        self.service = service
        self.uploadsFirst = uploadsFirst
    }

    private func merged(_ uploads: [FeedItem], _ others: [FeedItem]) -> [FeedItem] {
        uploadsFirst ? uploads + others : others + uploads
    }

    public func categories() async throws -> [FeedCategory] {
        var tabs = try await base.categories()
        let known = Set(tabs.map(\.id))
        var seen = Set<String>()
        for item in try await service.feedItems() {
            guard let category = item.category, !known.contains(category), seen.insert(category).inserted else { continue }
            tabs.append(FeedCategory(id: category, title: category))
        }
        return tabs
    }

    public func page(category: String?, page: Int, size: Int) async throws -> FeedPage {
        let uploads = try await service.feedItems(category: category)
        return Self.slice(merged(uploads, try await allOfBase(category: category)), page: page, size: size)
    }

    public func search(text: String, page: Int, size: Int) async throws -> FeedPage {
        let needle = text.trimmingCharacters(in: .whitespaces)
        guard !needle.isEmpty else { return FeedPage(items: [], hasMore: false) }
        let uploads = try await service.feedItems().filter {
            $0.title.localizedCaseInsensitiveContains(needle) || $0.uploader.localizedCaseInsensitiveContains(needle)
                || ($0.category?.localizedCaseInsensitiveContains(needle) ?? false)
        }
        let found = try await base.search(text: text, page: 1, size: 1 << 30).items
        return Self.slice(merged(uploads, found), page: page, size: size)
    }

    private func allOfBase(category: String?) async throws -> [FeedItem] {
        try await base.page(category: category, page: 1, size: 1 << 30).items
    }
}
