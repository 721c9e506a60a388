import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// Scrubbing mode on the manual clock: a 60 Hz drag across a clip with a 2 s GOP shows only
/// exact frames, decodes on inside a GOP, keeps the audio silent, and the release lands on the
/// exact frame and plays from it.
@Suite struct ScrubbingTests {
    /// 6 s at 30 fps, a keyframe every 2 s, B-frames, AAC.
    static let clip = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 6, keyframeInterval: 60, bFrames: 3)

    /// The reference frame whose display interval holds `time`.
    static func exactFrame(_ reference: [(pts: MediaTime, md5: String)], at time: MediaTime) -> (pts: MediaTime, md5: String) {
        reference.last { $0.pts <= time } ?? reference[0]
    }

    /// A drag from `from` to `to` seconds over `duration` seconds, one pointer event per 1/60 s.
    /// The clip loaded and playing in a harness on the manual clock, with FFmpeg's decode of
    /// it (pts and md5 of every frame) to compare what is shown against.
    static func playing() throws -> (harness: PlayerHarness, reference: [(pts: MediaTime, md5: String)]) {
        let file = try Fixtures.clip(clip)
        let reference = try referenceFrames(file)
        let harness = PlayerHarness(data: try Data(contentsOf: file))
        harness.load()
        harness.player.play()
        return (harness, reference)
    }

    static func drag(_ harness: PlayerHarness, from: Double, to: Double, over duration: Double) async {
        let steps = Int(duration * 60)
        for i in 0...steps {
            let t = from + (to - from) * Double(i) / Double(steps)
            harness.player.scrub(to: MediaTime(seconds: t, preferredTimescale: 1000))
            await harness.run(upTo: MediaTime(value: 1, timescale: 60))
        }
    }

    @Test func aDragShowsOnlyExactFramesAndTheReleaseLandsExactly() async throws {
        let (harness, reference) = try Self.playing()
        #expect(await harness.run(upTo: seconds(2)) { harness.player.currentTime > seconds(0.5) })
        harness.video.reset()
        harness.player.beginScrubbing()
        #expect(harness.player.isScrubbing)
        #expect(harness.player.rate == 0, "the drag pauses")
        // Forward across two GOP boundaries, then back.
        await Self.drag(harness, from: 0.6, to: 4.7, over: 1.5)
        await Self.drag(harness, from: 4.7, to: 3.1, over: 0.5)
        let duringDrag = harness.video.frames
        let settled = ResultBox<MediaTime>()
        harness.player.endScrubbing(at: ms(3333)) { settled.set($0) }
        #expect(await harness.run(upTo: seconds(2)) { settled.value != nil })
        #expect(settled.value == ms(3333))

        let report = harness.player.scrubReport
        let steps = report.steps
        #expect(steps.count > 40, "a seek for most pointer events on the manual clock: \(steps.count)")
        #expect(steps.contains { $0.kind == .decodeOn }, "forward targets in a GOP decode on")
        #expect(steps.contains { $0.kind == .exact })
        #expect(!steps.contains { $0.kind == .keyframe }, "exact frames keep up on the manual clock: no previews")
        for step in steps {
            let expected = Self.exactFrame(reference, at: step.target)
            #expect(step.frame == expected.pts, "target \(step.target.seconds): showed \(step.frame?.seconds ?? -1), want \(expected.pts.seconds) (\(step.kind))")
        }
        // Every picture shown while dragging is the exact frame of some target, bit for bit.
        let wanted = Dictionary(steps.map { step in (Self.exactFrame(reference, at: step.target).pts, step) }, uniquingKeysWith: { a, _ in a })
        for frame in duringDrag {
            let expected = reference.first { $0.pts == frame.pts }
            #expect(wanted[frame.pts] != nil, "frame \(frame.pts.seconds) shown while dragging is no target's")
            #expect(frame.md5 == expected?.md5, "frame \(frame.pts.seconds) decoded on differs from FFmpeg's decode")
        }
        // The release: the exact frame, then playing from it.
        let landing = Self.exactFrame(reference, at: ms(3333))
        let release = try #require(steps.last)
        #expect(release.isRelease && release.frame == landing.pts)
        #expect(harness.player.rate > 0, "the drag interrupted playback: it resumes")
        #expect(!harness.player.isScrubbing)
        harness.video.reset()
        #expect(await harness.run(upTo: seconds(0.5)) { harness.video.frames.count >= 5 })
        let after = harness.video.frames.map(\.pts)
        #expect(after.first.map { $0 >= landing.pts } ?? false)
        #expect(after == after.sorted(), "plays on forward from the release")
    }

    @Test func theAudioIsSilentWhileDragging() async throws {
        let (harness, _) = try Self.playing()
        #expect(await harness.run(upTo: seconds(2)) { harness.player.currentTime > seconds(1) })
        harness.player.beginScrubbing()
        // The stop's fade-out (5 ms) is written at the next step.
        await harness.run(upTo: ms(50))
        let before = harness.audio.written.count
        await Self.drag(harness, from: 1, to: 3.5, over: 1)
        #expect(harness.audio.written.count == before, "nothing written while the bar is held")
        let settled = ResultBox<MediaTime>()
        harness.player.endScrubbing { settled.set($0) }
        #expect(await harness.run(upTo: seconds(1)) { settled.value != nil })
        #expect(await harness.run(upTo: seconds(1)) { harness.audio.written.count > before + 4800 }, "audio again after the release")
    }

    @Test func aPausedPlayerStaysPausedAfterTheDrag() async throws {
        let (harness, reference) = try Self.playing()
        #expect(await harness.run(upTo: seconds(1)) { harness.player.currentTime > seconds(0.3) })
        harness.player.pause()
        await harness.run(upTo: ms(20))
        harness.player.beginScrubbing()
        await Self.drag(harness, from: 0.5, to: 1.9, over: 0.5)
        let settled = ResultBox<MediaTime>()
        harness.player.endScrubbing { settled.set($0) }
        #expect(await harness.run(upTo: seconds(1)) { settled.value != nil })
        #expect(harness.player.rate == 0)
        #expect(harness.video.currentFrame?.pts == Self.exactFrame(reference, at: seconds(1.9)).pts)
        // All forward inside the first GOP: decoded on, never flushed, after the first.
        let kinds = harness.player.scrubReport.steps.filter { !$0.isRelease }.map(\.kind)
        #expect(kinds.dropFirst().allSatisfy { $0 == .decodeOn }, "\(kinds)")
    }
    @Test func aReleaseAfterDecodingOnPlaysOnInStepWithNoFlushingSeek() async throws {
        let (harness, reference) = try Self.playing()
        #expect(await harness.run(upTo: seconds(4)) { harness.player.currentTime > seconds(2.2) })
        harness.player.beginScrubbing()
        await harness.run(upTo: ms(50))
        let before = harness.audio.written.count
        // Forward inside the GOP at 2 s: every target decodes on, the audio kept in step.
        await Self.drag(harness, from: 2.4, to: 3.5, over: 0.5)
        let settled = ResultBox<MediaTime>()
        harness.player.endScrubbing { settled.set($0) }
        #expect(await harness.run(upTo: seconds(1)) { settled.value != nil })
        let steps = harness.player.scrubReport.steps
        #expect(!steps.isEmpty && steps.allSatisfy { $0.kind == .decodeOn }, "no flushing seek, the release neither: \(steps.map(\.kind))")
        let landing = Self.exactFrame(reference, at: ms(3500))
        #expect(harness.video.currentFrame?.pts == landing.pts)
        #expect(harness.player.rate > 0)
        harness.video.reset()
        #expect(await harness.run(upTo: seconds(1)) { harness.audio.written.count > before + 4800 }, "audio again after the release")
        await harness.run(upTo: seconds(0.3))
        // The audio clock starts where the picture is: the frames play on from the landing, none
        // skipped (audio ahead) and none held (audio behind).
        let after = harness.video.frames.map(\.pts)
        let expected = reference.map(\.pts).filter { $0 > landing.pts }.prefix(after.count)
        #expect(after.count >= 10, "\(after.count) frames in 0.5 s after the release")
        #expect(Array(expected) == after, "frames after the release: \(after.map(\.seconds))")
    }
    @Test func nearTheEndTheDragDecodesOnAndPlayingStillEnds() async throws {
        let (harness, reference) = try Self.playing()
        // In the last GOP (4-6 s) the demuxer has read the input's end long since.
        #expect(await harness.run(upTo: seconds(6)) { harness.player.currentTime > seconds(4.2) })
        harness.player.beginScrubbing()
        await Self.drag(harness, from: 4.4, to: 5.2, over: 0.4)
        let settled = ResultBox<MediaTime>()
        harness.player.endScrubbing { settled.set($0) }
        #expect(await harness.run(upTo: seconds(1)) { settled.value != nil })
        let steps = harness.player.scrubReport.steps
        #expect(!steps.isEmpty && steps.allSatisfy { $0.kind == .decodeOn }, "\(steps.map(\.kind))")
        #expect(harness.video.currentFrame?.pts == Self.exactFrame(reference, at: ms(5200)).pts)
        // Plays on to the end, which is still reported.
        #expect(await harness.run(upTo: seconds(3)) { harness.ended })
        #expect(harness.video.currentFrame?.pts == reference.last?.pts)
    }
}
