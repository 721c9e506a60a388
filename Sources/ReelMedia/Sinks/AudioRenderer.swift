import Foundation
import ReelCore

/// The audio render stage: a thread of the player that takes decoded audio (already in the
/// device's format), stretches it to the rate with libavfilter's `atempo` (pitch kept),
/// applies the volume, and writes it into the ``AudioRing`` the device reads. The device
/// callback only copies out of the ring.
///
/// A seek flushes the ring. A rate or volume change flushes it too, keeping one device buffer
/// of what was rendered, and renders again from the media time where that stops, so the change
/// is heard within about two device buffers rather than after everything already in the ring,
/// and the device never finds the ring empty meanwhile.
///
/// Not `Sendable`: the engine makes it on the render thread, where it stays; only `ring` (a
/// `Sendable` ``AudioRing``) is shared. What it shares with the owner (segments, backlog, the
/// end) goes through the engine's monitor.
final class AudioRenderer {
    let ring: AudioRing
    let format: AudioFormat
    /// The device pulls on its own thread and says nothing when it frees room: look again
    /// every few milliseconds while the ring is full.
    let pullMode: Bool
    /// Render when at least this much room is free.
    let minimumRoom: Int
    /// Source frames rendered at a time. Fixed, so what the stretcher makes of the source
    /// does not depend on how the decoded audio happened to arrive (deterministic runs).
    static let block = 1024

    private var serial = -1
    private var rate = 1.0
    private var volume: Float = 1
    private var stretcher: TimeStretcher?
    private var source: SourceLog
    /// Rendered samples that did not fit in the ring yet.
    private var carry: [Float] = []
    /// The serial's last sample is in the ring.
    private var finished = false
    private var segment: AudioSegment?
    /// Loudness levelling, when on: the gain of every block (see ``LoudnessLeveller``).
    private var leveller: LoudnessLeveller?
    /// Where the audio measured so far ends (decoded audio is measured once, ahead or as taken).
    private var measuredThrough: MediaTime?

    /// Frames of the old audio a rate or volume change leaves to play: one device buffer (a
    /// push sink's block), and at least the ring's ramp, which fades them out.
    let keepOnFlush: Int

    init(ring: AudioRing, format: AudioFormat, mode: AudioSinkMode, deviceLatency: MediaTime,
         levelling: LoudnessLevelling? = nil, itemLoudness: ItemLoudness? = nil) {
        self.ring = ring
        leveller = levelling.map { LoudnessLeveller(settings: $0, item: itemLoudness, format: format) }
        self.format = format
        pullMode = mode == .pull
        // A pull device's buffer, or a push sink's block: the jump then falls at the end of
        // what the consumer takes next, and the new audio has until its following take to be
        // written (the skipped frames are the consumer's until it jumps).
        let buffer = switch mode {
        case .pull: Int((deviceLatency.seconds * Double(format.sampleRate)).rounded(.up))
        case .push(let blockFrames): blockFrames
        }
        keepOnFlush = max(ring.rampFrames, buffer)
        minimumRoom = min(512, ring.capacity / 4)
        source = SourceLog(channels: format.channels, sampleRate: format.sampleRate)
    }

    private enum Job {
        case stop
        /// A new serial: everything rendered is stale.
        case restart(serial: Int, rate: Double, volume: Float)
        /// The same audio at a new pace or gain, from media time `from`.
        case retime(rate: Double, volume: Float, from: MediaTime?)
        /// `measure`: decoded audio to measure first (the chunks taken, and before the gain is
        /// decided, everything decoded ahead of them).
        case render(chunks: [AudioChunk], ended: Bool, measure: [AudioChunk])
        case idle
    }

    /// The render thread's loop.
    func run(engine: PlaybackEngine, worker: PipelineMonitor<EngineState>.Worker) {
        defer { engine.monitor.exit(worker) }
        while true {
            switch nextJob(engine, worker) {
            case .stop:
                return
            case .idle:
                continue
            case .restart(let newSerial, let newRate, let newVolume):
                serial = newSerial
                rate = newRate
                volume = newVolume
                source.removeAll()
                carry = []
                stretcher = nil
                finished = false
                segment = nil
            case .retime(let newRate, let newVolume, let from):
                rate = newRate
                volume = newVolume
                carry = []
                stretcher = nil
                if let from { source.rewind(to: from) }
            case .render(let chunks, let ended, let measure):
                for chunk in chunks { source.append(chunk) }
                level(measure, engine: engine)
                render(ended: ended, engine: engine)
            }
        }
    }

