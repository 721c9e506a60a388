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

    /// A presentation at host time `presentedAt` with `droppedFrames` dropped so far (the player
    /// makes these; a test of a sink may make its own).
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
    /// `frame` is current from now until the next call (or ``clear()``). Called on the
    /// engine's clock context, one call at a time; must not block. The frame is immutable
    /// and may be kept and read from any thread (a render loop's).
    func present(_ frame: VideoFrame, presentation: Presentation)
    /// The item was replaced or removed: forget the current frame.
    func clear()
}

extension VideoSink {
    /// Does nothing: a sink that keeps no frame has nothing to forget.
    public func clear() {}
}

/// The sample format sinks take: interleaved 32-bit float at a rate and channel count.
public struct AudioFormat: Sendable, Hashable {
    /// Sample frames per second (48 000, 44 100).
    public var sampleRate: Int
    /// Channels per frame, interleaved in FFmpeg's order for the layout (1 mono, 2 left and right).
    public var channels: Int

    /// A format of `sampleRate` frames per second and `channels` channels; both must be
    /// positive (a precondition: a zero traps).
    public init(sampleRate: Int, channels: Int) {
        precondition(sampleRate > 0 && channels > 0)
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// 48 kHz stereo: what the player's sinks take unless told otherwise.
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
    /// The format the sink takes: the player resamples and remixes every item's audio to it.
    /// Fixed for the sink's life.
    var format: AudioFormat { get }
    /// Time from handing samples over to hearing them.
    var latency: MediaTime { get }
    /// Whether the sink's device pulls samples or the engine pushes them. Fixed for the sink's life.
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
    /// Does nothing: the default for a push sink, which no device pulls.
    public func start(pulling source: AudioPullSource) {}
    /// Does nothing: the default for a push sink, which no device pulls.
    public func stop() {}
    /// Drops the samples: the default for a pull sink, to which nothing is pushed.
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

    /// Keeps `frame` as ``currentFrame``, counts it, then runs `onFrame`.
    public func present(_ frame: VideoFrame, presentation: Presentation) {
        state.withTrackedLock { state in
            state.last = frame
            state.count += 1
        }
        onFrame?(frame, presentation)
    }

    /// Forgets the current frame (``currentFrame`` becomes `nil`); the count stays.
    public func clear() { state.withTrackedLock { $0.last = nil } }

    /// The frame shown now.
    public var currentFrame: VideoFrame? { state.withTrackedLock { $0.last } }
    /// Frames presented so far.
    public var presentedCount: Int { state.withTrackedLock { $0.count } }
}

/// An audio sink that takes samples at the clock's pace and drops them: keeps
/// audio as the master clock without a device.
public final class NullAudioSink: AudioSink, Sendable {
    /// The format it takes, as given at creation.
    public let format: AudioFormat
    /// Zero: nothing is heard, so nothing is late.
    public let latency: MediaTime = .zero
    /// ``AudioSinkMode/push(blockFrames:)``: the engine hands it blocks at its clock's pace.
    public let mode: AudioSinkMode
    private let frames = Atomic<Int>(0)

    /// A sink taking `format`, handed `blockFrames` frames at a time (1024 at 48 kHz is one
    /// block every 21.3 ms of the player's clock).
    public init(format: AudioFormat = .stereo48k, blockFrames: Int = 1024) {
        self.format = format
        self.mode = .push(blockFrames: blockFrames)
    }

    /// Counts the block's frames and drops its samples.
    public func write(_ samples: [Float]) {
        frames.add(samples.count / format.channels, ordering: .relaxed)
    }

    /// Frames written so far.
    public var framesWritten: Int { frames.load(ordering: .relaxed) }
}
