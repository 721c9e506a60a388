import Foundation
import ReelCore
internal import CFFmpeg

extension PlaybackEngine {
    /// The demux thread: opens the item, starts the decoders, then reads packets into the
    /// queues until they are full, carrying out seeks in between.
    func runDemux(_ worker: PipelineMonitor<EngineState>.Worker) {
        defer { monitor.exit(worker) }
        guard let item = openItem(worker) else { return }
        let demuxer = item.demuxer
        let captionDecoders = item.captions
        startDecoders(item)
        startHLSCaptionReader(demuxer.subtitleRenditions)
        startDASHCaptionReaders(demuxer.dashTextRepresentations)
        var sawFirstPacket = false
        while true {
            enum Next { case stop, seek(SeekRequest), read(serial: Int) }
            let next = monitor.wait(worker, until: { state in
                state.closing || state.failure != nil || state.seekRequest != nil
                    || (!state.demuxAtEnd && state.demuxWantsMore(self.configuration))
            }, then: { state -> Next in
                if state.closing || state.failure != nil { return .stop }
                if let request = state.seekRequest {
                    state.seekRequest = nil
                    return .seek(request)
                }
                state.demuxInIO = true
                return .read(serial: state.serial)
            })
            switch next {
            case .stop:
                return
            case .seek(let request):
                performSeek(request, demuxer: demuxer)
                captionDecoders.values.forEach { $0.flush() }
            case .read(let serial):
                let result = Result { try demuxer.readPacket() }
                if case .success(let packet?) = result, let decoder = captionDecoders[packet.streamIndex] {
                    // Cues are filed once, by the first pass: a loop's later passes show them
                    // at the item's own times.
                    let firstPass = monitor.update { state -> Bool in
                        state.demuxInIO = false
                        return state.loop.pass == 0
                    }
                    if firstPass { handleCaptionPacket(packet, decoder: decoder) }
                    continue
                }
                if case .success(nil) = result {
                    // The end: cues a decoder still holds (608 keeps the last until it ends).
                    for decoder in captionDecoders.values { file(decoder.drain(), track: decoder.track.id) }
                    // A looping item reads its next pass on instead of ending.
                    if readNextPassIfLooping(serial: serial, demuxer: demuxer) {
                        monitor.update { $0.demuxInIO = false }
                        continue
                    }
                }
                guard handle(result, serial: serial, demuxer: demuxer, sawFirstPacket: &sawFirstPacket) else { return }
            }
        }
    }

    /// The open container and the decoders of its selected streams.
    struct OpenedItem {
        var demuxer: Demuxer
        var video: (decoder: Decoder, parameters: CodecParameters)?
        var audio: Decoder?
        /// A caption decoder per subtitle stream read, by stream index.
        var captions: [Int32: CaptionDecoder] = [:]
    }

    /// Opens the container and the decoders; `nil` when that failed (reported) or the
    /// engine is closing.
    private func openItem(_ worker: PipelineMonitor<EngineState>.Worker) -> OpenedItem? {
        let demuxer: Demuxer
        do {
            demuxer = try Demuxer(
                url: url, loader: loader, fastStart: configuration.fastStart, captions: true,
                audio: configuration.audioSelection,
                io: IOActivity(monitor: monitor, worker: worker), schedules: true, startTime: startTime?.seconds,
                onContentInformation: { [weak self] in self?.mark(\.contentInfoMs) },
                onFirstByte: { [weak self] in self?.mark(\.firstByteMs) },
                onBridge: { [weak self] bridge in self?.opening(bridge) }
            )
        } catch {
            let media = error as? MediaError ?? .ffmpeg(operation: "open", code: -1, message: "\(error)", url: url)
            if media != .cancelled, !monitor.read({ $0.closing }) { fail(media) }
            return nil
        }
        var item = OpenedItem(demuxer: demuxer)
        if demuxer.sectionURL != url {
            logger.debug("\(url.absoluteString): Reel's segment scheduler reads it (\(demuxer.sectionURL.absoluteString))")
        }
        do {
            item.video = try openVideoDecoder(demuxer)
        } catch {
            fail(error as? MediaError ?? .unsupportedCodec(name: "video", url: url))
            demuxer.close()
            return nil
        }
        var audioError: MediaError?
        (item.audio, audioError) = openAudioDecoder(demuxer)
        guard item.video != nil || item.audio != nil else {
            // Nothing left to play (an audio codec this FFmpeg cannot open, such as xHE-AAC in
            // 5.1): fail now, naming why, rather than wait for a stream that never comes.
            fail(audioError ?? .noPlayableStreams(url: url))
            demuxer.close()
            return nil
        }
        let streams = describe(demuxer, hasAudio: item.audio != nil)
        item.captions = openCaptionDecoders(demuxer)
        let captionTracks = item.captions.sorted { $0.key < $1.key }.map(\.value.track)
        let opened = monitor.update { state -> Bool in
            guard !state.closing else { return false }
            captionTracks.forEach { state.captions.add($0) }
            state.demuxer = demuxer
            state.openingBridge = nil
            state.streams = streams
            _ = state.loop.handle(.opened(loopItem(demuxer, streams: streams)))
            state.report.headerParsedMs = phaseNowMs()
            state.report.probedStreamInfo = demuxer.usedStreamInfoProbe
            state.commands.append(.opened(PresentationMachine.Streams(
                hasVideo: streams.hasVideo, hasAudio: streams.hasAudio,
                duration: streams.duration, frameDuration: streams.frameDuration)))
            scheduleStepLocked(&state, at: clock.now)
            return true
        }
        guard opened else {
            demuxer.close()
            return nil
        }
        return item
    }

