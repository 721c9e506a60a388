import ReelFeed

/// The search side of ``FeedWindow``: the ``SearchModel``'s state into the model as
/// events, and a feed of results (search results, or my videos) opened and closed.
extension FeedWindow {
    /// The search's results and state into the model, while the panel is open or rows show.
    func refreshSearch() {
        guard let search, model.isSearching || !model.resultRows.isEmpty else { return }
        let rows = search.results.map { item in
            let url = item.coverURL ?? item.images.first
            if let url { covers.request(url, maxWidth: 180, maxHeight: 320) }
            return FeedViewModel.ResultRow(item: item, thumbnail: url.flatMap(covers.image))
        }
        switch search.state {
        case .idle: model.searchCleared()
        case .searching: model.searchStarted()
        case .results, .empty: model.searchResultsLoaded(rows, hasMore: search.hasMore)
        case .failed(let message): model.searchFailed(message, rows: rows)
        }
    }

    /// Plays the search's results from result `index`.
    func openSearchResult(_ index: Int) {
        guard let search, let make = makeResultsSession else { return }
        browser.currentSession?.setActive(false)
        resultsSession?.close()
        openResults(make(search.feedSource()), at: index, failure: "结果加载失败 Results failed")
        model.resultsShown(title: search.query)
    }

    /// Makes `results` the feed on screen and starts it at `index`; its start's failure
    /// comes back as a notice saying `failure`.
    func openResults(_ results: FeedSession, at index: Int, failure: String) {
        let wake = host.makeWaker()
        let events = self.events
        results.onFrame = { _ in wake() }
        results.addObserver { event in events.record(event); wake() }
        resultsSession = results
        shownSession = nil
        tasks.run(failure) { try await results.start(at: index) }
    }

    /// Back from the results' feed: my videos go back to the profile, search results to the tabs.
    func leaveResults() {
        if playingMyVideos, var shell {
            let commands = shell.closeMyVideos()
            self.shell = shell
            performShell(commands)
        } else {
            closeResults()
        }
    }

    func closeResults(resumeFeed: Bool = true) {
        guard let results = resultsSession else { return }
        results.close()
        resultsSession = nil
        shownSession = nil
        model.resultsClosed()
        playingMyVideos = false
        if resumeFeed { browser.currentSession?.setActive(true) }
    }
}
