import Foundation
import ReelCore
import ReelFeed
import ReelMedia
import Synchronization

/// A feed in the terminal (`reel feed --terminal`): categories through ``FeedBrowser``,
/// swipes through the current ``FeedSession``, search through ``SearchModel`` (its results
/// become a feed of their own until a category is chosen again). The current page's player
/// frames go to the renderer; image posts show their first picture; a page whose item
/// cannot be played shows an empty picture and says why on its title line, and the feed
/// goes on.
public final class TerminalFeedContent: TerminalContent, Sendable {
    /// The feed to show: its source, and how a session over a source is made (a category's,
    /// or a search's results), with the stack's loader, cache, preloader and the app's audio.
    public struct Feed: Sendable {
        public let source: any FeedSource
        public let makeSession: @Sendable (_ source: any FeedSource, _ category: String?) -> FeedSession

        public init(source: any FeedSource,
                    makeSession: @escaping @Sendable (_ source: any FeedSource, _ category: String?) -> FeedSession) {
            self.source = source
            self.makeSession = makeSession
        }
    }

    /// The `reel serve` the feed comes from: its address, and who was signed in at start
    /// ("--token" for a token given on the command line).
    public struct Accounts: Sendable {
        public let server: URL
        public let signedInName: String?

        public init(server: URL, signedInName: String?) {
            self.server = server
            self.signedInName = signedInName
        }
    }

    // Immutable.
    private let app: TerminalApp
    private let feed: Feed
    private let browser: FeedBrowser
    private let searchModel: SearchModel
    private let initialCategory: String?
    /// The `reel serve` the feed comes from, when it is one.
    private let accounts: Accounts?
    /// Who is signed in, read once at start (nil: nobody; cleared by a 401).
    private let signedIn: Mutex<String?>

    /// Protected by `state`.
    private struct State {
        var renderer: TerminalRenderer?
        var searchSession: FeedSession?
        var searchQuery: String?
        /// Which captions show, for every session of the feed (the categories' and the search's).
        var captionSelection = CaptionSelection()
    }
    private let state = Mutex(State())

    public init(app: TerminalApp, feed: Feed, initialCategory: String?, accounts: Accounts? = nil) {
        self.app = app
        self.accounts = accounts
        signedIn = Mutex(accounts?.signedInName)
        self.feed = feed
        browser = FeedBrowser(source: feed.source) { category in feed.makeSession(feed.source, category) }
        searchModel = SearchModel(source: feed.source)
        self.initialCategory = initialCategory
    }

    private var renderer: TerminalRenderer? { state.withTrackedLock { $0.renderer } }

    /// The session on screen: the search results while searching, else the category's.
    private var session: FeedSession? {
        state.withTrackedLock { $0.searchSession } ?? browser.currentSession
    }

    public var isFeed: Bool { true }

    public var captionSelection: CaptionSelection {
        get { state.withTrackedLock { $0.captionSelection } }
        set {
            let search = state.withTrackedLock { state -> FeedSession? in
                state.captionSelection = newValue
                return state.searchSession
            }
            search?.captionSelection = newValue
            browser.currentSession?.captionSelection = newValue
        }
    }
    public var player: Player? {
        guard let session else { return nil }
        return session.player(at: session.currentIndex)
    }

    public var chrome: (categories: [String], selected: Int, title: String, uploader: String?, position: String?) {
        let session = self.session
        let item = session?.currentItem
        var position = session.map { s in "\(s.currentIndex + 1)/\(s.items.count)\(s.hasMore ? "+" : "")" }
        if accounts != nil {
            // Who is signed in to the feed's server, beside the position.
            let who = signedIn.withTrackedLock { $0 }.map { $0 == "--token" ? "signed in (--token)" : "@\($0)" } ?? "not signed in"
            position = [position, who].compactMap { $0 }.joined(separator: "  ")
        }
        var title = item?.title ?? ""
        if let session, let failure = session.failure(at: session.currentIndex) {
            title = "✕ cannot play \(title.isEmpty ? "this item" : "“\(title)”"): \(failure)"
        }
        if let query = state.withTrackedLock({ $0.searchQuery }) {
            return (["search: \(query)"], 0, title, item?.uploader, position)
        }
        let names = browser.categories.map { $0.title.isEmpty ? "Feed" : $0.title }
        return (names, browser.selectedIndex, title, item?.uploader, position)
    }