    private func openVideoDecoder(_ demuxer: Demuxer) throws -> (decoder: Decoder, parameters: CodecParameters)? {
        guard let index = demuxer.videoStreamIndex, let stream = demuxer.stream(index),
              let parameters = CodecParameters(copying: stream.pointee.codecpar, timeBase: stream.pointee.time_base) else { return nil }
        try DolbyVisionPolicy.check(stream, url: url)
        let decoder = try Decoder(parameters: parameters.pointer, timeBase: parameters.timeBase, url: url, threads: 0)
        return (decoder, parameters)
    }

    /// The audio decoder; `nil` (the video plays silently) when there is no sink or no decoder,
    /// with the reason when the decoder would not open.
    private func openAudioDecoder(_ demuxer: Demuxer) -> (Decoder?, MediaError?) {
        guard audioSink != nil, let index = demuxer.audioStreamIndex, let stream = demuxer.stream(index) else { return (nil, nil) }
        do {
            return (try Decoder(parameters: stream.pointee.codecpar, timeBase: stream.pointee.time_base, url: url, threads: 1), nil)
        } catch {
            logger.debug("audio disabled: \(error)")
            return (nil, error as? MediaError)
        }
    }

    /// The demuxer's I/O while it opens: `close()` interrupts it too, so a close never waits
    /// for a stalled open.
    private func opening(_ bridge: AVIOBridge) {
        let closingNow = monitor.update { state -> Bool in
            if !state.closing { state.openingBridge = bridge }
            return state.closing
        }
        if closingNow { bridge.interrupt() }
    }

    private func describe(_ demuxer: Demuxer, hasAudio: Bool) -> OpenedStreams {
        var frameDuration = MediaTime(value: 1, timescale: 30)
        var rotation = 0
        var videoTimeBase = TimeBase(AVRational(num: 1, den: 1))
        var videoStart: MediaTime?
        if let index = demuxer.videoStreamIndex {
            videoTimeBase = demuxer.timeBase(of: index)
            rotation = demuxer.rotation(of: index)
            if let stream = demuxer.stream(index) {
                if stream.pointee.start_time != AV_NOPTS { videoStart = videoTimeBase.time(stream.pointee.start_time) }
                let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
                if rate.num > 0 && rate.den > 0 && rate.num / rate.den < 1000 {
                    frameDuration = MediaTime(value: Int64(rate.den), timescale: rate.num)
                }
            }
        }
        let audioTimeBase = demuxer.audioStreamIndex.map { demuxer.timeBase(of: $0) } ?? TimeBase(AVRational(num: 1, den: 1))
        return OpenedStreams(
            info: demuxer.info, hasVideo: demuxer.videoStreamIndex != nil,
            hasAudio: hasAudio,
            videoTimeBase: videoTimeBase, audioTimeBase: audioTimeBase,
            audioSampleRate: demuxer.audioStreamIndex.flatMap { demuxer.sampleRate(of: $0) },
            audioFrameDuration: demuxer.audioStreamIndex.flatMap { demuxer.audioFrameDuration(of: $0) }, frameDuration: frameDuration,
            rotation: rotation, duration: demuxer.info.duration ?? .indefinite, videoStart: videoStart)
    }

