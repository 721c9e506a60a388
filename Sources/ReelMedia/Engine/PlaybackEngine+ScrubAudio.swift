import Foundation
import ReelCore

// Scrubbing's audio: a decode-on keeps the audio in step with the picture, so the release plays
// from the exact frame with no flushing seek (Media3's scrubbing mode keeps the decoders too).
// The audio decoded and demuxed ahead stays queued: what ends before the target is dropped,
// the rest goes on in the new serial, and the audio decode thread decodes on without a flush,
// trimming to the target, as the video decode thread does (`EngineState.chainSerial`).

extension EngineState {
    /// A decode-on to `target` moved the serial from `old` to `serial`: the audio of `old` that
    /// reaches past the target stays, cut to start there, and the packets queued go on.
    mutating func carryAudioOn(from old: Int, to serial: Int, target: MediaTime) {
        var kept: [AudioChunk] = []
        var duration = MediaTime.zero
        for chunk in audioChunks where chunk.serial == old && chunk.pts + chunk.duration > target {
            var chunk = chunk.trimmed(toStartAt: target)
            chunk.serial = serial
            kept.append(chunk)
            duration = duration + chunk.duration
        }
        audioChunks = kept
        audioChunksDuration = duration
        if let first = kept.first {
            firstAudioSerial = serial
            firstAudioTime = first.pts
        }
        audioPackets.restamp(serial)
        // The audio decoder already took the input's end: the audio carried over is all there is.
        if audioEndedSerial == old { audioEndedSerial = serial }
    }
}

extension AudioChunk {
    /// The chunk without its samples before `time` (whole frames; as it is when it starts there
    /// or later).
    func trimmed(toStartAt time: MediaTime) -> AudioChunk {
        guard pts < time, channels > 0 else { return self }
        let skip = Int(min(Int64(frameCount), max(0, (time - pts).convertScale(Int32(sampleRate), method: .towardZero).value)))
        guard skip > 0 else { return self }
        let start = pts + MediaTime(value: Int64(skip), timescale: Int32(sampleRate))
        return AudioChunk(samples: Array(samples[(skip * channels)...]), pts: start, serial: serial, channels: channels, sampleRate: sampleRate)
    }
}

/// What offering a decoded audio chunk to the queue came to.
enum AudioOffer: Equatable {
    case queued
    /// The chunk's serial is gone (a seek that flushed, or closing): drop it.
    case stale
    /// A decode-on moved the serial on inside the chain: go on in `serial`, trimmed to
    /// `discardUntil`.
    case retargeted(serial: Int, discardUntil: MediaTime?)
}

extension PlaybackEngine {
    /// What the audio decode thread takes next: a packet of the current serial, its seek window,
    /// and whether it continues the chain `decodingSerial` belongs to (a decode-on moved the
    /// serial on: decode on, no flush). `nil` once the engine closes or fails.
    func nextAudioPacket(_ worker: PipelineMonitor<EngineState>.Worker, decodingSerial: Int)
        -> (entry: PacketQueue.Entry, discardUntil: MediaTime?, continues: Bool)? {
        while true {
            let next = monitor.wait(worker, until: { state in
                state.closing || state.failure != nil || !state.audioPackets.isEmpty
            }, then: { state -> (PacketQueue.Entry, MediaTime?, Bool, Bool)? in
                if state.closing || state.failure != nil { return nil }
                let entry = state.audioPackets.pop()!
                let continues = entry.serial == state.serial && entry.serial != decodingSerial && decodingSerial >= state.chainSerial
                return (entry, state.discardUntil, continues, entry.serial == state.serial)
            })
            guard let (entry, discardUntil, continues, current) = next else { return nil }
            if current { return (entry, discardUntil, continues) }
        }
    }
}
