import Foundation
import ReelCore
internal import CFFmpeg

extension PlaybackEngine {
    /// The video decode thread.
    func runVideoDecoder(_ worker: PipelineActivity.Worker, parameters codec: CodecParameters) {
        defer { activity.exit(worker) }
        let parameters = codec.pointer
        let timeBase = codec.timeBase
        let decoder: Decoder
        do {
            decoder = try Decoder(parameters: parameters, timeBase: timeBase, url: url, threads: 0)
        } catch {
            fail(error as? MediaError ?? .unsupportedCodec(name: "video", url: url))
            return
        }
        MediaResources.videoDecoderOpened()
        setVideoDecoderOpen(true)
        defer {
            setVideoDecoderOpen(false)
            MediaResources.videoDecoderClosed()
        }
        let tb = TimeBase(timeBase)
        var decoderSerial = -1
        var held: VideoFrame?
        var discardUntil: MediaTime?
        var fastFirst = configuration.fastFirstFrame
        var skipThrough: MediaTime?
        var lastPts: MediaTime?

        func makeFrame(_ box: FrameBox, serial: Int) -> VideoFrame {
            let f = box.pointer.pointee
            var pts: MediaTime
            if f.best_effort_timestamp != AV_NOPTS {
                pts = tb.time(f.best_effort_timestamp)
            } else if let last = lastPts {
                pts = last + videoFrameDurationLocked()
            } else {
                pts = .zero
            }
            let duration = f.pkt_duration > 0 ? tb.time(f.pkt_duration) : nil
            lastPts = pts
            return VideoFrame(box: box, pts: pts, duration: duration, rotation: rotationLocked(), serial: serial)
        }

        /// Applies the seek window, then queues.
        func process(_ frame: VideoFrame) -> Bool {
            if let limit = discardUntil {
                if frame.pts <= limit {
                    held = frame
                    return true
                }
                discardUntil = nil
                if let previous = held {
                    held = nil
                    guard emit(previous, worker: worker) else { return false }
                }
            }
            return emit(frame, worker: worker)
        }

        func drainDecoder(serial: Int) -> Bool {
            while true {
                guard let output = try? decoder.receive() else { return true }
                switch output {
                case .frame(let box):
                    let frame = makeFrame(box, serial: serial)
                    if let skip = skipThrough, frame.pts <= skip { continue }
                    skipThrough = nil
                    guard process(frame) else { return false }
                case .damaged:
                    continue
                case .needsInput, .endOfStream:
                    return true
                }
            }
        }

        while let (entry, seekWindow) = nextPacket(worker, from: \.videoPackets) {
            if entry.serial != decoderSerial {
                decoder.flush()
                decoderSerial = entry.serial
                held = nil
                lastPts = nil
                skipThrough = nil
                discardUntil = seekWindow
            }
            guard let packet = entry.packet else {
                // End of input: drain, show what the seek held back, mark the end.
                _ = try? decoder.send(nil)
                guard drainDecoder(serial: entry.serial) else { continue }
                if let last = held {
                    held = nil
                    guard emit(last, worker: worker) else { continue }
                }
                decoder.flush()
                markEnded(\.videoEndedSerial, serial: entry.serial)
                continue
            }
            if fastFirst, packet.isKeyframe, discardUntil == nil {
                fastFirst = false
                if let frame = decodeAlone(packet, parameters: parameters, timeBase: timeBase, serial: entry.serial, tb: tb) {
                    skipThrough = frame.pts
                    lastPts = frame.pts
                    guard emit(frame, worker: worker) else { continue }
                }
            }
            fastFirst = false
            do {
                while try !decoder.send(packet) {
                    guard drainDecoder(serial: entry.serial) else { break }
                }
                _ = drainDecoder(serial: entry.serial)
            } catch {
                fail(error as? MediaError ?? .ffmpeg(operation: "decode", code: -1, message: "\(error)", url: url))
                break
            }
        }
    }

    /// Decodes one keyframe on a single-threaded decoder and drains it, so the
    /// first frame appears after one packet, without frame threading's delay.
    private func decodeAlone(_ packet: Packet, parameters: UnsafeMutablePointer<AVCodecParameters>, timeBase: AVRational, serial: Int, tb: TimeBase) -> VideoFrame? {
        guard let single = try? Decoder(parameters: parameters, timeBase: timeBase, url: url, threads: 1) else { return nil }
        guard (try? single.send(packet)) == true else { return nil }
        _ = try? single.send(nil)
        var received = try? single.receive()
        while case .damaged? = received { received = try? single.receive() }
        guard case .frame(let box)? = received else { return nil }
        let f = box.pointer.pointee
        let pts = f.best_effort_timestamp != AV_NOPTS ? tb.time(f.best_effort_timestamp) : .zero
        let duration = f.pkt_duration > 0 ? tb.time(f.pkt_duration) : nil
        return VideoFrame(box: box, pts: pts, duration: duration, rotation: rotationLocked(), serial: serial)
    }

    private func videoFrameDurationLocked() -> MediaTime { lock.withLock { videoFrameDuration } }
    private func rotationLocked() -> Int { lock.withLock { rotation } }

