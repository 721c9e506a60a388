import Foundation
import ReelAccountClient
import ReelCaptions
import ReelCore
import ReelFeed
import ReelMedia
import Synchronization

/// `reel feed SOURCE --window`: the feed UI in an SDL window. A ``FeedBrowser`` holds one
/// ``FeedSession`` per category tab; the window draws the pages its pager shows (frames of
/// the pool's players, covers until the first frame, image posts' pictures, and a page
/// that says why when its item cannot be played), and turns input into swipes, tab
/// changes, player commands and searches.
///
/// Every call must come from the thread that created the window.
public final class FeedWindow {
    public struct Options: Sendable {
        public var renderer: RendererKind
        public var allowFallback: Bool
        public var width: Int
        public var height: Int
        public var showsHUD: Bool

        public init(renderer: RendererKind = .gl, allowFallback: Bool = true, width: Int = 540, height: Int = 960, showsHUD: Bool = false) {
            self.renderer = renderer
            self.allowFallback = allowFallback
            self.width = width
            self.height = height
            self.showsHUD = showsHUD
        }
    }

    public let browser: FeedBrowser
    public let search: SearchModel?
    public let uiClock: any EngineClock
    public internal(set) var model: FeedViewModel
    let host: SDLWindowHost
    let covers: CoverCache
    let makeResultsSession: (@Sendable (any FeedSource) -> FeedSession)?
    /// The feed of search results (or my videos) being played, when one was opened.
    public internal(set) var resultsSession: FeedSession?
    var shownSession: ObjectIdentifier?
    var running = true
    let events = EventBox()
    /// The current page's captions, rasterized on this thread.
    let windowCaptions: WindowCaptions
    /// Background commands; their outcomes come back to the window's thread.
    let tasks: WindowTasks
    /// The account side (tab bar, sign-in, profile, upload), when the feed comes from a
    /// `reel serve` with accounts.
    public let accounts: AccountSession?
    public internal(set) var shell: AppShellModel?
    /// The focused field's rect SDL text input was started with (nil: stopped by the shell).
    var textInputRect: UIRect?
    /// Whether `resultsSession` plays my videos (not search results).
    var playingMyVideos = false
    /// A press that began on the tab bar while the feed shows (its release is the shell's).
    var tabBarPressed = false
    /// The avatar address whose picture the shell holds.
    var avatarShown: URL?
    /// Items uploaded from this window (newest last).
    public internal(set) var uploaded: [UploadedItem] = []

    /// - Parameters:
    ///   - browser: started (its first tab's feed open).
    ///   - loader: reads covers and thumbnails.
    ///   - makeResultsSession: makes the feed a chosen search result plays in.
    public init(browser: FeedBrowser, search: SearchModel?, loader: any ResourceLoader,
                makeResultsSession: (@Sendable (any FeedSource) -> FeedSession)?,
                options: Options = Options(), uiClock: any EngineClock = HostClock.shared,
                accounts: AccountSession? = nil) throws {
        self.browser = browser
        self.accounts = accounts
        self.search = search
        self.uiClock = uiClock
        self.makeResultsSession = makeResultsSession
        host = try SDLWindowHost(title: "reel feed", width: options.width, height: options.height,
                                 renderer: options.renderer, allowFallback: options.allowFallback)
        windowCaptions = WindowCaptions(fontPath: host.text.fontPath)
        let wake = host.makeWaker()
        covers = CoverCache(loader: loader, wake: wake)
        tasks = WindowTasks(wake: wake)
        let size = host.renderer.drawableSize
        if let accounts {
            let shell = AppShellModel(width: size.width, height: size.height, scale: host.pixelScale.y, signedInName: accounts.signedInName)
            self.shell = shell
            accounts.setWaker(wake)
            model = FeedViewModel(drawableWidth: size.width, drawableHeight: Int(shell.contentHeight), scale: host.pixelScale.y)
        } else {
            model = FeedViewModel(drawableWidth: size.width, drawableHeight: size.height, scale: host.pixelScale.y)
        }
        model.hudShown(options.showsHUD)
        let titles = browser.categories.map(\.title)
        let widths = titles.map { Double(host.text.width(of: $0.isEmpty ? "推荐" : $0, size: Int(17 * model.scale))) + 28 * model.scale }
        model.setTabs(titles: titles, widths: widths, selected: browser.selectedIndex)
        let events = self.events
        browser.onSessionCreated = { _, session in
            session.onFrame = { _ in wake() }
            session.addObserver { event in events.record(event); wake() }
        }
        if let session = browser.currentSession {
            session.onFrame = { _ in wake() }
            session.addObserver { event in events.record(event); wake() }
        }
    }

