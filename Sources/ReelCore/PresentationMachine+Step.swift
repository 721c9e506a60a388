extension PresentationMachine {
    /// Applies a command at host instant `now`.
    public mutating func handle(_ event: Event, now: MediaTime) -> [Action] {
        switch event {
        case .opened(let opened):
            guard phase == .opening else { return [] }
            streams = opened
            if let seek = pendingSeek {
                pendingSeek = nil
                phase = .seeking(seek)
            } else {
                phase = .prerolling
            }
            return []
        case .passBegan(let next):
            beginPass(next)
            return []
        case .runClock(let newRate):
            freezeTime(at: now)
            rate = newRate
            runRequested = true
            if !hasRun {
                hasRun = true
                // Ready by the idle rule: buffer the full start before time first moves.
                if phase == .playing, configuration.idleStartVideoFrames < configuration.startVideoFrames {
                    phase = .prerolling
                }
            }
            return retime(at: now)
        case .stopClock:
            freezeTime(at: now)
            runRequested = false
            return retime(at: now)
        case .seek(let seek):
            freezeTime(at: now)
            serial = seek.serial
            forgetPasses()
            presentedInSerial = false
            videoOffset = .zero
            switch phase {
            case .opening:
                pendingSeek = seek
                return []
            case .failed:
                return []
            default:
                phase = .seeking(seek)
                return retime(at: now)
            }
        case .failed:
            freezeTime(at: now)
            phase = .failed
            return retime(at: now)
        }
    }

    /// Decides what to do at host instant `now` with what the queues hold.
    public mutating func step(now: MediaTime, buffers: Buffers) -> Step {
        var out = Step()
        switch phase {
        case .opening:
            out.wantsData = true
            return out
        case .ended, .failed:
            return out
        default:
            break
        }
        guard buffers.serial == serial else {
            out.wantsData = true
            return out
        }
        if buffers.audioQueued > .zero || buffers.firstAudioTime != nil { sawAudio = true }
        if timeRuns, let audio = buffers.audioClock {
            anchor = TimelineAnchor(media: audio, host: now, rate: rate, isRunning: true)
        }
        var queue = buffers.video[...]
        switch phase {
        case .seeking(let seek):
            stepSeeking(seek, now: now, buffers: buffers, queue: &queue, into: &out)
        case .prerolling:
            stepPrerolling(now: now, buffers: buffers, queue: &queue, into: &out)
        case .playing, .stalled:
            stepPlaying(now: now, buffers: buffers, queue: &queue, into: &out)
        default:
            break
        }
        schedule(now: now, queue: queue, into: &out)
        return out
    }

    // MARK: Phases

    private mutating func stepSeeking(_ seek: Seek, now: MediaTime, buffers: Buffers,
                                      queue: inout ArraySlice<FrameHead>, into out: inout Step) {
        let discard = seek.discardUntil.isNumeric ? seek.discardUntil : nil
        var landed: MediaTime?
        if hasVideo {
            if let head = queue.popFirst() {
                landed = discard.map { max(head.pts, $0) } ?? head.pts
                present(head, dropping: 0, first: true, audioClock: nil, into: &out)
            } else if buffers.videoEnded {
                landed = lastFrame?.pts ?? seek.target
            }
        } else if let first = buffers.firstAudioTime {
            landed = discard.map { max(first, $0) } ?? first
        } else if buffers.audioEnded {
            let duration = streams?.duration ?? .indefinite
            landed = duration.isNumeric ? duration : seek.target
        }
        guard let landed else { return }
        presentedInSerial = true
        currentTime = landed
        phase = !readyReported ? .prerolling : (stallReported ? .stalled : .playing)
        anchor = TimelineAnchor(media: landed, host: now, rate: rate, isRunning: false)
        out.actions += retime(at: now)
        if seek.id >= 0 { out.actions.append(.reportSeekCompleted(id: seek.id, landed: landed)) }
        reportFirstFrameIfDue(into: &out)
        if phase == .prerolling { becomeReadyIfBuffered(now: now, buffers: buffers, queue: queue, into: &out) }
    }

    private mutating func stepPrerolling(now: MediaTime, buffers: Buffers,
                                         queue: inout ArraySlice<FrameHead>, into out: inout Step) {
        if !presentedInSerial {
            if hasVideo, queue.isEmpty, buffers.videoEnded {
                // The input ended without a single frame: go on as audio if there is audio.
                let audioGaveNothing = !hasAudio || (buffers.audioEnded && !sawAudio)
                if audioGaveNothing {
                    endWithNothing(buffers, now: now, into: &out)
                    return
                }
                videoAbsent = true
            }
            if hasVideo {
                guard let head = queue.popFirst() else { return }
                if !timeRuns {
                    currentTime = head.pts
                    anchor.media = head.pts
                }
                present(head, dropping: 0, first: true, audioClock: nil, into: &out)
            } else {
                // Audio only: the first "frame" is the first decoded audio.
                if buffers.audioEnded, !sawAudio {
                    endWithNothing(buffers, now: now, into: &out)
                    return
                }
                guard sawAudio else { return }
                presentedInSerial = true
            }
            reportFirstFrameIfDue(into: &out)
        }
        becomeReadyIfBuffered(now: now, buffers: buffers, queue: queue, into: &out)
    }

    private mutating func stepPlaying(now: MediaTime, buffers: Buffers,
                                      queue: inout ArraySlice<FrameHead>, into out: inout Step) {
        if phase == .stalled {
            if isBuffered(buffers, queue: queue) {
                phase = .playing
                stallReported = false
                out.actions.append(.reportStall(false))
                out.actions += retime(at: now)
            }
            return
        }
        guard timeRuns else { return }
        let media = anchor.media(at: now)
        if hasVideo { presentDue(at: media, buffers: buffers, queue: &queue, into: &out) }
        // A frame of the next pass on screen has taken time there too (the audio clock may
        // read a block behind it).
        let shown = hasVideo ? lastFrame.map { $0.pts + videoOffset } : nil
        reportPassesCrossed(at: shown.map { max($0, media) } ?? media, into: &out)
        currentTime = clamp(media)
        out.actions.append(.tick(itemTime(of: currentTime)))

        let lastEnd = lastFrameEnd
        let videoStarved = hasVideo && queue.isEmpty && !buffers.videoEnded && media >= (lastEnd ?? .zero)
        if videoStarved || (hasAudio && buffers.audioStarved) {
            phase = .stalled
            stallReported = true
            out.actions.append(.reportStall(true))
            out.actions += retime(at: now)
            return
        }
        let videoDone = !hasVideo || (buffers.videoEnded && queue.isEmpty)
        let audioDone = !hasAudio || (buffers.audioEnded && buffers.audioQueued == .zero)
        guard videoDone, audioDone else { return }
        if hasVideo, let lastEnd, media < lastEnd { return }
        let end = lastEnd ?? media
        let duration = streams?.duration ?? .indefinite
        currentTime = duration.isNumeric || loopPass != nil ? max(currentTime, clamp(end)) : end
        phase = .ended
        out.actions.append(.reportEnd)
        out.actions += retime(at: now)
    }

    /// Drops the frames that are late and presents the one that is due (ffplay's rule,
    /// ``FrameSelection``), after re-timing video to the clock across a timestamp jump.
    private mutating func presentDue(at media: MediaTime, buffers: Buffers,
                                     queue: inout ArraySlice<FrameHead>, into out: inout Step) {
        guard let head = queue.first else { return }
        let threshold = configuration.discontinuity
        let headTime = head.pts + videoOffset
        if headTime > media + threshold || headTime < media - threshold {
            videoOffset = media - head.pts
        }
        let times = queue.map { $0.pts + videoOffset }
        let choice = FrameSelection.select(pts: times, now: media, slack: configuration.presentSlack)
        if choice.presentNext {
            let shown = queue[queue.startIndex + choice.drop]
            queue.removeFirst(choice.drop + 1)
            present(shown, dropping: choice.drop, first: false, audioClock: buffers.audioClock, into: &out)
        } else if choice.drop > 0 {
            queue.removeFirst(choice.drop)
            droppedFrames += choice.drop
            out.actions.append(.drop(choice.drop))
        }
    }

    // MARK: Helpers

    var lastFrameEnd: MediaTime? {
        guard let frame = lastFrame else { return nil }
        return frame.pts + (frame.duration ?? streams?.frameDuration ?? MediaTime(value: 1, timescale: 30)) + videoOffset
    }

    private mutating func present(_ head: FrameHead, dropping: Int, first: Bool, audioClock: MediaTime?,
                                  into out: inout Step) {
        lastFrame = head
        presentedInSerial = true
        presentedFrames += 1
        droppedFrames += dropping
        let offset = audioClock.map { head.pts + videoOffset - $0 }
        out.actions.append(.present(dropping: dropping, firstOfSequence: first, avOffset: offset))
    }

    private mutating func reportFirstFrameIfDue(into out: inout Step) {
        guard !firstFrameReported, presentedInSerial else { return }
        firstFrameReported = true
        out.actions.append(.reportFirstFrame)
    }

    private func isBuffered(_ buffers: Buffers, queue: ArraySlice<FrameHead>) -> Bool {
        let frames = hasRun ? configuration.startVideoFrames : configuration.idleStartVideoFrames
        let videoReady = !hasVideo || buffers.videoEnded || queue.count >= frames
        let audioReady = !hasAudio || buffers.audioEnded || buffers.audioQueued >= configuration.startAudio
        return videoReady && audioReady
    }

    private mutating func becomeReadyIfBuffered(now: MediaTime, buffers: Buffers, queue: ArraySlice<FrameHead>,
                                                into out: inout Step) {
        guard presentedInSerial, isBuffered(buffers, queue: queue) else { return }
        phase = stallReported ? .stalled : .playing
        if !readyReported {
            readyReported = true
            out.actions.append(.reportReady)
        }
        out.actions += retime(at: now)
    }

    /// Every stream ended having given nothing: the end of an input that held no media, else
    /// a failure (nothing in it decodes).
    private mutating func endWithNothing(_ buffers: Buffers, now: MediaTime, into out: inout Step) {
        guard buffers.inputHeldNoMedia else {
            fail(.nothingDecoded, now: now, into: &out)
            return
        }
        phase = .ended
        if !readyReported {
            readyReported = true
            out.actions.append(.reportReady)
        }
        out.actions.append(.reportEnd)
        out.actions += retime(at: now)
    }

    private mutating func fail(_ reason: NoProgress, now: MediaTime, into out: inout Step) {
        phase = .failed
        out.actions.append(.reportNoProgress(reason))
        out.actions += retime(at: now)
    }

    /// Where time is now, kept as the current time before time stops or changes pace.
    private mutating func freezeTime(at now: MediaTime) {
        if anchor.isRunning { currentTime = clamp(anchor.media(at: now)) }
    }

    /// Re-anchors time at the current time, running or not as the phase and the owner
    /// say, and tells the audio device when that changes.
    private mutating func retime(at now: MediaTime) -> [Action] {
        freezeTime(at: now)
        anchor = TimelineAnchor(media: currentTime, host: now, rate: rate, isRunning: timeRuns)
        let audible = timeRuns && hasAudio
        guard audioRunning != audible else { return [] }
        audioRunning = audible
        return [.runAudio(audible)]
    }

    private func schedule(now: MediaTime, queue: ArraySlice<FrameHead>, into out: inout Step) {
        switch phase {
        case .prerolling, .seeking, .stalled:
            out.wantsData = true
        case .playing where timeRuns:
            var next = now + configuration.tickInterval
            if let head = queue.first {
                if let due = anchor.host(forMedia: head.pts + videoOffset) {
                    next = min(next, due > now ? due : now + configuration.presentSlack)
                }
            } else if hasVideo {
                out.wantsData = true
            }
            out.wake = next
        default:
            break
        }
    }
}
