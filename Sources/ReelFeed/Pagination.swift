/// When a feed loads its next page, and what the page adds, as a value.
///
/// The next page is asked for when the current index reaches ``triggerFraction`` (70 %)
/// of the loaded items — once per page, never while a page is loading, never once the
/// source said there is no more. Appending drops items whose id was already seen
/// (the first occurrence wins) and reports how many were dropped.
///
/// ```swift
/// var pagination = Pagination<String>()
/// _ = pagination.append(firstPage, id: \.id, hasMore: true)
/// if pagination.indexChanged(to: 7) == .loadNextPage { /* fetch in the background */ }
/// ```
public struct Pagination<ID: Hashable & Sendable>: Sendable {
    /// What the model asks its owner to do.
    public enum Action: Sendable, Hashable {
        /// Fetch the next page (then ``Pagination/append(_:id:hasMore:)`` or
        /// ``Pagination/loadFailed()``).
        case loadNextPage
    }

    /// What an append kept and dropped.
    public struct Appended<Item> {
        /// The new items, in order, without duplicates.
        public var items: [Item]
        /// How many incoming items were dropped because their id was already seen
        /// (in an earlier page or earlier in this one).
        public var droppedDuplicates: Int
        /// `.loadNextPage` when the current index is already past the new trigger point
        /// (for instance when the whole page was duplicates).
        public var action: Action?
    }

    /// The fraction of the loaded items the index must reach to load the next page.
    public var triggerFraction: Double
    /// How many distinct items are loaded.
    public private(set) var loadedCount: Int = 0
    /// Whether a page is being fetched.
    public private(set) var isLoading: Bool = false
    /// Whether the source has more pages (false once a page said "no more data").
    public private(set) var hasMore: Bool = true
    /// How many pages have arrived.
    public private(set) var pagesLoaded: Int = 0
    /// The index last reported by ``indexChanged(to:)``.
    public private(set) var currentIndex: Int = 0

    private var seen: Set<ID> = []

    /// An empty feed that has more to load.
    public init(triggerFraction: Double = 0.7) {
        self.triggerFraction = triggerFraction
    }

    /// Whether `index` is at or past the trigger point of `loadedCount` items:
    /// `index ≥ ⌈fraction × loadedCount⌉`, capped at the last item. Stateless.
    public static func reachesTrigger(index: Int, loadedCount: Int, fraction: Double) -> Bool {
        guard loadedCount > 0 else { return true }
        // The epsilon keeps 0.7 × 10 at 7 whatever the last bit of the product.
        let point = min(Int((fraction * Double(loadedCount) - 1e-9).rounded(.up)), loadedCount - 1)
        return index >= max(point, 0)
    }

    /// Whether the next page should load, from the four facts alone. Stateless; the
    /// value adds "once per page" (``indexChanged(to:)``).
    public static func shouldLoad(index: Int, loadedCount: Int, isLoading: Bool, hasMore: Bool,
                                  fraction: Double = 0.7) -> Bool {
        hasMore && !isLoading && reachesTrigger(index: index, loadedCount: loadedCount, fraction: fraction)
    }

    /// The user is at `index`: ``Action/loadNextPage`` when it reaches the trigger point.
    /// ``isLoading`` then stays true until the page arrives or fails, so each page is
    /// asked for once however the user swipes meanwhile.
    public mutating func indexChanged(to index: Int) -> Action? {
        currentIndex = index
        return check()
    }

    /// Asks for the first page of an empty feed (the same rules apply).
    public mutating func start() -> Action? { check() }

    /// A page arrived: keeps the items whose id is new, records `hasMore`, and re-checks
    /// the trigger at the current index.
    public mutating func append<Item>(_ items: [Item], id: (Item) -> ID, hasMore: Bool) -> Appended<Item> {
        var kept: [Item] = []
        kept.reserveCapacity(items.count)
        for item in items where seen.insert(id(item)).inserted {
            kept.append(item)
        }
        loadedCount += kept.count
        pagesLoaded += 1
        isLoading = false
        self.hasMore = hasMore
        return Appended(items: kept, droppedDuplicates: items.count - kept.count, action: check())
    }

    /// The page failed to load: not loading any more, and the same page may be asked
    /// for again on the next index change.
    public mutating func loadFailed() {
        isLoading = false
    }

    /// Whether an item with this id has been appended.
    public func contains(_ id: ID) -> Bool { seen.contains(id) }

    private mutating func check() -> Action? {
        guard Self.shouldLoad(index: currentIndex, loadedCount: loadedCount, isLoading: isLoading,
                              hasMore: hasMore, fraction: triggerFraction)
        else { return nil }
        isLoading = true
        return .loadNextPage
    }
}

extension Pagination.Appended: Sendable where Item: Sendable {}
