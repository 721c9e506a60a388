import Foundation
import ReelCore

extension PlaybackEngine {
    /// The audio device may consume (time runs) or must play silence. Push sinks (files, null,
    /// recorders) take a block each time the clock passes its due time: a steady pace in real
    /// time and in simulated time alike. A stop lets the ring fade out what sounds: a pulling
    /// device plays the fade in its next callback; a push sink is handed it by one more step.
    func runAudioLocked(_ run: Bool, _ state: inout EngineState, now: MediaTime) {
        guard let ring, let sink = audioSink else { return }
        ring.setRunning(run)
        if run { state.audioHasRun = true }
        guard case .push = sink.mode else { return }
        state.audioStepAction?.cancel()
        state.audioStepAction = nil
        state.audioStepStart = nil
        guard run else {
            if ring.isSounding {
                state.audioStepAction = clock.schedule(at: now) { [weak self] in self?.audioFadeOutStep() }
            }
            return
        }
        state.audioStepStart = (now, 0)
        scheduleAudioStepLocked(&state)
    }

    /// A push sink's fade-out after a stop: the ramp's frames, handed over as a device would
    /// play them, and nothing after (the sink's file holds no silence for a pause).
    private func audioFadeOutStep() {
        guard let ring, let sink = audioSink else { return }
        let stillStopped = monitor.update { state -> Bool in
            state.audioStepAction = nil
            return !state.closing && state.audioStepStart == nil
        }
        guard stillStopped, ring.rampFrames > 0 else { return }
        var block = [Float](repeating: 0, count: ring.rampFrames * sink.format.channels)
        let taken = block.withUnsafeMutableBufferPointer { buffer in
            ring.consume(into: buffer.baseAddress!, frames: ring.rampFrames, hostNanos: Self.nanoseconds(clock.now))
        }
        if taken > 0 { sink.write(Array(block.prefix(taken * sink.format.channels))) }
        // Room in the ring: the renderer looks again.
        monitor.update { _ in }
    }

    private func scheduleAudioStepLocked(_ state: inout EngineState) {
        guard let sink = audioSink, !state.closing, let start = state.audioStepStart else { return }
        let due = start.host + MediaTime(value: start.frames, timescale: Int32(sink.format.sampleRate))
        state.audioStepAction = clock.schedule(at: due) { [weak self] in self?.audioPushStep() }
    }

    /// One block for a push sink: taken from the ring as a device would, written outside the lock.
    private func audioPushStep() {
        guard let ring, let sink = audioSink, case .push(let blockFrames) = sink.mode else { return }
        let now = clock.now
        let running = monitor.update { state -> Bool in
            state.audioStepAction = nil
            return !state.closing && state.audioStepStart != nil
        }
        guard running else { return }
        var block = [Float](repeating: 0, count: blockFrames * sink.format.channels)
        block.withUnsafeMutableBufferPointer { buffer in
            _ = ring.consume(into: buffer.baseAddress!, frames: blockFrames, hostNanos: Self.nanoseconds(now))
        }
        sink.write(block)
        monitor.update { state in
            guard var start = state.audioStepStart else { return }
            start.frames += Int64(blockFrames)
            state.audioStepStart = start
            noteRateChangeHeardLocked(&state)
            scheduleAudioStepLocked(&state)
            // Room in the ring: the renderer wakes through this update.
        }
    }

    static func nanoseconds(_ time: MediaTime) -> Int64 {
        time.convertScale(1_000_000_000, method: .halfAwayFromZero).value
    }

    /// The media time being heard now: the audio of the ring position the device took last,
    /// plus what played since (the device's latency later), no further than what it took.
    /// `nil` when no audio of the current serial is being heard.
    func audioClockLocked(_ state: EngineState, now: MediaTime) -> MediaTime? {
        guard let ring, let sink = audioSink, ring.isRunning, let report = ring.lastReport() else { return nil }
        if state.audioRenderedEndSerial == state.serial, ring.queuedFrames == 0 { return nil }
        guard let segment = state.audioSegments.last(where: { $0.serial == state.serial && $0.start <= report.start }) else {
            return nil
        }
        let heardAt = MediaTime(value: report.hostNanos, timescale: 1_000_000_000) + sink.latency
        let elapsed = now - heardAt
        let start = segment.time(at: report.start)
        let media = start + (segment.rate == 1 ? elapsed : elapsed.multiplied(byFloat64: segment.rate))
        return min(media, segment.time(at: report.start + report.frames))
    }

    /// Once the device takes the first sample rendered at a new rate, records how long after
    /// the change was asked for it is heard.
    func noteRateChangeHeardLocked(_ state: inout EngineState) {
        guard let ring, let sink = audioSink, let pending = state.pendingRateChange, let position = pending.position,
              let report = ring.lastReport(), report.start + report.frames > position else { return }
        let offset = MediaTime(value: Int64(max(0, position - report.start)), timescale: Int32(sink.format.sampleRate))
        let heard = MediaTime(value: report.hostNanos, timescale: 1_000_000_000) + sink.latency + offset
        state.rateChangeLatencies.append(max(.zero, heard - pending.askedAt))
        state.pendingRateChange = nil
    }
}

/// What a pulling audio device calls for samples: the consumer side of a player's ring.
/// `render(into:frameCount:)` is real-time safe (no lock, no allocation).
public final class AudioPullSource: Sendable {
    private let ring: AudioRing
    private let clock: any EngineClock

    init(ring: AudioRing, clock: any EngineClock) {
        self.ring = ring
        self.clock = clock
    }

    /// Fills `frameCount` interleaved frames at `buffer`: what the player rendered, or silence
    /// while it is paused, seeking or starved. For device callbacks.
    package func render(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) {
        let nanos = PlaybackEngine.nanoseconds(clock.now)
        ring.consume(into: buffer, frames: frameCount, hostNanos: nanos)
    }

    /// The next `frameCount` frames, interleaved (a copy; for tests and tools, not callbacks).
    public func render(frameCount: Int) -> [Float] {
        var samples = [Float](repeating: 0, count: frameCount * ring.channels)
        samples.withUnsafeMutableBufferPointer { render(into: $0.baseAddress!, frameCount: frameCount) }
        return samples
    }

    /// Times the device found nothing to play while the player was running.
    public var underruns: Int { ring.underruns }
}
