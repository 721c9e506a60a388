import Foundation

/// Search over a ``FeedSource``: a query gives paged results; ``loadMore()`` appends
/// the next page until one comes back short ("no more data"); ``refresh()`` asks
/// again from the first page. Choosing a result opens a feed of the results that
/// starts at it (``feed(startingAt:)``).
///
/// Thread-safe. A newer ``search(_:)`` supersedes an older one still loading: the
/// older's answer is dropped.
public final class SearchModel: @unchecked Sendable {
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

    public let source: any FeedSource
    public let pageSize: Int
    private let lock = NSLock()
    private var queryValue = ""
    private var resultsValue: [FeedItem] = []
    private var seen: Set<String> = []
    private var pages = 0
    private var more = false
    private var stateValue: State = .idle
    private var generation = 0
    private var loadingMore = false

    public init(source: any FeedSource, pageSize: Int = 10) {
        self.source = source
        self.pageSize = max(1, pageSize)
    }

    /// The query the results are for.
    public var query: String { lock.withLock { queryValue } }
    /// The results so far, without duplicates.
    public var results: [FeedItem] { lock.withLock { resultsValue } }
    /// Whether another page may follow (`false`: "no more data").
    public var hasMore: Bool { lock.withLock { more } }
    public var state: State { lock.withLock { stateValue } }

    /// Runs `text` from its first page, replacing the results.
    public func search(_ text: String) async {
        let query = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let ticket: Int = lock.withLock {
            generation += 1
            queryValue = query
            resultsValue = []
            seen = []
            pages = 0
            more = !query.isEmpty
            loadingMore = false
            stateValue = query.isEmpty ? .idle : .searching
            return generation
        }
        guard !query.isEmpty else { return }
        await fetch(query: query, page: 1, ticket: ticket)
    }

    /// Appends the next page of the current query; nothing when there is no more or
    /// a page is already loading.
    public func loadMore() async {
        let request: (String, Int, Int)? = lock.withLock {
            guard more, !loadingMore, pages > 0, !queryValue.isEmpty else { return nil }
            loadingMore = true
            return (queryValue, pages + 1, generation)
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
            lock.withLock {
                guard ticket == generation else { return }
                loadingMore = false
                pages = page
                more = result.hasMore
                for item in result.items where seen.insert(item.id).inserted {
                    resultsValue.append(item)
                }
                stateValue = resultsValue.isEmpty ? .empty : .results
            }
        } catch {
            lock.withLock {
                guard ticket == generation else { return }
                loadingMore = false
                stateValue = .failed(String(describing: error))
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
