/// Which items of a feed get what, as a pure function of the current index —
/// the ranking Media3's `DefaultPreloadManager` does by distance:
///
/// - the current item plays;
/// - its neighbours hold a player each: the next one prepared with its first frame
///   decoded and held (pre-rendered), the previous one paused where it was left;
/// - items two to four away get the first bytes of their media cached, nearest first
///   and, at equal distance, the one ahead first (feeds are mostly swiped forward);
/// - everything farther gets nothing.
///
/// With `wraps`, the feed is a ring (the last item's next is the first), which a
/// fully loaded feed that loops uses.
public struct FeedPlan: Sendable, Hashable {
    /// The item that plays.
    public var current: Int
    /// The items that hold a player, in the order they get one: current, next, previous.
    public var pool: [Int]
    /// The items whose first bytes are cached, in preload order.
    public var preload: [Int]

    /// The plan for `current` in a feed of `count` items. `wantsPlayer(i)` says whether
    /// item `i` is played by a player (a video) rather than shown as pictures.
    public static func make(current: Int, count: Int, wraps: Bool = false,
                            poolRadius: Int = 1, preloadDistances: ClosedRange<Int> = 2...4,
                            wantsPlayer: (Int) -> Bool = { _ in true }) -> FeedPlan {
        guard count > 0, current >= 0, current < count else { return FeedPlan(current: current, pool: [], preload: []) }
        var seen: Set<Int> = []
        func at(_ offset: Int) -> Int? {
            let raw = current + offset
            let index = wraps ? ((raw % count) + count) % count : raw
            guard index >= 0, index < count else { return nil }
            return index
        }
        var pool: [Int] = []
        for offset in [0] + (1...max(1, poolRadius)).flatMap({ [$0, -$0] }) where offset == 0 || abs(offset) <= poolRadius {
            guard let index = at(offset), seen.insert(index).inserted else { continue }
            if wantsPlayer(index) { pool.append(index) }
        }
        var preload: [Int] = []
        for distance in preloadDistances where distance > poolRadius {
            for offset in [distance, -distance] {
                guard let index = at(offset), seen.insert(index).inserted else { continue }
                if wantsPlayer(index) { preload.append(index) }
            }
        }
        return FeedPlan(current: current, pool: pool, preload: preload)
    }
}
