import Foundation
import ReelCore
internal import CFFmpeg

extension PlaybackEngine {
    /// The demux thread: opens the item, starts the decoders, then reads packets
    /// into the queues until they are full, handling seeks in between.
    func runDemux(_ worker: PipelineActivity.Worker) {
        defer { activity.exit(worker) }
        let demuxer: Demuxer
        do {
            demuxer = try Demuxer(
                url: url, loader: loader, fastStart: configuration.fastStart,
                activity: (activity, worker),
                onContentInformation: { [weak self] in self?.mark(\.contentInfoMs) },
                onFirstByte: { [weak self] in self?.mark(\.firstByteMs) },
                onBridge: { [weak self] bridge in self?.opening(bridge) }
            )
        } catch let error as MediaError {
            if lock.withLock({ closing }) || error == .cancelled { return }
            fail(error)
            return
        } catch {
            fail(.ffmpeg(operation: "open", code: -1, message: "\(error)", url: url))
            return
        }

        lock.lock()
        if closing {
            lock.unlock()
            demuxer.close()
            return
        }
        self.demuxer = demuxer
        let info = demuxer.info
        self.info = info
        hasVideo = demuxer.videoStreamIndex != nil
        hasAudio = demuxer.audioStreamIndex != nil && audioSink != nil
        if let index = demuxer.videoStreamIndex {
            videoTimeBase = demuxer.timeBase(of: index)
            rotation = demuxer.rotation(of: index)
            if let stream = demuxer.stream(index) {
                let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
                if rate.num > 0 && rate.den > 0 {
                    videoFrameDuration = MediaTime(value: Int64(rate.den), timescale: rate.num)
                }
            }
        }
        if let index = demuxer.audioStreamIndex { audioTimeBase = demuxer.timeBase(of: index) }
        duration = info.duration ?? .indefinite
        opened = true
        report.headerParsedMs = phaseNowMs()
        report.probedStreamInfo = demuxer.usedStreamInfoProbe
        lock.broadcast()
        lock.unlock()
        delegate?.engine(self, didOpen: info)

        if let index = demuxer.videoStreamIndex, let stream = demuxer.stream(index),
           let parameters = CodecParameters(copying: stream.pointee.codecpar, timeBase: stream.pointee.time_base) {
            let decoderWorker = activity.register("video-decode")
            spawn("reel.video-decode") { [weak self] in
                self?.runVideoDecoder(decoderWorker, parameters: parameters)
            }
        }
        if hasAudio, let index = demuxer.audioStreamIndex, let stream = demuxer.stream(index),
           let parameters = CodecParameters(copying: stream.pointee.codecpar, timeBase: stream.pointee.time_base) {
            let decoderWorker = activity.register("audio-decode")
            spawn("reel.audio-decode") { [weak self] in
                self?.runAudioDecoder(decoderWorker, parameters: parameters)
            }
        }
        kickPresenter()

        var sawFirstPacket = false
        while true {
            lock.lock()
            activity.wait(worker) { [unowned self] in
                closing || failure != nil || seekRequest != nil || (!demuxAtEnd && demuxWantsMore())
            }
            if closing || failure != nil {
                lock.unlock()
                break
            }
            if let request = seekRequest {
                seekRequest = nil
                lock.unlock()
                performSeek(request, demuxer: demuxer)
                continue
            }
            demuxInIO = true
            lock.unlock()

            let result = Result { try demuxer.readPacket() }

            lock.lock()
            demuxInIO = false
            if closing {
                lock.unlock()
                break
            }
            if seekRequest != nil {
                // A seek arrived while reading: whatever was read belongs to the old position.
                lock.unlock()
                continue
            }
            switch result {
            case .success(let packet?):
                let isVideo = packet.streamIndex == demuxer.videoStreamIndex
                let timeBase = isVideo ? videoTimeBase : audioTimeBase
                let duration = packet.duration > 0 ? timeBase.time(packet.duration) : (isVideo ? videoFrameDuration : .zero)
                if isVideo {
                    videoPackets.push(packet, serial: serial, duration: duration)
                } else if hasAudio {
                    audioPackets.push(packet, serial: serial, duration: duration)
                }
                if !sawFirstPacket && (isVideo || !hasVideo) {
                    sawFirstPacket = true
                    report.firstPacketMs = phaseNowMs()
                }
            case .success(nil):
                demuxAtEnd = true
                if hasVideo { videoPackets.push(nil, serial: serial, duration: .zero) }
                if hasAudio { audioPackets.push(nil, serial: serial, duration: .zero) }
            case .failure(let error):
                lock.unlock()
                if let media = error as? MediaError, media == .cancelled {
                    // Interrupted for a seek or close; the loop picks up which.
                    demuxer.bridge.resume()
                    continue
                }
                fail(error as? MediaError ?? .ffmpeg(operation: "read", code: -1, message: "\(error)", url: url))
                return
            }
            let ended = updateLowWaterDemandLocked()
            lock.broadcast()
            lock.unlock()
            ended?.end()
        }
    }

