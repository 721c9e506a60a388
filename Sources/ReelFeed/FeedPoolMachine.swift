import Foundation
import ReelCore

/// The feed pool's decisions, as a value: which item each of the three players holds,
/// which items get their bytes preloaded, which pictures are decoded, which items have
/// failed, and what the observers hear. Events go in (`moved`, `pageLoaded`,
/// `framePresented`, `playerFailed`, `pictureDecoded`, …); each returns the ``Action``s
/// its owner carries out. It holds no player, thread, queue or file: a player is a slot
/// number, and each item a slot is given is an assignment numbered by `generation`, so a
/// player's late word about an item it no longer holds is recognised and ignored.
///
/// ``FeedSession`` owns one behind its lock and is the only code that drives it.
struct FeedPoolMachine: Sendable {
    /// What the owner does.
    enum Action: Sendable, Hashable {
        /// Slot `slot`'s player opens item `index` (`url`) as assignment `generation`,
        /// playing at once when `play`. Blocking (the slot's previous item is closed).
        case assign(slot: Int, generation: Int, index: Int, url: URL, play: Bool)
        /// Slot `slot`'s player lets go of its item. Blocking (its threads are joined).
        case release(slot: Int)
        /// Slot `slot`'s player plays.
        case play(slot: Int)
        /// Slot `slot`'s player pauses.
        case pause(slot: Int)
        /// Replace the preload queue with the heads of these media, in rank order.
        case preload([URL])
        /// Cancel every preload (the feed is closed).
        case stopPreloading
        /// Decode this picture at the display size, then report ``pictureDecoded(_:failure:)``.
        case decodePicture(URL)
        /// These decoded pictures are no longer near the current page: drop them.
        case forgetPictures([URL])
        /// Tell the observers.
        case emit(FeedEvent)
        /// Tell the observers that page `index` shows its first frame: a swipe that
        /// landed at `startedAt` (the owner reads the clock), ready as `stage` then.
        case firstFrame(index: Int, startedAt: MediaTime, stage: PreloadStage)
        /// Page `index` has something new to draw (wake the render loop).
        case frameShown(index: Int)
        /// Load the next page of the source, then report ``pageLoaded(_:hasMore:)`` or ``pageFailed(_:authorization:)``.
        case loadNextPage
        /// Run ``plan()`` on the pool's queue (the pool no longer matches what is wanted).
        case plan
    }

    /// The item a slot's player holds.
    struct Holding: Sendable, Hashable {
        var index: Int
        var itemID: String
        var generation: Int
        /// Its media has no video stream: the page shows its cover, and is ready once the player is.
        var audioOnly = false
        /// Its player presented a frame of this item.
        var hasFrame = false
    }

    /// A page entered and waiting for its first frame (or its failure).
    struct Swipe: Sendable, Hashable {
        var index: Int
        var startedAt: MediaTime
        var stage: PreloadStage
    }

    struct Settings: Sendable {
        var slotCount = 3
        var wrapsAround = false
        var preloadDistances: ClosedRange<Int> = 2...4
        var paginationTrigger = 0.7
    }

    let settings: Settings
    private(set) var items: [FeedItem] = []
    private(set) var pagination: Pagination<String>
    private(set) var current = 0
    private(set) var started = false
    private(set) var active = true
    private(set) var closed = false
    /// What each slot of the pool holds (by slot number).
    private(set) var holding: [Holding?]
    /// Counts assignments.
    private(set) var generation = 0
    /// The page entered, until its enter event was delivered.
    private var landing: Swipe?
    /// The page entered, waiting for its first frame.
    private(set) var pendingSwipe: Swipe?
    private(set) var decodedPictures: Set<URL> = []
    private var decodingPictures: Set<URL> = []
    private var pictureFailures: [URL: String] = [:]
    /// Items that cannot be shown, by index: why.
    private(set) var failures: [Int: String] = [:]

    init(settings: Settings = Settings()) {
        self.settings = settings
        self.pagination = Pagination(triggerFraction: settings.paginationTrigger)
        self.holding = Array(repeating: nil, count: settings.slotCount)
    }

    // MARK: Reading

    /// The slot whose player holds item `index`.
    func slot(holding index: Int) -> Int? { holding.firstIndex { $0?.index == index } }

    /// Whether the current page has something to show (or has failed): its neighbours may open.
    var currentIsServed: Bool {
        guard items.indices.contains(current) else { return false }
        return items[current].videoURL == nil || isReady(current) || failures[current] != nil
    }

