import Foundation
import ReelCore

/// The audio renderer's own state: touched only by the one thread that renders.
final class AudioRenderState: @unchecked Sendable {
    var serial = -1
    var position: MediaTime?
    var carry: [Float] = []
    var stretcher: TimeStretcher?
    var volume: Float = 1
}

extension PlaybackEngine {
    /// Renders `frameCount` frames of output: media samples from the queue, through
    /// the time-stretcher when the rate is not 1, with the volume applied. Updates
    /// the audio clock so video follows what is heard. Silence while paused or starved.
    func renderAudio(frameCount: Int) -> [Float] {
        guard let sink = audioSink else { return [] }
        let channels = sink.format.channels
        let sampleRate = sink.format.sampleRate
        let wanted = frameCount * channels
        let state = audioRender

        lock.lock()
        guard audioRunning, hasAudio, !closing, activeSeek.map({ $0.completed || $0.serial != serial }) ?? true else {
            lock.unlock()
            return [Float](repeating: 0, count: wanted)
        }
        let tempo = rate
        let currentSerial = serial
        let gain = volumeLocked
        lock.unlock()

        if state.serial != currentSerial {
            state.serial = currentSerial
            state.carry = []
            state.position = nil
            state.stretcher = nil
        }
        if tempo == 1, state.stretcher != nil {
            state.stretcher = nil
            state.carry = []
        }

        var output = state.carry
        state.carry = []
        var startPosition = state.position
        var starved = false
        while output.count < wanted {
            // Take media samples: about what this pull still needs, scaled by tempo.
            let needFrames = max(256, Int(Double((wanted - output.count) / channels) * tempo))
            lock.lock()
            guard serial == currentSerial, !closing else { lock.unlock(); break }
            var input: [Float] = []
            var inputPts: MediaTime?
            while input.count < needFrames * channels, !audioChunks.isEmpty {
                var chunk = audioChunks[0]
                guard chunk.serial == currentSerial else { audioChunks.removeFirst(); continue }
                if inputPts == nil { inputPts = chunk.pts }
                let take = min(chunk.samples.count, needFrames * channels - input.count)
                input.append(contentsOf: chunk.samples[0..<take])
                let takenTime = MediaTime(value: Int64(take / channels), timescale: Int32(sampleRate))
                audioChunksDuration = max(.zero, audioChunksDuration - takenTime)
                if take == chunk.samples.count {
                    audioChunks.removeFirst()
                } else {
                    chunk.samples.removeFirst(take)
                    chunk.pts = chunk.pts + takenTime
                    audioChunks[0] = chunk
                }
            }
            let ended = audioEndedSerial == currentSerial
            lock.broadcast()
            lock.unlock()
            if input.isEmpty {
                starved = !ended
                break
            }
            if state.position == nil {
                state.position = inputPts
                startPosition = startPosition ?? inputPts
            }
            if tempo == 1 {
                output.append(contentsOf: input)
            } else {
                do {
                    if let stretcher = state.stretcher {
                        try stretcher.setTempo(tempo)
                    } else {
                        state.stretcher = try TimeStretcher(format: sink.format, tempo: tempo)
                    }
                    output.append(contentsOf: try state.stretcher!.process(input))
                } catch {
                    logger.debug("time-stretch failed, playing at pitch: \(error)")
                    output.append(contentsOf: input)
                }
            }
        }
        if output.count > wanted {
            state.carry = Array(output[wanted...])
            output.removeSubrange(wanted...)
        }
        let produced = output.count / channels
        if output.count < wanted {
            output.append(contentsOf: [Float](repeating: 0, count: wanted - output.count))
        }
        if gain != 1 {
            for i in 0..<output.count { output[i] *= gain }
        }

        let now = clock.now
        lock.lock()
        if serial == currentSerial, audioRunning {
            if let start = startPosition ?? state.position, produced > 0 {
                audioAnchor = TimelineAnchor(media: start, host: now + sink.latency, rate: tempo, isRunning: true)
            }
            if starved { audioStarved = true }
        }
        lock.unlock()
        if let position = state.position, produced > 0 {
            let advanced = MediaTime(value: Int64(produced), timescale: Int32(sampleRate))
            state.position = position + (tempo == 1 ? advanced : advanced.multiplied(byFloat64: tempo))
        }
        return output
    }

    /// Push-mode sinks (files, null) take a block each time the clock passes its
    /// due time: a steady pace in real time, and in simulated time alike.
    func scheduleAudioStep(restart: Bool) {
        guard let sink = audioSink, case .push(let blockFrames) = sink.mode else { return }
        lock.lock()
        defer { lock.unlock() }
        guard !closing, audioRunning else { return }
        let now = clock.now
        if restart || audioStepStart == nil {
            audioStepScheduled?.cancel()
            audioStepStart = (now, 0)
        } else if audioStepScheduled != nil {
            return
        }
        guard let start = audioStepStart else { return }
        let due = start.host + MediaTime(value: start.frames, timescale: Int32(sink.format.sampleRate))
        audioStepScheduled = clock.schedule(at: due) { [weak self] in self?.audioStep(blockFrames: blockFrames) }
    }

    private func audioStep(blockFrames: Int) {
        guard let sink = audioSink else { return }
        if isManualClock { activity.waitUntilSettled() }
        let running: Bool = lock.withLock {
            audioStepScheduled = nil
            return audioRunning && !closing
        }
        guard running else { return }
        let samples = renderAudio(frameCount: blockFrames)
        sink.write(samples)
        lock.withLock {
            if var start = audioStepStart {
                start.frames += Int64(blockFrames)
                audioStepStart = start
            }
        }
        scheduleAudioStep(restart: false)
    }
}