    /// Whether the packet queues want more (call with the lock held): ffplay's rule —
    /// keep reading until every stream has enough queued, or the byte budget is spent.
    func demuxWantsMore() -> Bool {
        if videoPackets.bytes + audioPackets.bytes >= configuration.packetQueueBytes { return false }
        let target = configuration.packetQueueDuration
        let videoEnough = !hasVideo || videoPackets.duration >= target || videoPackets.count >= 600
        let audioEnough = !hasAudio || audioPackets.duration >= target || audioPackets.count >= 1200
        return !(videoEnough && audioEnough)
    }

    /// Moves the demuxer for a seek and starts a new serial.
    private func performSeek(_ request: SeekRequest, demuxer: Demuxer) {
        demuxer.bridge.resume()
        guard let index = demuxer.videoStreamIndex ?? demuxer.audioStreamIndex else { return }
        let timeBase = demuxer.timeBase(of: index)
        let lower = request.before.isPositiveInfinity ? MediaTime.negativeInfinity : request.target - request.before
        let upper = request.after.isPositiveInfinity ? MediaTime.positiveInfinity : request.target + request.after
        var seekTimestamp = timeBase.timestamp(request.target)
        var discardUntil = lower
        if request.before > .zero || request.after > .zero {
            // A tolerant seek: the keyframe nearest the target inside the window, if the
            // index has one. Index times may be decode times (MP4) while seeking goes by
            // presentation time, so aim between that keyframe and the next one: the
            // backward seek then lands on it whatever the reordering delay.
            let keyframes = demuxer.keyframeTimestamps(streamIndex: index)
            var best: Int?
            for (i, ts) in keyframes.enumerated() {
                let time = timeBase.time(ts)
                guard time >= lower, time <= upper else { continue }
                if let b = best {
                    if MediaTime.abs(time - request.target) < MediaTime.abs(timeBase.time(keyframes[b]) - request.target) { best = i }
                } else {
                    best = i
                }
            }
            if let b = best {
                let ts = keyframes[b]
                seekTimestamp = b + 1 < keyframes.count ? ts + (keyframes[b + 1] - ts) / 2 : ts + (ts - (b > 0 ? keyframes[b - 1] : 0)) / 2 + 1
            }
        }
        do {
            try demuxer.seek(streamIndex: index, timestamp: seekTimestamp)
        } catch {
            if lock.withLock({ closing }) { return }
            logger.debug("seek to \(request.target) failed: \(error)")
        }
        lock.lock()
        serial += 1
        videoPackets.removeAll()
        audioPackets.removeAll()
        videoFrames.removeAll()
        audioChunks.removeAll()
        audioChunksDuration = .zero
        demuxAtEnd = false
        audioStarved = false
        activeSeek = ActiveSeek(id: request.id, serial: serial, target: request.target, discardUntil: discardUntil)
        lock.broadcast()
        lock.unlock()
    }

    /// Records a first-frame phase once.
    func mark(_ phase: WritableKeyPath<FirstFrameReport, Double?>) {
        lock.withLock {
            if report[keyPath: phase] == nil { report[keyPath: phase] = phaseNowMs() }
        }
    }
}
