import Foundation
import Logging
import ReelCore
import ReelLoading
import ReelMedia

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
    /// An item could not be played.
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
///   plays. Neighbours are opened only once the current page shows its first frame,
///   so they never compete with it.
/// - Items two to four away get their first two seconds of media (by the container's
///   index, else 800 KB) cached by the ``Preloader``, one at a time, yielding to the
///   players; the queue is replaced (and the running preload cancelled if no longer
///   wanted) on every page change.
/// - When the index reaches 70 % of the loaded items the next page loads in the
///   background; duplicates are dropped.
/// - Image posts have no player: their first picture is decoded (downsampled to
///   ``Configuration/displaySize``) for the current page and its neighbours.
///
/// Thread-safe. Player work (opening, releasing) runs on the session's own queue;
/// ``waitUntilIdle()`` waits for it (tests on a ``ManualClock`` call it before
/// advancing the clock).
public final class FeedSession: @unchecked Sendable {
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

    public let source: any FeedSource
    /// The category this feed shows (`nil`: the source's whole feed).
    public let category: String?
    public let configuration: Configuration
    private let loader: any ResourceLoader
    private let preloader: (any FeedPreloading)?
    private let clock: any EngineClock
    private let measurementClock: any EngineClock
    private let logger = Logger(label: "reel.feed")

    private let lock = NSLock()
    private let work: DispatchQueue
    private let pictureQueue = DispatchQueue(label: "reel.feed.pictures")
    private var itemsValue: [FeedItem] = []
    private var pagination: Pagination<String>
    private var current = 0
    private var started = false
    private var active = true
    private var closed = false
    private var slots: [Slot] = []
    private var pendingSwipe: PendingSwipe?
    private var images: [URL: RGBImage] = [:]
    private var imagesLoading: Set<URL> = []
    private var failedItems: Set<Int> = []
    private var observers: [Int: @Sendable (FeedEvent) -> Void] = [:]
    private var nextObserverID = 0
    private var onFrameValue: (@Sendable (Int) -> Void)?

    private struct PendingSwipe {
        var index: Int
        var startedAt: MediaTime
        var stage: PreloadStage
    }

    /// One player of the pool and the frame it last presented.
    private final class Slot: @unchecked Sendable {
        let number: Int
        let player: Player
        let store: FrameStore
        /// The item index it holds, and the item (to notice the feed changing under it).
        var index: Int?
        var itemID: String?
        var eventToken: ObserverToken?

        init(number: Int, player: Player, store: FrameStore) {
            self.number = number
            self.player = player
            self.store = store
        }
    }

    /// A video sink that keeps the last frame of its slot and tells the session.
    private final class FrameStore: VideoSink, @unchecked Sendable {
        private let lock = NSLock()
        private var frame: VideoFrame?
        private var accepting = true
        var onPresent: (@Sendable () -> Void)?

        func present(_ frame: VideoFrame, presentation: Presentation) {
            let taken = lock.withLock {
                if accepting { self.frame = frame }
                return accepting
            }
            if taken { onPresent?() }
        }

        func clear() { lock.withLock { frame = nil } }

        /// Forgets the frame and refuses frames until ``accept()``: the slot changes item.
        func reset() {
            lock.withLock {
                frame = nil
                accepting = false
            }
        }

        /// Takes frames again (the previous item's player is closed).
        func accept() { lock.withLock { accepting = true } }

        var latest: VideoFrame? { lock.withLock { frame } }
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
        self.pagination = Pagination(triggerFraction: configuration.paginationTrigger)
        self.work = DispatchQueue(label: "reel.feed.pool")
        for number in 0..<3 {
            let store = FrameStore()
            let player = Player(clock: clock, videoSink: store, audioSink: audioSink?(),
                                configuration: configuration.pipeline, measurementClock: measurementClock)
            player.actionAtItemEnd = configuration.actionAtItemEnd
            player.demandObserver = coordinator
            let slot = Slot(number: number, player: player, store: store)
            store.onPresent = { [weak self] in self?.slotPresented(number) }
            slots.append(slot)
        }
    }

    deinit {
        for slot in slots { slot.player.replaceCurrentItem(with: nil) }
    }

    // MARK: Reading

    /// The items loaded so far.
    public var items: [FeedItem] { lock.withLock { itemsValue } }
    /// The page shown now.
    public var currentIndex: Int { lock.withLock { current } }
    /// Whether the source may have more pages.
    public var hasMore: Bool { lock.withLock { pagination.hasMore } }
    /// The item shown now.
    public var currentItem: FeedItem? {
        lock.withLock { current < itemsValue.count ? itemsValue[current] : nil }
    }

