import Foundation
import ReelCore
import Synchronization

/// Rendered audio between the player's audio render thread (the one producer) and the
/// device (the one consumer): a preallocated single-producer single-consumer ring of
/// interleaved float samples, after mpv's `audio/out/buffer.c`.
///
/// The consumer side — ``consume(into:frames:hostNanos:)`` — is real-time code: it copies
/// what is there (or silence), takes no lock, allocates nothing and calls nothing that may.
/// Positions are counts of frames since the ring was made (they never wrap), so the two
/// sides agree through atomics:
///
/// - `written` (the producer's): frames written so far.
/// - `consumed` (the consumer's): frames handed to the device so far.
/// - `jumpFrom`, `jumpTo` (the producer's): a flush. The consumer plays up to `jumpFrom`,
///   then goes on at `jumpTo`, where the new audio starts. A seek jumps at once; a rate or
///   volume change keeps a device buffer of the old audio (`jumpFrom` a little ahead of the
///   consumer), so the device never finds the ring empty while the new audio is rendered,
///   and the new audio takes over exactly where the old one stops. The producer never
///   writes where the consumer may still read: the skipped frames stay the consumer's
///   until it has jumped past them.
///
/// What the consumer took last — where it started, how much, and the host time — is
/// published through a sequence lock, from which the owner derives the audio clock.
///
/// **Ramps** (no clicks): the sound never starts or stops mid-waveform. The consumer keeps a
/// gain level that follows a precomputed raised-cosine table (`rampFrames` long, made at init):
/// up from silence when told to run, down to silence over the next `rampFrames` frames when
/// told to stop (it goes on consuming only for that), and down to silence before a jump, then
/// up from it after (a flush keeps the frames to fade over; see ``flush(keeping:discardWhenSilent:)``).
/// What the consumer does with them is a table lookup and one multiply per sample, only while a
/// ramp runs; everything that decides a ramp (running, the jump) is set by the other side.
///
/// Checked `Sendable`: its indices are atomics and its samples a ``SampleBuffer`` (raw
/// memory, ordered by those atomics), so the callback path stays lock- and allocation-free.
final class AudioRing: Sendable {
    let channels: Int
    /// Frames the ring holds (a power of two).
    let capacity: Int
    private let mask: Int
    /// Producer writes `[written, written + free)`, consumer reads `[consumed, written)`;
    /// the atomics order the two.
    private let storage: SampleBuffer
    private var samples: UnsafeMutablePointer<Float> { storage.base }

    private let written = Atomic<Int>(0)
    private let consumed = Atomic<Int>(0)
    private let jumpFrom = Atomic<Int>(0)
    private let jumpTo = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    /// The producer wrote the last sample of the stream: running dry after it is the end,
    /// not an underrun.
    private let finished = Atomic<Bool>(false)
    /// Bumped each time the consumer is told to run: reports from before are stale.
    private let runGeneration = Atomic<Int>(0)

    // The consumer's last report, under a sequence lock (odd while it writes).
    private let reportSequence = Atomic<Int>(0)
    private let reportStart = Atomic<Int>(0)
    private let reportFrames = Atomic<Int>(0)
    private let reportHost = Atomic<Int64>(0)
    private let reportGeneration = Atomic<Int>(-1)

    private let underrunCount = Atomic<Int>(0)

    /// Frames a start or a stop is ramped over (0: none).
    let rampFrames: Int
    /// `rampFrames + 1` gains, 0 to 1 on a raised cosine.
    private let ramp: SampleBuffer
    /// The consumer's own: where on `ramp` the next frame's gain is (`rampFrames`: full).
    private let level = Atomic<Int>(0)
    /// The pending jump is a seek's: a consumer that is silent skips the frames kept before it.
    private let jumpDiscardable = Atomic<Bool>(false)
    /// Where the item's own first sample is written (the producer's; -1: nowhere): a start
    /// there is the item's own edge and plays at full level.
    private let unrampedAt = Atomic<Int>(-1)