    /// How ready item `index` is; `isCached(url)` says whether a media's head was preloaded.
    func stage(_ index: Int, isCached: (URL) -> Bool) -> PreloadStage {
        guard index >= 0, index < items.count, failures[index] == nil else { return .none }
        let item = items[index]
        guard let url = item.videoURL else {
            if let picture = Self.pictureURL(of: item), decodedPictures.contains(picture) { return .prerendered }
            return .none
        }
        if let number = slot(holding: index) { return holding[number]!.hasFrame ? .prerendered : .prepared }
        return isCached(url) ? .bytes : .none
    }

    /// The picture an item without a player shows first.
    static func pictureURL(of item: FeedItem) -> URL? { pictureURLs(of: item).first }

    /// The pictures an item shows without a player: an image post's pages.
    static func pictureURLs(of item: FeedItem) -> [URL] {
        guard item.videoURL == nil else { return [] }
        return item.images.isEmpty ? [item.coverURL].compactMap { $0 } : item.images
    }

    /// The target of a step of `offset` pages (wrapping past the end of a fully loaded
    /// feed that wraps), or nil.
    func target(ofStep offset: Int) -> Int? {
        let count = items.count
        guard count > 0 else { return nil }
        let raw = current + offset
        if raw >= 0 && raw < count { return raw }
        if settings.wrapsAround && !pagination.hasMore { return ((raw % count) + count) % count }
        return nil
    }

    // MARK: Pages

    /// What ``FeedSession/start(at:)`` does next to reach item `index`.
    enum Reach: Sendable, Hashable {
        case loaded
        case load(page: Int)
        case unavailable(String)
    }

    /// Item `index` is wanted: it is loaded, or the next page must load (marked loading), or it cannot be.
    mutating func reach(_ index: Int) -> Reach {
        if items.count > index { return .loaded }
        guard pagination.hasMore else {
            let count = items.count
            return .unavailable(count == 0 ? "the feed has no items" : "the feed has only \(count) items")
        }
        let action = pagination.pagesLoaded == 0 ? pagination.start() : pagination.indexChanged(to: index)
        guard action == .loadNextPage else { return .unavailable("the feed is already loading") }
        return .load(page: pagination.pagesLoaded + 1)
    }

    /// The number of the page a `.loadNextPage` loads.
    var nextPageNumber: Int { pagination.pagesLoaded + 1 }

    /// A page arrived: the items whose id is new join the feed. A `.loadNextPage` among the
    /// actions asks for the page after it (the loader of this one loads it next).
    mutating func pageLoaded(_ page: [FeedItem], hasMore: Bool) -> [Action] {
        let appended = pagination.append(page, id: \.id, hasMore: hasMore)
        items += appended.items
        var actions: [Action] = [.emit(.itemsChanged(count: items.count))]
        if !hasMore { actions.append(.emit(.noMoreData)) }
        if started { actions.append(.plan) }
        if appended.action == .loadNextPage && started { actions.append(.loadNextPage) }
        return actions
    }

    /// A page failed to load (`authorization`: the feed API wants a token).
    mutating func pageFailed(_ message: String, authorization: Bool) -> [Action] {
        pagination.loadFailed()
        return [.emit(authorization ? .authorizationRequired : .pageLoadFailed(message: message))]
    }

    // MARK: Moving

    /// The feed starts on item `index` (loaded), `now` on the measurement clock.
    mutating func start(at index: Int, now: MediaTime, isCached: (URL) -> Bool) -> [Action] {
        started = true
        current = index
        pendingSwipe = Swipe(index: index, startedAt: now, stage: stage(index, isCached: isCached))
        // loadMoreIfNeeded tells pagination the index: telling it here too would mark the next
        // page as loading and drop the request, and no later page would be asked for.
        var actions: [Action] = [.emit(.pageEnter(index: index))]
        if active, let number = slot(holding: index) { actions.append(.play(slot: number)) }
        return actions + loadMoreIfNeeded() + [.plan] + checkFirstFrame()
    }

    /// The user moves to page `index`. Its first frame is looked for once the owner has
    /// delivered the enter event and reported ``enterDelivered(_:)``.
    mutating func moved(to index: Int, now: MediaTime, isCached: (URL) -> Bool) -> [Action] {
        guard started, !closed, index >= 0, index < items.count, index != current else { return [] }
        let old = current
        var actions: [Action] = []
        if let leaving = slot(holding: old) { actions.append(.pause(slot: leaving)) }
        if active, let entering = slot(holding: index) { actions.append(.play(slot: entering)) }
        landing = Swipe(index: index, startedAt: now, stage: stage(index, isCached: isCached))
        current = index
        pendingSwipe = nil
        return actions + [.emit(.pageLeave(index: old)), .emit(.pageEnter(index: index))]
    }

