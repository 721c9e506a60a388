import Foundation
import ReelCore

/// The category pager (the original's TTPagerViewController): one feed per category,
/// created when its tab is first selected, only the selected one active. Leaving a
/// category pauses its page and releases its neighbours' players; entering it again
/// resumes where it was. A source without categories is one unnamed category.
///
/// The tab strip's geometry (centring, the indicator following a drag) is the pure
/// ``TabStrip`` the window and the terminal keep; they call ``select(_:)`` when its
/// selection changes.
public final class FeedBrowser: @unchecked Sendable {
    public typealias SessionFactory = @Sendable (_ category: String?) -> FeedSession

    public let source: any FeedSource
    private let makeSession: SessionFactory
    private let lock = NSLock()
    private var categoriesValue: [FeedCategory] = []
    private var sessions: [Int: FeedSession] = [:]
    private var selected = 0
    private var onSessionCreatedValue: (@Sendable (Int, FeedSession) -> Void)?

    /// A browser over `source` whose category feeds `makeSession` creates (sharing
    /// one loader, preloader and audio output between them).
    public init(source: any FeedSource, makeSession: @escaping SessionFactory) {
        self.source = source
        self.makeSession = makeSession
    }

    /// The tabs (one unnamed tab when the source has no categories).
    public var categories: [FeedCategory] { lock.withLock { categoriesValue } }
    /// The selected tab.
    public var selectedIndex: Int { lock.withLock { selected } }
    /// The feed of the selected tab.
    public var currentSession: FeedSession? { lock.withLock { sessions[selected] } }
    /// Indices of the tabs whose feed has been created.
    public var createdTabs: Set<Int> { lock.withLock { Set(sessions.keys) } }

    /// Called when a tab's feed is created (to observe it).
    public var onSessionCreated: (@Sendable (Int, FeedSession) -> Void)? {
        get { lock.withLock { onSessionCreatedValue } }
        set { lock.withLock { onSessionCreatedValue = newValue } }
    }

    /// Reads the categories and opens the first tab's feed (`initial`).
    public func start(initial: Int = 0) async throws {
        var categories = try await source.categories()
        if categories.isEmpty { categories = [FeedCategory(id: "", title: "")] }
        let first = min(max(0, initial), categories.count - 1)
        lock.withLock {
            categoriesValue = categories
            selected = first
        }
        try await open(first)
    }

    /// Selects tab `index`: the old tab's feed is deactivated, the new one is created
    /// (first time) or resumed.
    public func select(_ index: Int) async throws {
        let (old, changed): (FeedSession?, Bool) = lock.withLock {
            guard index >= 0, index < categoriesValue.count, index != selected else { return (nil, false) }
            let old = sessions[selected]
            selected = index
            return (old, true)
        }
        guard changed else { return }
        old?.setActive(false)
        try await open(index)
    }

    private func open(_ index: Int) async throws {
        let (existing, categoryID, callback): (FeedSession?, String?, (@Sendable (Int, FeedSession) -> Void)?) = lock.withLock {
            let id = categoriesValue[index].id
            return (sessions[index], id.isEmpty ? nil : id, onSessionCreatedValue)
        }
        if let existing {
            existing.setActive(true)
            return
        }
        let session = makeSession(categoryID)
        lock.withLock { sessions[index] = session }
        callback?(index, session)
        try await session.start()
        // Selected away while it started: leave it inactive.
        if lock.withLock({ selected != index }) { session.setActive(false) }
    }

    /// Closes every feed.
    public func close() {
        let all = lock.withLock { Array(sessions.values) }
        for session in all { session.close() }
    }
}