    /// Frames per second (for timing a report inside a buffer).
    let sampleRate: Int

    /// The raised-cosine ramp Reel uses at every start and stop: 5 ms.
    static func rampFrames(sampleRate: Int) -> Int { max(1, sampleRate / 200) }

    init(channels: Int, capacity minimum: Int, sampleRate: Int = 48_000, rampFrames: Int = 0) {
        self.channels = channels
        self.sampleRate = sampleRate
        self.rampFrames = max(0, rampFrames)
        ramp = SampleBuffer(count: self.rampFrames + 1)
        for k in 0...self.rampFrames {
            let x = self.rampFrames == 0 ? 1 : Double(k) / Double(self.rampFrames)
            ramp.base[k] = Float(0.5 - 0.5 * cos(Double.pi * x))
        }
        var size = 1
        while size < minimum { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = SampleBuffer(count: size * channels)
    }

    // MARK: Producer (the audio render thread)

    /// Frames written so far.
    var writePosition: Int { written.load(ordering: .relaxed) }

    /// Frames the producer may write now.
    var freeFrames: Int {
        capacity - (written.load(ordering: .relaxed) - consumed.load(ordering: .acquiring))
    }

    /// Writes up to `frames` frames from `source` (interleaved); returns how many fit.
    func write(_ source: UnsafeBufferPointer<Float>) -> Int {
        let start = written.load(ordering: .relaxed)
        let frames = min(source.count / channels, freeFrames)
        guard frames > 0, let base = source.baseAddress else { return 0 }
        var done = 0
        while done < frames {
            let slot = (start + done) & mask
            let run = min(frames - done, capacity - slot)
            (samples + slot * channels).update(from: base + done * channels, count: run * channels)
            done += run
        }
        written.store(start + frames, ordering: .releasing)
        return frames
    }

    /// A flush: the consumer plays at most `keeping` more frames of what was written (fewer if
    /// there are fewer), fading them out over their last `rampFrames`, then goes on at what is
    /// written from now on, fading in. Returns where the old audio stops and where the new
    /// audio starts. A flush while an earlier one has not been reached keeps the earlier
    /// stopping point. `discardWhenSilent` (a seek): a consumer that is not sounding skips the
    /// kept frames (nothing to fade), instead of playing them when it runs again.
    @discardableResult
    func flush(keeping margin: Int = 0, discardWhenSilent: Bool = false) -> (stop: Int, start: Int) {
        let end = written.load(ordering: .relaxed)
        let reached = consumed.load(ordering: .acquiring)
        let pendingFrom = jumpFrom.load(ordering: .relaxed)
        let pendingTo = jumpTo.load(ordering: .relaxed)
        let stop = pendingTo > pendingFrom && reached < pendingFrom
            ? pendingFrom
            : min(end, max(reached, pendingTo) + max(0, margin))
        finished.store(false, ordering: .relaxed)
        jumpDiscardable.store(discardWhenSilent, ordering: .relaxed)
        // `jumpTo` first: a consumer that sees the new stopping point sees where to go on.
        jumpTo.store(end, ordering: .releasing)
        jumpFrom.store(stop, ordering: .releasing)
        return (stop, end)
    }

    /// Says that the audio written from `position` on starts with the item's own first sample:
    /// a start there plays it as it is, with no fade-in.
    func markUnramped(at position: Int) {
        unrampedAt.store(position, ordering: .releasing)
    }

    /// Says the stream's last sample is written (or, `false`, that more will come).
    func setFinished(_ value: Bool) {
        finished.store(value, ordering: .releasing)
    }

    // MARK: Either side

    /// Frames handed to the device so far.
    var consumePosition: Int { consumed.load(ordering: .acquiring) }

    /// Frames written and not yet consumed or skipped: what is left to hear.
    var queuedFrames: Int {
        let end = written.load(ordering: .acquiring)
        let reached = consumed.load(ordering: .acquiring)
        let from = jumpFrom.load(ordering: .acquiring)
        let to = jumpTo.load(ordering: .acquiring)
        if to > from, reached < from { return (from - reached) + (end - to) }
        return max(0, end - max(reached, to))
    }

    /// Whether a flush waits for the consumer.
    var hasPendingSkip: Bool { jumpTo.load(ordering: .acquiring) > consumed.load(ordering: .acquiring) }

    /// Lets the consumer play (time runs) or makes it play silence (paused, seeking).
    func setRunning(_ run: Bool) {
        if run { runGeneration.add(1, ordering: .relaxed) }
        running.store(run, ordering: .releasing)
    }

    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Times the consumer ran out while running.
    var underruns: Int { underrunCount.load(ordering: .relaxed) }

    // MARK: Consumer (the device callback, or the engine's push step)

    /// Copies up to `frames` frames into `output` and fills the rest with silence; while not
    /// running, only the frames of a fade-out still under way. Real-time safe. `hostNanos` is
    /// the engine clock's time now. Returns the frames taken.
    @discardableResult
    func consume(into output: UnsafeMutablePointer<Float>, frames: Int, hostNanos: Int64) -> Int {
        var position = consumed.load(ordering: .relaxed)
        let from = jumpFrom.load(ordering: .acquiring)
        let to = jumpTo.load(ordering: .acquiring)
        var gain = level.load(ordering: .relaxed)
        if position >= from, to > position {
            position = to
            gain = 0
        }
        let run = running.load(ordering: .acquiring)
        if !run, gain == 0, to > position, jumpDiscardable.load(ordering: .relaxed) { position = to }
        let ownStart = unrampedAt.load(ordering: .acquiring)
        if run, gain == 0, position == ownStart { gain = rampFrames }
        var taken = 0
        if run || gain > 0 {
            let end = written.load(ordering: .acquiring)
            let pending = position < from && to > from
            // Stopping: only the fade-out, and not past a jump.
            let wanted = run ? frames : min(frames, gain, pending ? from - position : gain)
            var reportStart = position
            var reportOffset = 0
            var crossed: Int?
            let first = position
            if pending {
                // The old audio up to the jump, then the new audio after it.
                taken = copy(from: position, count: min(wanted, from - position, end - position), into: output)
                position += taken
                if position == from, run {
                    position = to
                    reportStart = to
                    reportOffset = taken
                    crossed = taken
                }
            }
            if !pending || crossed != nil {
                let rest = copy(from: position, count: max(0, min(wanted - taken, end - position)), into: output + taken * channels)
                position += rest
                taken += rest
            }
            gain = envelope(output, frames: taken, first: first, jumpFrom: pending ? from : nil, crossed: crossed,
                            running: run, level: gain, ownStartCrossed: to == ownStart)
            // A jump crossed at the very end of the buffer: the new audio fades in from the next.
            if crossed == taken { gain = to == ownStart ? rampFrames : 0 }
            if run {
                if taken < frames, !finished.load(ordering: .acquiring) { underrunCount.add(1, ordering: .relaxed) }
                let offsetNanos = Int64(reportOffset) * 1_000_000_000 / Int64(sampleRate)
                publish(start: reportStart, frames: taken - reportOffset, hostNanos: hostNanos + offsetNanos)
            } else if taken < wanted {
                gain = 0  // ran dry while fading: nothing sounds any more
            }
        }
        if taken < frames {
            (output + taken * channels).update(repeating: 0, count: (frames - taken) * channels)
        }
        level.store(gain, ordering: .relaxed)
        consumed.store(position, ordering: .releasing)
        return taken
    }

    /// Applies the ramps to the `frames` frames just copied to `output` (ring positions from
    /// `first`; the new audio from frame `crossed` on, when a jump was crossed): the level
    /// moves one step a frame toward full (running) or silence, capped to reach silence at a
    /// pending jump; after the jump from silence, or at once when the new audio is the item's
    /// own start. One multiply a sample, and none once the level is full with no jump near.
    /// Returns the level after them.
    private func envelope(_ output: UnsafeMutablePointer<Float>, frames: Int, first: Int, jumpFrom: Int?,
                          crossed: Int?, running run: Bool, level start: Int, ownStartCrossed: Bool) -> Int {
        let full = rampFrames
        guard full > 0 else { return 0 }
        var level = start
        let target = run ? full : 0
        if level == target, jumpFrom.map({ $0 - first > frames + full }) ?? true, crossed == nil { return level }
        let gains = ramp.base
        for i in 0..<frames {
            if i == crossed { level = ownStartCrossed ? full : 0 }
            if level < target { level += 1 } else if level > target { level -= 1 }
            var index = level
            if let jumpFrom, crossed.map({ i < $0 }) ?? true { index = min(index, max(0, jumpFrom - (first + i) - 1)) }
            if index < full {
                let g = gains[index]
                let frame = output + i * channels
                for c in 0..<channels { frame[c] *= g }
            }
        }
        return level
    }

    /// Copies `count` frames from ring position `position` (wrapping); returns `count`.
    private func copy(from position: Int, count: Int, into output: UnsafeMutablePointer<Float>) -> Int {
        var done = 0
        while done < count {
            let slot = (position + done) & mask
            let run = min(count - done, capacity - slot)
            (output + done * channels).update(from: samples + slot * channels, count: run * channels)
            done += run
        }
        return count
    }

    /// Carries out a jump the consumer has reached without playing anything (a push consumer
    /// that is not running still lets the producer refill after a seek).
    func applySkip() {
        let position = consumed.load(ordering: .relaxed)
        let from = jumpFrom.load(ordering: .acquiring)
        let to = jumpTo.load(ordering: .acquiring)
        guard to > position else { return }
        if position >= from {
            level.store(0, ordering: .relaxed)
            consumed.store(to, ordering: .releasing)
        } else if !running.load(ordering: .acquiring), level.load(ordering: .relaxed) == 0,
                  jumpDiscardable.load(ordering: .relaxed) {
            consumed.store(to, ordering: .releasing)
        }
    }

    /// Whether the consumer is sounding or fading (a stop has frames of fade-out to play).
    var isSounding: Bool { level.load(ordering: .relaxed) > 0 }

    private func publish(start: Int, frames: Int, hostNanos: Int64) {
        let sequence = reportSequence.load(ordering: .relaxed)
        reportSequence.store(sequence + 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        reportStart.store(start, ordering: .relaxed)
        reportFrames.store(frames, ordering: .relaxed)
        reportHost.store(hostNanos, ordering: .relaxed)
        reportGeneration.store(runGeneration.load(ordering: .relaxed), ordering: .relaxed)
        reportSequence.store(sequence + 2, ordering: .releasing)
    }

    /// What the consumer took last since it was last told to run: the first frame's
    /// position, how many frames, and the host time in nanoseconds.
    struct Report: Sendable, Hashable {
        var start: Int
        var frames: Int
        var hostNanos: Int64
    }

    /// The consumer's last report, or `nil` when it has not consumed since it was told to run.
    func lastReport() -> Report? {
        // The writer never waits; a reader that keeps meeting a write in progress (the
        // device thread preempted in the middle) gives up for this time.
        for _ in 0..<64 {
            let before = reportSequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let report = Report(start: reportStart.load(ordering: .relaxed),
                                frames: reportFrames.load(ordering: .relaxed),
                                hostNanos: reportHost.load(ordering: .relaxed))
            let generation = reportGeneration.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            guard reportSequence.load(ordering: .relaxed) == before else { continue }
            return generation == runGeneration.load(ordering: .relaxed) ? report : nil
        }
        return nil
    }
}
