import Testing
@testable import ReelCore

/// The presentation state machine on its own: no thread, no clock, no FFmpeg.
@Suite struct PresentationMachineTests {
    typealias PM = PresentationMachine

    static func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }
    /// Frame `index` of a 30 fps stream.
    static func frame(_ index: Int) -> PM.FrameHead {
        PM.FrameHead(pts: MediaTime(value: Int64(index), timescale: 30), duration: MediaTime(value: 1, timescale: 30))
    }
    static func frames(_ range: Range<Int>) -> [PM.FrameHead] { range.map(frame) }

    static let videoOnly = PM.Streams(hasVideo: true, hasAudio: false, duration: MediaTime(value: 2, timescale: 1),
                                      frameDuration: MediaTime(value: 1, timescale: 30))
    static let audioAndVideo = PM.Streams(hasVideo: true, hasAudio: true, duration: MediaTime(value: 2, timescale: 1),
                                          frameDuration: MediaTime(value: 1, timescale: 30))

    static func buffers(_ video: [PM.FrameHead], serial: Int = 0, videoEnded: Bool = false,
                        audio: MediaTime = .zero, audioEnded: Bool = false, audioClock: MediaTime? = nil) -> PM.Buffers {
        var buffers = PM.Buffers(serial: serial)
        buffers.video = video
        buffers.videoEnded = videoEnded
        buffers.audioQueued = audio
        buffers.audioEnded = audioEnded
        buffers.audioClock = audioClock
        return buffers
    }

    /// A machine that opened `streams` and is ready, showing frame 0, with time running.
    static func playing(_ streams: PM.Streams = videoOnly) -> PM {
        var machine = PM()
        _ = machine.handle(.opened(streams), now: .zero)
        _ = machine.step(now: .zero, buffers: buffers(frames(0..<4), audio: ms(500)))
        _ = machine.handle(.runClock(rate: 1), now: .zero)
        return machine
    }

    static func presents(_ step: PM.Step) -> [PM.Action] {
        step.actions.filter { if case .present = $0 { true } else { false } }
    }

    @Test func theFirstFrameShowsAtOnceWhilePausedAndReadinessWaitsForTheBuffer() {
        var machine = PM()
        #expect(machine.step(now: .zero, buffers: Self.buffers([])).wantsData, "opening waits for data")
        _ = machine.handle(.opened(Self.audioAndVideo), now: .zero)
        #expect(machine.phase == .prerolling)
        let first = machine.step(now: Self.ms(10), buffers: Self.buffers(Self.frames(0..<1)))
        #expect(first.actions.contains(.present(dropping: 0, firstOfSequence: true, avOffset: nil)))
        #expect(first.actions.contains(.reportFirstFrame))
        #expect(!first.actions.contains(.reportReady), "one frame and no audio is not enough to start")
        #expect(first.wantsData)
        let more = machine.step(now: Self.ms(20), buffers: Self.buffers(Self.frames(1..<3), audio: Self.ms(100)))
        #expect(!more.actions.contains(.reportReady), "100 ms of audio is not enough")
        let ready = machine.step(now: Self.ms(30), buffers: Self.buffers(Self.frames(1..<3), audio: Self.ms(200)))
        #expect(ready.actions.contains(.reportReady))
        #expect(Self.presents(ready).isEmpty, "paused: nothing more is shown")
        #expect(machine.phase == .playing)
        #expect(!machine.timeRuns)
        #expect(ready.wake == nil, "paused and ready: nothing to wake for")
    }

    /// An item that never ran may count as ready on its first picture alone (a pre-rendered
    /// page decodes no further); its first run then waits for the full start buffer with time
    /// stopped, and that wait is not a stall.
    @Test func theIdleRuleReadiesOnTheFirstPictureAndTheFirstRunWaitsForTheStartBuffer() {
        var configuration = PM.Configuration()
        configuration.idleStartVideoFrames = 0
        var machine = PM(configuration: configuration)
        _ = machine.handle(.opened(Self.audioAndVideo), now: .zero)
        let first = machine.step(now: Self.ms(10), buffers: Self.buffers(Self.frames(0..<1), audio: Self.ms(200)))
        #expect(first.actions.contains(.reportFirstFrame))
        #expect(first.actions.contains(.reportReady), "paused on its first picture, with the audio start buffered")
        #expect(machine.phase == .playing)

        _ = machine.handle(.runClock(rate: 1), now: Self.ms(100))
        #expect(machine.phase == .prerolling, "the first run buffers the start")
        #expect(!machine.timeRuns)
        let waiting = machine.step(now: Self.ms(150), buffers: Self.buffers(Self.frames(1..<2), audio: Self.ms(200)))
        #expect(!waiting.actions.contains(.reportStall(true)))
        #expect(!waiting.actions.contains(.reportReady), "ready was reported once")
        #expect(Self.presents(waiting).isEmpty)
        #expect(machine.currentTime == .zero, "time has not moved")
        let started = machine.step(now: Self.ms(200), buffers: Self.buffers(Self.frames(1..<3), audio: Self.ms(200)))
        #expect(machine.timeRuns)
        #expect(!started.actions.contains(.reportStall(true)))
        #expect(!started.actions.contains(.reportReady))
        // Time runs from the moment the start was buffered.
        let due = machine.step(now: Self.ms(200) + MediaTime(value: 1, timescale: 30), buffers: Self.buffers(Self.frames(1..<3)))
        #expect(Self.presents(due) == [.present(dropping: 0, firstOfSequence: false, avOffset: nil)])

        // Pausing and playing again later is not a first run: no new preroll.
        _ = machine.handle(.stopClock, now: Self.ms(300))
        _ = machine.handle(.runClock(rate: 1), now: Self.ms(400))
        #expect(machine.phase == .playing)
    }

    /// With the default rule (the same start buffer either way) the first run starts at once.
    @Test func withoutTheIdleRuleTheFirstRunStartsAtOnce() {
        var machine = PM()
        _ = machine.handle(.opened(Self.videoOnly), now: .zero)
        _ = machine.step(now: .zero, buffers: Self.buffers(Self.frames(0..<3)))
        #expect(machine.phase == .playing)
        _ = machine.handle(.runClock(rate: 1), now: .zero)
        #expect(machine.timeRuns)
    }

    @Test func framesAreShownWhenTheirTimeComesAndTheWakeIsTheNextFrame() {
        var machine = Self.playing()
        let queue = Self.frames(1..<4)
        let early = machine.step(now: Self.ms(20), buffers: Self.buffers(queue))
        #expect(Self.presents(early).isEmpty, "frame 1 is due at 33 ms")
        let due = MediaTime(value: 1, timescale: 30)
        #expect(early.wake == due, "wakes when frame 1 is due")
        let onTime = machine.step(now: due, buffers: Self.buffers(queue))
        #expect(Self.presents(onTime) == [.present(dropping: 0, firstOfSequence: false, avOffset: nil)])
        #expect(onTime.actions.contains(.tick(due)))
    }

    @Test func lateFramesAreDroppedAndTheDueOneIsShownAtDoubleRate() {
        var machine = Self.playing()
        _ = machine.handle(.runClock(rate: 2), now: .zero)
        // 100 ms of host time at 2x is 200 ms of media: frame 6 is due, 1…5 are late.
        let step = machine.step(now: Self.ms(100), buffers: Self.buffers(Self.frames(1..<8)))
        #expect(Self.presents(step) == [.present(dropping: 5, firstOfSequence: false, avOffset: nil)])
        #expect(machine.droppedFrames == 5)
        #expect(machine.currentTime == Self.ms(200))
    }

    @Test func theAudioClockLeadsAndTheOffsetIsReported() {
        var machine = Self.playing(Self.audioAndVideo)
        // The audio clock says 70 ms although only 50 ms of host time passed: frame 2 (66.7 ms) is due.
        let step = machine.step(now: Self.ms(50), buffers: Self.buffers(Self.frames(1..<5), audio: Self.ms(400), audioClock: Self.ms(70)))
        guard case .present(let dropped, _, let offset)? = Self.presents(step).first else {
            Issue.record("nothing presented: \(step.actions)")
            return
        }
        #expect(dropped == 1)
        #expect(offset.map { abs($0.seconds - (2.0 / 30 - 0.07)) < 1e-9 } == true)
        #expect(machine.currentTime == Self.ms(70))
    }

    @Test func runningDryStallsAndTheBufferResumes() {
        var machine = Self.playing()
        let step = machine.step(now: Self.ms(100), buffers: Self.buffers([]))
        #expect(step.actions.contains(.reportStall(true)))
        #expect(step.actions.contains(.runAudio(false)) == false, "audio never ran in a video-only item")
        #expect(machine.phase == .stalled)
        #expect(!machine.timeRuns)
        let frozen = machine.currentTime
        #expect(machine.step(now: Self.ms(300), buffers: Self.buffers(Self.frames(3..<4))).actions.isEmpty)
        #expect(machine.mediaTime(at: Self.ms(400)) == frozen, "time does not move while stalled")
        let back = machine.step(now: Self.ms(500), buffers: Self.buffers(Self.frames(3..<6)))
        #expect(back.actions.contains(.reportStall(false)))
        #expect(machine.phase == .playing)
    }

    @Test(arguments: [0.0, 0.02, 0.5, 1.0])
    func anExactSeekLandsOnItsTarget(_ target: Double) {
        var machine = Self.playing()
        let time = MediaTime(seconds: target, preferredTimescale: 1000)
        let seek = PM.Seek(id: 7, serial: 1, target: time, discardUntil: time)
        _ = machine.handle(.seek(seek), now: Self.ms(40))
        #expect(machine.phase == .seeking(seek))
        #expect(!machine.timeRuns)
        // The decoder held back frames before the target: the first one given is the one whose interval holds it.
        let index = Int((target * 30).rounded(.down))
        let wrong = machine.step(now: Self.ms(50), buffers: Self.buffers(Self.frames(0..<3)))
        #expect(wrong.actions.isEmpty, "frames of the old serial are not shown")
        let step = machine.step(now: Self.ms(60), buffers: Self.buffers(Self.frames(index..<(index + 3)), serial: 1))
        #expect(step.actions.contains(.present(dropping: 0, firstOfSequence: true, avOffset: nil)))
        #expect(step.actions.contains(.reportSeekCompleted(id: 7, landed: time)))
        #expect(machine.currentTime == time)
        #expect(machine.timeRuns, "time goes on after the seek, as it ran before it")
    }

    @Test func aToleranceSeekLandsOnTheFirstFrameItGets() {
        var machine = Self.playing()
        let seek = PM.Seek(id: 1, serial: 1, target: Self.ms(900), discardUntil: .negativeInfinity)
        _ = machine.handle(.seek(seek), now: .zero)
        let step = machine.step(now: Self.ms(5), buffers: Self.buffers(Self.frames(30..<33), serial: 1))
        #expect(step.actions.contains(.reportSeekCompleted(id: 1, landed: MediaTime(value: 1, timescale: 1))))
    }

    @Test func theEndComesOnceAfterTheLastFramesTime() {
        var machine = Self.playing()
        _ = machine.step(now: MediaTime(value: 1, timescale: 30), buffers: Self.buffers(Self.frames(1..<2), videoEnded: true))
        let early = machine.step(now: Self.ms(50), buffers: Self.buffers([], videoEnded: true))
        #expect(!early.actions.contains(.reportEnd), "frame 1 still shows until 66.7 ms")
        let end = machine.step(now: Self.ms(70), buffers: Self.buffers([], videoEnded: true))
        #expect(end.actions.contains(.reportEnd))
        #expect(machine.phase == .ended)
        #expect(machine.currentTime == Self.ms(70), "time stops where the clock was when the end was noticed")
        #expect(machine.mediaTime(at: Self.ms(500)) == Self.ms(70))
        #expect(machine.step(now: Self.ms(90), buffers: Self.buffers([], videoEnded: true)).actions.isEmpty)
        // Looping is a seek to the start.
        let loop = PM.Seek(id: -1, serial: 1, target: .zero, discardUntil: .zero)
        _ = machine.handle(.seek(loop), now: Self.ms(100))
        let again = machine.step(now: Self.ms(100), buffers: Self.buffers(Self.frames(0..<3), serial: 1))
        #expect(again.actions.contains(.present(dropping: 0, firstOfSequence: true, avOffset: nil)))
        #expect(!again.actions.contains { if case .reportSeekCompleted = $0 { true } else { false } }, "a loop is nobody's seek")
        #expect(machine.phase == .playing)
    }

    @Test func anInputThatEndsWithNothingDecodedFails() {
        var machine = PM()
        _ = machine.handle(.opened(Self.videoOnly), now: .zero)
        let step = machine.step(now: .zero, buffers: Self.buffers([], videoEnded: true))
        #expect(step.actions.contains(.reportNoProgress(.nothingDecoded)))
        #expect(machine.phase == .failed)
        #expect(!step.wantsData && step.wake == nil, "a failed item waits for nothing")
    }

    @Test func anInputCutShortBeforeItsFirstPacketEndsInsteadOfFailing() {
        // An MP4 that ends at its moov: FFmpeg plays what it holds (nothing) and exits 0.
        for streams in [Self.videoOnly, PM.Streams(hasVideo: false, hasAudio: true, duration: .indefinite, frameDuration: .zero)] {
            var machine = PM()
            _ = machine.handle(.opened(streams), now: .zero)
            var buffers = Self.buffers([], videoEnded: true, audioEnded: true)
            buffers.inputHeldNoMedia = true
            let step = machine.step(now: .zero, buffers: buffers)
            #expect(step.actions.contains(.reportReady) && step.actions.contains(.reportEnd), "\(step.actions)")
            #expect(!step.actions.contains(.reportNoProgress(.nothingDecoded)))
            #expect(machine.phase == .ended)
        }
    }

    @Test func videoThatDecodesNothingLeavesTheAudioToPlay() {
        var machine = PM()
        _ = machine.handle(.opened(Self.audioAndVideo), now: .zero)
        let step = machine.step(now: .zero, buffers: Self.buffers([], videoEnded: true, audio: Self.ms(300)))
        #expect(step.actions.contains(.reportFirstFrame))
        #expect(step.actions.contains(.reportReady))
        #expect(machine.phase == .playing)
        let none = PM.Streams(hasVideo: false, hasAudio: true, duration: .indefinite, frameDuration: .zero)
        var silent = PM()
        _ = silent.handle(.opened(none), now: .zero)
        let waiting = silent.step(now: .zero, buffers: Self.buffers([]))
        #expect(waiting.actions.isEmpty && waiting.wantsData, "audio only: the first frame is the first audio")
        #expect(silent.step(now: .zero, buffers: Self.buffers([], audioEnded: true)).actions.contains(.reportNoProgress(.nothingDecoded)))
    }

    @Test func aTimestampJumpIsFollowedNotWaitedFor() {
        var machine = Self.playing()
        // The next frame claims to be 50 s later: shown now, and time follows it.
        let jump = PM.FrameHead(pts: MediaTime(value: 50, timescale: 1), duration: nil)
        let step = machine.step(now: Self.ms(40), buffers: Self.buffers([jump, PM.FrameHead(pts: MediaTime(value: 1501, timescale: 30))]))
        #expect(Self.presents(step).count == 1)
        #expect(step.wake.map { $0 < Self.ms(100) } == true, "the frame after it is due a frame later")
    }

    @Test func runAudioFollowsWhetherTimeRuns() {
        var machine = PM()
        _ = machine.handle(.opened(Self.audioAndVideo), now: .zero)
        _ = machine.step(now: .zero, buffers: Self.buffers(Self.frames(0..<3), audio: Self.ms(300)))
        #expect(machine.handle(.runClock(rate: 1), now: .zero) == [.runAudio(true)])
        #expect(machine.handle(.runClock(rate: 2), now: Self.ms(10)).isEmpty, "a new rate keeps audio running")
        #expect(machine.handle(.stopClock, now: Self.ms(20)) == [.runAudio(false)])
        #expect(machine.currentTime == Self.ms(30), "10 ms at 1x, then 10 ms at 2x")
    }

    @Test func aSeekBeforeTheItemOpensWaitsForIt() {
        var machine = PM()
        let start = PM.Seek(id: -1, serial: 1, target: Self.ms(500), discardUntil: Self.ms(500))
        _ = machine.handle(.seek(start), now: .zero)
        #expect(machine.phase == .opening)
        _ = machine.handle(.opened(Self.videoOnly), now: .zero)
        #expect(machine.phase == .seeking(start))
        let step = machine.step(now: Self.ms(5), buffers: Self.buffers(Self.frames(15..<18), serial: 1))
        #expect(step.actions.contains(.reportFirstFrame), "the first frame of an item that starts later")
        #expect(step.actions.contains(.reportReady))
        #expect(machine.currentTime == Self.ms(500))
    }
}
