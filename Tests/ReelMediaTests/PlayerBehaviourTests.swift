import Foundation
import Synchronization
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// The player's behaviour on a manual clock with a fake loader.
@Suite struct PlayerBehaviourTests {
    /// 4 s at 30 fps, one keyframe every 2 s, B-frames: a long GOP to seek across.
    static let longGOP = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 4, keyframeInterval: 60, bFrames: 3)

    @Test(arguments: [0.0, 0.01, 0.5, 1.0, 1.98, 2.0, 2.034, 3.3, 3.99])
    func exactSeekLandsOnTheFrameWhoseIntervalContainsTheTarget(_ target: Double) async throws {
        let file = try Fixtures.clip(Self.longGOP)
        let reference = try referenceFrames(file)
        let expected = reference.last { $0.pts <= seconds(target) }!
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.status == .readyToPlay })
        harness.video.reset()
        #expect(await harness.seek(to: seconds(target)))
        let shown = harness.video.frames.first
        #expect(shown?.pts == expected.pts, "target \(target): showed \(shown?.pts.seconds ?? -1), want \(expected.pts.seconds)")
        #expect(shown?.md5 == expected.md5)
        #expect(harness.player.currentTime == seconds(target), "an exact seek puts the time at the target")
    }

    @Test func startTimeIsAnExactSeekBeforeTheFirstFrame() async throws {
        let file = try Fixtures.clip(Self.longGOP)
        let reference = try referenceFrames(file)
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load(startTime: seconds(2.5))
        harness.player.play()
        await harness.run(upTo: seconds(0.5))
        let first = harness.video.frames.first
        #expect(first?.pts == reference.last { $0.pts <= seconds(2.5) }!.pts, "no frame before the start is ever shown")
    }

    @Test func toleranceSeekLandsOnTheNearestKeyframe() async throws {
        let file = try Fixtures.clip(Self.longGOP)
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.status == .readyToPlay })
        harness.video.reset()
        // Keyframes at 0, 2 s: 1.7 s is nearer 2 s.
        #expect(await harness.seek(to: seconds(1.7), before: .positiveInfinity, after: .positiveInfinity))
        #expect(harness.video.frames.first?.pts.seconds == 2.0)
        #expect(harness.player.currentTime.seconds == 2.0)
        harness.video.reset()
        #expect(await harness.seek(to: seconds(0.9), before: .positiveInfinity, after: .positiveInfinity))
        #expect(harness.video.frames.first?.pts.seconds == 0.0)
    }

    @Test func aNewerSeekFinishesTheOlderOneWithFalse() async throws {
        let file = try Fixtures.clip(Self.longGOP)
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.status == .readyToPlay })
        let first = ResultBox<Bool>()
        let second = ResultBox<Bool>()
        harness.player.seek(to: seconds(1), toleranceBefore: .zero, toleranceAfter: .zero) { first.set($0) }
        harness.player.seek(to: seconds(3), toleranceBefore: .zero, toleranceAfter: .zero) { second.set($0) }
        await harness.run(upTo: seconds(2)) { second.value != nil }
        #expect(first.value == false)
        #expect(second.value == true)
        #expect(harness.player.currentTime == seconds(3))
    }

    @Test func doubleRatePresentsTwiceTheMediaTimePerHostSecond() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 6, keyframeInterval: 30))
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.status == .readyToPlay })
        harness.player.play()
        await harness.run(upTo: seconds(1))
        let atOne = harness.player.currentTime
        harness.player.rate = 2
        let switchedAt = harness.clock.now
        await harness.run(upTo: seconds(1))
        let gained = harness.player.currentTime - atOne
        #expect(abs(gained.seconds - 2) < 0.05, "2x moved \(gained.seconds) s of media in one second")
        // The frames shown in that second cover two seconds of media, in order.
        let during = harness.video.frames.filter { $0.presentedAt > switchedAt }
        #expect(during.count >= 55)
        #expect(zip(during, during.dropFirst()).allSatisfy { $0.pts < $1.pts })
        harness.player.rate = 1
        let back = harness.player.currentTime
        await harness.run(upTo: seconds(1))
        #expect(abs((harness.player.currentTime - back).seconds - 1) < 0.05, "release returns to 1x")
    }

    @Test func doubleRateKeepsAudioPitchAndHalvesItsLength() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 3, videoCodec: nil, toneFrequency: 1000))
        let harness = PlayerHarness(data: try Data(contentsOf: file), name: "tone.m4a")
        harness.load()
        harness.player.rate = 2
        #expect(await harness.run(upTo: seconds(4)) { harness.ended })
        let samples = harness.audio.written
        let audible = Double(harness.audio.audibleFrameCount) / 48_000
        #expect(abs(audible - 1.5) < 0.1, "3 s at 2x is 1.5 s of sound (got \(audible))")
        // Count zero crossings over a middle second of one channel: 1000 Hz has 2000.
        let mono = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        guard let start = mono.firstIndex(where: { abs($0) > 1e-4 }), mono.count >= start + 60_000 else {
            Issue.record("too little audio: \(mono.count) frames")
            return
        }
        let window = mono[(start + 12_000)..<(start + 60_000)]
        let crossings = zip(window, window.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(abs(crossings - 2000) < 60, "pitch kept: \(crossings / 2) Hz")
    }

    @Test func aStarvingLoaderGivesBufferingAndPlaybackResumesWhenBytesArrive() async throws {
        let data = try Fixtures.data(ClipSpec(duration: 4, keyframeInterval: 30))
        let harness = PlayerHarness(data: data, script: .init(fault: .stallAtOffset(Int64(data.count / 2))))
        harness.load()
        harness.player.play()
        let stalled = await harness.run(upTo: seconds(6)) {
            harness.player.timeControlStatus == .waitingToPlay(.buffering)
        }
        #expect(stalled, "ran dry: \(harness.player.timeControlStatus)")
        let stuckAt = harness.player.currentTime
        await harness.run(upTo: seconds(1))
        #expect(harness.player.currentTime == stuckAt, "time does not move while buffering")
        harness.loader.resumeStalls()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.timeControlStatus == .playing })
        #expect(await harness.run(upTo: seconds(5)) { harness.ended })
        #expect(harness.events.contains { if case .stall(true) = $0 { true } else { false } })
        #expect(harness.events.contains { if case .stall(false) = $0 { true } else { false } })
    }

    @Test func loopingWrapsToTheStart() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 1))
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.player.actionAtItemEnd = .loop
        harness.load()
        harness.player.play()
        await harness.run(upTo: seconds(2.5))
        let pts = harness.video.frames.map(\.pts.seconds)
        let wraps = zip(pts, pts.dropFirst()).filter { $0 > $1 }.count
        #expect(wraps == 2, "two wraps in 2.5 s of a 1 s clip (\(wraps))")
        #expect(harness.player.timeControlStatus == .playing)
        #expect(harness.events.contains { if case .ended(looping: true) = $0 { true } else { false } })
    }

    @Test func pausingAtTheEndStopsAtTheLastFrame() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 1))
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        harness.player.play()
        #expect(await harness.run(upTo: seconds(3)) { harness.ended })
        #expect(harness.player.rate == 0)
        #expect(harness.player.timeControlStatus == .paused)
        #expect(abs(harness.player.currentTime.seconds - 1) < 0.05)
        // Play again starts over.
        harness.video.reset()
        harness.player.play()
        await harness.run(upTo: seconds(0.5))
        #expect(harness.video.frames.first?.pts == .zero)
    }

    @Test func periodicTimeObserverFiresOnTheIntervalAndOnJumps() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 4))
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        let times = ResultList<MediaTime>()
        harness.player.addPeriodicTimeObserver(forInterval: ms(500)) { times.append($0) }
        harness.load()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.status == .readyToPlay })
        harness.player.play()
        await harness.run(upTo: seconds(2))
        let playing = times.all
        #expect(playing.count >= 4 && playing.count <= 6, "about every 0.5 s for 2 s: \(playing.map(\.seconds))")
        let before = times.all.count
        _ = await harness.seek(to: seconds(0.25))
        #expect(times.all.count > before, "a seek is a jump")
        #expect(times.all.last == seconds(0.25))
    }

    @Test func theSameScriptGivesTheSameTraceEveryRun() async throws {
        let data = try Fixtures.data(ClipSpec(duration: 3, keyframeInterval: 45))
        func run() async -> [String] {
            let script = FakeResourceLoader.Script(latency: ms(40), bytesPerSecond: 150_000, chunkSize: 16 * 1024)
            let harness = PlayerHarness(data: data, script: script)
            harness.load()
            harness.player.play()
            await harness.run(upTo: seconds(1.2))
            harness.player.rate = 2
            await harness.run(upTo: seconds(0.4))
            _ = await harness.seek(to: seconds(0.7))
            harness.player.rate = 1
            await harness.run(upTo: seconds(3))
            return harness.video.frames.map { "\($0.pts) \($0.presentedAt) \($0.md5) \($0.droppedSoFar)" }
                + harness.events.map { "\($0)" }
        }
        let first = await run()
        #expect(first.count > 60)
        for attempt in 1..<20 {
            let again = await run()
            if again != first {
                let index = Array(zip(again, first)).firstIndex { $0.0 != $0.1 } ?? min(again.count, first.count)
                Issue.record("run \(attempt) differs at line \(index): \(again.count > index ? again[index] : "end") vs \(first.count > index ? first[index] : "end")")
                break
            }
        }
    }

    /// A feed's pre-rendered page: opened paused, it shows its first picture and decodes no
    /// further (no frame-threaded decoder, no frames ahead) until it plays; then it plays
    /// every frame, bit-exact, without a stall.
    @Test func anItemThatNeverPlayedHoldsOnlyItsFirstPictureUntilItPlays() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 2, keyframeInterval: 30, bFrames: 2))
        let reference = try referenceFrames(file)
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.status == .readyToPlay },
                "ready while paused, on its first picture")
        await harness.run(upTo: seconds(5))
        #expect(harness.player.statistics.decodedVideoFrames == 1)
        #expect(harness.video.frames.map(\.md5) == [reference[0].md5])
        #expect(harness.player.currentTime == .zero)

        harness.player.play()
        #expect(await harness.run(upTo: seconds(20)) { harness.ended })
        #expect(harness.video.frames.map(\.md5) == reference.map(\.md5), "every frame once, in order")
        #expect(harness.player.statistics.decodedVideoFrames == reference.count)
        #expect(!harness.events.contains { if case .stall(true) = $0 { return true } else { return false } },
                "the first play buffers its start before time moves")
    }

    /// An item that plays from the start decodes ahead as before.
    @Test func aPlayingItemKeepsFramesReadyAhead() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 2, keyframeInterval: 30, bFrames: 2))
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        harness.player.play()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.timeControlStatus == .playing })
        harness.player.pause()
        await harness.run(upTo: seconds(3))
        let shown = harness.video.frames.count
        // The frames kept ready behind the one shown (PipelineConfiguration.videoFrameCapacity).
        #expect(harness.player.statistics.decodedVideoFrames == shown + PipelineConfiguration().videoFrameCapacity)
    }

    @Test func replacingTheItemWithNilFreesTheDecoders() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 2))
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        harness.player.play()
        await harness.run(upTo: seconds(0.5))
        weak var engine: PlaybackEngine?
        engine = harness.player.engineForTesting
        #expect(engine != nil)
        harness.player.replaceCurrentItem(with: nil)
        // Gone once its threads have let go of it: a joined thread may still hold its closure
        // for a moment after it signalled its end (seen under AddressSanitizer).
        #expect(await eventually { engine == nil }, "the engine and everything it held are gone")
        #expect(harness.player.timeControlStatus == .waitingToPlay(.noItemToPlay))
        #expect(harness.video.currentFrame == nil)
    }
}

