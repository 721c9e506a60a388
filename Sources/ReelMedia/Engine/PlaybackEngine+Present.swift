import Foundation
import ReelCore
import ReelCaptions

/// What one step hands to the sink and the delegate once the mutex is released, in order.
enum EngineNotification {
    case opened(MediaInfo)
    case present(VideoFrame, Presentation)
    case firstFrame(FirstFrameReport)
    case ready
    case buffering(Bool)
    case seekCompleted(id: Int, landed: MediaTime)
    case ended
    case looped
    case failed(MediaError)
    case tick(MediaTime)
    case captions(CaptionFrame)
    case captionTracks([CaptionTrack])
    case captionSourceFailed(CaptionSourceFailure)
    case loudness(LoudnessReport)
}

extension PlaybackEngine {
    /// One step of the owner: apply the commands that arrived, run the presentation machine on
    /// a snapshot of the queues, carry out its actions, schedule the next step. Runs on the
    /// clock's context (the host clock's queue, or the caller of a manual clock); steps never
    /// overlap. The sink and the delegate hear of it after the mutex is released.
    func presentationStep() {
        let now = clock.now
        var tokens: [PlaybackDemandToken] = []
        let notifications = monitor.update { state -> [EngineNotification] in
            state.stepDeadline = nil
            state.stepAction = nil
            guard !state.closing else { return [] }
            var out: [EngineNotification] = []
            applyCommandsLocked(&state, now: now, into: &out)
            out += state.loudnessReports.map { .loudness($0) }
            state.loudnessReports = []
            if let ring, audioSink?.mode != .pull { ring.applySkip() }
            state.videoFrames.removeAll { $0.serial != state.serial }
            let buffers = buffersLocked(state, now: now)
            let step = state.machine.step(now: now, buffers: buffers)
            logger.trace("step at \(now.seconds): \(buffers) -> \(step.actions), phase \(state.machine.phase)")
            carryOutLocked(step.actions, &state, now: now, into: &out)
            var presentedAt: MediaTime?
            for case .present(let frame, _) in out { presentedAt = frame.pts }
            captionStepLocked(&state, presentedAt: presentedAt, into: &out)
            state.ownerWantsData = step.wantsData
            if let wake = step.wake { scheduleStepLocked(&state, at: wake) }
            tokens = endDemandsLocked(&state)
            noteRateChangeHeardLocked(&state)
            return out
        }
        tokens.forEach { $0.end() }
        deliver(notifications)
    }

    private func applyCommandsLocked(_ state: inout EngineState, now: MediaTime, into out: inout [EngineNotification]) {
        let commands = state.commands
        state.commands = []
        for command in commands {
            switch command {
            case .opened:
                if let info = state.streams?.info { out.append(.opened(info)) }
            case .runClock(let rate):
                if ring != nil, rate != state.audioRate {
                    state.audioRate = rate
                    // Measured from the command that runs time at the new rate until audio at
                    // it is heard: while playing, or on resuming after a stall or a pause in
                    // which the rate changed (the stall's wait is not the audio path's). Not
                    // the first run: audio that never played has no old rate to change from.
                    if state.machine.runRequested || state.audioHasRun { state.pendingRateChange = (nil, now) }
                }
            case .failed:
                if let failure = state.failure { out.append(.failed(failure)) }
            case .stopClock, .seek, .passBegan:
                break
            }
            let actions = state.machine.handle(command, now: now)
            carryOutLocked(actions, &state, now: now, into: &out)
        }
    }

    /// What the queues hold for the current serial, as the machine sees it.
    private func buffersLocked(_ state: EngineState, now: MediaTime) -> PresentationMachine.Buffers {
        var buffers = PresentationMachine.Buffers(serial: state.serial)
        buffers.video = state.videoFrames.map { PresentationMachine.FrameHead(pts: $0.pts, duration: $0.duration) }
        buffers.videoEnded = state.videoEndedSerial == state.serial
        buffers.firstAudioTime = state.firstAudioSerial == state.serial ? state.firstAudioTime : nil
        buffers.inputHeldNoMedia = state.demuxAtEnd && state.mediaPacketsRead == 0
        guard let ring, let sink = audioSink else {
            buffers.audioEnded = state.audioEndedSerial == state.serial
            return buffers
        }
        let rate = Int32(sink.format.sampleRate)
        let pending = MediaTime(value: Int64(ring.queuedFrames + state.rendererBacklog), timescale: rate)
        buffers.audioQueued = state.audioChunksDuration + pending
        buffers.audioEnded = state.audioRenderedEndSerial == state.serial
        buffers.audioClock = audioClockLocked(state, now: now)
        buffers.audioStarved = ring.isRunning && ring.queuedFrames == 0 && state.audioChunks.isEmpty
            && state.rendererBacklog == 0 && !buffers.audioEnded
        return buffers
    }

