import Testing
@testable import ReelCore

/// The demux side of a seamless loop on its own: no demuxer, no thread.
@Suite struct LoopMachineTests {
    static func samples(_ count: Int64, _ rate: Int32 = 48_000) -> MediaTime { MediaTime(value: count, timescale: rate) }
    /// A 3 s item (an AAC clip: 144 000 samples at 48 kHz behind an edit list).
    static let item = LoopMachine.Item(start: .zero, duration: MediaTime(value: 3, timescale: 1))

    static func looping(_ item: LoopMachine.Item? = item) -> LoopMachine {
        var machine = LoopMachine(looping: true)
        _ = machine.handle(.opened(item))
        return machine
    }

    @Test func theEndOfTheInputReadsTheNextPassTimedOnePassLater() {
        var machine = Self.looping()
        _ = machine.packet(.video, pts: .zero, duration: nil)
        #expect(machine.handle(.endOfInput) == [.readNextPass(start: .zero, pass: 1, offset: MediaTime(value: 3, timescale: 1))])
        #expect(machine.packet(.video, pts: .zero, duration: nil).offset == MediaTime(value: 3, timescale: 1))
        #expect(machine.packet(.audio, pts: Self.samples(1024), duration: Self.samples(1024)).offset
            == MediaTime(value: 3, timescale: 1))
        #expect(machine.handle(.endOfInput) == [.readNextPass(start: .zero, pass: 2, offset: MediaTime(value: 6, timescale: 1))])
    }

    /// Pass k starts at k × duration, computed afresh: after a thousand passes of an item whose
    /// duration is no whole number of milliseconds, not one tick has been lost.
    @Test func aThousandPassesLaterTheOffsetIsExact() {
        let duration = MediaTime(value: 176_400 + 17, timescale: 44_100)
        var machine = Self.looping(LoopMachine.Item(start: .zero, duration: duration))
        for _ in 0..<1000 {
            _ = machine.packet(.audio, pts: .zero, duration: Self.samples(1024, 44_100))
            _ = machine.handle(.endOfInput)
        }
        #expect(machine.pass == 1000)
        #expect(machine.offset == MediaTime(value: (176_400 + 17) * 1000, timescale: 44_100))
    }

    @Test func anItemThatIsNotLoopingOrCannotLoopEnds() {
        var off = LoopMachine(looping: false)
        _ = off.handle(.opened(Self.item))
        _ = off.packet(.video, pts: .zero, duration: nil)
        #expect(off.handle(.endOfInput) == [.endInput])

        var live = Self.looping(LoopMachine.Item(start: .zero, duration: .indefinite))
        _ = live.packet(.video, pts: .zero, duration: nil)
        #expect(live.handle(.endOfInput) == [.endInput], "no duration: nothing to time the next pass by")
        #expect(!live.loopsSeamlessly)

        var unopened = LoopMachine(looping: true)
        _ = unopened.handle(.opened(nil))
        #expect(unopened.handle(.endOfInput) == [.endInput])
    }

    /// A pass that reads nothing (the seek to the start found no packet) ends the item instead
    /// of spinning from end to end.
    @Test func aPassWithNoPacketEndsTheItem() {
        var machine = Self.looping()
        _ = machine.packet(.audio, pts: .zero, duration: Self.samples(1024))
        #expect(machine.handle(.endOfInput).count == 1)
        _ = machine.packet(.other, pts: .zero, duration: nil)
        #expect(machine.handle(.endOfInput) == [.endInput], "a caption packet is no media")
    }

    @Test func turningLoopingOffEndsAtTheNextEndAndASeekStartsAtPassZero() {
        var machine = Self.looping()
        _ = machine.packet(.video, pts: .zero, duration: nil)
        _ = machine.handle(.endOfInput)
        _ = machine.handle(.restarted)
        #expect(machine.pass == 0)
        #expect(machine.packet(.video, pts: .zero, duration: nil).offset == .zero)
        _ = machine.handle(.loopingChanged(false))
        #expect(machine.handle(.endOfInput) == [.endInput])
    }

    /// The last AAC frame runs 384 samples past the edit list's end (MP4 says so only in the
    /// packet's duration, 640 of 1024): the decoder's whole frame is cut to the end, and audio
    /// wholly past it is left out. Video is never cut.
    @Test func audioPastTheItemsEndIsTrimmed() {
        var machine = Self.looping()
        let frame = Self.samples(1024)
        let last = machine.packet(.audio, pts: Self.samples(143_360), duration: Self.samples(640), decodes: frame)
        #expect(last.trimEnd == Self.samples(384))
        #expect(!last.drop)
        let inside = machine.packet(.audio, pts: Self.samples(142_336), duration: frame, decodes: frame)
        #expect(inside.trimEnd == .zero)
        let straddling = machine.packet(.audio, pts: Self.samples(143_500), duration: frame)
        #expect(straddling.trimEnd == Self.samples(143_500 + 1024 - 144_000))
        #expect(machine.packet(.audio, pts: Self.samples(144_000), duration: frame).drop)
        #expect(machine.packet(.video, pts: MediaTime(value: 4, timescale: 1), duration: nil) == .init(offset: .zero))

        var once = LoopMachine(looping: false)
        _ = once.handle(.opened(Self.item))
        #expect(once.packet(.audio, pts: Self.samples(143_360), duration: Self.samples(640), decodes: frame).trimEnd == .zero,
                "played once, an item plays all its decoder gives, as FFmpeg does")
    }
}