final class ResultList<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func append(_ item: T) { items.withTrackedLock { $0.append(item) } }
    var all: [T] { items.withTrackedLock { $0 } }
}


/// The audio render stage: rate and volume changes are heard at the device's next buffer,
/// not after everything already rendered.
@Suite struct AudioRenderStageTests {
    static let tone = ClipSpec(duration: 3, videoCodec: nil, toneFrequency: 1000)

    @Test func aRateChangeIsHeardWithinFiftyMilliseconds() async throws {
        let harness = PlayerHarness(data: try Fixtures.data(Self.tone), name: "tone.m4a")
        harness.load()
        harness.player.play()
        #expect(await harness.run(upTo: seconds(0.8)) { false } == false)
        harness.player.rate = 2
        await harness.run(upTo: seconds(0.3))
        harness.player.rate = 1
        await harness.run(upTo: seconds(0.3))
        let latencies = harness.player.statistics.rateChangeLatenciesMs
        #expect(latencies.count == 2, "both changes measured: \(latencies)")
        #expect(latencies.allSatisfy { $0 <= 50 }, "heard after \(latencies) ms")
        // The ring held about 200 ms when the rate changed: without the flush it would have taken that long.
        #expect(harness.player.statistics.audioUnderruns == 0)
    }

    /// A change asked while the player waits for data (as a starved machine's stall can make it
    /// wait at any moment) is heard once time runs again, and measured from then: the audio
    /// path's latency, not the stall's.
    @Test func aRateChangeAskedWhileBufferingIsMeasuredOnceTimeRunsAgain() async throws {
        let data = try Fixtures.data(ClipSpec(duration: 4, keyframeInterval: 30))
        let harness = PlayerHarness(data: data, script: .init(fault: .stallAtOffset(Int64(data.count / 2))))
        harness.load()
        harness.player.play()
        #expect(await harness.run(upTo: seconds(6)) { harness.player.timeControlStatus == .waitingToPlay(.buffering) })
        harness.player.rate = 2
        await harness.run(upTo: seconds(0.5))
        #expect(harness.player.statistics.rateChangeLatenciesMs.isEmpty, "nothing is heard while time stands still")
        harness.loader.resumeStalls()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.timeControlStatus == .playing })
        await harness.run(upTo: seconds(0.3))
        let latencies = harness.player.statistics.rateChangeLatenciesMs
        #expect(latencies.count == 1, "the change is measured: \(latencies)")
        #expect(latencies.allSatisfy { $0 <= 50 }, "heard after \(latencies) ms of running time")
    }

    @Test func aVolumeChangeReachesTheOutputAtOnce() async throws {
        let harness = PlayerHarness(data: try Fixtures.data(Self.tone), name: "tone.m4a")
        harness.load()
        harness.player.play()
        await harness.run(upTo: seconds(0.5))
        let before = harness.audio.written.count
        harness.player.volume = 0.25
        await harness.run(upTo: seconds(0.5))
        let samples = harness.audio.written
        func peak(_ range: Range<Int>) -> Float { samples[range].map(abs).max() ?? 0 }
        let loud = peak((before - 9600)..<before)
        // 20 ms after the change the output is at a quarter (one 10 ms block may still be old).
        let quiet = peak((before + 1920)..<(before + 11520))
        #expect(loud > 0.01)
        #expect(abs(quiet / loud - 0.25) < 0.03, "peak \(quiet) after vs \(loud) before")
    }
}
