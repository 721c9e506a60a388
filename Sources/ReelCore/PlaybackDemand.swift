import Foundation
import Synchronization

/// What a player needs from the network it shares with preloads. Playback always
/// wins: a preloader pauses while any player is below its low-water mark and gives
/// up its connection when a player needs one now.
public enum PlaybackDemand: Sendable, Hashable {
    /// Buffered media is below the low-water mark: preloads pause.
    case belowLowWaterMark
    /// Opening or seeking: the running preload is cancelled.
    case needsConnection
}

/// Someone players report their demand to (the preloader's coordinator).
public protocol PlaybackDemandObserver: AnyObject, Sendable {
    /// A demand began; it lasts until the returned token ends.
    func playbackDemandBegan(_ demand: PlaybackDemand) -> PlaybackDemandToken
}

/// The end of a demand: call ``end()`` (or let it go — it ends when released).
public final class PlaybackDemandToken: Sendable {
    /// What ending does; taken out (set to `nil`) by the first `end()`, under the mutex.
    private let onEnd: Mutex<(@Sendable () -> Void)?>

    public init(onEnd: @escaping @Sendable () -> Void) {
        self.onEnd = Mutex(onEnd)
    }

    /// Ends the demand (once; later calls do nothing).
    public func end() {
        let action = onEnd.withTrackedLock { onEnd -> (@Sendable () -> Void)? in
            defer { onEnd = nil }
            return onEnd
        }
        action?()
    }

    deinit { end() }
}
