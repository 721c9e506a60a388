import Foundation
import Logging
import ReelCore
import ReelLoading
import ReelMedia
import Synchronization

/// How ready an item was when the user swiped onto it.
public enum PreloadStage: String, Sendable, Hashable, Codable {
    /// Its first frame was decoded and held: it shows on the next presentation.
    case prerendered
    /// A player was opening it, but no frame was ready yet.
    case prepared
    /// The first bytes of its media were cached.
    case bytes
    /// Nothing was ready.
    case none
}

/// Something that happened in a ``FeedSession``.
public enum FeedEvent: Sendable, Hashable {
    /// A page arrived; the feed holds `count` items now.
    case itemsChanged(count: Int)
    /// The user left this page.
    case pageLeave(index: Int)
    /// The user arrived on this page.
    case pageEnter(index: Int)
    /// The page's first frame (or first picture) is ready to show, `swipeToFirstFrameMs`
    /// after the swipe landed, and how ready it was then.
    case firstFrame(index: Int, swipeToFirstFrameMs: Double, stage: PreloadStage)
    /// The source has no more pages.
    case noMoreData
    /// The feed API wants a (new) bearer token.
    case authorizationRequired
    /// A page could not be loaded (the feed goes on with what it has).
    case pageLoadFailed(message: String)
    /// Item `index` cannot be shown: its player failed (or its media ended before a
    /// single frame), or an image post's picture could not be decoded. Emitted once when
    /// it fails, wherever the item is (the current page, a pre-rendered neighbour), and
    /// again each time a swipe lands on it later, in place of ``firstFrame``. The page
    /// stays in the feed, showing ``FeedSession/failure(at:)``.
    case failed(index: Int, message: String)
}

