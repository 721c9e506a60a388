import Foundation
import Synchronization
import ReelCore

/// How a frame became current: when, and how many frames were dropped so far.
public struct Presentation: Sendable, Hashable {
    /// Host-clock time of the presentation.
    public var presentedAt: MediaTime
    /// Frames dropped (late) since the item opened.
    public var droppedFrames: Int
    /// The first frame of the item (or of a seek).
    public var isFirstFrameOfSequence: Bool

    public init(presentedAt: MediaTime, droppedFrames: Int, isFirstFrameOfSequence: Bool) {
        self.presentedAt = presentedAt
        self.droppedFrames = droppedFrames
        self.isFirstFrameOfSequence = isFirstFrameOfSequence
    }
}

/// Where video frames go: a window, a terminal, a test recorder. The player calls
/// ``present(_:presentation:)`` when a frame becomes current; implementations keep
/// it short (store the frame, wake a render loop) — it runs on the engine's clock
/// context, not on a thread of the sink's choosing.
public protocol VideoSink: AnyObject, Sendable {
    func present(_ frame: VideoFrame, presentation: Presentation)
    /// The item was replaced or removed: forget the current frame.
    func clear()
}

extension VideoSink {
    public func clear() {}
}

/// The sample format sinks take: interleaved 32-bit float at a rate and channel count.
public struct AudioFormat: Sendable, Hashable {
    public var sampleRate: Int
    public var channels: Int

    public init(sampleRate: Int, channels: Int) {
        precondition(sampleRate > 0 && channels > 0)
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public static let stereo48k = AudioFormat(sampleRate: 48_000, channels: 2)
}

/// How a sink takes audio.
public enum AudioSinkMode: Sendable, Hashable {
    /// The sink's device pulls samples on its own thread (``AudioSink/start(pulling:)``).
    case pull
    /// The engine pushes blocks of this many frames at the pace of its clock
    /// (``AudioSink/write(_:)``): files and null outputs, real time or simulated.
    case push(blockFrames: Int)
}

/// Where audio goes: a device, a WAV file, nowhere.
public protocol AudioSink: AnyObject, Sendable {
    var format: AudioFormat { get }
    /// Time from handing samples over to hearing them.
    var latency: MediaTime { get }
    var mode: AudioSinkMode { get }
    /// Pull mode: the device starts calling `source.render(into:frameCount:)` from its own
    /// thread (real-time code: copying out of the player's ring is all it does).
    func start(pulling source: AudioPullSource)
    /// Pull mode: the device stops calling.
    func stop()
    /// Push mode: the next block of interleaved samples.
    func write(_ samples: [Float])
}

extension AudioSink {
    public func start(pulling source: AudioPullSource) {}
    public func stop() {}
    public func write(_ samples: [Float]) {}
}

/// A video sink that keeps the last frame and counts — the minimal reference sink
/// (mpv's `vo_null`), for headless playback and tests.
public final class HeadlessVideoSink: VideoSink, Sendable {
    private struct State {
        var last: VideoFrame?
        var count = 0
    }
    private let state = Mutex(State())
    private let onFrame: (@Sendable (VideoFrame, Presentation) -> Void)?

    /// `onFrame` runs for every presented frame (on the engine's clock context).
    public init(onFrame: (@Sendable (VideoFrame, Presentation) -> Void)? = nil) {
        self.onFrame = onFrame
    }

    public func present(_ frame: VideoFrame, presentation: Presentation) {
        state.withTrackedLock { state in
            state.last = frame
            state.count += 1
        }
        onFrame?(frame, presentation)
    }

    public func clear() { state.withTrackedLock { $0.last = nil } }

    /// The frame shown now.
    public var currentFrame: VideoFrame? { state.withTrackedLock { $0.last } }
    /// Frames presented so far.
    public var presentedCount: Int { state.withTrackedLock { $0.count } }
}

/// An audio sink that takes samples at the clock's pace and drops them: keeps
/// audio as the master clock without a device.
public final class NullAudioSink: AudioSink, Sendable {
    public let format: AudioFormat
    public let latency: MediaTime = .zero
    public let mode: AudioSinkMode
    private let frames = Atomic<Int>(0)

    public init(format: AudioFormat = .stereo48k, blockFrames: Int = 1024) {
        self.format = format
        self.mode = .push(blockFrames: blockFrames)
    }

    public func write(_ samples: [Float]) {
        frames.add(samples.count / format.channels, ordering: .relaxed)
    }

    /// Frames written so far.
    public var framesWritten: Int { frames.load(ordering: .relaxed) }
}