    deinit {
        resultsSession?.close()
    }

    public var rendererName: String { host.renderer.name }
    public var drawableSize: (width: Int, height: Int) { host.renderer.drawableSize }
    public var isFullscreen: Bool { host.isFullscreen }
    public var isRunning: Bool { running }
    public func stop() { running = false }

    /// The feed on screen: the chosen search results, else the selected tab's.
    public var session: FeedSession? { resultsSession ?? browser.currentSession }

    public func run(while condition: () -> Bool = { true }) {
        while running && condition() {
            let now = uiClock.now
            var wait = 100
            if let deadline = model.nextDeadline {
                wait = max(1, min(wait, Int(((deadline - now).seconds * 1000).rounded(.up))))
            }
            if model.swipe.phase != .idle || model.playback.isScrubbing { wait = 0 }
            pump(waitMs: wait)
        }
    }

    public func pump(waitMs: Int = 0) {
        for input in host.events(waitMs: waitMs) { handle(input) }
        refresh()
        perform(model.tick(now: uiClock.now))
        render(capture: false)
    }

    public func snapshot() -> RGBImage {
        refresh()
        return render(capture: true) ?? RGBImage(width: 0, height: 0)
    }

    // MARK: State

    /// Pulls the session's items, the current item and its player into the model.
    private func refresh() {
        let now = uiClock.now
        let size = host.renderer.drawableSize
        if var shell {
            shell.resize(width: size.width, height: size.height, scale: host.pixelScale.y)
            self.shell = shell
            model.resize(width: size.width, height: Int(shell.contentHeight), scale: host.pixelScale.y, now: now)
            refreshAccounts()
        } else {
            model.resize(width: size.width, height: size.height, scale: host.pixelScale.y, now: now)
        }
        guard let session else { return }
        let items = session.items
        if shownSession != ObjectIdentifier(session) {
            shownSession = ObjectIdentifier(session)
            model.showFeed(count: items.count, index: session.currentIndex, now: now)
            // A feed read again while an account page is up stays paused until it shows.
            if let shell, !shell.showsFeed { session.setActive(false) }
        }
        model.setItemCount(items.count, now: now)
        let index = model.currentIndex
        model.setCurrentItem(index < items.count ? items[index] : nil, failed: session.failure(at: index) != nil, now: now)
        model.setNeedsSignIn(events.needsSignIn && shell == nil)
        for outcome in tasks.takeOutcomes() {
            if let failure = outcome.failure { model.commandFailed("\(outcome.what): \(failure)", now: now) }
        }
        if let player = session.player(at: index) {
            let frame = session.frame(at: index)
            model.sync(currentTime: player.currentTime, duration: player.duration, loaded: player.loadedTimeRanges,
                       isPlaying: player.rate != 0, videoSize: frame.map { ($0.displayWidth, $0.displayHeight) },
                       isLive: player.isLive, liveWindow: player.seekableRange)
        }
        // Covers for the pages around, until their first frames.
        for i in max(0, index - 1)..<min(items.count, index + 2) where session.frame(at: i) == nil {
            if let url = items[i].coverURL { covers.request(url, maxWidth: size.width, maxHeight: size.height) }
        }
        refreshSearch()
        if model.showsHUD { model.hudLinesChanged(hudLines(session)) }
    }