/// A feed of one category, played: the items of a ``FeedSource`` page by page, a pool
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
///   index, else 800 KB) cached by the ``Preloader``, one at a time, yielding to the
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
/// Thread-safe. Player work (opening, releasing) runs on the session's own queue;
/// ``waitUntilIdle()`` (blocking) and ``idle()`` (async) wait for it — tests on a
/// ``ManualClock`` wait before advancing the clock. Events are emitted with no lock
/// held, on the thread that caused them.
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
    public let source: any FeedSource
    /// The category this feed shows (`nil`: the source's whole feed).
    public let category: String?
    public let configuration: Configuration
    private let loader: any ResourceLoader
    private let preloader: (any FeedPreloading)?
    private let clock: any EngineClock
    private let measurementClock: any EngineClock
    private let logger = Logger(label: "reel.feed")
    /// The pool: three players, each with the sink that keeps its last frame.
    private let slots: [Slot]
    /// Runs player work (opening, releasing: both block) in order, off the caller's thread.
    private let work = DispatchQueue(label: "reel.feed.pool")
    private static let workKey = DispatchSpecificKey<Bool>()
    /// Decodes pictures (blocking FFmpeg work, never on the concurrency pool).
    private let pictureQueue = DispatchQueue(label: "reel.feed.pictures")

    /// Everything that changes, protected by `state`.
    private let state: Mutex<State>

    private struct State {
        var items: [FeedItem] = []
        var pagination: Pagination<String>
        var current = 0
        var started = false
        var active = true
        var closed = false
        /// What each slot of the pool holds (by slot number).
        var holding: [Holding?] = [nil, nil, nil]
        /// Counts assignments, so a player's late event for an item it no longer holds is ignored.
        var generation = 0
        var pendingSwipe: PendingSwipe?
        var images: [URL: RGBImage] = [:]
        var imagesLoading: Set<URL> = []
        var pictureFailures: [URL: String] = [:]
        /// Items that cannot be shown, by index: why.
        var failures: [Int: String] = [:]
        var observers: [Int: @Sendable (FeedEvent) -> Void] = [:]
        var nextObserverID = 0
        var onFrame: (@Sendable (Int) -> Void)?
    }

    /// The item a slot's player holds.
    private struct Holding {
        var index: Int
        var itemID: String
        var generation: Int
        /// Its media has no video stream: the page shows its cover, and is ready once the player is.
        var audioOnly = false
    }

    private struct PendingSwipe {
        var index: Int
        var startedAt: MediaTime
        var stage: PreloadStage
    }

    /// One player of the pool and the frame it last presented.
    private final class Slot: @unchecked Sendable {
        // Immutable.
        let number: Int
        let player: Player
        let store: FrameStore
        /// The observer on `player` for the item it holds. Work queue only.
        var eventToken: ObserverToken?

        init(number: Int, player: Player, store: FrameStore) {
            self.number = number
            self.player = player
            self.store = store
        }
    }

    /// A video sink that keeps the last frame of its slot and tells the session.
    private final class FrameStore: VideoSink, Sendable {
        private struct Contents {
            var frame: VideoFrame?
            var accepting = true
            var onPresent: (@Sendable () -> Void)?
        }
        /// Protected by its own mutex (taken after the session's `state`, never before).
        private let contents = Mutex(Contents())

        func setOnPresent(_ handler: @escaping @Sendable () -> Void) {
            contents.withTrackedLock { $0.onPresent = handler }
        }

        func present(_ frame: VideoFrame, presentation: Presentation) {
            let handler: (@Sendable () -> Void)? = contents.withTrackedLock {
                guard $0.accepting else { return nil }
                $0.frame = frame
                return $0.onPresent
            }
            handler?()
        }

        func clear() { contents.withTrackedLock { $0.frame = nil } }

        /// Forgets the frame and refuses frames until ``accept()``: the slot changes item.
        func reset() {
            contents.withTrackedLock {
                $0.frame = nil
                $0.accepting = false
            }
        }

        /// Takes frames again (the previous item's player is closed).
        func accept() { contents.withTrackedLock { $0.accepting = true } }

        var latest: VideoFrame? { contents.withTrackedLock { $0.frame } }
    }

    /// A feed of `source` (one `category` of it, or all of it), playing media read
    /// through `loader`. `preloader` caches the heads of items two to four away
    /// (share one `PlaybackLoadCoordinator` between it and `coordinator`, which the
    /// players report their network demand to). `audioSink` makes each pool player's
    /// audio output (called three times); without it players have no audio.
    public init(source: any FeedSource, category: String? = nil, loader: any ResourceLoader,
                preloader: (any FeedPreloading)? = nil, coordinator: (any PlaybackDemandObserver)? = nil,
                clock: any EngineClock = HostClock.shared, measurementClock: (any EngineClock)? = nil,
                configuration: Configuration = Configuration(),
                audioSink: (@Sendable () -> (any AudioSink)?)? = nil) {
        self.source = source
        self.category = category
        self.loader = loader
        self.preloader = preloader
        self.clock = clock
        self.measurementClock = measurementClock ?? clock
        self.configuration = configuration
        self.state = Mutex(State(pagination: Pagination(triggerFraction: configuration.paginationTrigger)))
        var slots: [Slot] = []
        for number in 0..<3 {
            let store = FrameStore()
            let player = Player(clock: clock, videoSink: store, audioSink: audioSink?(),
                                configuration: configuration.pipeline, measurementClock: measurementClock)
            player.actionAtItemEnd = configuration.actionAtItemEnd
            player.demandObserver = coordinator
            slots.append(Slot(number: number, player: player, store: store))
        }
        self.slots = slots
        work.setSpecific(key: Self.workKey, value: true)
        // Before any player has an item, so before any frame can arrive.
        for slot in slots {
            let number = slot.number
            slot.store.setOnPresent { [weak self] in self?.slotPresented(number) }
        }
    }

    deinit {
        for slot in slots { slot.player.replaceCurrentItem(with: nil) }
    }

    // MARK: Reading

    /// The items loaded so far.
    public var items: [FeedItem] { state.withTrackedLock { $0.items } }
    /// The page shown now.
    public var currentIndex: Int { state.withTrackedLock { $0.current } }
    /// Whether the source may have more pages.
    public var hasMore: Bool { state.withTrackedLock { $0.pagination.hasMore } }
    /// The item shown now.
    public var currentItem: FeedItem? {
        state.withTrackedLock { $0.current < $0.items.count ? $0.items[$0.current] : nil }
    }

    /// The player of the page shown now (nil for an image post or a failed page).
    public var currentPlayer: Player? { player(at: currentIndex) }

    /// The player holding item `index`, when one of the pool does (the current page
    /// and its neighbours).
    public func player(at index: Int) -> Player? {
        state.withTrackedLock { s in s.holding.firstIndex { $0?.index == index } }.map { slots[$0].player }
    }

    /// The last frame the player of item `index` presented: what to draw for that
    /// page (`nil`: draw its cover).
    public func frame(at index: Int) -> VideoFrame? {
        let slot = state.withTrackedLock { s in s.holding.firstIndex { $0?.index == index } }
        return slot.flatMap { slots[$0].store.latest }
    }

    /// Why item `index` cannot be shown, once it failed (`nil`: it has not).
    public func failure(at index: Int) -> String? {
        state.withTrackedLock { $0.failures[index] }
    }

    /// The first picture of image post `index` (or its decoded cover), once decoded.
    public func picture(at index: Int) -> RGBImage? {
        state.withTrackedLock { s in
            guard index >= 0, index < s.items.count, let url = Self.pictureURL(of: s.items[index]) else { return nil }
            return s.images[url]
        }
    }

    /// A decoded picture of the feed (any page of an image post on the current page or
    /// a neighbour), when decoded.
    public func decodedPicture(_ url: URL) -> RGBImage? { state.withTrackedLock { $0.images[url] } }

    /// How ready item `index` is now.
    public func preloadStage(at index: Int) -> PreloadStage {
        state.withTrackedLock { stage(index, in: $0) }
    }

    /// What the session is doing, in one line, for a watchdog's report: the page, what
    /// each slot of the pool holds, the swipe waiting for its first frame, the failed
    /// items. Never waits for a lock (`state busy` when it is held), so it can be asked
    /// while something is stuck.
    public var diagnostics: String {
        let text: String? = state.withLockIfAvailable { s in
            let slotsText = s.holding.enumerated().map { number, held in
                guard let held else { return "slot \(number): empty" }
                return "slot \(number): item \(held.index) (\(held.itemID), assignment \(held.generation)"
                    + (held.audioOnly ? ", audio only" : "") + ")"
            }
            let pending = s.pendingSwipe.map { "waiting for item \($0.index) since \($0.startedAt.seconds) s" } ?? "no swipe waiting"
            return "page \(s.current) of \(s.items.count)\(s.pagination.hasMore ? "+" : ""), "
                + (s.closed ? "closed" : s.active ? "active" : "inactive") + ", \(pending); "
                + slotsText.joined(separator: "; ")
                + "; failed items \(s.failures.keys.sorted())"
        }
        return text ?? "state busy (its lock is held)"
    }

    /// The pool's three players, whatever they hold (for statistics and tests).
    public var poolPlayers: [Player] { slots.map(\.player) }

    /// Players holding an item now (at most three).
    public var livePlayers: Int { state.withTrackedLock { $0.holding.compactMap { $0 }.count } }

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

    public func removeObserver(_ token: FeedObserverToken) {
        state.withTrackedLock { _ = $0.observers.removeValue(forKey: token.id) }
    }

    // MARK: Starting and moving

    /// Loads pages until item `index` is loaded (the first page for 0), then shows it.
    /// Throws ``FeedError`` when the source fails or has fewer items. (An item that
    /// cannot be played does not make it throw: that page fails, the feed goes on.)
    public func start(at index: Int = 0) async throws {
        while true {
            let (count, more) = state.withTrackedLock { ($0.items.count, $0.pagination.hasMore) }
            if count > index { break }
            guard more else {
                throw FeedError.unavailable(count == 0 ? "the feed has no items" : "the feed has only \(count) items")
            }
            let action: Pagination<String>.Action? = state.withTrackedLock {
                $0.pagination.pagesLoaded == 0 ? $0.pagination.start() : $0.pagination.indexChanged(to: index)
            }
            guard action == .loadNextPage else {
                throw FeedError.unavailable("the feed is already loading")
            }
            try await fetchPage(propagating: true)
        }
        let now = measurementClock.now
        state.withTrackedLock { s in
            s.started = true
            s.current = index
            s.pendingSwipe = PendingSwipe(index: index, startedAt: now, stage: stage(index, in: s))
            _ = s.pagination.indexChanged(to: index)
        }
        emit([.pageEnter(index: index)])
        resumeCurrent()
        loadMoreIfNeeded()
        reconcile()
    }

    /// Shows the next page (the first again past the end of a feed that wraps).
    public func next() { step(by: 1) }
    /// Shows the previous page.
    public func previous() { step(by: -1) }

    private func step(by offset: Int) {
        let target: Int? = state.withTrackedLock { s in
            let count = s.items.count
            guard count > 0 else { return nil }
            let raw = s.current + offset
            if raw >= 0 && raw < count { return raw }
            if configuration.wrapsAround && !s.pagination.hasMore { return ((raw % count) + count) % count }
            return nil
        }
        if let target { move(to: target) }
    }

    /// Shows page `index`: pauses the page left, plays the page entered (at once when
    /// it was pre-rendered), and re-plans the pool and the preloads. Landing on a page
    /// that has failed emits ``FeedEvent/failed(index:message:)`` again.
    public func move(to index: Int) {
        let now = measurementClock.now
        let moved: (leaving: Player?, entering: Player?, old: Int, active: Bool, stage: PreloadStage)? = state.withTrackedLock { s in
            guard s.started, !s.closed, index >= 0, index < s.items.count, index != s.current else { return nil }
            let old = s.current
            s.current = index
            s.pendingSwipe = nil
            let leaving = s.holding.firstIndex { $0?.index == old }.map { slots[$0].player }
            let entering = s.holding.firstIndex { $0?.index == index }.map { slots[$0].player }
            return (leaving, entering, old, s.active, stage(index, in: s))
        }
        guard let moved else { return }
        moved.leaving?.pause()
        if moved.active { moved.entering?.play() }
        emit([.pageLeave(index: moved.old), .pageEnter(index: index)])
        // The swipe's outcome (its first frame, or its failure) is looked for only after the
        // page's enter was delivered: a frame or a failure found on another thread in between
        // would otherwise be reported before the page it belongs to was entered.
        state.withTrackedLock { s in
            if s.current == index { s.pendingSwipe = PendingSwipe(index: index, startedAt: now, stage: moved.stage) }
        }
        checkFirstFrame()
        loadMoreIfNeeded()
        reconcile()
    }

    /// Leaving this feed's category (`false`) pauses its page and releases the
    /// neighbours' players; entering it again (`true`) resumes the page.
    public func setActive(_ isActive: Bool) {
        let player: Player? = state.withTrackedLock { s in
            s.active = isActive
            return s.holding.firstIndex { $0?.index == s.current }.map { slots[$0].player }
        }
        if isActive { player?.play() } else { player?.pause() }
        reconcile()
    }

    /// Releases every player and stops preloading; blocks until the players are
    /// closed (their threads joined). Call it from a thread of your own (a window's);
    /// async code awaits ``shutdown()``. The session cannot be used after.
    public func close() {
        markClosed()
        if DispatchQueue.getSpecific(key: Self.workKey) == true {
            releaseAll()
        } else {
            work.sync { releaseAll() }
        }
    }

    /// ``close()`` without blocking the caller: the players are released on the
    /// session's queue, and this returns when they are.
    public func shutdown() async {
        markClosed()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            work.async {
                self.releaseAll()
                continuation.resume()
            }
        }
    }

    private func markClosed() {
        state.withTrackedLock { s in
            s.closed = true
            s.pendingSwipe = nil
        }
    }

    /// Work queue only.
    private func releaseAll() {
        state.withTrackedLock { s in
            s.holding = [nil, nil, nil]
            for slot in slots { slot.store.reset() }
        }
        for slot in slots {
            if let token = slot.eventToken {
                slot.player.removeEventObserver(token)
                slot.eventToken = nil
            }
            slot.player.replaceCurrentItem(with: nil)
        }
        preloader?.stop()
    }

    /// Waits until the pool has carried out every change asked for so far (blocking:
    /// from a thread of your own; async code awaits ``idle()``).
    public func waitUntilIdle() {
        if DispatchQueue.getSpecific(key: Self.workKey) == true { return }
        work.sync {}
    }

    /// ``waitUntilIdle()`` without blocking the caller.
    public func idle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            work.async { continuation.resume() }
        }
    }

    // MARK: Pages

    private func loadMoreIfNeeded() {
        let load: Bool = state.withTrackedLock { s in
            guard !s.closed, s.pagination.pagesLoaded > 0 else { return false }
            return s.pagination.indexChanged(to: s.current) == .loadNextPage
        }
        if load {
            Task { [weak self] in try? await self?.fetchPage(propagating: false) }
        }
    }

    /// Fetches the next page (the pagination model has marked it loading, or this
    /// is the first).
    private func fetchPage(propagating: Bool) async throws {
        let number = state.withTrackedLock { $0.pagination.pagesLoaded + 1 }
        do {
            let page = try await source.page(category: category, page: number, size: configuration.pageSize)
            let (events, again, started): ([FeedEvent], Bool, Bool) = state.withTrackedLock { s in
                let appended = s.pagination.append(page.items, id: \.id, hasMore: page.hasMore)
                s.items += appended.items
                var events: [FeedEvent] = [.itemsChanged(count: s.items.count)]
                if !page.hasMore { events.append(.noMoreData) }
                return (events, appended.action == .loadNextPage && s.started, s.started)
            }
            emit(events)
            if started { reconcile() }
            if again { try await fetchPage(propagating: false) }
        } catch {
            state.withTrackedLock { $0.pagination.loadFailed() }
            if case FeedError.authorizationRequired = error {
                emit([.authorizationRequired])
            } else {
                emit([.pageLoadFailed(message: String(describing: error))])
            }
            if propagating { throw error }
        }
    }

    // MARK: The pool

    /// Makes the pool and the preload queue match the plan for the current page.
    /// Runs on the work queue; idempotent.
    private func reconcile() {
        work.async { [weak self] in self?.reconcileNow() }
    }

    private struct Change {
        var slot: Int
        var item: FeedItem?
        var index: Int?
        var generation: Int
        var play: Bool
    }

    private struct Reconciliation {
        var changes: [Change] = []
        var preloads: [PreloadRequest] = []
        var pictures: [URL] = []
        var active = true
    }

    private func reconcileNow() {
        let plan: Reconciliation? = state.withTrackedLock { s in
            guard s.started, !s.closed else { return nil }
            var result = Reconciliation(active: s.active)
            let items = s.items
            let current = s.current
            let wraps = configuration.wrapsAround && !s.pagination.hasMore
            let plan = FeedPlan.make(current: current, count: items.count, wraps: wraps,
                                     preloadDistances: configuration.preloadDistances,
                                     wantsPlayer: { items[$0].videoURL != nil })
            // An inactive feed keeps only its current page.
            let wanted = s.active ? plan.pool : plan.pool.filter { $0 == current }
            // Release players whose item left the plan, changed under them, or failed.
            for number in s.holding.indices {
                guard let held = s.holding[number] else { continue }
                if !wanted.contains(held.index) || held.index >= items.count || items[held.index].id != held.itemID
                    || s.failures[held.index] != nil {
                    result.changes.append(Change(slot: number, item: nil, index: nil, generation: 0, play: false))
                    s.holding[number] = nil
                    slots[number].store.reset()
                }
            }
            // The current page first; neighbours once it shows a frame (or cannot).
            let currentReady = items.indices.contains(current) && (items[current].videoURL == nil || isReady(current, in: s)
                || s.failures[current] != nil)
            for index in wanted where !s.holding.contains(where: { $0?.index == index }) {
                if index != current && !currentReady { continue }
                guard s.failures[index] == nil, let number = s.holding.firstIndex(where: { $0 == nil }) else { continue }
                s.generation += 1
                s.holding[number] = Holding(index: index, itemID: items[index].id, generation: s.generation)
                slots[number].store.reset()
                result.changes.append(Change(slot: number, item: items[index], index: index, generation: s.generation,
                                             play: index == current && s.active))
            }
            if s.active, currentReady {
                for index in plan.preload {
                    if let url = items[index].videoURL, s.failures[index] == nil {
                        result.preloads.append(.seconds(configuration.preloadSeconds, of: url))
                    }
                }
            }
            // Pictures: every picture of the image posts on the current page and its
            // neighbours (the carousel pages through them), the current post's first.
            let near = FeedPlan.make(current: current, count: items.count, wraps: wraps,
                                     preloadDistances: 0...0, wantsPlayer: { _ in true }).pool
            let wantedPictures = near.flatMap { Self.pictureURLs(of: items[$0]) }
            let keep = Set(wantedPictures)
            for url in wantedPictures where s.images[url] == nil && !s.imagesLoading.contains(url) && s.pictureFailures[url] == nil {
                s.imagesLoading.insert(url)
                result.pictures.append(url)
            }
            s.images = s.images.filter { keep.contains($0.key) }
            return result
        }
        guard let plan else { return }

        for change in plan.changes {
            let slot = slots[change.slot]
            let player = slot.player
            if let token = slot.eventToken {
                player.removeEventObserver(token)
                slot.eventToken = nil
            }
            player.pause()
            guard let item = change.item, let url = item.videoURL else {
                player.replaceCurrentItem(with: nil)
                slot.store.clear()
                continue
            }
            let number = slot.number, generation = change.generation
            slot.eventToken = player.addEventObserver { [weak self] event in
                self?.playerEvent(event, slot: number, generation: generation)
            }
            // Frames of the item just released must not pass for the new one's.
            if player.currentItem != nil { player.replaceCurrentItem(with: nil) }
            slot.store.accept()
            player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader))
            if change.play { player.play() }
        }
        if plan.changes.contains(where: { $0.item == nil }) { MediaResources.returnFreedMemory() }
        if plan.active { preloader?.setPreloadQueue(plan.preloads) }
        for url in plan.pictures { decodePicture(url) }
        if checkFirstFrame() { reconcile() }
    }

    /// What a pool player tells about the item it holds (`generation` names the assignment).
    private func playerEvent(_ event: PlayerEvent, slot number: Int, generation: Int) {
        switch event {
        case .failed(let error):
            itemFailed(slot: number, generation: generation, message: error.description)
        case .ended:
            // Media that ends without a single frame has nothing to show (a video item
            // whose pictures all failed to decode, or whose stream is empty).
            let audioOnly = state.withTrackedLock { $0.holding[number]?.audioOnly ?? false }
            if !audioOnly && slots[number].store.latest == nil {
                itemFailed(slot: number, generation: generation, message: "the media ended before its first frame")
            }
        case .statusChanged(.readyToPlay):
            let info = slots[number].player.mediaInfo
            guard let info, info.videoStream == nil else { return }
            let marked: Bool = state.withTrackedLock { s in
                guard let held = s.holding[number], held.generation == generation else { return false }
                s.holding[number]?.audioOnly = true
                return true
            }
            if marked, checkFirstFrame() { reconcile() }
        default:
            break
        }
    }

    /// The item slot `number` holds (as assignment `generation`) cannot be shown.
    private func itemFailed(slot number: Int, generation: Int, message: String) {
        let index: Int? = state.withTrackedLock { s in
            guard !s.closed, let held = s.holding[number], held.generation == generation, s.failures[held.index] == nil else { return nil }
            s.failures[held.index] = message
            if s.pendingSwipe?.index == held.index { s.pendingSwipe = nil }
            return held.index
        }
        guard let index else { return }
        logger.debug("item \(index) failed: \(message)")
        emit([.failed(index: index, message: message)])
        // Releases its player, and opens the neighbours when it was the current page.
        reconcile()
    }

    private func decodePicture(_ url: URL) {
        let size = configuration.displaySize
        let loader = self.loader
        // A queue of its own: decoding blocks, and must not wait for the concurrency pool.
        pictureQueue.async { [weak self] in
            var image: RGBImage?
            var failure: String?
            do {
                image = try ImageDecoder.decodeNow(url, loader: loader, maxWidth: size.width, maxHeight: size.height)
            } catch {
                failure = "\(url.lastPathComponent): \(error)"
            }
            guard let self else { return }
            let (failed, index, wasCurrent): ([Int], Int?, Bool) = self.state.withTrackedLock { s in
                s.imagesLoading.remove(url)
                if let image { s.images[url] = image }
                var failed: [Int] = []
                if let failure {
                    s.pictureFailures[url] = failure
                    // The posts this picture opens cannot be shown.
                    for (i, item) in s.items.enumerated() where Self.pictureURL(of: item) == url && s.failures[i] == nil {
                        s.failures[i] = failure
                        if s.pendingSwipe?.index == i { s.pendingSwipe = nil }
                        failed.append(i)
                    }
                }
                let index = image == nil ? nil : s.items.firstIndex { Self.pictureURLs(of: $0).contains(url) }
                return (failed, index, failed.contains(s.current))
            }
            if let failure { self.emit(failed.map { .failed(index: $0, message: failure) }) }
            if self.checkFirstFrame() || wasCurrent { self.reconcile() }
            if let index, let onFrame = self.onFrame { onFrame(index) }
        }
    }

    /// The picture an item without a player shows first.
    private static func pictureURL(of item: FeedItem) -> URL? {
        pictureURLs(of: item).first
    }

    /// The pictures an item shows without a player: an image post's pages.
    private static func pictureURLs(of item: FeedItem) -> [URL] {
        guard item.videoURL == nil else { return [] }
        return item.images.isEmpty ? [item.coverURL].compactMap { $0 } : item.images
    }

    private func resumeCurrent() {
        let player: Player? = state.withTrackedLock { s in
            s.active ? s.holding.firstIndex { $0?.index == s.current }.map { slots[$0].player } : nil
        }
        player?.play()
    }

    // MARK: Frames

    private func slotPresented(_ number: Int) {
        let (index, onFrame) = state.withTrackedLock { ($0.holding[number]?.index, $0.onFrame) }
        let wasWaiting = checkFirstFrame()
        if let index { onFrame?(index) }
        if wasWaiting { reconcile() }
    }

    /// Whether video item `index` has something to show: a frame, or (audio only) an open player.
    private func isReady(_ index: Int, in s: State) -> Bool {
        guard let number = s.holding.firstIndex(where: { $0?.index == index }), let held = s.holding[number] else { return false }
        return held.audioOnly || slots[number].store.latest != nil
    }

    /// Reports the pending swipe's outcome once its page has one: its first frame, or
    /// its failure. Returns whether it reported (the neighbours may be opened now).
    @discardableResult
    private func checkFirstFrame() -> Bool {
        let now = measurementClock.now
        let event: FeedEvent? = state.withTrackedLock { s in
            guard let swipe = s.pendingSwipe, swipe.index == s.current, swipe.index < s.items.count else { return nil }
            if let message = s.failures[swipe.index] {
                s.pendingSwipe = nil
                return .failed(index: swipe.index, message: message)
            }
            let item = s.items[swipe.index]
            let ready: Bool
            if item.videoURL != nil {
                ready = isReady(swipe.index, in: s)
            } else if let url = Self.pictureURL(of: item) {
                ready = s.images[url] != nil
            } else {
                ready = true
            }
            guard ready else { return nil }
            s.pendingSwipe = nil
            let elapsed = (now - swipe.startedAt).seconds * 1000
            return .firstFrame(index: swipe.index, swipeToFirstFrameMs: max(0, elapsed), stage: swipe.stage)
        }
        if let event { emit([event]) }
        return event != nil
    }

    private func stage(_ index: Int, in s: State) -> PreloadStage {
        guard index >= 0, index < s.items.count, s.failures[index] == nil else { return .none }
        let item = s.items[index]
        guard let url = item.videoURL else {
            if let picture = Self.pictureURL(of: item), s.images[picture] != nil { return .prerendered }
            return .none
        }
        if let number = s.holding.firstIndex(where: { $0?.index == index }) {
            return slots[number].store.latest != nil ? .prerendered : .prepared
        }
        if let preloader, preloader.hasPreloaded(url) { return .bytes }
        return .none
    }

    private func emit(_ events: [FeedEvent]) {
        guard !events.isEmpty else { return }
        let handlers = state.withTrackedLock { $0.observers.sorted { $0.key < $1.key }.map(\.value) }
        for event in events {
            for handler in handlers { handler(event) }
        }
    }
}

/// A handle for removing a feed observer.
public struct FeedObserverToken: Sendable, Hashable {
    let id: Int
}
