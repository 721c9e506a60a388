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

    /// Frames per second (for timing a report inside a buffer).
    let sampleRate: Int

    init(channels: Int, capacity minimum: Int, sampleRate: Int = 48_000) {
        self.channels = channels
        self.sampleRate = sampleRate
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
    /// there are fewer; none for a seek), then goes on at what is written from now on.
    /// Returns where the old audio stops and where the new audio starts. A flush while an
    /// earlier one has not been reached keeps the earlier stopping point.
    @discardableResult
    func flush(keeping margin: Int = 0) -> (stop: Int, start: Int) {
        let end = written.load(ordering: .relaxed)
        let reached = consumed.load(ordering: .acquiring)
        let pendingFrom = jumpFrom.load(ordering: .relaxed)
        let pendingTo = jumpTo.load(ordering: .relaxed)
        let stop = pendingTo > pendingFrom && reached < pendingFrom
            ? pendingFrom
            : min(end, max(reached, pendingTo) + max(0, margin))
        finished.store(false, ordering: .relaxed)
        // `jumpTo` first: a consumer that sees the new stopping point sees where to go on.
        jumpTo.store(end, ordering: .releasing)
        jumpFrom.store(stop, ordering: .releasing)
        return (stop, end)
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

    /// Copies up to `frames` frames into `output` and fills the rest with silence; nothing
    /// while not running. Real-time safe. `hostNanos` is the engine clock's time now.
    @discardableResult
    func consume(into output: UnsafeMutablePointer<Float>, frames: Int, hostNanos: Int64) -> Int {
        var position = consumed.load(ordering: .relaxed)
        let from = jumpFrom.load(ordering: .acquiring)
        let to = jumpTo.load(ordering: .acquiring)
        if position >= from, to > position { position = to }
        var taken = 0
        if running.load(ordering: .acquiring) {
            let end = written.load(ordering: .acquiring)
            var reportStart = position
            var reportOffset = 0
            if position < from, to > from {
                // The old audio up to the jump, then the new audio after it.
                taken = copy(from: position, count: min(frames, from - position), into: output)
                position += taken
                if position == from {
                    position = to
                    reportStart = to
                    reportOffset = taken
                }
            }
            if position >= from || to <= from {
                let rest = copy(from: position, count: max(0, min(frames - taken, end - position)), into: output + taken * channels)
                position += rest
                taken += rest
            }
            if taken < frames, !finished.load(ordering: .acquiring) { underrunCount.add(1, ordering: .relaxed) }
            let offsetNanos = Int64(reportOffset) * 1_000_000_000 / Int64(sampleRate)
            publish(start: reportStart, frames: taken - reportOffset, hostNanos: hostNanos + offsetNanos)
        }
        if taken < frames {
            (output + taken * channels).update(repeating: 0, count: (frames - taken) * channels)
        }
        consumed.store(position, ordering: .releasing)
        return taken
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
        if position >= from, to > position { consumed.store(to, ordering: .releasing) }
    }

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