    private func content(_ session: FeedSession, _ index: Int) -> FeedViewModel.PageContent {
        let items = session.items
        guard index < items.count else { return .init(source: nil, item: nil) }
        let item = items[index]
        if let failure = session.failure(at: index) {
            let cover = item.coverURL.flatMap { url in covers.image(url).map { DrawSource.image(key: url.absoluteString, $0) } }
            return .init(source: cover, item: item, failure: failure)
        }
        if item.isImagePost {
            let shown = index == model.currentIndex ? (model.carousel?.index ?? 0) : 0
            let url = item.images[min(shown, item.images.count - 1)]
            if let image = session.decodedPicture(url) ?? (shown == 0 ? session.picture(at: index) : nil) {
                return .init(source: .image(key: url.absoluteString, image), item: item)
            }
            if let image = session.picture(at: index) { return .init(source: .image(key: "first:" + item.id, image), item: item) }
            return .init(source: nil, item: item)
        }
        if let frame = session.frame(at: index) { return .init(source: .frame(frame), item: item) }
        if let url = item.coverURL, let image = covers.image(url) { return .init(source: .image(key: url.absoluteString, image), item: item) }
        return .init(source: nil, item: item)
    }

    @discardableResult
    private func render(capture: Bool) -> RGBImage? {
        let now = uiClock.now
        var list: [DrawCommand] = []
        if shell?.showsFeed ?? true {
            if let session {
                syncCaptionTracks(session)
                list = model.drawList(now: now, captions: captionLayer(session)) { self.content(session, $0) }
            } else {
                list = model.drawList(now: now) { _ in .init(source: nil, item: nil) }
            }
        }
        if let shell {
            let text = host.text
            list += shell.drawList { string, size in Double(text.width(of: string, size: Int(size))) }
        }
        host.renderer.draw(list)
        let image = capture ? host.renderer.readPixels() : nil
        host.renderer.present()
        return image
    }

    /// Tells the model the current page's caption tracks and the one shown, when they changed.
    private func syncCaptionTracks(_ session: FeedSession) {
        let player = session.currentPlayer
        let tracks = player?.captionTracks ?? []
        let choices = PlaybackViewModel.CaptionChoice.list(tracks)
        if choices != model.playback.captionChoices { model.captionTracksChanged(choices) }
        let shown = player?.captionSelection.shown(among: tracks)
        if shown != model.playback.selectedCaptionTrack { model.captionSelectionChanged(shown) }
    }

    /// The current page's captions, when its player was made with a ``CaptionOverlay`` as its
    /// caption sink (`reel feed --window` makes every pool player with one) and captions are on.
    private func captionLayer(_ session: FeedSession) -> CaptionLayer? {
        guard model.showsCaptions, let player = session.currentPlayer, let overlay = player.captionSink as? CaptionOverlay else { return nil }
        let playback = model.playback
        return windowCaptions.layer(overlay, at: player.currentTime, tracks: { player.captionTracks }, video: playback.layout.video,
                                    videoWidth: playback.videoWidth, videoHeight: playback.videoHeight)
    }

    private func hudLines(_ session: FeedSession) -> [String] {
        let index = model.currentIndex
        var lines = ["\(host.renderer.name)  \(model.playback.drawableWidth)×\(model.playback.drawableHeight)  page \(index + 1)/\(session.items.count)",
                     "stage \(session.preloadStage(at: index).rawValue)  players \(session.livePlayers)"]
        if let player = session.player(at: index) {
            let stats = player.statistics
            lines.append("drops \(stats.droppedFrames)  read \(stats.bytesRead / 1024) KiB")
        }
        if let last = events.lastFirstFrame { lines.append(last) }
        return lines
    }

    // MARK: Input

    private func handle(_ input: HostInput) {
        if shell != nil, handleShell(input) { return }
        let now = uiClock.now
        let mapped: FeedViewModel.Input?
        switch input {
        case .quit: running = false; return
        case .wake, .resized, .pointerLeave: return
        case .pointerDown(let x, let y, _): mapped = .pointerDown(x: x, y: y)
        case .pointerMove(let x, let y, _): mapped = .pointerMove(x: x, y: y)
        case .pointerUp(let x, let y): mapped = .pointerUp(x: x, y: y)
        case .wheel(let dy): mapped = .wheel(dy: dy)
        case .keyDown(let code, let isRepeat): mapped = .keyDown(Self.key(code), isRepeat: isRepeat)
        case .keyUp(let code): mapped = .keyUp(Self.key(code))
        case .textInput(let text): mapped = .text(text)
        case .textEditing(let text): mapped = .composition(text)
        case .drop: mapped = nil
        }
        if let mapped { perform(model.handle(mapped, now: now)) }
    }

