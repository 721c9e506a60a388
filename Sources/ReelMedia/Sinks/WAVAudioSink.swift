import Foundation
import Synchronization
import ReelCore

/// Writes what the player plays to a 16-bit PCM WAV file, at the pace of the
/// player's clock (so `--clock fast` writes as fast as decoding allows, and a 2x
/// run writes time-stretched audio, as heard). The header is kept valid as the
/// file grows, so even an interrupted run leaves a readable file.
public final class WAVAudioSink: AudioSink, Sendable {
    /// The file's sample rate and channel count, as given at creation.
    public let format: AudioFormat
    /// Zero: samples are written as they are handed over.
    public let latency: MediaTime = .zero
    /// ``AudioSinkMode/push(blockFrames:)``: the engine hands it blocks at its clock's pace.
    public let mode: AudioSinkMode
    private let handle: FileHandle
    /// The file's state; the handle is used only under it.
    private struct State {
        var dataBytes: UInt32 = 0
        var sinceHeader = 0
        var finished = false
    }
    private let state = Mutex(State())

    /// Creates (or truncates) the file at `url` and writes its header. Throws `CocoaError`
    /// `.fileWriteNoPermission` when the file cannot be created, or the file handle's error
    /// when it cannot be opened or written.
    public init(url: URL, format: AudioFormat = .stereo48k, blockFrames: Int = 1024) throws {
        self.format = format
        self.mode = .push(blockFrames: blockFrames)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        handle = try FileHandle(forWritingTo: url)
        try handle.write(contentsOf: header(dataBytes: 0))
    }

    deinit { finish() }

    /// Appends the block as 16-bit samples (clipped to ±1; NaN and infinities as silence),
    /// rewriting the header's sizes after each second of audio. Write errors (a full disk) are
    /// not reported: the block is lost. Does nothing after ``finish()``.
    public func write(_ samples: [Float]) {
        var pcm = Data(count: samples.count * 2)
        pcm.withUnsafeMutableBytes { raw in
            let out = raw.bindMemory(to: Int16.self)
            for (i, sample) in samples.enumerated() {
                let clipped = max(-1, min(1, sample.isFinite ? sample : 0))
                out[i] = Int16((clipped * 32767).rounded()).littleEndian
            }
        }
        state.withTrackedLock { state in
            guard !state.finished else { return }
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: pcm)
            state.dataBytes &+= UInt32(pcm.count)
            state.sinceHeader += pcm.count
            if state.sinceHeader >= format.sampleRate * format.channels * 2 {
                state.sinceHeader = 0
                rewriteHeader(dataBytes: state.dataBytes)
            }
        }
    }

    /// Writes the final sizes and closes the file.
    public func finish() {
        state.withTrackedLock { state in
            guard !state.finished else { return }
            state.finished = true
            rewriteHeader(dataBytes: state.dataBytes)
            try? handle.close()
        }
    }

    /// Frames written so far.
    public var framesWritten: Int { state.withTrackedLock { Int($0.dataBytes) / (2 * format.channels) } }

    private func rewriteHeader(dataBytes: UInt32) {
        try? handle.seek(toOffset: 0)
        try? handle.write(contentsOf: header(dataBytes: dataBytes))
        _ = try? handle.seekToEnd()
    }

    private func header(dataBytes: UInt32) -> Data {
        var d = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        let channels = UInt16(format.channels)
        let rate = UInt32(format.sampleRate)
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 &+ dataBytes)
        d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(channels)
        u32(rate); u32(rate * UInt32(channels) * 2); u16(channels * 2); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(dataBytes)
        return d
    }
}