    /// The player of the page shown now (nil for an image post).
    public var currentPlayer: Player? { player(at: currentIndex) }

    /// The player holding item `index`, when one of the pool does (the current page
    /// and its neighbours).
    public func player(at index: Int) -> Player? {
        lock.withLock { slots.first { $0.index == index }?.player }
    }

    /// The last frame the player of item `index` presented: what to draw for that
    /// page (`nil`: draw its cover).
    public func frame(at index: Int) -> VideoFrame? {
        let store = lock.withLock { slots.first { $0.index == index }?.store }
        return store?.latest
    }

    /// The first picture of image post `index` (or its decoded cover), once decoded.
    public func picture(at index: Int) -> RGBImage? {
        lock.withLock {
            guard index >= 0, index < itemsValue.count, let url = Self.pictureURL(of: itemsValue[index]) else { return nil }
            return images[url]
        }
    }

    /// A decoded picture of the feed (any page of an image post on the current page or
    /// a neighbour), when decoded.
    public func decodedPicture(_ url: URL) -> RGBImage? { lock.withLock { images[url] } }

    /// How ready item `index` is now.
    public func preloadStage(at index: Int) -> PreloadStage {
        lock.withLock { stageLocked(index) }
    }

    /// The pool's three players, whatever they hold (for statistics and tests).
    public var poolPlayers: [Player] { lock.withLock { slots.map(\.player) } }

    /// Players holding an item now (at most three).
    public var livePlayers: Int { lock.withLock { slots.filter { $0.index != nil }.count } }

    /// Video decoders the pool's players hold open now (at most three).
    public var liveDecoders: Int {
        let players = lock.withLock { slots.map(\.player) }
        return players.filter(\.hasOpenVideoDecoder).count
    }

    /// Called (on the presenting player's clock context) when a page's player
    /// presents a frame: wake the render loop.
    public var onFrame: (@Sendable (Int) -> Void)? {
        get { lock.withLock { onFrameValue } }
        set { lock.withLock { onFrameValue = newValue } }
    }

