import Foundation
import ReelCaptions
import ReelMedia
import Synchronization

/// The window's ``CaptionSink``: the player hands over what the captions show at each
/// presented frame's time (and the item's tracks when they are known); the overlay keeps
/// the latest of each and wakes the render loop, which rasterizes them with libass at the
/// next draw — the same pattern as ``FrameStore``.
///
/// Threads: the player's clock context calls ``show(_:)``; anyone may call ``setTracks(_:)``
/// and ``clear()``; the window's thread reads ``current``. They meet only under `state`;
/// the wake-up is called after it is released.
public final class CaptionOverlay: CaptionSink, Sendable {
    private struct State {
        var frame: CaptionFrame?
        var tracks: [CaptionTrack] = []
        var sequence = 0
        /// Wakes the window's loop (`SDL_PushEvent`, callable from any thread).
        var wake: (@Sendable () -> Void)?
    }

    /// Guarded by `state`: the latest caption frame, the tracks, the count, and the wake-up.
    private let state = Mutex(State())

    public init() {}

    public func show(_ frame: CaptionFrame) {
        let wake = state.withTrackedLock { state in
            state.frame = frame
            state.sequence += 1
            return state.wake
        }
        wake?()
    }

    /// The item's caption tracks (formats, ASS headers); a new item's replace the old ones.
    public func setTracks(_ tracks: [CaptionTrack]) {
        let wake = state.withTrackedLock { state in
            state.tracks = tracks
            state.sequence += 1
            return state.wake
        }
        wake?()
    }

    /// Nothing to show (another item, captions off at the source).
    public func clear() {
        let wake = state.withTrackedLock { state in
            state.frame = nil
            state.sequence += 1
            return state.wake
        }
        wake?()
    }

    /// The latest caption frame, the tracks, and how many changes arrived so far.
    public var current: (frame: CaptionFrame?, tracks: [CaptionTrack], sequence: Int) {
        state.withTrackedLock { ($0.frame, $0.tracks, $0.sequence) }
    }

    /// What to call (on the caller's thread, with no lock held) whenever something changes.
    func setWake(_ body: (@Sendable () -> Void)?) { state.withTrackedLock { $0.wake = body } }
}