    public func start(renderer: TerminalRenderer, failed: @escaping @Sendable (String) -> Void) async throws {
        state.withTrackedLock { $0.renderer = renderer }
        browser.onSessionCreated = { [weak self] _, session in self?.attach(session) }
        var initial = 0
        if let wanted = initialCategory {
            let categories = try await feed.source.categories()
            guard let index = categories.firstIndex(where: { $0.id == wanted }) else {
                throw TerminalAppError.noSuchCategory(wanted, have: categories.map(\.id))
            }
            initial = index
        }
        do {
            try await browser.start(initial: initial)
        } catch FeedError.authorizationRequired {
            // Before anything is on screen: the one-line answer says how to sign in.
            throw TerminalAppError.signInRequired(signInNotice)
        }
        showCurrent()
    }

    /// Frames of `session`'s current page go to the renderer while it is on screen.
    private func attach(_ session: FeedSession) {
        session.captionSelection = captionSelection
        session.onFrame = { [weak self, weak session] index in
            guard let self, let session, self.session === session, index == session.currentIndex,
                  let frame = session.frame(at: index) else { return }
            self.renderer?.present(
                frame, presentation: Presentation(presentedAt: .zero, droppedFrames: 0, isFirstFrameOfSequence: false))
        }
        session.addObserver { [weak self, weak session] event in
            guard let self, let session, self.session === session else { return }
            switch event {
            case .firstFrame(let index, _, _) where index == session.currentIndex:
                self.showCurrent()
            case .failed(let index, _) where index == session.currentIndex:
                // The page says so (its title line); the feed goes on.
                self.showCurrent()
            case .noMoreData, .itemsChanged:
                self.renderer?.setNeedsChrome()
            case .authorizationRequired:
                self.signedIn.withTrackedLock { $0 = nil }
                self.app.show(notice: self.signInNotice)
                self.renderer?.setNeedsChrome()
            default: break
            }
        }
    }

    /// Draws what the current page has now: its latest frame, its picture, nothing yet,
    /// or — when it failed — nothing (the previous page's picture must not stay).
    private func showCurrent() {
        guard let renderer, let session else { return }
        let index = session.currentIndex
        if session.failure(at: index) != nil {
            renderer.clear()
        } else if let frame = session.frame(at: index) {
            renderer.present(frame, presentation: Presentation(presentedAt: .zero, droppedFrames: 0, isFirstFrameOfSequence: true))
        } else if let picture = session.picture(at: index) {
            renderer.presentPicture(picture)
        }
        renderer.setNeedsChrome()
    }

    /// What a 401 from the feed says: how to sign in to this server.
    var signInNotice: String {
        guard let accounts else { return "the feed needs sign-in (use --token)" }
        return "the feed needs sign-in: run `reel login \(accounts.server.absoluteString)` (or pass --token), then open the feed again"
    }

    public func swipe(forward: Bool) {
        guard let session else { return }
        let before = session.currentIndex
        if forward { session.next() } else { session.previous() }
        if session.currentIndex == before {
            app.show(notice: forward ? (session.hasMore ? "loading more…" : "no more videos") : "this is the first video")
        }
        showCurrent()
    }

    public func changeCategory(by offset: Int) {
        let leavingSearch: FeedSession? = state.withTrackedLock { s in
            defer { s.searchSession = nil; s.searchQuery = nil }
            return s.searchSession
        }
        if let leavingSearch {
            leavingSearch.close()
            browser.currentSession?.setActive(true)
            showCurrent()
            return
        }
        let count = browser.categories.count
        guard count > 1 else { return }
        let target = ((browser.selectedIndex + offset) % count + count) % count
        Task {
            do {
                try await browser.select(target)
                showCurrent()
            } catch {
                app.show(notice: "category failed: \(error)")
            }
        }
    }

    public func search(_ text: String) {
        app.show(notice: "searching \(TerminalText.sanitize(text))…")
        Task {
            await searchModel.search(text)
            switch searchModel.state {
            case .results:
                let session = feed.makeSession(searchModel.feedSource(), nil)
                attach(session)
                browser.currentSession?.setActive(false)
                let query = searchModel.query
                let old: FeedSession? = state.withTrackedLock { s in
                    defer { s.searchSession = session; s.searchQuery = query }
                    return s.searchSession
                }
                await old?.shutdown()
                do {
                    try await session.start()
                    app.show(notice: "\(searchModel.results.count)\(searchModel.hasMore ? "+" : "") results — tab to go back")
                    showCurrent()
                } catch {
                    app.show(notice: "search failed: \(error)")
                }
            case .empty: app.show(notice: "no results for \(TerminalText.sanitize(text))")
            case .failed(let message): app.show(notice: "search failed: \(message)")
            default: break
            }
        }
    }

    public func close() {
        state.withTrackedLock { $0.searchSession }?.close()
        browser.close()
    }
}