    /// Queues a decoded frame, waiting for room. Returns `false` when the frame's
    /// serial went stale (a seek) or the engine is closing.
    private func emit(_ frame: VideoFrame, worker: PipelineActivity.Worker) -> Bool {
        lock.lock()
        activity.wait(worker) { [unowned self] in
            closing || serial != frame.serial || videoFrames.count < configuration.videoFrameCapacity
        }
        guard !closing, serial == frame.serial else {
            lock.unlock()
            return false
        }
        videoFrames.append(frame)
        if report.firstFrameDecodedMs == nil { report.firstFrameDecodedMs = phaseNowMs() }
        lock.broadcast()
        lock.unlock()
        kickPresenter()
        return true
    }

    /// The audio decode thread: decode, convert to the sink's format, trim to a
    /// seek's target, queue.
    func runAudioDecoder(_ worker: PipelineActivity.Worker, parameters codec: CodecParameters) {
        defer { activity.exit(worker) }
        let parameters = codec.pointer
        let timeBase = codec.timeBase
        guard let sink = audioSink else { return }
        let decoder: Decoder
        do {
            decoder = try Decoder(parameters: parameters, timeBase: timeBase, url: url, threads: 1)
        } catch {
            // No audio decoder: play the video silently rather than fail.
            logger.debug("audio disabled: \(error)")
            lock.withLock {
                hasAudio = false
                audioPackets.removeAll()
                lock.broadcast()
            }
            return
        }
        let tb = TimeBase(timeBase)
        let resampler = Resampler(output: sink.format)
        var decoderSerial = -1
        var discardUntil: MediaTime?
        var nextPts: MediaTime?

        func queue(_ samples: [Float], pts: MediaTime, serial: Int) -> Bool {
            var samples = samples
            var pts = pts
            let channels = sink.format.channels
            let rate = sink.format.sampleRate
            if let limit = discardUntil {
                let frames = samples.count / channels
                let end = pts + MediaTime(value: Int64(frames), timescale: Int32(rate))
                if end <= limit { return true }
                if pts < limit {
                    let skip = (limit - pts).convertScale(Int32(rate), method: .towardZero).value
                    let drop = Int(min(Int64(frames), max(0, skip))) * channels
                    samples.removeFirst(drop)
                    pts = limit
                }
                discardUntil = nil
            }
            guard !samples.isEmpty else { return true }
            let chunk = AudioChunk(samples: samples, pts: pts, serial: serial, channels: channels, sampleRate: rate)
            lock.lock()
            activity.wait(worker) { [unowned self] in
                closing || serial != chunk.serial || audioChunksDuration < configuration.audioQueueDuration
            }
            guard !closing, serial == chunk.serial else {
                lock.unlock()
                return false
            }
            audioChunks.append(chunk)
            audioChunksDuration = audioChunksDuration + chunk.duration
            lock.broadcast()
            lock.unlock()
            kickPresenter()
            return true
        }

        func drain(serial: Int) -> Bool {
            while true {
                guard let output = try? decoder.receive() else { return true }
                switch output {
                case .frame(let box):
                    let f = box.pointer.pointee
                    var pts: MediaTime
                    if f.best_effort_timestamp != AV_NOPTS {
                        pts = tb.time(f.best_effort_timestamp)
                    } else {
                        pts = nextPts ?? .zero
                    }
                    guard let (samples, delay) = try? resampler.convert(box.pointer) else { continue }
                    pts = pts - delay
                    if f.sample_rate > 0 {
                        nextPts = pts + MediaTime(value: Int64(f.nb_samples), timescale: f.sample_rate)
                    }
                    guard queue(samples, pts: pts, serial: serial) else { return false }
                case .damaged:
                    continue
                case .needsInput, .endOfStream:
                    return true
                }
            }
        }

        while let (entry, seekWindow) = nextPacket(worker, from: \.audioPackets) {
            if entry.serial != decoderSerial {
                decoder.flush()
                decoderSerial = entry.serial
                nextPts = nil
                discardUntil = seekWindow
            }
            guard let packet = entry.packet else {
                _ = try? decoder.send(nil)
                _ = drain(serial: entry.serial)
                decoder.flush()
                markEnded(\.audioEndedSerial, serial: entry.serial)
                continue
            }
            do {
                while try !decoder.send(packet) {
                    guard drain(serial: entry.serial) else { break }
                }
                _ = drain(serial: entry.serial)
            } catch {
                // A broken audio packet: skip it, keep the video going.
                continue
            }
        }
    }

    /// Waits for the next packet of `queue` that belongs to the current serial
    /// (stale ones are dropped), with the seek window of that serial; `nil` once the
    /// engine closes or fails.
    private func nextPacket(_ worker: PipelineActivity.Worker,
                            from queue: ReferenceWritableKeyPath<PlaybackEngine, PacketQueue>)
        -> (entry: PacketQueue.Entry, discardUntil: MediaTime?)? {
        while true {
            lock.lock()
            activity.wait(worker) { [unowned self] in closing || failure != nil || !self[keyPath: queue].isEmpty }
            if closing || failure != nil {
                lock.unlock()
                return nil
            }
            let entry = self[keyPath: queue].pop()!
            let current = serial
            let window = activeSeek.flatMap { $0.serial == entry.serial ? $0.discardUntil : nil }
            lock.broadcast()
            lock.unlock()
            if entry.serial == current {
                return (entry, window.flatMap { $0.isNumeric ? $0 : nil })
            }
        }
    }

    /// Records that a stream decoded everything of `serial`, if that is still current.
    private func markEnded(_ endedSerial: ReferenceWritableKeyPath<PlaybackEngine, Int>, serial ended: Int) {
        lock.withLock {
            if ended == serial { self[keyPath: endedSerial] = ended }
            lock.broadcast()
        }
        kickPresenter()
    }
}
