import Foundation
import ReelCore
import ReelMedia
import Synchronization

/// A video sink that records every presented frame: its time, md5 and when it
/// was presented. For asserting exactly what a player showed.
public final class RecordingVideoSink: VideoSink, Sendable {
    public struct Record: Sendable, Hashable {
        public var pts: MediaTime
        public var md5: String
        public var presentedAt: MediaTime
        public var droppedSoFar: Int
        public var isFirstOfSequence: Bool
        public var width: Int
        public var height: Int
        public var rotation: Int
    }

    private struct State {
        var records: [Record] = []
        var last: VideoFrame?
    }
    private let state = Mutex(State())
    private let hashes: Bool

    /// `hashes` computes each frame's md5 (costs time on large frames).
    public init(hashes: Bool = true) {
        self.hashes = hashes
    }

    public func present(_ frame: VideoFrame, presentation: Presentation) {
        let record = Record(
            pts: frame.pts, md5: hashes ? frame.md5() : "", presentedAt: presentation.presentedAt,
            droppedSoFar: presentation.droppedFrames, isFirstOfSequence: presentation.isFirstFrameOfSequence,
            width: frame.width, height: frame.height, rotation: frame.rotation
        )
        state.withTrackedLock { state in
            state.records.append(record)
            state.last = frame
        }
    }

    public func clear() { state.withTrackedLock { $0.last = nil } }

    public var frames: [Record] { state.withTrackedLock { $0.records } }
    public var currentFrame: VideoFrame? { state.withTrackedLock { $0.last } }
    public func reset() { state.withTrackedLock { $0.records = [] } }
}

/// An audio sink taking pushed blocks at the clock's pace and keeping them.
public final class RecordingAudioSink: AudioSink, Sendable {
    public let format: AudioFormat
    public let latency: MediaTime = .zero
    public let mode: AudioSinkMode
    private let samples = Mutex<[Float]>([])

    public init(format: AudioFormat = AudioFormat(sampleRate: 48_000, channels: 2), blockFrames: Int = 480) {
        self.format = format
        self.mode = .push(blockFrames: blockFrames)
    }

    public func write(_ block: [Float]) {
        samples.withTrackedLock { $0.append(contentsOf: block) }
    }

    /// Everything written, interleaved.
    public var written: [Float] { samples.withTrackedLock { $0 } }
    /// Frames written that are not silence.
    public var audibleFrameCount: Int {
        samples.withTrackedLock { samples in
            var count = 0
            for i in stride(from: 0, to: samples.count, by: format.channels) where abs(samples[i]) > 1e-4 { count += 1 }
            return count
        }
    }
}

/// Records every screen of captions the player shows, in order.
public final class RecordingCaptionSink: CaptionSink, Sendable {
    private let state = Mutex<[CaptionFrame]>([])

    public init() {}

    public func show(_ frame: CaptionFrame) { state.withTrackedLock { $0.append(frame) } }

    /// Every screen shown, in order.
    public var frames: [CaptionFrame] { state.withTrackedLock { $0 } }

    /// The words on screen now.
    public var currentText: String { state.withTrackedLock { $0.last?.plainText ?? "" } }

    public func reset() { state.withTrackedLock { $0 = [] } }
}