    static func key(_ code: Int32) -> FeedViewModel.Key {
        switch code {
        case SDLEventInjector.keycode(.j): .j
        case SDLEventInjector.keycode(.k): .k
        case SDLEventInjector.keycode(.slash): .slash
        case SDLEventInjector.keycode(.enter): .enter
        case SDLEventInjector.keycode(.backspace): .backspace
        default: .playback(SDLWindowHost.key(code))
        }
    }

    private func perform(_ commands: [FeedViewModel.Command]) {
        for command in commands {
            switch command {
            case .move(let index):
                session?.move(to: index)
            case .selectTab(let index):
                if let results = resultsSession {
                    // The tab's feed takes over (it resumes when its session shows).
                    results.close()
                    resultsSession = nil
                    model.resultsClosed()
                }
                let browser = self.browser
                tasks.run("分类加载失败 Category failed") { try await browser.select(index) }
                shownSession = nil
            case .player(let command):
                performPlayer(command)
            case .openSearch:
                host.startTextInput(rect: model.textInputRect)
                session?.currentPlayer?.pause()
            case .closeSearch:
                host.stopTextInput()
                session?.currentPlayer?.play()
            case .search(let query):
                if let search { tasks.run("搜索失败 Search failed") { await search.search(query) } }
            case .loadMoreResults:
                if let search, search.hasMore { tasks.run("搜索失败 Search failed") { await search.loadMore() } }
            case .openSearchResult(let index):
                openSearchResult(index)
            case .closeResults:
                leaveResults()
            }
        }
    }

    private func performPlayer(_ command: PlaybackViewModel.Command) {
        let player = session?.currentPlayer
        switch command {
        case .togglePause:
            guard let player else { return }
            if player.rate == 0 { player.play() } else { player.pause() }
        case .seek(let time, let exact):
            let tolerance: MediaTime = exact ? .zero : .positiveInfinity
            player?.seek(to: time, toleranceBefore: tolerance, toleranceAfter: tolerance) { _ in }
        case .beginScrubbing: player?.beginScrubbing()
        case .scrub(let time): player?.scrub(to: time)
        case .endScrubbing(let time): player?.endScrubbing(at: time)
        case .setRate(let rate): player?.rate = rate
        case .setMuted(let muted):
            for session in [browser.currentSession, resultsSession].compactMap({ $0 }) {
                for p in session.poolPlayers { p.isMuted = muted }
            }
        case .setFullscreen(let on): host.setFullscreen(on)
        case .setCaptionsShown:
            // c cycles the current page's tracks (off → first → next … → off) for every page of
            // the pool; a page in the chosen language starts with its captions shown.
            let current = (resultsSession ?? browser.currentSession)?.currentPlayer
            let base = current?.captionSelection ?? CaptionSelection()
            let next = base.cycled(through: current?.captionTracks ?? [])
            for session in [browser.currentSession, resultsSession].compactMap({ $0 }) {
                session.captionSelection = next
            }
            model.captionsShownChanged(next.isEnabled)
        case .selectCaptionTrack(let track):
            // The picker's choice holds for every page of the pool, like c's.
            let current = (resultsSession ?? browser.currentSession)?.currentPlayer
            let tracks = current?.captionTracks ?? []
            let next = (current?.captionSelection ?? CaptionSelection()).picking(track, among: tracks)
            for session in [browser.currentSession, resultsSession].compactMap({ $0 }) {
                session.captionSelection = next
            }
            model.captionsShownChanged(next.isEnabled)
            model.captionSelectionChanged(next.shown(among: tracks))
        case .quit:
            // Escape from search results goes back to the tabs; from my videos to the profile.
            if playingMyVideos || resultsSession != nil { leaveResults() } else { running = false }
        }
    }

    /// Whether a category is being read again (after an upload, or after signing in).
    public var isReloading: Bool { tasks.isRunning(.reload) }
}