    private func nextJob(_ engine: PlaybackEngine, _ worker: PipelineMonitor<EngineState>.Worker) -> Job {
        let (mySerial, myRate, myVolume) = (serial, rate, volume)
        let hasLocal = source.pendingFrames >= Self.block || !carry.isEmpty
        let done = finished
        let room = minimumRoom
        let ring = ring
        let starting = segment == nil
        let measuring = leveller?.needsAudioAhead == true
        let ahead = LoudnessLeveller.audioAhead
        let ready: @Sendable (EngineState) -> Bool = { state in
            if state.closing || state.failure != nil || state.serial != mySerial { return true }
            if state.audioRate != myRate || state.volume != myVolume { return true }
            if starting, state.audioStart == .pending { return false }
            // The gain is decided on the audio decoded ahead: wait for enough of it, unless
            // the audio ends first or time already runs.
            if measuring, state.audioChunksDuration < ahead, state.audioEndedSerial != state.serial, !ring.isRunning {
                return false
            }
            guard ring.freeFrames >= room else { return false }
            return hasLocal || !state.audioChunks.isEmpty || (state.audioEndedSerial == state.serial && !done)
        }
        let take: (inout EngineState) -> Job = { state in self.takeJob(&state, engine: engine) }
        if pullMode {
            return engine.monitor.wait(worker, until: ready, orAfter: 0.005, then: take) ?? .idle
        }
        return engine.monitor.wait(worker, until: ready, then: take)
    }

    /// Decides the next job with the engine's state in hand, publishing what the owner needs.
    private func takeJob(_ state: inout EngineState, engine: PlaybackEngine) -> Job {
        if state.closing || state.failure != nil { return .stop }
        if state.serial != serial {
            // A seek: the old audio fades out over the ring's ramp if it is sounding.
            ring.flush(keeping: ring.rampFrames, discardWhenSilent: true)
            state.rendererBacklog = 0
            state.audioSegments.removeAll { $0.serial != state.serial }
            engine.scheduleStepLocked(&state, at: engine.clock.now)
            return .restart(serial: state.serial, rate: state.audioRate, volume: state.volume)
        }
        if state.audioRate != rate || state.volume != volume {
            return retimeLocked(&state, engine: engine)
        }
        let need = Int((Double(ring.freeFrames) * rate).rounded(.up)) + Self.block - source.pendingFrames
        var chunks: [AudioChunk] = []
        var measure: [AudioChunk] = []
        var taken = 0
        let start = state.audioStart
        while taken < need, start != .pending || segment != nil, !state.audioChunks.isEmpty {
            let chunk = state.audioChunks.removeFirst()
            state.audioChunksDuration = max(.zero, state.audioChunksDuration - chunk.duration)
            guard chunk.serial == serial else { continue }
            if segment == nil {
                let lead = leadingSilence(before: chunk, startingAt: start, upTo: state.machine.configuration.discontinuity)
                // The item's own first sample plays as it is; a start anywhere else fades in.
                if let own = state.itemAudioStart, chunk.pts <= own + MediaTime(value: 1, timescale: 1000) {
                    ring.markUnramped(at: ring.writePosition)
                }
                startSegmentLocked(&state, pts: lead?.pts ?? chunk.pts)
                if let lead {
                    chunks.append(lead)
                    taken += lead.frameCount
                }
            }
            chunks.append(chunk)
            measure.append(chunk)
            taken += chunk.frameCount
        }
        if let leveller, !leveller.decided { measure += state.audioChunks.filter { $0.serial == serial } }
        state.rendererBacklog = source.pendingFrames + taken + carry.count / format.channels
        let ended = state.audioEndedSerial == serial && state.audioChunks.isEmpty
        return .render(chunks: chunks, ended: ended, measure: measure)
    }

