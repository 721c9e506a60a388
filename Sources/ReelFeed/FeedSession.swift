import Foundation
import Logging
import ReelCore
import ReelLoading
import ReelMedia
import Synchronization

/// A feed of one category, played: the items of a `FeedSource` page by page, a pool
/// of at most three players (previous, current, next) and ranked preloading.
///
/// - ``move(to:)`` (``next()``, ``previous()``) changes the page: the page left is
///   paused, the page entered plays, a page two away loses its player
///   (`replaceCurrentItem(nil)`), and the plan is re-ranked (``FeedPlan``).
/// - The next page is prepared and its first frame decoded and held while paused, so
///   a swipe onto it shows a frame at once ("pre-rendered"); audio starts only when it
///   plays. Neighbours are opened only once the current page shows its first frame
///   (or has failed), so they never compete with it.
/// - Items two to four away get their first two seconds of media (by the container's
///   index, else 800 KB) cached by the `Preloader`, one at a time, yielding to the
///   players; the queue is replaced (and the running preload cancelled if no longer
///   wanted) on every page change.
/// - When the index reaches 70 % of the loaded items the next page loads in the
///   background; duplicates are dropped.
/// - Image posts have no player: their first picture is decoded (downsampled to
///   ``Configuration/displaySize``) for the current page and its neighbours.
/// - An item that cannot be shown — its player reports `.failed`, its media ends
///   before a single frame, its picture does not decode — becomes a failed page at
///   once, whichever position it holds: ``FeedEvent/failed(index:message:)``, its
///   player is released, ``failure(at:)`` gives the message to draw, and swiping onto
///   and past it works as for any page. A failed item costs what its failure costs;
///   the session has no timer of its own.
///
/// Thread-safe. Every decision is the `FeedPoolMachine`'s, taken behind the session's
/// one lock; what it decides is carried out with no lock held. Player work (opening,
/// releasing: both block) runs in order on the session's own queue; ``waitUntilIdle()``
/// (blocking) and ``idle()`` (async) wait for it — tests on a `ManualClock` wait
/// before advancing the clock. Events are emitted with no lock held, on the thread that
/// caused them.
public final class FeedSession: Sendable {
    /// Sizes and policies.
    public struct Configuration: Sendable {
        /// Items asked for per page.
        public var pageSize: Int
        /// The fraction of loaded items the index must reach to load the next page.
        public var paginationTrigger: Double
        /// Seconds of media preloaded for items two to four away.
        public var preloadSeconds: Double
        /// Distances (in items) that get bytes preloaded.
        public var preloadDistances: ClosedRange<Int>
        /// Once every page is loaded, the last item's next is the first.
        public var wrapsAround: Bool
        /// What players do at the end of an item (`.loop` in a feed, as apps do).
        public var actionAtItemEnd: PlayerStateMachine.ActionAtItemEnd
        /// Pictures are decoded to fit inside this size.
        public var displaySize: (width: Int, height: Int)
        /// The players' pipeline settings.
        public var pipeline: PipelineConfiguration

        /// A configuration with the feed defaults: pages of 10 (a `pageSize` below 1 is
        /// taken as 1), the next page loaded at 70 %, 2 s of media preloaded for items two to
        /// four away, no wrap-around, players looping at an item's end, pictures decoded to
        /// fit 540 × 960 pixels, and the default pipeline.
        public init(pageSize: Int = 10, paginationTrigger: Double = 0.7, preloadSeconds: Double = 2,
                    preloadDistances: ClosedRange<Int> = 2...4, wrapsAround: Bool = false,
                    actionAtItemEnd: PlayerStateMachine.ActionAtItemEnd = .loop,
                    displaySize: (width: Int, height: Int) = (540, 960),
                    pipeline: PipelineConfiguration = PipelineConfiguration()) {
            self.pageSize = max(1, pageSize)
            self.paginationTrigger = paginationTrigger
            self.preloadSeconds = preloadSeconds
            self.preloadDistances = preloadDistances
            self.wrapsAround = wrapsAround
            self.actionAtItemEnd = actionAtItemEnd
            self.displaySize = displaySize
            self.pipeline = pipeline
        }
    }

