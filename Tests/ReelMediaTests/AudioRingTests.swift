import Foundation
import ReelTestSupport
import Synchronization
import Testing
@testable import ReelMedia

/// The ring between the audio render thread and the device: exact samples across the wrap,
/// flushes carried out by the consumer, silence while not running, and what the consumer
/// reports for the audio clock.
@Suite struct AudioRingTests {
    static func write(_ ring: AudioRing, _ values: [Float]) -> Int {
        values.withUnsafeBufferPointer { ring.write($0) }
    }

    static func consume(_ ring: AudioRing, frames: Int, at nanos: Int64 = 0) -> (taken: Int, samples: [Float]) {
        var out = [Float](repeating: -1, count: frames * ring.channels)
        let taken = out.withUnsafeMutableBufferPointer { ring.consume(into: $0.baseAddress!, frames: frames, hostNanos: nanos) }
        return (taken, out)
    }

    @Test func samplesComeOutExactlyAsWrittenAcrossTheWrap() {
        let ring = AudioRing(channels: 2, capacity: 8)
        #expect(ring.capacity == 8)
        ring.setRunning(true)
        var next: Float = 0
        var expected: Float = 0
        for round in 0..<50 {
            let frames = round % 5 + 1
            let values = (0..<(frames * 2)).map { _ in next += 1; return next }
            let written = Self.write(ring, values)
            next -= Float(values.count - written * 2)
            let (taken, samples) = Self.consume(ring, frames: round % 3 + 2)
            for i in 0..<(taken * 2) {
                expected += 1
                #expect(samples[i] == expected)
            }
            #expect(samples[(taken * 2)...].allSatisfy { $0 == 0 }, "the rest is silence")
        }
        #expect(ring.underruns > 0)
    }

    @Test func theProducerCannotOverwriteWhatIsNotConsumed() {
        let ring = AudioRing(channels: 1, capacity: 4)
        #expect(Self.write(ring, [1, 2, 3, 4, 5, 6]) == 4)
        #expect(ring.freeFrames == 0)
        ring.setRunning(true)
        #expect(Self.consume(ring, frames: 2).samples == [1, 2])
        #expect(ring.freeFrames == 2)
        #expect(Self.write(ring, [7, 8, 9]) == 2)
        #expect(Self.consume(ring, frames: 4).samples == [3, 4, 7, 8])
    }

    @Test func aFlushSkipsWhatWasWrittenBeforeItAndTheConsumerCarriesItOut() {
        let ring = AudioRing(channels: 1, capacity: 8)
        _ = Self.write(ring, [1, 2, 3, 4])
        let jump = ring.flush()
        #expect(jump.stop == 0 && jump.start == 4, "a seek: nothing more of the old audio")
        #expect(ring.queuedFrames == 0, "nothing left to hear")
        #expect(ring.hasPendingSkip)
        #expect(ring.freeFrames == 4, "the skipped samples are the consumer's until it skips them")
        _ = Self.write(ring, [5, 6])
        ring.setRunning(true)
        #expect(Self.consume(ring, frames: 2).samples == [5, 6])
        #expect(!ring.hasPendingSkip)
        #expect(ring.freeFrames == 8)
    }

    @Test func aFlushCanKeepABufferOfTheOldAudioAndTheNewTakesOverWhereItStops() {
        let ring = AudioRing(channels: 1, capacity: 16)
        ring.setRunning(true)
        _ = Self.write(ring, [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(Self.consume(ring, frames: 2).samples == [1, 2])
        let jump = ring.flush(keeping: 3)
        #expect(jump.stop == 5 && jump.start == 8, "three more frames of the old audio, then what comes next")
        #expect(ring.queuedFrames == 3)
        _ = Self.write(ring, [100, 101])
        // A second change before the first is reached keeps the same stopping point.
        let again = ring.flush(keeping: 3)
        #expect(again.stop == 5 && again.start == 10)
        _ = Self.write(ring, [200, 201, 202])
        #expect(ring.queuedFrames == 6)
        let (taken, samples) = Self.consume(ring, frames: 5, at: 1_000_000)
        #expect(taken == 5)
        #expect(samples == [3, 4, 5, 200, 201], "the old audio to its stop, then the newest, never the obsolete")
        #expect(ring.lastReport() == AudioRing.Report(start: 10, frames: 2, hostNanos: 1_000_000 + 3 * 1_000_000_000 / 48_000),
                "the report says where the new audio began and when it is heard")
        #expect(Self.consume(ring, frames: 2).samples == [202, 0])
    }

    @Test func aPausedConsumerPlaysSilenceButStillCarriesOutAFlush() {
        let ring = AudioRing(channels: 1, capacity: 8)
        _ = Self.write(ring, [1, 2, 3])
        let paused = Self.consume(ring, frames: 2)
        #expect(paused.taken == 0 && paused.samples == [0, 0])
        #expect(ring.queuedFrames == 3, "nothing consumed while paused")
        #expect(ring.underruns == 0, "silence while paused is not an underrun")
        ring.flush()
        ring.applySkip()
        #expect(ring.freeFrames == 8)
    }

    @Test func theReportSaysWhereTheConsumerTookFromAndWhen() {
        let ring = AudioRing(channels: 1, capacity: 8)
        _ = Self.write(ring, [1, 2, 3, 4, 5])
        #expect(ring.lastReport() == nil)
        ring.setRunning(true)
        _ = Self.consume(ring, frames: 2, at: 1000)
        _ = Self.consume(ring, frames: 2, at: 2000)
        #expect(ring.lastReport() == AudioRing.Report(start: 2, frames: 2, hostNanos: 2000))
        ring.setRunning(false)
        ring.setRunning(true)
        #expect(ring.lastReport() == nil, "a report from before the last start is stale")
    }

    @Test func oneProducerAndOneConsumerOnTheirOwnThreadsAgreeOnEverySample() async {
        let ring = AudioRing(channels: 2, capacity: 256)
        ring.setRunning(true)
        let total = 500_000
        let received = Mutex<(count: Int, errors: Int)>((0, 0))
        let done = DispatchGroup()
        done.enter()
        Thread {
            var next = 0
            var block = [Float](repeating: 0, count: 200)
            while next < total {
                let frames = min(100, total - next)
                for i in 0..<frames { block[2 * i] = Float(next + i); block[2 * i + 1] = -Float(next + i) }
                let written = block.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[0..<(frames * 2)])) }
                next += written
                if written == 0 { sched_yield() }
            }
            done.leave()
        }.start()
        done.enter()
        Thread {
            var expected = 0
            var errors = 0
            var out = [Float](repeating: 0, count: 128)
            while expected < total {
                let taken = out.withUnsafeMutableBufferPointer { ring.consume(into: $0.baseAddress!, frames: 64, hostNanos: 0) }
                for i in 0..<taken where out[2 * i] != Float(expected + i) || out[2 * i + 1] != -Float(expected + i) { errors += 1 }
                expected += taken
                if taken == 0 { sched_yield() }
            }
            received.withTrackedLock { $0 = (expected, errors) }
            done.leave()
        }.start()
        // On a thread of its own: a global queue's thread is one of the concurrency pool's on
        // Linux (on one core, the only one).
        let finished = await offThePool { done.wait(timeout: .now() + 120) == .success }
        #expect(finished)
        #expect(received.withTrackedLock { $0.count } == total)
        #expect(received.withTrackedLock { $0.errors } == 0)
    }
}
