import Foundation
import ReelCore

extension PlaybackEngine {
    /// How often a waiting presenter looks again. On a manual clock this is the
    /// grain of simulated time; on the host clock producers also wake it at once.
    var pollInterval: MediaTime {
        isManualClock ? MediaTime(value: 1, timescale: 1000) : MediaTime(value: 20, timescale: 1000)
    }

    /// Wakes the presenter now, when time is real (a manual clock polls instead,
    /// so that when a step runs depends only on the clock).
    func kickPresenter() {
        if !isManualClock { scheduleStep(at: clock.now) }
    }

    func schedulePoll() {
        scheduleStep(at: clock.now)
    }

    /// Schedules the next presentation step (keeping an earlier one if there is one).
    func scheduleStep(at deadline: MediaTime) {
        lock.lock()
        defer { lock.unlock() }
        guard !closing else { return }
        if let existing = stepDeadline, stepScheduled != nil, existing <= deadline { return }
        stepScheduled?.cancel()
        stepDeadline = deadline
        stepScheduled = clock.schedule(at: deadline) { [weak self] in self?.presentationStep() }
    }

    /// Media time now (call with the lock held): the audio clock while audio
    /// plays, the player clock otherwise.
    func masterTime(at now: MediaTime) -> MediaTime {
        if audioRunning, let audio = audioAnchor { return audio.media(at: now) }
        return anchor.media(at: now)
    }

    private func bufferIsReady() -> Bool {
        let videoReady = !hasVideo || videoEndedSerial == serial || videoFrames.count >= min(2, configuration.videoFrameCapacity)
        let audioReady = !hasAudio || audioEndedSerial == serial || audioChunksDuration >= configuration.audioStartDuration
        return videoReady && audioReady
    }

