import Foundation
import Synchronization

/// Search over a `FeedSource`: a query gives paged results; ``loadMore()`` appends
/// the next page until one comes back short ("no more data"); ``refresh()`` asks
/// again from the first page. Choosing a result opens a feed of the results that
/// starts at it (``feedSource()``).
///
/// Thread-safe. A newer ``search(_:)`` supersedes an older one still loading: the
/// older's answer is dropped.
public final class SearchModel: Sendable {
    /// Where a search is.
    public enum State: Sendable, Hashable {
        /// No query yet (or an empty one).
        case idle
        /// The first page of the query is loading.
        case searching
        /// Results are shown; more pages may follow.
        case results
        /// The query matched nothing.
        case empty
        /// The last request failed; the results so far stay.
        case failed(String)
    }

    // Immutable.
    /// What is searched: each page is `FeedSource.search(text:page:size:)`.
    public let source: any FeedSource
    /// Results asked for per page (at least 1).
    public let pageSize: Int

    /// Protected by `lock`.
    private struct Search {
        var query = ""
        var results: [FeedItem] = []
        var seen: Set<String> = []
        var pages = 0
        var more = false
        var state: State = .idle
        /// Counts searches: an older one's answer is dropped.
        var generation = 0
        var loadingMore = false
    }
    private let lock = Mutex(Search())

    /// A model searching `source`, `pageSize` results per page (a value below 1 is taken as
    /// 1), with no query yet (``State-swift.enum/idle``).
    public init(source: any FeedSource, pageSize: Int = 10) {
        self.source = source
        self.pageSize = max(1, pageSize)
    }

    /// The query the results are for.
    public var query: String { lock.withTrackedLock { $0.query } }
    /// The results so far, without duplicates.
    public var results: [FeedItem] { lock.withTrackedLock { $0.results } }
    /// Whether another page may follow (`false`: "no more data").
    public var hasMore: Bool { lock.withTrackedLock { $0.more } }
    /// Where the current search is; read it after ``search(_:)``, ``loadMore()`` or
    /// ``refresh()`` returns to know what to draw.
    public var state: State { lock.withTrackedLock { $0.state } }

    /// Runs `text` from its first page, replacing the results.
    public func search(_ text: String) async {
        let query = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let ticket: Int = lock.withTrackedLock { s in
            s.generation += 1
            s.query = query
            s.results = []
            s.seen = []
            s.pages = 0
            s.more = !query.isEmpty
            s.loadingMore = false
            s.state = query.isEmpty ? .idle : .searching
            return s.generation
        }
        guard !query.isEmpty else { return }
        await fetch(query: query, page: 1, ticket: ticket)
    }

    /// Appends the next page of the current query; nothing when there is no more or
    /// a page is already loading.
    public func loadMore() async {
        let request: (String, Int, Int)? = lock.withTrackedLock { s in
            guard s.more, !s.loadingMore, s.pages > 0, !s.query.isEmpty else { return nil }
            s.loadingMore = true
            return (s.query, s.pages + 1, s.generation)
        }
        guard let (query, page, ticket) = request else { return }
        await fetch(query: query, page: page, ticket: ticket)
    }

    /// The current query again from its first page.
    public func refresh() async {
        await search(query)
    }

    private func fetch(query: String, page: Int, ticket: Int) async {
        do {
            let result = try await source.search(text: query, page: page, size: pageSize)
            lock.withTrackedLock { s in
                guard ticket == s.generation else { return }
                s.loadingMore = false
                s.pages = page
                s.more = result.hasMore
                for item in result.items where s.seen.insert(item.id).inserted {
                    s.results.append(item)
                }
                s.state = s.results.isEmpty ? .empty : .results
            }
        } catch {
            lock.withTrackedLock { s in
                guard ticket == s.generation else { return }
                s.loadingMore = false
                s.state = .failed(String(describing: error))
            }
        }
    }

    /// A feed source over the current query's results (and its further pages), for
    /// a ``FeedSession`` started at the chosen result: `session.start(at: index)`.
    public func feedSource() -> any FeedSource {
        SearchResultsSource(source: source, query: query)
    }
}

/// The results of one query as a feed: pages of the feed are pages of the search.
struct SearchResultsSource: FeedSource {
    let source: any FeedSource
    let query: String

    func categories() async throws -> [FeedCategory] { [] }

    func page(category: String?, page: Int, size: Int) async throws -> FeedPage {
        try await source.search(text: query, page: page, size: size)
    }

    func search(text: String, page: Int, size: Int) async throws -> FeedPage {
        try await source.search(text: text, page: page, size: size)
    }
}