    // Immutable after init.
    /// Where the items come from: pages of ``category`` are asked for with
    /// `FeedSource.page(category:page:size:)` as the index nears the end of what is loaded.
    public let source: any FeedSource
    /// The category this feed shows (`nil`: the source's whole feed).
    public let category: String?
    /// The sizes and policies given at init; fixed for the session's life.
    public let configuration: Configuration
    let loader: any ResourceLoader
    let preloader: (any FeedPreloading)?
    let clock: any EngineClock
    let measurementClock: any EngineClock
    let logger = Logger(label: "reel.feed")
    /// The pool: three players, each with the sink that keeps its last frame.
    let slots: [Slot]
    /// Carries out player work (opening, releasing: both block) in order, off the
    /// caller's thread and off the concurrency pool. The only place `.assign` and
    /// `.release` run.
    let work = DispatchQueue(label: "reel.feed.pool")
    /// Decodes pictures (blocking FFmpeg work, never on the concurrency pool).
    let pictureQueue = DispatchQueue(label: "reel.feed.pictures")

    /// Everything that changes: the machine's decisions and what the session keeps
    /// beside them. Each event is one short critical section; nothing blocks inside.
    let state: Mutex<State>

    struct State {
        var machine: FeedPoolMachine
        /// The decoded pictures the machine counts as decoded (`decodedPictures`).
        var images: [URL: RGBImage] = [:]
        var observers: [Int: @Sendable (FeedEvent) -> Void] = [:]
        var nextObserverID = 0
        var onFrame: (@Sendable (Int) -> Void)?
    }

    /// A feed of `source` (one `category` of it, or all of it), playing media read
    /// through `loader`. `preloader` caches the heads of items two to four away
    /// (share one `PlaybackLoadCoordinator` between it and `coordinator`, which the
    /// players report their network demand to). `audioSink` makes each pool player's
    /// audio output (called three times); without it players have no audio. `captionSink`
    /// likewise makes each pool player's caption sink (a window's overlay).
    public init(source: any FeedSource, category: String? = nil, loader: any ResourceLoader,
                preloader: (any FeedPreloading)? = nil, coordinator: (any PlaybackDemandObserver)? = nil,
                clock: any EngineClock = HostClock.shared, measurementClock: (any EngineClock)? = nil,
                configuration: Configuration = Configuration(),
                audioSink: (@Sendable () -> (any AudioSink)?)? = nil,
                captionSink: (@Sendable () -> (any CaptionSink)?)? = nil) {
        self.source = source
        self.category = category
        self.loader = loader
        self.preloader = preloader
        self.clock = clock
        self.measurementClock = measurementClock ?? clock
        self.configuration = configuration
        let settings = FeedPoolMachine.Settings(wrapsAround: configuration.wrapsAround,
                                                preloadDistances: configuration.preloadDistances,
                                                paginationTrigger: configuration.paginationTrigger)
        self.state = Mutex(State(machine: FeedPoolMachine(settings: settings)))
        var slots: [Slot] = []
        for number in 0..<settings.slotCount {
            let store = FrameStore()
            let player = Player(clock: clock, videoSink: store, audioSink: audioSink?(), captionSink: captionSink?(),
                                configuration: configuration.pipeline, measurementClock: measurementClock)
            player.actionAtItemEnd = configuration.actionAtItemEnd
            player.demandObserver = coordinator
            slots.append(Slot(number: number, player: player, store: store))
        }
        self.slots = slots
        // Before any player has an item, so before any frame can arrive.
        for slot in slots {
            let number = slot.number
            slot.store.setOnPresent { [weak self] generation in self?.slotPresented(number, generation: generation) }
        }
    }

    deinit {
        for slot in slots { slot.player.replaceCurrentItem(with: nil) }
    }

    // MARK: Reading

    /// The items loaded so far.
    public var items: [FeedItem] { state.withTrackedLock { $0.machine.items } }
    /// The page shown now.
    public var currentIndex: Int { state.withTrackedLock { $0.machine.current } }
    /// Whether the source may have more pages.
    public var hasMore: Bool { state.withTrackedLock { $0.machine.pagination.hasMore } }
    /// The item shown now.
    public var currentItem: FeedItem? {
        state.withTrackedLock { s in s.machine.items.indices.contains(s.machine.current) ? s.machine.items[s.machine.current] : nil }
    }

