import Foundation
import ReelLoading

/// What the feed asks of a byte preloader: replace the queue (cancelling a running
/// preload no longer wanted) and say whether an item's head is already cached.
/// `Preloader` is the real one; tests record what the feed asks.
public protocol FeedPreloading: AnyObject, Sendable {
    /// Replaces what is waiting to be preloaded, in rank order.
    func setPreloadQueue(_ requests: [PreloadRequest])
    /// Whether the head of `url` was preloaded.
    func hasPreloaded(_ url: URL) -> Bool
    /// Cancels everything.
    func stop()
}

extension Preloader: FeedPreloading {
    /// Whether a preload of `url` completed in this preloader's life (it is in
    /// `statistics.completed`): its head was all in the cache then. The cache may have
    /// evicted it since; a read finds out. Any thread; reads one lock.
    public func hasPreloaded(_ url: URL) -> Bool {
        statistics.completed.contains(url)
    }
}
