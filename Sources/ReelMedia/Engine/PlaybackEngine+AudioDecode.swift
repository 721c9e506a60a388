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
    /// The item loops seamlessly: each frame is cut to its packet's duration (the edit list's
    /// end, which MP4 says only there), so every pass lasts exactly the item's duration.
    var loops = false
    /// Where the audio queued so far ends.
    var queuedEnd: MediaTime?
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
                    state.loops = trimIfLooping(box, timeBase: tb)
                    let f = box.pointer.pointee
                    var pts = f.best_effort_timestamp != AV_NOPTS ? tb.time(f.best_effort_timestamp) : (state.nextPts ?? .zero)
                    guard let (samples, delay) = try? resampler.convert(box.pointer) else { continue }
                    pts = pts - delay
                    state.convertedEnd = pts + MediaTime(value: Int64(samples.count / sink.format.channels),
                                                         timescale: Int32(sink.format.sampleRate))
                    if f.sample_rate > 0 { state.nextPts = pts + MediaTime(value: Int64(f.nb_samples), timescale: f.sample_rate) }
                    state.packetsSinceOutput = 0
                    guard queue(samples, pts: pts, serial: serial, state: &state, worker: worker) else { return false }
                case .damaged:
                    continue
                case .needsInput, .endOfStream:
                    return true
                }
            }
        }

        while let (entry, discardUntil, continues) = nextAudioPacket(worker, decodingSerial: state.serial) {
            if continues { // a scrub's decode-on moved the serial on in this chain: decode on, trimmed
                (state.serial, state.discardUntil) = (entry.serial, discardUntil)
            } else if entry.serial != state.serial {
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

    /// A looping item whose audio ends before its duration (audio shorter than video, or
    /// starting late) leaves a gap at each loop point: silence fills it, so the audio clock
    /// keeps to the pass's timestamps and never drifts from the video.
    static func fillGap(from end: MediaTime, to pts: inout MediaTime, samples: inout [Float], channels: Int, rate: Int) {
        let gap = pts - end
        guard gap > MediaTime(value: 1, timescale: 1000), gap <= MediaTime(value: 10, timescale: 1) else { return }
        let frames = Int(gap.convertScale(Int32(rate), method: .halfAwayFromZero).value)
        samples = [Float](repeating: 0, count: frames * channels) + samples
        pts = pts - MediaTime(value: Int64(frames), timescale: Int32(rate))
    }

    /// Whether the item loops seamlessly now; if so, `box` is cut to its packet's duration.
    private func trimIfLooping(_ box: FrameBox, timeBase: TimeBase) -> Bool {
        guard monitor.read({ $0.loop.loopsSeamlessly }) else { return false }
        Self.trimToPacketDuration(box, timeBase: timeBase)
        return true
    }

    /// Cuts a decoded frame to its packet's duration when that is shorter: the container's
    /// edit list ends inside the codec's last frame (AAC's padding), which libavcodec decodes
    /// whole. What FFmpeg's `skip_samples` trims at the start it has already trimmed.
    static func trimToPacketDuration(_ box: FrameBox, timeBase: TimeBase) {
        let frame = box.pointer
        let ticks = reel_frame_duration(frame)
        guard ticks > 0, frame.pointee.sample_rate > 0 else { return }
        let kept = timeBase.time(ticks).convertScale(frame.pointee.sample_rate, method: .halfAwayFromZero).value
        if kept > 0, kept < Int64(frame.pointee.nb_samples) { frame.pointee.nb_samples = Int32(kept) }
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
        if state.loops, let end = state.queuedEnd { Self.fillGap(from: end, to: &pts, samples: &samples, channels: channels, rate: rate) }
        state.queuedEnd = pts + MediaTime(value: Int64(samples.count / channels), timescale: Int32(rate))
        let ownStart = state.fromStreamStart && !state.produced
        state.produced = true
        let chunk = AudioChunk(samples: samples, pts: pts, serial: serial, channels: channels, sampleRate: rate)
        let capacity = configuration.audioQueueDuration
        let offered = monitor.wait(worker, until: { engine in
            engine.closing || engine.serial != serial || engine.audioChunksDuration < capacity
        }, then: { engine -> AudioOffer in
            guard !engine.closing else { return .stale }
            guard engine.serial == serial else {
                // A scrub's decode-on moved the serial on inside this chain: the chunk goes on
                // in the new one, trimmed to its target.
                return serial >= engine.chainSerial ? .retargeted(serial: engine.serial, discardUntil: engine.discardUntil) : .stale
            }
            engine.audioChunks.append(chunk)
            engine.audioChunksDuration = engine.audioChunksDuration + chunk.duration
            if ownStart, engine.itemAudioStart == nil { engine.itemAudioStart = pts }
            if engine.firstAudioSerial != serial {
                engine.firstAudioSerial = serial
                engine.firstAudioTime = pts
            }
            kickOwnerLocked(&engine)
            return .queued
        })
        guard case .retargeted(let next, let limit) = offered else { return offered == .queued }
        state.serial = next
        state.discardUntil = limit
        return queue(samples, pts: pts, serial: next, state: &state, worker: worker)
    }
}