    /// The enter event of a move to `index` was delivered: its outcome is looked for now
    /// (a frame or a failure found earlier would be reported before the page was entered).
    mutating func enterDelivered(_ index: Int) -> [Action] {
        guard let swipe = landing, swipe.index == index else { return [] }
        landing = nil
        guard current == index, !closed else { return [] }
        pendingSwipe = swipe
        return checkFirstFrame() + loadMoreIfNeeded() + [.plan]
    }

    /// Leaving this feed's category (`false`) pauses its page and releases the
    /// neighbours; entering it again resumes the page.
    mutating func setActive(_ isActive: Bool) -> [Action] {
        active = isActive
        var actions: [Action] = []
        if let number = slot(holding: current) { actions.append(isActive ? .play(slot: number) : .pause(slot: number)) }
        return actions + [.plan]
    }

    /// Nothing is decided any more; ``releaseAll()`` lets the players go.
    mutating func close() {
        closed = true
        pendingSwipe = nil
        landing = nil
    }

    /// Every slot lets go and preloading stops (after ``close()``).
    mutating func releaseAll() -> [Action] {
        holding = Array(repeating: nil, count: settings.slotCount)
        return holding.indices.map { .release(slot: $0) } + [.stopPreloading]
    }

    private mutating func loadMoreIfNeeded() -> [Action] {
        guard !closed, pagination.pagesLoaded > 0 else { return [] }
        return pagination.indexChanged(to: current) == .loadNextPage ? [.loadNextPage] : []
    }
}


/// The pool's plan and what players and the picture decoder report.
extension FeedPoolMachine {
    /// Makes the pool, the preload queue and the pictures match the plan for the current
    /// page: players whose item left the plan, changed under them or failed are released;
    /// the current page is assigned a player first and its neighbours once it is served
    /// (it shows a frame, or cannot); items two to four away are preloaded; the pictures
    /// of image posts on the current page and its neighbours are decoded. Idempotent.
    mutating func plan() -> [Action] {
        guard started, !closed else { return [] }
        let items = self.items
        let wraps = settings.wrapsAround && !pagination.hasMore
        let plan = FeedPlan.make(current: current, count: items.count, wraps: wraps,
                                 preloadDistances: settings.preloadDistances,
                                 wantsPlayer: { items[$0].videoURL != nil })
        // An inactive feed keeps only its current page.
        let wanted = active ? plan.pool : plan.pool.filter { $0 == current }
        var actions: [Action] = []
        for number in holding.indices {
            guard let held = holding[number] else { continue }
            if !wanted.contains(held.index) || held.index >= items.count || items[held.index].id != held.itemID
                || failures[held.index] != nil {
                holding[number] = nil
                actions.append(.release(slot: number))
            }
        }
        let served = currentIsServed
        for index in wanted where slot(holding: index) == nil {
            if index != current && !served { continue }
            guard failures[index] == nil, let url = items[index].videoURL,
                  let number = holding.firstIndex(where: { $0 == nil }) else { continue }
            generation += 1
            holding[number] = Holding(index: index, itemID: items[index].id, generation: generation)
            actions.append(.assign(slot: number, generation: generation, index: index, url: url,
                                   play: index == current && active))
        }
        if active {
            let urls = served ? plan.preload.compactMap { failures[$0] == nil ? items[$0].videoURL : nil } : []
            actions.append(.preload(urls))
        }
        return actions + planPictures(wraps: wraps)
    }

    /// Every picture of the image posts on the current page and its neighbours (the
    /// carousel pages through them), the current post's first.
    private mutating func planPictures(wraps: Bool) -> [Action] {
        let items = self.items
        let near = FeedPlan.make(current: current, count: items.count, wraps: wraps,
                                 preloadDistances: 0...0, wantsPlayer: { _ in true }).pool
        let wanted = near.flatMap { Self.pictureURLs(of: items[$0]) }
        var actions: [Action] = []
        for url in wanted where !decodedPictures.contains(url) && !decodingPictures.contains(url)
            && pictureFailures[url] == nil {
            decodingPictures.insert(url)
            actions.append(.decodePicture(url))
        }
        let keep = Set(wanted)
        let dropped = decodedPictures.filter { !keep.contains($0) }
        if !dropped.isEmpty {
            decodedPictures.subtract(dropped)
            actions.append(.forgetPictures(dropped.sorted { $0.absoluteString < $1.absoluteString }))
        }
        return actions
    }