    private func carryOutLocked(_ actions: [PresentationMachine.Action], _ state: inout EngineState, now: MediaTime,
                                into out: inout [EngineNotification]) {
        for action in actions {
            switch action {
            case .present(let dropping, let first, let avOffset):
                state.videoFrames.removeFirst(min(dropping, state.videoFrames.count))
                guard !state.videoFrames.isEmpty else { continue }
                let decoded = state.videoFrames.removeFirst()
                state.presentedFrame = (decoded.serial, decoded.pts)
                let frame = state.machine.itemFrame(decoded)
                if let avOffset { state.avOffsets.add(avOffset) }
                let presentation = Presentation(presentedAt: now, droppedFrames: state.machine.droppedFrames,
                                                isFirstFrameOfSequence: first)
                state.presentingThread = pthread_self()
                out.append(.present(frame, presentation))
            case .drop(let count):
                state.videoFrames.removeFirst(min(count, state.videoFrames.count))
            case .reportFirstFrame:
                state.report.firstFramePresentedMs = phaseNowMs()
                if let (bytes, requests) = state.demuxer?.bridge.statistics {
                    state.report.bytesRead = bytes
                    state.report.requests = requests
                }
                state.firstFrameReported = true
                // Before the frame itself: whoever sees the first frame in its sink finds the
                // player's report already there.
                let lastPresent = out.lastIndex { if case .present = $0 { true } else { false } }
                out.insert(.firstFrame(state.report), at: lastPresent ?? out.endIndex)
            case .reportReady:
                out.append(.ready)
            case .reportStall(let stalled):
                out.append(.buffering(stalled))
            case .reportSeekCompleted(let id, let landed):
                out.append(.seekCompleted(id: id, landed: landed))
            case .reportEnd:
                out.append(.ended)
            case .reportLoop:
                out.append(.looped)
            case .reportNoProgress:
                let error = state.undecodable ?? .nothingDecoded(url: url)
                if state.failure == nil { state.failure = error }
                out.append(.failed(error))
            case .runAudio(let run):
                runAudioLocked(run, &state, now: now)
            case .tick(let time):
                out.append(.tick(time))
            }
        }
    }

    /// The item shows (a first frame, a landed seek): the urgent demand for the network ends.
    /// The queues' low-water demand follows what is buffered.
    private func endDemandsLocked(_ state: inout EngineState) -> [PlaybackDemandToken] {
        var tokens: [PlaybackDemandToken] = []
        switch state.machine.phase {
        case .playing, .stalled, .ended, .failed:
            if let token = state.connectionDemand { tokens.append(token) }
            state.connectionDemand = nil
        case .prerolling where state.firstFrameReported:
            if let token = state.connectionDemand { tokens.append(token) }
            state.connectionDemand = nil
        default:
            break
        }
        if let token = updateLowWaterDemandLocked(&state) { tokens.append(token) }
        return tokens
    }