    /// Which captions the feed's players show, kept across pages: a page in the preferred
    /// language starts with its captions on. Set on every player of the pool at once.
    public var captionSelection: CaptionSelection {
        get { slots[0].player.captionSelection }
        set { for slot in slots { slot.player.captionSelection = newValue } }
    }

    /// The player of the page shown now (nil for an image post or a failed page).
    public var currentPlayer: Player? { player(at: currentIndex) }

    /// The player holding item `index`, when one of the pool does (the current page
    /// and its neighbours).
    public func player(at index: Int) -> Player? {
        state.withTrackedLock { $0.machine.slot(holding: index) }.map { slots[$0].player }
    }

    /// The last frame the player of item `index` presented: what to draw for that
    /// page (`nil`: draw its cover).
    public func frame(at index: Int) -> VideoFrame? {
        let held: (slot: Int, generation: Int)? = state.withTrackedLock { s in
            s.machine.slot(holding: index).flatMap { number in s.machine.holding[number].map { (number, $0.generation) } }
        }
        return held.flatMap { slots[$0.slot].store.latest(generation: $0.generation) }
    }

    /// Why item `index` cannot be shown, once it failed (`nil`: it has not).
    public func failure(at index: Int) -> String? {
        state.withTrackedLock { $0.machine.failures[index] }
    }

    /// The first picture of image post `index` (or its decoded cover), once decoded.
    public func picture(at index: Int) -> RGBImage? {
        state.withTrackedLock { s in
            guard s.machine.items.indices.contains(index),
                  let url = FeedPoolMachine.pictureURL(of: s.machine.items[index]) else { return nil }
            return s.images[url]
        }
    }

    /// A decoded picture of the feed (any page of an image post on the current page or
    /// a neighbour), when decoded.
    public func decodedPicture(_ url: URL) -> RGBImage? { state.withTrackedLock { $0.images[url] } }

    /// How ready item `index` is now.
    public func preloadStage(at index: Int) -> PreloadStage {
        state.withTrackedLock { $0.machine.stage(index, isCached: isCached) }
    }

    /// Whether the head of `url` was preloaded.
    func isCached(_ url: URL) -> Bool { preloader?.hasPreloaded(url) ?? false }

    /// What the session is doing, in one line, for a watchdog's report: the page, what
    /// each slot of the pool holds, the swipe waiting for its first frame, the failed
    /// items. Never waits for a lock (`state busy` when it is held), so it can be asked
    /// while something is stuck.
    public var diagnostics: String {
        let text: String? = state.withLockIfAvailable { s in
            let m = s.machine
            let slotsText = m.holding.enumerated().map { number, held in
                guard let held else { return "slot \(number): empty" }
                return "slot \(number): item \(held.index) (\(held.itemID), assignment \(held.generation)"
                    + (held.audioOnly ? ", audio only" : "") + ")"
            }
            let pending = m.pendingSwipe.map { "waiting for item \($0.index) since \($0.startedAt.seconds) s" } ?? "no swipe waiting"
            return "page \(m.current) of \(m.items.count)\(m.pagination.hasMore ? "+" : ""), "
                + (m.closed ? "closed" : m.active ? "active" : "inactive") + ", \(pending); "
                + slotsText.joined(separator: "; ")
                + "; failed items \(m.failures.keys.sorted())"
        }
        return text ?? "state busy (its lock is held)"
    }

    /// The pool's three players, whatever they hold (for statistics and tests).
    public var poolPlayers: [Player] { slots.map(\.player) }

    /// Players holding an item now (at most three).
    public var livePlayers: Int { state.withTrackedLock { $0.machine.holding.compactMap { $0 }.count } }

    /// Video decoders the pool's players hold open now (at most three).
    public var liveDecoders: Int { slots.filter { $0.player.hasOpenVideoDecoder }.count }

    /// Called (on the presenting player's clock context) when a page's player
    /// presents a frame: wake the render loop.
    public var onFrame: (@Sendable (Int) -> Void)? {
        get { state.withTrackedLock { $0.onFrame } }
        set { state.withTrackedLock { $0.onFrame = newValue } }
    }