    private func retimeLocked(_ state: inout EngineState, engine: PlaybackEngine) -> Job {
        // The device plays on for one of its buffers of what it has (so it never finds the ring
        // empty), then the audio at the new pace takes over from exactly there.
        let (stop, start) = ring.flush(keeping: keepOnFlush)
        var from: MediaTime?
        if let current = segment {
            from = current.time(at: max(current.start, stop))
            let next = AudioSegment(serial: serial, start: start, pts: from!, rate: state.audioRate, sampleRate: format.sampleRate)
            segment = next
            state.audioSegments.append(next)
            if state.pendingRateChange != nil { state.pendingRateChange?.position = start }
        }
        finished = false
        if state.audioRenderedEndSerial == serial { state.audioRenderedEndSerial = -1 }
        engine.scheduleStepLocked(&state, at: engine.clock.now)
        return .retime(rate: state.audioRate, volume: state.volume, from: from)
    }

    /// The silence that leads a serial's first audio when it starts after the presentation
    /// does (audio starting after video, as in most phone recordings: AAC priming in an edit
    /// list), so the audio clock starts with video's first frame instead of skipping the
    /// frames before the first sample. `nil` when audio starts in time, or more than `limit`
    /// late (the presentation's no-sync threshold: a timestamp jump, not a late start).
    private func leadingSilence(before chunk: AudioChunk, startingAt start: EngineState.AudioStart,
                                upTo limit: MediaTime) -> AudioChunk? {
        guard case .at(let time) = start, chunk.pts > time, chunk.pts - time <= limit else { return nil }
        let frames = (chunk.pts - time).convertScale(Int32(format.sampleRate), method: .halfAwayFromZero).value
        guard frames > 0 else { return nil }
        return AudioChunk(samples: [Float](repeating: 0, count: Int(frames) * format.channels), pts: time,
                          serial: chunk.serial, channels: format.channels, sampleRate: format.sampleRate)
    }

    private func startSegmentLocked(_ state: inout EngineState, pts: MediaTime) {
        // A rate change asked while no segment ran (in a seek, a loop) is heard from the first
        // sample after it, when that sample is at the new rate.
        if let pending = state.pendingRateChange, pending.position == nil, rate == state.audioRate {
            state.pendingRateChange?.position = ring.writePosition
        }
        let next = AudioSegment(serial: serial, start: ring.writePosition, pts: pts, rate: rate, sampleRate: format.sampleRate)
        segment = next
        state.audioSegments.append(next)
        if state.audioSegments.count > 16 { state.audioSegments.removeFirst(state.audioSegments.count - 16) }
    }

    /// Renders what fits into the ring (outside the lock), a block at a time, then tells the owner.
    private func render(ended: Bool, engine: PlaybackEngine) {
        while writeCarry(), ring.freeFrames >= minimumRoom {
            var output: [Float]
            if source.pendingFrames >= Self.block {
                let input = Array(source.take(frames: Self.block))
                output = rate == 1 ? input : stretch(input)
            } else if ended, !finished {
                // The end: what is left, and what the stretcher still holds.
                let input = Array(source.take(frames: source.pendingFrames))
                output = rate == 1 ? input : stretch(input) + ((try? stretcher?.finish()) ?? [])
                finished = true
            } else {
                break
            }
            applyGain(&output)
            carry = output
        }
        publish(engine)
    }

    /// Measures what is new in `chunks` (outside the lock), decides the item's gain before its
    /// first block, refines it as more plays, and has the owner report each decision.
    private func level(_ chunks: [AudioChunk], engine: PlaybackEngine) {
        guard leveller != nil else { return }
        for chunk in chunks {
            let end = chunk.pts + chunk.duration
            if let through = measuredThrough, end <= through { continue }
            leveller!.measure(chunk.samples)
            measuredThrough = end
        }
        var report: LoudnessReport?
        if !leveller!.decided {
            // Decided with the first audio to render, from all that is decoded by then.
            guard source.pendingFrames > 0 else { return }
            report = leveller!.decide()
        } else {
            report = leveller!.refine()
        }
        guard let report else { return }
        engine.monitor.update { state in
            state.loudnessReports.append(report)
            engine.scheduleStepLocked(&state, at: engine.clock.now)
        }
    }

