import Foundation
import ReelMedia
import Synchronization

/// The window's ``VideoSink``: the player hands over each frame at its presentation time;
/// the store keeps only the latest and wakes the render loop, which draws it at the next
/// vsync. Frames replaced before they were drawn are counted as render drops.
///
/// Threads: the player's clock context presents and clears; the window's thread reads
/// ``current``. They meet only under `state`; the wake-up is called after it is released.
public final class FrameStore: VideoSink, Sendable {
    private struct State {
        var latest: VideoFrame?
        var sequence = 0
        var playerDrops = 0
        /// Wakes the window's loop (`SDL_PushEvent`, callable from any thread).
        var wake: (@Sendable () -> Void)?
    }

    /// Guarded by `state`: the latest frame, the count, and the wake-up.
    private let state = Mutex(State())

    public init() {}

    public func present(_ frame: VideoFrame, presentation: Presentation) {
        let wake = state.withTrackedLock { state in
            state.latest = frame
            state.sequence += 1
            state.playerDrops = presentation.droppedFrames
            return state.wake
        }
        wake?()
    }

    public func clear() {
        let wake = state.withTrackedLock { state in
            state.latest = nil
            state.sequence += 1
            return state.wake
        }
        wake?()
    }

    /// The latest frame and how many frames arrived so far.
    public var current: (frame: VideoFrame?, sequence: Int) { state.withTrackedLock { ($0.latest, $0.sequence) } }
    /// Frames the player dropped as late (as it reported with the last frame).
    public var droppedByPlayer: Int { state.withTrackedLock { $0.playerDrops } }

    /// What to call (on the engine's thread, with no lock held) whenever a frame arrives.
    func setWake(_ body: (@Sendable () -> Void)?) { state.withTrackedLock { $0.wake = body } }
}