    /// Starts a decode thread per selected stream.
    private func startDecoders(_ item: OpenedItem) {
        if let (decoder, parameters) = item.video {
            let worker = monitor.register("video-decode")
            spawn("reel.video-decode") { [self] in runVideoDecoder(worker, decoder: decoder, parameters: parameters) }
        }
        if let decoder = item.audio {
            let worker = monitor.register("audio-decode")
            spawn("reel.audio-decode") { [self] in runAudioDecoder(worker, decoder: decoder) }
        }
    }

    /// Queues what a read returned; `false` when the thread must stop.
    private func handle(_ result: Result<Packet?, any Error>, serial: Int, demuxer: Demuxer,
                        sawFirstPacket: inout Bool) -> Bool {
        if case .failure(let error) = result {
            if let media = error as? MediaError, media == .cancelled {
                // Interrupted for a seek or a close; the loop picks up which.
                demuxer.bridge.resume()
                monitor.update { $0.demuxInIO = false }
                return true
            }
            monitor.update { $0.demuxInIO = false }
            fail(error as? MediaError ?? .ffmpeg(operation: "read", code: -1, message: "\(error)", url: url))
            return false
        }
        let packet = try? result.get()
        var first = sawFirstPacket
        let ended = monitor.update { state -> PlaybackDemandToken? in
            state.demuxInIO = false
            // A seek while reading: what was read belongs to the old position.
            guard !state.closing, serial >= state.chainSerial, state.seekRequest == nil, let streams = state.streams else { return nil }
            if let packet {
                let isVideo = packet.streamIndex == demuxer.videoStreamIndex
                if !first, isVideo || !streams.hasVideo {
                    first = true
                    state.report.firstPacketMs = phaseNowMs()
                }
                let isAudio = packet.streamIndex == demuxer.audioStreamIndex
                if state.applyLoopLocked(to: packet, isVideo: isVideo, isAudio: isAudio, streams: streams) {
                    state.push(packet, isVideo: isVideo, streams: streams)
                }
            } else {
                state.demuxAtEnd = true
                if streams.hasVideo { state.videoPackets.push(nil, serial: state.serial, duration: .zero) }
                if streams.hasAudio { state.audioPackets.push(nil, serial: state.serial, duration: .zero) }
            }
            state.endStarvedStreamsLocked(configuration)
            return updateLowWaterDemandLocked(&state)
        }
        sawFirstPacket = first
        ended?.end()
        return true
    }

    /// Moves the demuxer for a seek. The serial was bumped and the queues flushed when the seek
    /// was asked for; packets read from here on belong to it.
    private func performSeek(_ request: SeekRequest, demuxer: Demuxer) {
        demuxer.bridge.resume()
        guard let index = demuxer.videoStreamIndex ?? demuxer.audioStreamIndex else { return }
        let timeBase = demuxer.timeBase(of: index)
        var timestamp = timeBase.timestamp(request.target)
        if request.before > .zero || request.after > .zero,
           let keyframe = nearestKeyframeTimestamp(request, demuxer: demuxer, index: index) {
            timestamp = keyframe
        }
        do {
            try demuxer.seek(streamIndex: index, timestamp: timestamp)
        } catch {
            if monitor.read({ $0.closing }) { return }
            logger.debug("seek to \(request.target) failed: \(error)")
        }
    }