    /// The volume and the levelling gain, moving linearly across the block when it changes.
    private func applyGain(_ output: inout [Float]) {
        let frames = output.count / format.channels
        let (start, end) = leveller?.gains(over: frames) ?? (1, 1)
        let from = start * volume, to = end * volume
        guard from != 1 || to != 1, frames > 0 else { return }
        let step = (to - from) / Float(frames)
        let channels = format.channels
        for frame in 0..<frames {
            let gain = from + step * Float(frame)
            for c in 0..<channels { output[frame * channels + c] *= gain }
        }
    }

    private func stretch(_ input: [Float]) -> [Float] {
        do {
            if stretcher == nil { stretcher = try TimeStretcher(format: format, tempo: rate) }
            return try stretcher!.process(input)
        } catch {
            // Play at pitch rather than not at all.
            return input
        }
    }

    /// Writes what is carried; `true` when all of it fit.
    private func writeCarry() -> Bool {
        guard !carry.isEmpty else { return true }
        guard ring.freeFrames > 0 else { return false }
        let written = carry.withUnsafeBufferPointer { ring.write($0) }
        carry.removeFirst(written * format.channels)
        return carry.isEmpty
    }

    private func publish(_ engine: PlaybackEngine) {
        if let segment { source.prune(before: segment.time(at: max(segment.start, ring.consumePosition))) }
        let backlog = source.pendingFrames + carry.count / format.channels
        let (mySerial, done) = (serial, finished && carry.isEmpty)
        if done { ring.setFinished(true) }
        engine.monitor.update { state in
            guard state.serial == mySerial else { return }
            state.rendererBacklog = backlog
            if done, state.audioRenderedEndSerial != mySerial {
                state.audioRenderedEndSerial = mySerial
            }
            engine.kickOwnerLocked(&state)
        }
    }
}

/// Decoded audio the renderer has taken, kept until the device has played it so a rate
/// change can render it again: interleaved samples from `baseTime`, and a cursor at the
/// next frame to render.
struct SourceLog {
    let channels: Int
    let sampleRate: Int
    private var samples: [Float] = []
    private var baseTime: MediaTime?
    private var cursor = 0

    init(channels: Int, sampleRate: Int) {
        self.channels = channels
        self.sampleRate = sampleRate
    }

    private var frames: Int { samples.count / channels }
    var pendingFrames: Int { frames - cursor }

    mutating func removeAll() {
        samples = []
        baseTime = nil
        cursor = 0
    }

    /// Appends a chunk; a chunk that does not follow on in time re-times what is kept.
    mutating func append(_ chunk: AudioChunk) {
        if let base = baseTime {
            let expected = base + MediaTime(value: Int64(frames), timescale: Int32(sampleRate))
            if MediaTime.abs(chunk.pts - expected) > MediaTime(value: 1, timescale: 50) {
                baseTime = chunk.pts - MediaTime(value: Int64(frames), timescale: Int32(sampleRate))
            }
        } else {
            baseTime = chunk.pts
        }
        samples.append(contentsOf: chunk.samples)
    }

    /// Up to `count` frames from the cursor, which moves past them.
    mutating func take(frames count: Int) -> ArraySlice<Float> {
        let n = max(0, min(count, pendingFrames))
        defer { cursor += n }
        return samples[(cursor * channels)..<((cursor + n) * channels)]
    }

    private func index(of time: MediaTime) -> Int? {
        guard let base = baseTime else { return nil }
        let frames = (time - base).seconds * Double(sampleRate)
        guard frames.isFinite else { return nil }
        return Int(frames.rounded())
    }

    /// Moves the cursor back (or forward) to `time`, within what is kept.
    mutating func rewind(to time: MediaTime) {
        guard let index = index(of: time) else { return }
        cursor = max(0, min(frames, index))
    }

    /// Forgets what lies before `time` and was rendered, once there is enough of it to bother.
    mutating func prune(before time: MediaTime) {
        guard let index = index(of: time) else { return }
        let drop = max(0, min(index, cursor))
        guard drop >= sampleRate / 4 else { return }
        samples.removeFirst(drop * channels)
        cursor -= drop
        baseTime = baseTime.map { $0 + MediaTime(value: Int64(drop), timescale: Int32(sampleRate)) }
    }
}
