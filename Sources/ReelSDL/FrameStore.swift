import Foundation
import ReelMedia

/// The window's ``VideoSink``: the player hands over each frame at its presentation time;
/// the store keeps only the latest and wakes the render loop, which draws it at the next
/// vsync. Frames replaced before they were drawn are counted as render drops.
public final class FrameStore: VideoSink, @unchecked Sendable {
    private let lock = NSLock()
    private var latest: VideoFrame?
    private var sequence = 0
    private var playerDrops = 0
    private var wake: (@Sendable () -> Void)?

    public init() {}

    public func present(_ frame: VideoFrame, presentation: Presentation) {
        let wake: (@Sendable () -> Void)? = lock.withLock {
            latest = frame
            sequence += 1
            playerDrops = presentation.droppedFrames
            return self.wake
        }
        wake?()
    }

    public func clear() {
        let wake: (@Sendable () -> Void)? = lock.withLock {
            latest = nil
            sequence += 1
            return self.wake
        }
        wake?()
    }

    /// The latest frame and how many frames arrived so far.
    public var current: (frame: VideoFrame?, sequence: Int) { lock.withLock { (latest, sequence) } }
    /// Frames the player dropped as late (as it reported with the last frame).
    public var droppedByPlayer: Int { lock.withLock { playerDrops } }

    /// Called (on the engine's thread) whenever a frame arrives.
    func setWake(_ body: (@Sendable () -> Void)?) { lock.withLock { wake = body } }
}
