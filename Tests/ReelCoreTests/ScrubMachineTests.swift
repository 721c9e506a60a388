import Testing
@testable import ReelCore

/// ScrubMachine alone: which target is chased, how each is reached, when previews fall back
/// to keyframes, what the release does. Times are plain numbers; nothing runs.
@Suite struct ScrubMachineTests {
    static func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }
    static let frame = MediaTime(value: 1, timescale: 30)
    /// A 10 s clip with a keyframe every 2 s.
    static func media(audio: Bool = false) -> ScrubMachine.Media {
        ScrubMachine.Media(keyframes: (0..<5).map { ms($0 * 2000) }, frameDuration: frame, hasAudio: audio)
    }

    @Test func aDragPausesAndTheReleaseResumesOnlyWhatWasPlaying() {
        var playing = ScrubMachine()
        #expect(playing.begin(media: Self.media(), isPlaying: true, frameOnScreen: .zero, now: .zero) == [.pausePlayback])
        #expect(playing.end(at: .zero, now: Self.ms(10)) == [.settled(.zero), .resumePlayback])
        #expect(!playing.isActive)

        var paused = ScrubMachine()
        #expect(paused.begin(media: Self.media(), isPlaying: false, frameOnScreen: .zero, now: .zero) == [])
        #expect(paused.end(at: .zero, now: Self.ms(10)) == [.settled(.zero)])
    }

    @Test func oneSeekInFlightAndOnlyTheNewestTargetIsChased() {
        var machine = ScrubMachine()
        _ = machine.begin(media: Self.media(), isPlaying: false, frameOnScreen: .zero, now: .zero)
        #expect(machine.move(to: Self.ms(5000), now: .zero) == [.seek(Self.ms(5000), .exact)])
        // Targets while the seek runs are remembered, not sent.
        #expect(machine.move(to: Self.ms(5500), now: Self.ms(16)) == [])
        #expect(machine.move(to: Self.ms(7200), now: Self.ms(33)) == [])
        #expect(machine.move(to: Self.ms(7300), now: Self.ms(50)) == [])
        // Completion sends the newest (7.3 s) only; 5.5 and 7.2 are dropped.
        #expect(machine.completed(frame: Self.ms(4967), now: Self.ms(60)) == [.seek(Self.ms(7300), .exact)])
        #expect(machine.inFlight?.target == Self.ms(7300))
        // Nothing newer: the chase rests.
        #expect(machine.completed(frame: Self.ms(7267), now: Self.ms(90)) == [])
        #expect(machine.inFlight == nil)
    }

    @Test func aForwardTargetInTheSameGOPDecodesOnAndOthersFlush() {
        var machine = ScrubMachine()
        _ = machine.begin(media: Self.media(), isPlaying: false, frameOnScreen: Self.ms(2100), now: .zero)
        // Forward, same GOP (2–4 s): decode on.
        #expect(machine.move(to: Self.ms(3500), now: .zero) == [.seek(Self.ms(3500), .decodeOn)])
        _ = machine.completed(frame: Self.ms(3500), now: Self.ms(20))
        // Backward in the same GOP: the decoder is past it, so from the keyframe.
        #expect(machine.move(to: Self.ms(2500), now: Self.ms(30)) == [.seek(Self.ms(2500), .exact)])
        _ = machine.completed(frame: Self.ms(2500), now: Self.ms(60))
        // Forward past the next keyframe: from that keyframe.
        #expect(machine.move(to: Self.ms(4100), now: Self.ms(70)) == [.seek(Self.ms(4100), .exact)])
    }

    @Test func aTargetInsideTheFrameOnScreenNeedsNoSeek() {
        var machine = ScrubMachine()
        _ = machine.begin(media: Self.media(), isPlaying: false, frameOnScreen: Self.ms(1000), now: .zero)
        // 1000 ms shows until 1033.3 ms.
        #expect(machine.move(to: Self.ms(1020), now: .zero) == [])
        #expect(machine.inFlight == nil)
        #expect(machine.move(to: Self.ms(1040), now: Self.ms(16)) == [.seek(Self.ms(1040), .decodeOn)])
    }

    @Test func keyframePreviewsOnlyWhileExactFramesCannotKeepUp() {
        var config = ScrubMachine.Configuration()
        config.exactBudget = Self.ms(100)
        var machine = ScrubMachine(configuration: config)
        _ = machine.begin(media: Self.media(), isPlaying: false, frameOnScreen: .zero, now: .zero)
        #expect(machine.move(to: Self.ms(3900), now: .zero) == [.seek(Self.ms(3900), .exact)])
        // That exact frame took 250 ms: too slow to follow a finger.
        _ = machine.move(to: Self.ms(6500), now: Self.ms(100))
        #expect(machine.completed(frame: Self.ms(3900), now: Self.ms(250)) == [.seek(Self.ms(6500), .keyframe)])
        #expect(machine.exactCost == Self.ms(250))
        // The thumb rests there: its exact frame follows, decoded on from the keyframe.
        #expect(machine.completed(frame: Self.ms(6000), now: Self.ms(280)) == [.seek(Self.ms(6500), .decodeOn)])
        _ = machine.move(to: Self.ms(6600), now: Self.ms(300))
        #expect(machine.completed(frame: Self.ms(6500), now: Self.ms(310)) == [.seek(Self.ms(6600), .decodeOn)])
        // Preview (30 ms) + decode on (30 ms) = 60 ms: exact frames keep up again.
        #expect(machine.exactCost == Self.ms(60))
        _ = machine.completed(frame: Self.ms(6600), now: Self.ms(340))
        #expect(machine.move(to: Self.ms(8500), now: Self.ms(350)) == [.seek(Self.ms(8500), .exact)])
    }

    @Test func theReleaseWaitsForTheSeekOutThenLandsExactly() {
        var machine = ScrubMachine()
        _ = machine.begin(media: Self.media(), isPlaying: true, frameOnScreen: .zero, now: .zero)
        _ = machine.move(to: Self.ms(5000), now: .zero)
        #expect(machine.end(at: Self.ms(9000), now: Self.ms(10)) == [])
        #expect(machine.completed(frame: Self.ms(4967), now: Self.ms(50)) == [.seek(Self.ms(9000), .exact)])
        #expect(machine.completed(frame: Self.ms(8967), now: Self.ms(90)) == [.settled(Self.ms(9000)), .resumePlayback])
        #expect(machine.phase == .idle)
    }

    @Test func theReleaseNeverPreviewsAKeyframe() {
        var config = ScrubMachine.Configuration()
        config.exactBudget = Self.ms(10)
        var machine = ScrubMachine(configuration: config)
        _ = machine.begin(media: Self.media(), isPlaying: false, frameOnScreen: .zero, now: .zero)
        _ = machine.move(to: Self.ms(3000), now: .zero)
        _ = machine.completed(frame: Self.ms(3000), now: Self.ms(500))
        #expect(machine.move(to: Self.ms(7000), now: Self.ms(510)) == [.seek(Self.ms(7000), .keyframe)])
        #expect(machine.end(at: Self.ms(7000), now: Self.ms(520)) == [])
        // The preview showed 6 s: the release goes on to the exact frame.
        #expect(machine.completed(frame: Self.ms(6000), now: Self.ms(530)) == [.seek(Self.ms(7000), .decodeOn)])
        #expect(machine.completed(frame: Self.ms(7000), now: Self.ms(560)) == [.settled(Self.ms(7000))])
    }

    @Test func withAudioAReleaseOnTheFrameShownSettlesWithNoSecondSeek() {
        // The engine keeps the audio in step through a decode-on: the release needs no flush.
        var machine = ScrubMachine()
        _ = machine.begin(media: Self.media(audio: true), isPlaying: true, frameOnScreen: Self.ms(2000), now: .zero)
        #expect(machine.move(to: Self.ms(2500), now: .zero) == [.seek(Self.ms(2500), .decodeOn)])
        _ = machine.completed(frame: Self.ms(2500), now: Self.ms(20))
        #expect(machine.end(at: Self.ms(2510), now: Self.ms(30)) == [.settled(Self.ms(2510)), .resumePlayback])
        #expect(machine.inFlight == nil)
        #expect(machine.phase == .idle)

        // Let go while the decode-on to the release point is out: its frame settles the drag.
        var inFlight = ScrubMachine()
        _ = inFlight.begin(media: Self.media(audio: true), isPlaying: true, frameOnScreen: Self.ms(2000), now: .zero)
        #expect(inFlight.move(to: Self.ms(2500), now: .zero) == [.seek(Self.ms(2500), .decodeOn)])
        #expect(inFlight.end(at: Self.ms(2500), now: Self.ms(5)) == [])
        #expect(inFlight.completed(frame: Self.ms(2500), now: Self.ms(20)) == [.settled(Self.ms(2500)), .resumePlayback])

        // A release forward in the GOP of the frame on screen decodes on, with audio too.
        var forward = ScrubMachine()
        _ = forward.begin(media: Self.media(audio: true), isPlaying: true, frameOnScreen: Self.ms(2000), now: .zero)
        #expect(forward.move(to: Self.ms(2500), now: .zero) == [.seek(Self.ms(2500), .decodeOn)])
        #expect(forward.end(at: Self.ms(3000), now: Self.ms(5)) == [])
        #expect(forward.completed(frame: Self.ms(2500), now: Self.ms(20)) == [.seek(Self.ms(3000), .decodeOn)])
        #expect(forward.completed(frame: Self.ms(3000), now: Self.ms(40)) == [.settled(Self.ms(3000)), .resumePlayback])

        // Backward, or in another GOP, the release seeks exactly.
        var back = ScrubMachine()
        _ = back.begin(media: Self.media(audio: true), isPlaying: false, frameOnScreen: Self.ms(2500), now: .zero)
        #expect(back.end(at: Self.ms(2100), now: .zero) == [.seek(Self.ms(2100), .exact)])
    }

    @Test func aReleaseWhoseSeekFindsNothingEndsTheDrag() {
        var machine = ScrubMachine()
        _ = machine.begin(media: Self.media(), isPlaying: false, frameOnScreen: nil, now: .zero)
        #expect(machine.end(at: Self.ms(3000), now: .zero) == [.seek(Self.ms(3000), .exact)])
        #expect(machine.completed(frame: nil, now: Self.ms(10)) == [.settled(Self.ms(3000))])
        // Events after the drag change nothing.
        #expect(machine.move(to: Self.ms(1000), now: Self.ms(20)) == [])
        #expect(machine.completed(frame: nil, now: Self.ms(30)) == [])
    }

    @Test func gopsAreFoundByTheKeyframeAtOrBefore() {
        var machine = ScrubMachine()
        _ = machine.begin(media: Self.media(), isPlaying: false, frameOnScreen: nil, now: .zero)
        #expect(machine.gop(of: Self.ms(-1)) == nil)
        #expect(machine.gop(of: .zero) == 0)
        #expect(machine.gop(of: Self.ms(1999)) == 0)
        #expect(machine.gop(of: Self.ms(2000)) == 1)
        #expect(machine.gop(of: Self.ms(99_000)) == 4)
    }
}