    /// Calls `handler` for every event (on the thread that caused it, with no lock held).
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (FeedEvent) -> Void) -> FeedObserverToken {
        state.withTrackedLock {
            $0.nextObserverID += 1
            $0.observers[$0.nextObserverID] = handler
            return FeedObserverToken(id: $0.nextObserverID)
        }
    }

    /// Stops calling the handler that ``addObserver(_:)`` returned `token` for. An event
    /// already being delivered on another thread may still reach it once; after that, none
    /// does. Removing a token twice, or one of another session, does nothing.
    public func removeObserver(_ token: FeedObserverToken) {
        state.withTrackedLock { _ = $0.observers.removeValue(forKey: token.id) }
    }

    // MARK: Starting and moving

    /// Loads pages until item `index` is loaded (the first page for 0), then shows it.
    /// Throws `FeedError` when the source fails or has fewer items. (An item that
    /// cannot be played does not make it throw: that page fails, the feed goes on.)
    public func start(at index: Int = 0) async throws {
        reaching: while true {
            switch state.withTrackedLock({ $0.machine.reach(index) }) {
            case .loaded: break reaching
            case .unavailable(let message): throw FeedError.unavailable(message)
            case .load: try await fetchPage(propagating: true)
            }
        }
        let now = measurementClock.now
        perform(state.withTrackedLock { $0.machine.start(at: index, now: now, isCached: isCached) })
    }

    /// Shows the next page (the first again past the end of a feed that wraps).
    public func next() { step(by: 1) }
    /// Shows the previous page.
    public func previous() { step(by: -1) }

    private func step(by offset: Int) {
        if let target = state.withTrackedLock({ $0.machine.target(ofStep: offset) }) { move(to: target) }
    }

    /// Shows page `index`: pauses the page left, plays the page entered (at once when
    /// it was pre-rendered), and re-plans the pool and the preloads. Landing on a page
    /// that has failed emits ``FeedEvent/failed(index:message:)`` again.
    public func move(to index: Int) {
        let now = measurementClock.now
        let moved = state.withTrackedLock { $0.machine.moved(to: index, now: now, isCached: isCached) }
        guard !moved.isEmpty else { return }
        perform(moved)
        // The swipe's outcome (its first frame, or its failure) is looked for only after the
        // page's enter was delivered: a frame or a failure found on another thread in between
        // would otherwise be reported before the page it belongs to was entered.
        perform(state.withTrackedLock { $0.machine.enterDelivered(index) })
    }

    /// Leaving this feed's category (`false`) pauses its page and releases the
    /// neighbours' players; entering it again (`true`) resumes the page.
    public func setActive(_ isActive: Bool) {
        perform(state.withTrackedLock { $0.machine.setActive(isActive) })
    }

    /// Releases every player and stops preloading; blocks until the players are
    /// closed (their threads joined). Call it from a thread of your own (a window's),
    /// never from a feed callback; async code awaits ``shutdown()``. The session cannot
    /// be used after.
    public func close() {
        state.withTrackedLock { $0.machine.close() }
        work.sync { releaseAll() }
    }

    /// ``close()`` without blocking the caller: the players are released on the
    /// session's queue, and this returns when they are.
    public func shutdown() async {
        state.withTrackedLock { $0.machine.close() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            work.async {
                self.releaseAll()
                continuation.resume()
            }
        }
    }

    /// Work queue only.
    private func releaseAll() {
        perform(state.withTrackedLock { $0.machine.releaseAll() })
    }

    /// Waits until the pool has carried out every change asked for so far (blocking:
    /// from a thread of your own, never from a feed callback; async code awaits ``idle()``).
    public func waitUntilIdle() {
        work.sync {}
    }

    /// ``waitUntilIdle()`` without blocking the caller.
    public func idle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            work.async { continuation.resume() }
        }
    }

    // MARK: Pages

    /// Fetches the next page (the machine has marked it loading, or this is the first).
    func fetchPage(propagating: Bool) async throws {
        let number = state.withTrackedLock { $0.machine.nextPageNumber }
        do {
            let page = try await source.page(category: category, page: number, size: configuration.pageSize)
            let actions = state.withTrackedLock { $0.machine.pageLoaded(page.items, hasMore: page.hasMore) }
            perform(actions.filter { $0 != .loadNextPage })
            if actions.contains(.loadNextPage) { try await fetchPage(propagating: false) }
        } catch {
            var authorization = false
            if case FeedError.authorizationRequired = error { authorization = true }
            perform(state.withTrackedLock {
                $0.machine.pageFailed(String(describing: error), authorization: authorization)
            })
            if propagating { throw error }
        }
    }
}