    /// One presentation step: show what is due, notice stalls and the end, and
    /// schedule the next step. Runs on the clock's context (the host clock's queue,
    /// or the caller of `ManualClock.advance`).
    func presentationStep() {
        if isManualClock {
            if !activity.waitUntilSettled() {
                logger.error("pipeline did not settle: busy \(activity.busyWorkers())")
            }
        }
        var notifications: [() -> Void] = []
        var present: (VideoFrame, Presentation)?
        lock.lock()
        stepScheduled = nil
        stepDeadline = nil
        guard !closing, failure == nil else {
            lock.unlock()
            return
        }
        let now = clock.now
        guard opened else {
            lock.unlock()
            scheduleStep(at: now + pollInterval)
            return
        }
        videoFrames.removeAll { $0.serial != serial }
        var waiting = false

        if var seek = activeSeek, seek.serial == serial, !seek.completed {
            // A seek in flight: its first frame (or audio) shows at once, playing or paused.
            var landed: MediaTime?
            if hasVideo {
                if !videoFrames.isEmpty {
                    let frame = videoFrames.removeFirst()
                    landed = seek.discardUntil.isNumeric ? max(frame.pts, seek.discardUntil) : frame.pts
                    present = (frame, Presentation(presentedAt: now, droppedFrames: droppedFrames, isFirstFrameOfSequence: true))
                } else if videoEndedSerial == serial {
                    landed = lastPresented.map { $0.pts } ?? seek.target
                }
            } else if let chunk = audioChunks.first {
                landed = seek.discardUntil.isNumeric ? max(chunk.pts, seek.discardUntil) : chunk.pts
            } else if audioEndedSerial == serial {
                landed = duration.isNumeric ? duration : seek.target
            }
            if let landed {
                seek.completed = true
                activeSeek = seek
                currentTime = landed
                presentedSerial = serial
                let resume = resumeAfterSeek
                resumeAfterSeek = false
                anchor = TimelineAnchor(media: landed, host: now, rate: rate, isRunning: resume)
                audioAnchor = nil
                clockRunning = resume
                audioRunning = resume
                if resume { audioStepStart = nil }
                if seek.id >= 0 {
                    let id = seek.id
                    notifications.append { [self] in delegate?.engine(self, didCompleteSeek: id, landedAt: landed) }
                }
            } else {
                waiting = true
            }
        } else if presentedSerial != serial {
            // The first frame of the item shows as soon as it is decoded.
            if hasVideo {
                if !videoFrames.isEmpty {
                    let frame = videoFrames.removeFirst()
                    presentedSerial = serial
                    if !clockRunning { currentTime = frame.pts; anchor.media = frame.pts }
                    present = (frame, Presentation(presentedAt: now, droppedFrames: droppedFrames, isFirstFrameOfSequence: true))
                } else {
                    waiting = true
                }
            } else {
                presentedSerial = serial
            }
        } else if clockRunning {
            let media = masterTime(at: now)
            let choice = FrameSelection.select(pts: videoFrames.map(\.pts), now: media, slack: MediaTime(value: 1, timescale: 1000))
            if choice.drop > 0 {
                videoFrames.removeFirst(choice.drop)
                droppedFrames += choice.drop
            }
            if choice.presentNext, let frame = videoFrames.first {
                videoFrames.removeFirst()
                present = (frame, Presentation(presentedAt: now, droppedFrames: droppedFrames, isFirstFrameOfSequence: false))
            }
            currentTime = max(.zero, duration.isNumeric ? min(media, duration) : media)
        }

        if let (frame, _) = present {
            lastPresented = frame
            presentedFrames += 1
        }

        // Readiness: the first frame is up and enough is buffered to start.
        if presentedSerial == serial, activeSeek.map({ $0.completed }) ?? true, let token = endConnectionDemandLocked() {
            notifications.append { token.end() }
        }
        if let token = updateLowWaterDemandLocked() {
            notifications.append { token.end() }
        }
        if !readyReported, presentedSerial == serial, bufferIsReady() {
            readyReported = true
            notifications.append { [self] in delegate?.engineIsReady(self) }
        }
        if !firstFrameReported, presentedSerial == serial, present != nil || !hasVideo {
            firstFrameReported = true
            report.firstFramePresentedMs = phaseNowMs()
            if let demuxer {
                let (bytes, requests) = demuxer.bridge.statistics
                report.bytesRead = bytes
                report.requests = requests
            }
            let snapshot = report
            notifications.append { [self] in delegate?.engine(self, didReportFirstFrame: snapshot) }
        }

        // Stalls: time is running but the next frame or the audio is not there.
        if clockRunning, readyReported, activeSeek.map({ $0.completed || $0.serial != serial }) ?? true {
            let media = masterTime(at: now)
            let frameEnd = lastPresented.map { $0.pts + ($0.duration ?? videoFrameDuration) } ?? .zero
            let videoStarved = hasVideo && videoFrames.isEmpty && videoEndedSerial != serial && media >= frameEnd
            if (videoStarved || (hasAudio && audioStarved)) && !bufferingReported {
                bufferingReported = true
                notifications.append { [self] in delegate?.engine(self, bufferingChanged: true) }
            }
        } else if bufferingReported, !clockRunning, bufferIsReady() {
            bufferingReported = false
            audioStarved = false
            notifications.append { [self] in delegate?.engine(self, bufferingChanged: false) }
        }

        // The end: every stream drained and the last frame's time has passed.
        let videoDone = !hasVideo || (videoEndedSerial == serial && videoFrames.isEmpty)
        let audioDone = !hasAudio || (audioEndedSerial == serial && audioChunks.isEmpty)
        if hasAudio, audioEndedSerial == serial, audioChunks.isEmpty, clockRunning, let audio = audioAnchor, audioRunning {
            // Audio ran out first: the player clock takes over from where audio was.
            anchor = TimelineAnchor(media: audio.media(at: now), host: now, rate: rate, isRunning: true)
            audioAnchor = nil
        }
        if videoDone, audioDone, clockRunning, !endReported, presentedSerial == serial {
            let media = masterTime(at: now)
            let lastEnd = lastPresented.map { $0.pts + ($0.duration ?? videoFrameDuration) } ?? media
            if !hasVideo || media >= lastEnd {
                endReported = true
                currentTime = duration.isNumeric ? max(currentTime, min(lastEnd, duration)) : lastEnd
                notifications.append { [self] in delegate?.engineDidReachEnd(self) }
            } else {
                waiting = true
            }
        }

        if clockRunning {
            let time = currentTime
            notifications.append { [self] in delegate?.engine(self, didTick: time) }
        }

        // When to look again.
        var next: MediaTime?
        if clockRunning {
            if let frame = videoFrames.first {
                let due = (audioRunning ? audioAnchor : nil)?.host(forMedia: frame.pts) ?? anchor.host(forMedia: frame.pts)
                next = due.map { max($0, now) }
            }
            let tick = now + MediaTime(value: 50, timescale: 1000)
            next = next.map { min($0, tick) } ?? (videoFrames.isEmpty ? now + pollInterval : tick)
            if bufferingReported { next = now + pollInterval }
        } else if waiting || !readyReported || bufferingReported || (activeSeek.map { !$0.completed } ?? false) || seekRequest != nil {
            next = now + pollInterval
        }
        if waiting, next == nil { next = now + pollInterval }
        lock.broadcast()
        lock.unlock()

        if let next { scheduleStep(at: next) }
        if let (frame, presentation) = present {
            // Under the present lock, and only while open: once `close()` returns, the
            // sink never gets another frame of this item (a pool reuses sinks).
            presentLock.lock()
            if !lock.withLock({ closing }) {
                videoSink?.present(frame, presentation: presentation)
                delegate?.engine(self, didPresent: frame, presentation: presentation)
            }
            presentLock.unlock()
        }
        for notify in notifications { notify() }
    }
}
