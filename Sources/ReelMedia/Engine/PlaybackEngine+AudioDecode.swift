import Foundation
import ReelCore
internal import CFFmpeg

/// The audio decode thread's own state (touched by that thread only).
private struct AudioDecodeState {
    var serial = -1
    var discardUntil: MediaTime?
    var nextPts: MediaTime?
    /// Where the converted audio so far ends (the resampler's tail follows on from here).
    var convertedEnd: MediaTime?
    var packetsSinceOutput = 0
    var produced = false
    var gaveUp = false
    /// The serial decodes from the stream's start (no seek window to trim to).
    var fromStreamStart = false
}

extension PlaybackEngine {
    /// The audio decode thread: decode, convert to the sink's format, trim to a seek's
    /// target, queue for the renderer.
    func runAudioDecoder(_ worker: PipelineMonitor<EngineState>.Worker, decoder first: Decoder) {
        defer { monitor.exit(worker) }
        // Replaced at a seam whose codec parameters differ (a switch of variant).
        var decoder = first
        guard let sink = audioSink else { return }
        let tb = decoder.timeBase
        let resampler = Resampler(output: sink.format)
        var state = AudioDecodeState()

        func drain(serial: Int) -> Bool {
            while true {
                guard let output = try? decoder.receive() else { return true }
                switch output {
                case .frame(let box):
                    let f = box.pointer.pointee
                    var pts = f.best_effort_timestamp != AV_NOPTS ? tb.time(f.best_effort_timestamp) : (state.nextPts ?? .zero)
                    guard let (samples, delay) = try? resampler.convert(box.pointer) else { continue }
                    pts = pts - delay
                    state.convertedEnd = pts + MediaTime(value: Int64(samples.count / sink.format.channels),
                                                         timescale: Int32(sink.format.sampleRate))
                    if f.sample_rate > 0 {
                        state.nextPts = pts + MediaTime(value: Int64(f.nb_samples), timescale: f.sample_rate)
                    }
                    state.packetsSinceOutput = 0
                    guard queue(samples, pts: pts, serial: serial, state: &state, worker: worker) else { return false }
                case .damaged:
                    continue
                case .needsInput, .endOfStream:
                    return true
                }
            }
        }

        while let (entry, discardUntil) = nextPacket(worker, video: false) {
            if entry.serial != state.serial {
                decoder.flush()
                resampler.reset()
                state = AudioDecodeState(serial: entry.serial, discardUntil: discardUntil, fromStreamStart: discardUntil == nil)
            }
            if state.gaveUp { continue }
            guard let packet = entry.packet else {
                _ = try? decoder.send(nil)
                if drain(serial: entry.serial), let end = state.convertedEnd {
                    // The resampler's last samples: the end of every resampled stream, and the
                    // whole of one shorter than its filter (a 20-sample file).
                    let tail = resampler.flush()
                    if !tail.isEmpty { _ = queue(tail, pts: end, serial: entry.serial, state: &state, worker: worker) }
                }
                decoder.flush()
                resampler.reset()
                markEnded(video: false, serial: entry.serial)
                continue
            }
            if let parameters = packet.newParameters {
                // A seam with other parameters: drain the old decoder, open one for the new.
                _ = try? decoder.send(nil)
                guard drain(serial: entry.serial) else { continue }
                guard let next = try? Decoder(parameters: parameters.pointer, timeBase: parameters.timeBase, url: url, threads: 1) else {
                    state.gaveUp = true
                    giveUp(video: false, serial: entry.serial, reason: .undecodable(stream: "audio", codec: decoder.codecName, url: url))
                    continue
                }
                decoder = next
            }
            state.packetsSinceOutput += 1
            do {
                while try !decoder.send(packet) {
                    guard drain(serial: entry.serial) else { break }
                }
                _ = drain(serial: entry.serial)
            } catch {
                // A broken audio packet: skip it, keep the video going.
            }
            if state.packetsSinceOutput > Self.undecodablePacketLimit, !state.produced {
                state.gaveUp = true
                giveUp(video: false, serial: entry.serial, reason: .undecodable(stream: "audio", codec: decoder.codecName, url: url))
            }
        }
    }

    /// Trims samples to the seek window and queues them, waiting for room; `false` when the
    /// serial went stale or the engine is closing.
    private func queue(_ converted: [Float], pts start: MediaTime, serial: Int, state: inout AudioDecodeState,
                       worker: PipelineMonitor<EngineState>.Worker) -> Bool {
        guard let sink = audioSink else { return false }
        var samples = converted
        var pts = start
        let channels = sink.format.channels
        let rate = sink.format.sampleRate
        if let limit = state.discardUntil {
            let frames = samples.count / channels
            let end = pts + MediaTime(value: Int64(frames), timescale: Int32(rate))
            if end <= limit { return true }
            if pts < limit {
                let skip = (limit - pts).convertScale(Int32(rate), method: .towardZero).value
                samples.removeFirst(Int(min(Int64(frames), max(0, skip))) * channels)
                pts = limit
            }
            state.discardUntil = nil
        }
        guard !samples.isEmpty else { return true }
        let ownStart = state.fromStreamStart && !state.produced
        state.produced = true
        let chunk = AudioChunk(samples: samples, pts: pts, serial: serial, channels: channels, sampleRate: rate)
        let capacity = configuration.audioQueueDuration
        return monitor.wait(worker, until: { engine in
            engine.closing || engine.serial != serial || engine.audioChunksDuration < capacity
        }, then: { engine -> Bool in
            guard !engine.closing, engine.serial == serial else { return false }
            engine.audioChunks.append(chunk)
            engine.audioChunksDuration = engine.audioChunksDuration + chunk.duration
            if ownStart, engine.itemAudioStart == nil { engine.itemAudioStart = pts }
            if engine.firstAudioSerial != serial {
                engine.firstAudioSerial = serial
                engine.firstAudioTime = pts
            }
            kickOwnerLocked(&engine)
            return true
        })
    }
}