    /// A tolerant seek: the keyframe nearest the target inside the window, if the index has
    /// one. Index times may be decode times (MP4) while seeking goes by presentation time, so
    /// aim between that keyframe and the next one: the backward seek then lands on it
    /// whatever the reordering delay.
    private func nearestKeyframeTimestamp(_ request: SeekRequest, demuxer: Demuxer, index: Int32) -> Int64? {
        let timeBase = demuxer.timeBase(of: index)
        let lower = request.before.isPositiveInfinity ? MediaTime.negativeInfinity : request.target - request.before
        let upper = request.after.isPositiveInfinity ? MediaTime.positiveInfinity : request.target + request.after
        let keyframes = demuxer.keyframeTimestamps(streamIndex: index)
        var best: Int?
        for (i, ts) in keyframes.enumerated() {
            let time = timeBase.time(ts)
            guard time >= lower, time <= upper else { continue }
            if let b = best, MediaTime.abs(time - request.target) >= MediaTime.abs(timeBase.time(keyframes[b]) - request.target) {
                continue
            }
            best = i
        }
        guard let b = best else { return nil }
        let ts = keyframes[b]
        return b + 1 < keyframes.count ? ts + (keyframes[b + 1] - ts) / 2 : ts + (ts - (b > 0 ? keyframes[b - 1] : 0)) / 2 + 1
    }

    /// Records a first-frame phase once.
    func mark(_ phase: WritableKeyPath<FirstFrameReport, Double?>) {
        monitor.update { state in
            if state.report[keyPath: phase] == nil { state.report[keyPath: phase] = phaseNowMs() }
        }
    }

    /// Tells the demand observer whether the queues are below the low-water mark (call with
    /// the lock held; the returned token ends outside it).
    func updateLowWaterDemandLocked(_ state: inout EngineState) -> PlaybackDemandToken? {
        guard let observer = demandObserver, let streams = state.streams else { return nil }
        let queued = [streams.hasVideo ? state.videoPackets.duration : nil, streams.hasAudio ? state.audioPackets.duration : nil]
            .compactMap { $0 }.min() ?? .zero
        let low = !state.demuxAtEnd && state.failure == nil && queued < configuration.lowWaterMark
        let full = state.demuxAtEnd || state.failure != nil || !state.demuxWantsMore(configuration)
        if low, state.lowWaterDemand == nil {
            state.lowWaterDemand = observer.playbackDemandBegan(.belowLowWaterMark)
        } else if full, let token = state.lowWaterDemand {
            state.lowWaterDemand = nil
            return token
        }
        return nil
    }
}

extension EngineState {
    /// Whether the packet queues want more: ffplay's rule — keep reading until every stream
    /// has enough queued, or the byte budget is spent.
    func demuxWantsMore(_ configuration: PipelineConfiguration) -> Bool {
        guard let streams else { return false }
        if videoPackets.bytes + audioPackets.bytes >= configuration.packetQueueBytes { return false }
        let target = configuration.packetQueueDuration
        let videoEnough = !streams.hasVideo || videoPackets.duration >= target || videoPackets.count >= 600
        let audioEnough = !streams.hasAudio || audioPackets.duration >= target || audioPackets.count >= 1200
        return !(videoEnough && audioEnough)
    }

    mutating func push(_ packet: Packet, isVideo: Bool, streams: OpenedStreams) {
        mediaPacketsRead += 1
        let timeBase = isVideo ? streams.videoTimeBase : streams.audioTimeBase
        var duration = packet.duration > 0 ? timeBase.time(packet.duration) : (isVideo ? streams.frameDuration : .zero)
        if !duration.isNumeric || duration > MediaTime(value: 10, timescale: 1) { duration = .zero }
        if isVideo {
            guard videoCutSerial != serial else { return }
            videoPackets.push(packet, serial: serial, duration: duration)
        } else if streams.hasAudio, audioCutSerial != serial {
            audioPackets.push(packet, serial: serial, duration: duration)
        }
    }

    /// When the byte budget is spent and a stream has nothing queued, the file interleaves
    /// too badly (or that stream is damaged) for both to play: that stream ends here, as
    /// mpv does, so the other plays instead of every thread waiting for the others.
    mutating func endStarvedStreamsLocked(_ configuration: PipelineConfiguration) {
        guard let streams, !demuxAtEnd,
              videoPackets.bytes + audioPackets.bytes >= configuration.packetQueueBytes else { return }
        if streams.hasVideo, videoPackets.isEmpty, videoCutSerial != serial {
            videoCutSerial = serial
            videoPackets.push(nil, serial: serial, duration: .zero)
        }
        if streams.hasAudio, audioPackets.isEmpty, audioCutSerial != serial {
            audioCutSerial = serial
            audioPackets.push(nil, serial: serial, duration: .zero)
        }
    }
}