    // MARK: What players report

    /// Slot `number`'s player presented a frame of assignment `generation`.
    mutating func framePresented(slot number: Int, generation: Int) -> [Action] {
        guard let held = holding[number], held.generation == generation else { return [] }
        holding[number]?.hasFrame = true
        let reported = checkFirstFrame()
        return reported + [.frameShown(index: held.index)] + (reported.isEmpty ? [] : [.plan])
    }

    /// Slot `number`'s player opened assignment `generation`; `hasVideo`: its media has a video stream.
    mutating func playerReady(slot number: Int, generation: Int, hasVideo: Bool) -> [Action] {
        guard !hasVideo, let held = holding[number], held.generation == generation else { return [] }
        holding[number]?.audioOnly = true
        let reported = checkFirstFrame()
        return reported.isEmpty ? [] : reported + [.plan]
    }

    /// Slot `number`'s media ended; `framePresented`: its sink holds a frame of it.
    mutating func playerEnded(slot number: Int, generation: Int, framePresented: Bool) -> [Action] {
        // Media that ends without a single frame has nothing to show (a video item whose
        // pictures all failed to decode, or whose stream is empty).
        let held = holding[number]
        guard !(held?.audioOnly ?? false), !framePresented, !(held?.hasFrame ?? false) else { return [] }
        return playerFailed(slot: number, generation: generation, message: "the media ended before its first frame")
    }

    /// The item slot `number` holds (as assignment `generation`) cannot be shown.
    mutating func playerFailed(slot number: Int, generation: Int, message: String) -> [Action] {
        guard !closed, let held = holding[number], held.generation == generation, failures[held.index] == nil else { return [] }
        failures[held.index] = message
        if pendingSwipe?.index == held.index { pendingSwipe = nil }
        // Releases its player, and opens the neighbours when it was the current page.
        return [.emit(.failed(index: held.index, message: message)), .plan]
    }

    /// A picture asked for by `.decodePicture` was decoded (`failure == nil`) or not.
    mutating func pictureDecoded(_ url: URL, failure: String?) -> [Action] {
        decodingPictures.remove(url)
        var actions: [Action] = []
        var failedCurrent = false
        if let failure {
            pictureFailures[url] = failure
            // The posts this picture opens cannot be shown.
            for (i, item) in items.enumerated() where Self.pictureURL(of: item) == url && failures[i] == nil {
                failures[i] = failure
                if pendingSwipe?.index == i { pendingSwipe = nil }
                if i == current { failedCurrent = true }
                actions.append(.emit(.failed(index: i, message: failure)))
            }
        } else {
            decodedPictures.insert(url)
        }
        let reported = checkFirstFrame()
        actions += reported
        if !reported.isEmpty || failedCurrent { actions.append(.plan) }
        if failure == nil, let index = items.firstIndex(where: { Self.pictureURLs(of: $0).contains(url) }) {
            actions.append(.frameShown(index: index))
        }
        return actions
    }

    // MARK: First frames

    /// Whether video item `index` has something to show: a frame, or (audio only) an open player.
    func isReady(_ index: Int) -> Bool {
        guard let number = slot(holding: index), let held = holding[number] else { return false }
        return held.audioOnly || held.hasFrame
    }

    /// Reports the pending swipe's outcome once its page has one: its first frame, or
    /// its failure (the neighbours may be opened then). `now` is read only when it does.
    mutating func checkFirstFrame() -> [Action] {
        guard let swipe = pendingSwipe, swipe.index == current, swipe.index < items.count else { return [] }
        if let message = failures[swipe.index] {
            pendingSwipe = nil
            return [.emit(.failed(index: swipe.index, message: message))]
        }
        let item = items[swipe.index]
        let ready: Bool
        if item.videoURL != nil {
            ready = isReady(swipe.index)
        } else if let url = Self.pictureURL(of: item) {
            ready = decodedPictures.contains(url)
        } else {
            ready = true
        }
        guard ready else { return [] }
        pendingSwipe = nil
        return [.firstFrame(index: swipe.index, startedAt: swipe.startedAt, stage: swipe.stage)]
    }
}
