import Foundation

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
    /// again each time a swipe lands on it later, in place of ``firstFrame(index:swipeToFirstFrameMs:stage:)``. The page
    /// stays in the feed, showing ``FeedSession/failure(at:)``.
    case failed(index: Int, message: String)
}

/// A handle for removing a feed observer.
public struct FeedObserverToken: Sendable, Hashable {
    let id: Int
}