    /// Hands the step's results to the sink and the delegate (no lock held). A frame reaches
    /// the sink only while the engine is open: `close()` waits for a present in progress.
    private func deliver(_ notifications: [EngineNotification]) {
        guard !notifications.isEmpty else { return }
        for notification in notifications {
            switch notification {
            case .present(let frame, let presentation):
                videoSink?.present(frame, presentation: presentation)
                positionListener?.presented(frame.pts, of: url)
                monitor.update { $0.presentingThread = nil }
                delegate?.engine(self, didPresent: frame, presentation: presentation)
            case .opened(let info):
                delegate?.engine(self, didOpen: info)
            case .firstFrame(let report):
                delegate?.engine(self, didReportFirstFrame: report)
            case .ready:
                delegate?.engineIsReady(self)
            case .buffering(let stalled):
                delegate?.engine(self, bufferingChanged: stalled)
            case .seekCompleted(let id, let landed):
                delegate?.engine(self, didCompleteSeek: id, landedAt: landed)
            case .ended:
                delegate?.engineDidReachEnd(self)
            case .looped:
                delegate?.engineDidLoop(self)
            case .failed(let error):
                logger.debug("item failed: \(error)")
                delegate?.engine(self, didFail: error)
            case .tick(let time):
                delegate?.engine(self, didTick: time)
            case .captions(let frame):
                captionSink?.show(frame)
                delegate?.engine(self, didShowCaptions: frame)
            case .captionTracks(let tracks):
                delegate?.engine(self, didChangeCaptionTracks: tracks)
            case .captionSourceFailed(let failure):
                delegate?.engine(self, captionSourceFailed: failure)
            case .loudness(let report):
                delegate?.engine(self, didLevelLoudness: report)
            }
        }
    }
}

// MARK: Reading the engine (any thread)

extension PlaybackEngine {
    /// The current media time, read now.
    func currentTimeNow() -> MediaTime {
        let now = clock.now
        return monitor.read { $0.machine.itemTime(at: now) }
    }

    func durationNow() -> MediaTime { monitor.read { $0.streams?.duration ?? .indefinite } }

    /// A live item's window on its own clock, once known (see
    /// ``SectionedResourceLoader/seekableRange(of:)``).
    func liveWindowNow() -> TimeRange? {
        guard let demuxer = monitor.read({ $0.demuxer }), let sections = demuxer.sections,
              let window = sections.seekableRange(of: demuxer.url) else { return nil }
        return TimeRange(start: MediaTime(seconds: window.lowerBound, preferredTimescale: 90_000),
                         end: MediaTime(seconds: window.upperBound, preferredTimescale: 90_000))
    }

    var isVideoDecoderOpen: Bool { monitor.read { $0.videoDecoderOpen } }

    var statistics: (presented: Int, dropped: Int, decoded: Int) {
        monitor.read { ($0.machine.presentedFrames, $0.machine.droppedFrames, $0.decodedVideoFrames) }
    }

    var bytesAndRequests: (Int64, Int) {
        let demuxer = monitor.read { $0.demuxer }
        return demuxer.map { $0.bridge.statistics } ?? (0, 0)
    }

    /// A/V offsets at presentation (p95 and max, milliseconds), audio underruns, and how long
    /// rate changes took to be heard.
    var syncStatistics: (p95: Double?, max: Double?, underruns: Int, rateChanges: [MediaTime]) {
        let (histogram, latencies) = monitor.read { ($0.avOffsets, $0.rateChangeLatencies) }
        return (histogram.quantile(0.95), histogram.total > 0 ? histogram.maximum : nil, ring?.underruns ?? 0, latencies)
    }

    /// What is demuxed or decoded ahead of the current time.
    func loadedTimeRanges() -> [TimeRange] {
        let now = clock.now
        return monitor.read { state in
            let start = state.machine.mediaTime(at: now)
            var end = start
            let frameDuration = state.streams?.frameDuration ?? .zero
            if let frame = state.videoFrames.last, frame.pts > end { end = frame.pts + (frame.duration ?? frameDuration) }
            if let chunk = state.audioChunks.last, chunk.pts + chunk.duration > end { end = chunk.pts + chunk.duration }
            end = end + max(state.videoPackets.duration, state.audioPackets.duration)
            // A loop's continuous times as the item's: what is read ahead into the next pass
            // counts as the rest of this one.
            let passStart = start - state.machine.itemTime(of: start)
            let (itemStart, itemEnd) = (start - passStart, end - passStart)
            end = itemEnd
            let duration = state.streams?.duration ?? .indefinite
            if state.demuxAtEnd, duration.isNumeric { end = duration }
            if duration.isNumeric { end = min(end, duration) }
            guard end > itemStart else { return [] }
            return [TimeRange(start: itemStart, end: end)]
        }
    }
}

