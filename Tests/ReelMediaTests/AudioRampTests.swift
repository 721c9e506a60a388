import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// No clicks: every start, stop, pause, seek and volume change fades the sound over the ring's
/// raised-cosine ramp instead of cutting the waveform where it is.
@Suite struct AudioRampTests {
    static func write(_ ring: AudioRing, _ values: [Float]) {
        _ = values.withUnsafeBufferPointer { ring.write($0) }
    }

    static func consume(_ ring: AudioRing, frames: Int) -> (taken: Int, samples: [Float]) {
        var out = [Float](repeating: -1, count: frames * ring.channels)
        let taken = out.withUnsafeMutableBufferPointer { ring.consume(into: $0.baseAddress!, frames: frames, hostNanos: 0) }
        return (taken, out)
    }

    /// The largest step from one sample to the next.
    static func largestStep(_ samples: some Collection<Float>) -> Float {
        zip(samples, samples.dropFirst()).map { abs($1 - $0) }.max() ?? 0
    }

    @Test func aStartFadesInAndAStopFadesOutOverTheRampThenTakesNothing() {
        let ring = AudioRing(channels: 1, capacity: 64, rampFrames: 8)
        Self.write(ring, [Float](repeating: 1, count: 40))
        ring.setRunning(true)
        let start = Self.consume(ring, frames: 12).samples
        #expect(start[0] > 0 && start[0] < 0.1, "the first frame is near silence: \(start[0])")
        #expect(zip(start, start.dropFirst()).allSatisfy { $0 <= $1 }, "rising: \(start)")
        #expect(start[7...].allSatisfy { $0 == 1 }, "full after the ramp: \(start)")
        ring.setRunning(false)
        #expect(ring.isSounding)
        let stop = Self.consume(ring, frames: 12)
        #expect(stop.taken == 8, "only the fade-out is taken")
        #expect(zip(stop.samples.prefix(8), stop.samples.prefix(8).dropFirst()).allSatisfy { $0 >= $1 }, "falling: \(stop.samples)")
        #expect(stop.samples[7] == 0 && stop.samples[8...].allSatisfy { $0 == 0 })
        #expect(!ring.isSounding)
        #expect(Self.consume(ring, frames: 4).taken == 0, "stopped: nothing more")
        #expect(ring.consumePosition == 20)
    }

    @Test func aFlushFadesTheOldAudioOutBeforeTheJumpAndTheNewInAfterIt() {
        let ring = AudioRing(channels: 2, capacity: 64, rampFrames: 4)
        Self.write(ring, [Float](repeating: 0.5, count: 2 * 20))
        ring.setRunning(true)
        _ = Self.consume(ring, frames: 6)
        ring.flush(keeping: 4)
        Self.write(ring, [Float](repeating: -0.5, count: 2 * 10))
        let samples = Self.consume(ring, frames: 12).samples
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        #expect(left[3] == 0, "silence at the jump: \(left)")
        #expect(left[4] > -0.5 && left[4] < 0, "the new audio fades in: \(left)")
        #expect(left[8...].allSatisfy { $0 == -0.5 }, "\(left)")
        #expect(Self.largestStep(left) < 0.5, "no cut from +0.5 to -0.5: \(left)")
    }

    @Test func aJumpReachedAtTheEndOfABufferStillFadesTheNewAudioIn() {
        let ring = AudioRing(channels: 1, capacity: 64, rampFrames: 4)
        Self.write(ring, [Float](repeating: 1, count: 16))
        ring.setRunning(true)
        _ = Self.consume(ring, frames: 8)
        ring.flush(keeping: 4)
        Self.write(ring, [Float](repeating: 1, count: 8))
        let before = Self.consume(ring, frames: 4).samples
        #expect(before.last == 0, "faded out to the jump: \(before)")
        let after = Self.consume(ring, frames: 6).samples
        #expect(after[0] < 0.5 && after[5] == 1, "faded in after it: \(after)")
    }

    @Test func theItemsOwnFirstSamplePlaysAsItIsAndAResumeFadesIn() {
        let ring = AudioRing(channels: 1, capacity: 64, rampFrames: 4)
        ring.markUnramped(at: 0)
        Self.write(ring, [Float](repeating: 1, count: 20))
        ring.setRunning(true)
        #expect(Self.consume(ring, frames: 4).samples == [1, 1, 1, 1], "the item's own edge, not a cut")
        ring.setRunning(false)
        _ = Self.consume(ring, frames: 4)
        ring.setRunning(true)
        let resumed = Self.consume(ring, frames: 4).samples
        #expect(resumed[0] < 0.5 && resumed[3] == 1, "a resume is a cut: it fades in \(resumed)")
    }

    @Test func aSeekWhileSilentSkipsTheKeptFrames() {
        let ring = AudioRing(channels: 1, capacity: 32, rampFrames: 4)
        Self.write(ring, [1, 2, 3, 4, 5, 6, 7, 8])
        ring.flush(keeping: 4, discardWhenSilent: true)
        Self.write(ring, [9, 9, 9, 9, 9, 9])
        ring.applySkip()
        #expect(ring.consumePosition == 8, "nothing of the old audio is left to play")
        ring.setRunning(true)
        let samples = Self.consume(ring, frames: 6).samples
        #expect(samples[5] == 9 && samples[0] < 9, "the new audio, faded in: \(samples)")
    }

    /// A tone played, paused, resumed, sought while playing, muted and unmuted on the manual
    /// clock: what the sink was given never steps further from one sample to the next than the
    /// tone itself does.
    @Test func pauseSeekAndMuteLeaveNoClickInTheWrittenAudio() async throws {
        let spec = ClipSpec(duration: 4, videoCodec: nil, toneFrequency: 440)
        let harness = PlayerHarness(data: try Fixtures.data(spec), name: "tone.m4a")
        harness.load()
        harness.player.play()
        await harness.run(upTo: seconds(0.5))
        let steady = harness.audio.written
        harness.player.pause()
        await harness.run(upTo: seconds(0.2))
        harness.player.play()
        await harness.run(upTo: seconds(0.3))
        #expect(await harness.seek(to: seconds(2.23)))
        await harness.run(upTo: seconds(0.3))
        harness.player.isMuted = true
        await harness.run(upTo: seconds(0.2))
        harness.player.isMuted = false
        await harness.run(upTo: seconds(0.3))
        harness.player.pause()
        await harness.run(upTo: seconds(0.1))

        let samples = harness.audio.written
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let steadyLeft = stride(from: 4800, to: steady.count, by: 2).map { steady[$0] }
        let own = Self.largestStep(steadyLeft)
        #expect(own > 0.001, "the tone sounds: \(own)")
        #expect(left.count > 48_000, "\(left.count) frames written")
        let worst = zip(left, left.dropFirst()).enumerated().max { abs($0.1.1 - $0.1.0) < abs($1.1.1 - $1.1.0) }
        let step = worst.map { abs($0.1.1 - $0.1.0) } ?? 0
        #expect(step <= own * 1.05, "largest step \(step) at frame \(worst?.offset ?? -1); the tone's own \(own)")
        // The moments are there: the sound went to silence (a fade ends on an exact zero) after
        // the pause, the seek, the mute and the last pause.
        var stops: [Int] = []
        for i in 480..<left.count where left[i] == 0 && left[(i - 480)..<i].contains(where: { abs($0) > 0.02 }) {
            if let last = stops.last, i - last < 4800 { continue }
            stops.append(i)
        }
        #expect(stops.count >= 4, "fades to silence at frames \(stops)")
    }
}
