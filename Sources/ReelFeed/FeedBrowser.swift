import Foundation
import ReelCore
import Synchronization

/// The category pager (the original's TTPagerViewController): one feed per category,
/// created when its tab is first selected, only the selected one active. Leaving a
/// category pauses its page and releases its neighbours' players; entering it again
/// resumes where it was. A source without categories is one unnamed category.
///
/// The tab strip's geometry (centring, the indicator following a drag) is the pure
/// ``TabStrip`` the window and the terminal keep; they call ``select(_:)`` when its
/// selection changes.
public final class FeedBrowser: Sendable {
    /// Makes the feed of one tab: given the category id (`nil` for a source without
    /// categories), returns a new, not yet started ``FeedSession`` over that category. The
    /// browser calls it once per tab, the first time the tab is selected (and again after
    /// ``reload(_:)``), from the task that selected it; the browser starts the session.
    public typealias SessionFactory = @Sendable (_ category: String?) -> FeedSession

    // Immutable.
    /// Where the tabs come from: its `categories()` are read once, by
    /// ``start(initial:)``.
    public let source: any FeedSource
    private let makeSession: SessionFactory

    /// Protected by `state`.
    private struct State {
        var categories: [FeedCategory] = []
        var sessions: [Int: FeedSession] = [:]
        var selected = 0
        var onSessionCreated: (@Sendable (Int, FeedSession) -> Void)?
    }
    private let state = Mutex(State())

    /// A browser over `source` whose category feeds `makeSession` creates (sharing
    /// one loader, preloader and audio output between them).
    public init(source: any FeedSource, makeSession: @escaping SessionFactory) {
        self.source = source
        self.makeSession = makeSession
    }

    /// The tabs (one unnamed tab when the source has no categories).
    public var categories: [FeedCategory] { state.withTrackedLock { $0.categories } }
    /// The selected tab.
    public var selectedIndex: Int { state.withTrackedLock { $0.selected } }
    /// The feed of the selected tab.
    public var currentSession: FeedSession? { state.withTrackedLock { $0.sessions[$0.selected] } }
    /// Indices of the tabs whose feed has been created.
    public var createdTabs: Set<Int> { state.withTrackedLock { Set($0.sessions.keys) } }

    /// Called when a tab's feed is created, before it starts (to observe it). Set it
    /// before ``start(initial:)``.
    public var onSessionCreated: (@Sendable (Int, FeedSession) -> Void)? {
        get { state.withTrackedLock { $0.onSessionCreated } }
        set { state.withTrackedLock { $0.onSessionCreated = newValue } }
    }

    /// Reads the categories and opens the first tab's feed (`initial`).
    public func start(initial: Int = 0) async throws {
        var categories = try await source.categories()
        if categories.isEmpty { categories = [FeedCategory(id: "", title: "")] }
        let first = min(max(0, initial), categories.count - 1)
        state.withTrackedLock {
            $0.categories = categories
            $0.selected = first
        }
        try await open(first)
    }

    /// Selects tab `index`: the old tab's feed is deactivated, the new one is created
    /// (first time) or resumed.
    public func select(_ index: Int) async throws {
        let (old, changed): (FeedSession?, Bool) = state.withTrackedLock { s in
            guard index >= 0, index < s.categories.count, index != s.selected else { return (nil, false) }
            let old = s.sessions[s.selected]
            s.selected = index
            return (old, true)
        }
        guard changed else { return }
        old?.setActive(false)
        try await open(index)
    }

    private func open(_ index: Int) async throws {
        let (existing, categoryID, callback): (FeedSession?, String?, (@Sendable (Int, FeedSession) -> Void)?) = state.withTrackedLock { s in
            let id = s.categories[index].id
            return (s.sessions[index], id.isEmpty ? nil : id, s.onSessionCreated)
        }
        if let existing {
            existing.setActive(true)
            return
        }
        let session = makeSession(categoryID)
        state.withTrackedLock { $0.sessions[index] = session }
        callback?(index, session)
        try await session.start()
        // Selected away while it started: leave it inactive.
        if state.withTrackedLock({ $0.selected != index }) { session.setActive(false) }
    }

    /// Reads tab `index`'s feed again from its first page (new items — an upload — show):
    /// its old feed is closed; the new one starts now when the tab is selected, else when
    /// it is next selected. A browser whose ``start(initial:)`` failed starts.
    public func reload(_ index: Int) async throws {
        // Never started (its categories were refused): start now.
        if state.withTrackedLock({ $0.categories.isEmpty }) {
            try await start(initial: index)
            return
        }
        let (old, selected): (FeedSession?, Bool) = state.withTrackedLock { s in
            guard s.categories.indices.contains(index) else { return (nil, false) }
            return (s.sessions.removeValue(forKey: index), s.selected == index)
        }
        await old?.shutdown()
        if selected { try await open(index) }
    }

    /// The index of the tab whose category id is `id`.
    public func index(ofCategory id: String) -> Int? {
        state.withTrackedLock { $0.categories.firstIndex { $0.id == id } }
    }

    /// Closes every feed, blocking until their players are released (from a thread of
    /// your own; async code awaits ``shutdown()``).
    public func close() {
        let all = state.withTrackedLock { Array($0.sessions.values) }
        for session in all { session.close() }
    }

    /// Closes every feed without blocking the caller.
    public func shutdown() async {
        let all = state.withTrackedLock { Array($0.sessions.values) }
        for session in all { await session.shutdown() }
    }
}