    /// Calls `handler` for every event (on the thread that caused it).
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (FeedEvent) -> Void) -> FeedObserverToken {
        lock.withLock {
            nextObserverID += 1
            observers[nextObserverID] = handler
            return FeedObserverToken(id: nextObserverID)
        }
    }

    public func removeObserver(_ token: FeedObserverToken) {
        lock.withLock { _ = observers.removeValue(forKey: token.id) }
    }

    // MARK: Starting and moving

    /// Loads pages until item `index` is loaded (the first page for 0), then shows it.
    /// Throws ``FeedError`` when the source fails or has fewer items.
    public func start(at index: Int = 0) async throws {
        while true {
            let (count, more) = lock.withLock { (itemsValue.count, pagination.hasMore) }
            if count > index { break }
            guard more else {
                throw FeedError.unavailable(count == 0 ? "the feed has no items" : "the feed has only \(count) items")
            }
            let action: Pagination<String>.Action? = lock.withLock {
                pagination.pagesLoaded == 0 ? pagination.start() : pagination.indexChanged(to: index)
            }
            guard action == .loadNextPage else {
                throw FeedError.unavailable("the feed is already loading")
            }
            try await fetchPage(propagating: true)
        }
        lock.withLock {
            started = true
            current = index
            pendingSwipe = PendingSwipe(index: index, startedAt: measurementClock.now, stage: stageLocked(index))
            _ = pagination.indexChanged(to: index)
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
        let target: Int? = lock.withLock {
            let count = itemsValue.count
            guard count > 0 else { return nil }
            let raw = current + offset
            if raw >= 0 && raw < count { return raw }
            if configuration.wrapsAround && !pagination.hasMore { return ((raw % count) + count) % count }
            return nil
        }
        if let target { move(to: target) }
    }

    /// Shows page `index`: pauses the page left, plays the page entered (at once when
    /// it was pre-rendered), and re-plans the pool and the preloads.
    public func move(to index: Int) {
        var events: [FeedEvent] = []
        var leaving: Player?
        var entering: Player?
        let moved: Bool = lock.withLock {
            guard started, !closed, index >= 0, index < itemsValue.count, index != current else { return false }
            let old = current
            leaving = slots.first { $0.index == old }?.player
            current = index
            pendingSwipe = PendingSwipe(index: index, startedAt: measurementClock.now, stage: stageLocked(index))
            entering = slots.first { $0.index == index }?.player
            events = [.pageLeave(index: old), .pageEnter(index: index)]
            return true
        }
        guard moved else { return }
        leaving?.pause()
        if active { entering?.play() }
        emit(events)
        checkFirstFrame()
        loadMoreIfNeeded()
        reconcile()
    }

    /// Leaving this feed's category (`false`) pauses its page and releases the
    /// neighbours' players; entering it again (`true`) resumes the page.
    public func setActive(_ isActive: Bool) {
        let player: Player? = lock.withLock {
            active = isActive
            return slots.first { $0.index == current }?.player
        }
        if isActive { player?.play() } else { player?.pause() }
        reconcile()
    }

    /// Releases every player and stops preloading. The session cannot be used after.
    public func close() {
        let all: [Slot] = lock.withLock {
            closed = true
            return slots
        }
        work.sync {}
        for slot in all {
            slot.player.replaceCurrentItem(with: nil)
            lock.withLock {
                slot.index = nil
                slot.itemID = nil
            }
        }
        preloader?.stop()
    }

    /// Waits until the pool has carried out every change asked for so far.
    public func waitUntilIdle() {
        work.sync {}
    }

    // MARK: Pages

    private func loadMoreIfNeeded() {
        let load: Bool = lock.withLock {
            guard !closed, pagination.pagesLoaded > 0 else { return false }
            return pagination.indexChanged(to: current) == .loadNextPage
        }
        if load {
            Task { [weak self] in try? await self?.fetchPage(propagating: false) }
        }
    }

    /// Fetches the next page (the pagination model has marked it loading, or this
    /// is the first).
    private func fetchPage(propagating: Bool) async throws {
        let number = lock.withLock { pagination.pagesLoaded + 1 }
        do {
            let page = try await source.page(category: category, page: number, size: configuration.pageSize)
            var events: [FeedEvent] = []
            let again: Bool = lock.withLock {
                let appended = pagination.append(page.items, id: \.id, hasMore: page.hasMore)
                itemsValue += appended.items
                events.append(.itemsChanged(count: itemsValue.count))
                if !page.hasMore { events.append(.noMoreData) }
                return appended.action == .loadNextPage && started
            }
            emit(events)
            if started { reconcile() }
            if again { try await fetchPage(propagating: false) }
        } catch {
            lock.withLock { pagination.loadFailed() }
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

    private func reconcileNow() {
        struct Change {
            var slot: Slot
            var item: FeedItem?
            var index: Int?
            var play: Bool
        }
        var changes: [Change] = []
        var preloads: [PreloadRequest] = []
        var pictures: [URL] = []
        lock.lock()
        guard started, !closed else { lock.unlock(); return }
        let items = itemsValue
        let plan = FeedPlan.make(current: current, count: items.count,
                                 wraps: configuration.wrapsAround && !pagination.hasMore,
                                 preloadDistances: configuration.preloadDistances,
                                 wantsPlayer: { items[$0].videoURL != nil })
        // An inactive feed keeps only its current page.
        let wanted = active ? plan.pool : plan.pool.filter { $0 == current }
        // Release players whose item left the plan (or changed under them).
        for slot in slots {
            guard let index = slot.index else { continue }
            if !wanted.contains(index) || index >= items.count || items[index].id != slot.itemID {
                changes.append(Change(slot: slot, item: nil, index: nil, play: false))
                slot.index = nil
                slot.itemID = nil
                slot.store.reset()
            }
        }
        // The current page first; neighbours once it shows a frame (or has no video).
        let currentReady = items.indices.contains(current)
            && (items[current].videoURL == nil
                || slots.first { $0.index == current }?.store.latest != nil
                || failedItems.contains(current))
        for index in wanted where !slots.contains(where: { $0.index == index }) {
            if index != current && !currentReady { continue }
            guard !failedItems.contains(index), let slot = slots.first(where: { $0.index == nil }) else { continue }
            slot.index = index
            slot.itemID = items[index].id
            slot.store.reset()
            changes.append(Change(slot: slot, item: items[index], index: index, play: index == current && active))
        }
        if active, currentReady {
            for index in plan.preload {
                if let url = items[index].videoURL {
                    preloads.append(.seconds(configuration.preloadSeconds, of: url))
                }
            }
        }
        // Pictures: every picture of the image posts on the current page and its
        // neighbours (the carousel pages through them), the current post's first.
        let near = FeedPlan.make(current: current, count: items.count, wraps: configuration.wrapsAround && !pagination.hasMore,
                                 preloadDistances: 0...0, wantsPlayer: { _ in true }).pool
        let wantedPictures = near.flatMap { Self.pictureURLs(of: items[$0]) }
        let keep = Set(wantedPictures)
        for url in wantedPictures where images[url] == nil && !imagesLoading.contains(url) {
            imagesLoading.insert(url)
            pictures.append(url)
        }
        images = images.filter { keep.contains($0.key) }
        lock.unlock()

        for change in changes {
            let player = change.slot.player
            if let token = change.slot.eventToken {
                player.removeEventObserver(token)
                change.slot.eventToken = nil
            }
            player.pause()
            guard let item = change.item, let url = item.videoURL, let index = change.index else {
                player.replaceCurrentItem(with: nil)
                change.slot.store.clear()
                continue
            }
            change.slot.eventToken = player.addEventObserver { [weak self] event in
                if case .failed(let error) = event { self?.itemFailed(index: index, itemID: item.id, error: error) }
            }
            // Frames of the item just released must not pass for the new one's.
            if player.currentItem != nil { player.replaceCurrentItem(with: nil) }
            change.slot.store.accept()
            player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader))
            if change.play { player.play() }
        }
        if changes.contains(where: { $0.item == nil }) { MediaResources.returnFreedMemory() }
        if active { preloader?.setPreloadQueue(preloads) }
        for url in pictures { decodePicture(url) }
        checkFirstFrame()
    }

    private func itemFailed(index: Int, itemID: String, error: MediaError) {
        let isCurrent: Bool = lock.withLock {
            guard index < itemsValue.count, itemsValue[index].id == itemID else { return false }
            failedItems.insert(index)
            return index == current
        }
        logger.debug("item \(index) failed: \(error)")
        emit([.failed(index: index, message: error.description)])
        if isCurrent { reconcile() }
    }

    private func decodePicture(_ url: URL) {
        let size = configuration.displaySize
        let loader = self.loader
        // A queue of its own: decoding blocks, and must not wait for the concurrency pool.
        pictureQueue.async { [weak self] in
            let image = try? ImageDecoder.decodeNow(url, loader: loader, maxWidth: size.width, maxHeight: size.height)
            guard let self else { return }
            self.lock.withLock {
                self.imagesLoading.remove(url)
                if let image { self.images[url] = image }
            }
            self.checkFirstFrame()
            if image != nil {
                let index: Int? = self.lock.withLock { self.itemsValue.firstIndex { Self.pictureURLs(of: $0).contains(url) } }
                if let index, let onFrame = self.onFrame { onFrame(index) }
            }
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
        let player: Player? = lock.withLock { active ? slots.first { $0.index == current }?.player : nil }
        player?.play()
    }

    // MARK: Frames

    private func slotPresented(_ number: Int) {
        let (index, onFrame): (Int?, (@Sendable (Int) -> Void)?) = lock.withLock { (slots[number].index, onFrameValue) }
        let wasWaiting = checkFirstFrame()
        if let index { onFrame?(index) }
        if wasWaiting { reconcile() }
    }

    /// Reports the pending swipe's first frame once its page has one. Returns whether
    /// it reported (the neighbours may be opened now).
    @discardableResult
    private func checkFirstFrame() -> Bool {
        var event: FeedEvent?
        lock.withLock {
            guard let swipe = pendingSwipe, swipe.index == current, swipe.index < itemsValue.count else { return }
            let item = itemsValue[swipe.index]
            let ready: Bool
            if item.videoURL != nil {
                ready = slots.first { $0.index == swipe.index }?.store.latest != nil
            } else if let url = Self.pictureURL(of: item) {
                ready = images[url] != nil
            } else {
                ready = true
            }
            guard ready else { return }
            pendingSwipe = nil
            let elapsed = (measurementClock.now - swipe.startedAt).seconds * 1000
            event = .firstFrame(index: swipe.index, swipeToFirstFrameMs: max(0, elapsed), stage: swipe.stage)
        }
        if let event { emit([event]) }
        return event != nil
    }

    private func stageLocked(_ index: Int) -> PreloadStage {
        guard index >= 0, index < itemsValue.count else { return .none }
        let item = itemsValue[index]
        guard let url = item.videoURL else {
            if let picture = Self.pictureURL(of: item), images[picture] != nil { return .prerendered }
            return .none
        }
        if let slot = slots.first(where: { $0.index == index }) {
            return slot.store.latest != nil ? .prerendered : .prepared
        }
        if let preloader, preloader.hasPreloaded(url) { return .bytes }
        return .none
    }

    private func emit(_ events: [FeedEvent]) {
        guard !events.isEmpty else { return }
        let handlers = lock.withLock { observers.sorted { $0.key < $1.key }.map(\.value) }
        for event in events {
            for handler in handlers { handler(event) }
        }
    }
}

/// A handle for removing a feed observer.
public struct FeedObserverToken: Sendable, Hashable {
    let id: Int
}
