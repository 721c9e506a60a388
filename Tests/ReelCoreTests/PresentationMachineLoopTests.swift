import Testing
@testable import ReelCore

/// A looping item's passes in the presentation machine: time runs on into the next pass
/// (never restarting), each crossing is reported once, and times map back to the item's.
@Suite struct PresentationMachineLoopTests {
    typealias PM = PresentationMachine
    typealias T = PresentationMachineTests

    static let duration = MediaTime(value: 1, timescale: 1)
    /// A 1 s item at 30 fps, video only.
    static let streams = PM.Streams(hasVideo: true, hasAudio: false, duration: duration,
                                    frameDuration: MediaTime(value: 1, timescale: 30))
    static func pass(_ index: Int, serial: Int = 0) -> PM.Pass {
        PM.Pass(serial: serial, index: index, start: .zero, duration: duration)
    }

    /// Frames `range` of the continuous timeline (frame 30 is pass 1's first).
    static func frames(_ range: Range<Int>) -> [PM.FrameHead] { T.frames(range) }

    /// Runs a playing machine frame by frame from frame 1 to `last`, feeding the demuxer's
    /// passes as it would (a pass is begun before any of its frames is queued).
    static func run(through last: Int, machine: inout PM) -> (presented: [(at: MediaTime, pts: MediaTime)], loops: Int, ended: Bool) {
        var presented: [(MediaTime, MediaTime)] = []
        var loops = 0
        var ended = false
        var next = 1
        var now = MediaTime.zero
        while next <= last {
            let queued = Self.frames(next..<min(next + 3, last + 1))
            if let head = queued.last, head.pts >= Self.duration {
                let index = Int(head.pts.seconds / Self.duration.seconds + 1e-9)
                _ = machine.handle(.passBegan(Self.pass(index)), now: now)
            }
            let step = machine.step(now: now, buffers: T.buffers(queued))
            for action in step.actions {
                switch action {
                case .present: presented.append((now, queued[0].pts)); next += 1
                case .reportLoop: loops += 1
                case .reportEnd: ended = true
                default: break
                }
            }
            guard let wake = step.wake else { break }
            now = wake
        }
        return (presented, loops, ended)
    }

    @Test func timeRunsOnIntoTheNextPassAtAnUnbrokenCadence() {
        var machine = T.playing(Self.streams)
        let (presented, loops, ended) = Self.run(through: 95, machine: &machine)
        #expect(presented.count == 95)
        for (a, b) in zip(presented, presented.dropFirst()) {
            #expect(b.at - a.at == MediaTime(value: 1, timescale: 30), "every frame one interval after the one before")
        }
        #expect(presented.last?.at == MediaTime(value: 95, timescale: 30), "the clock never restarted")
        #expect(loops == 3, "passes 1, 2 and 3 began")
        #expect(!ended)
        #expect(machine.pass == 3)
        let now = MediaTime(value: 95, timescale: 30)
        #expect(machine.mediaTime(at: now) == now, "not clamped to the item's duration")
        #expect(machine.itemTime(at: now) == MediaTime(value: 5, timescale: 30))
    }

    @Test func itemTimesAreWithinAPassAndTheLastPassKeepsItsEnd() {
        var machine = T.playing(Self.streams)
        #expect(machine.itemTime(of: MediaTime(value: 3, timescale: 2)) == MediaTime(value: 3, timescale: 2),
                "no pass begun: times are the item's")
        _ = machine.handle(.passBegan(Self.pass(2)), now: .zero)
        #expect(machine.itemTime(of: Self.duration) == .zero, "a pass boundary is the next pass's start")
        #expect(machine.itemTime(of: MediaTime(value: 5, timescale: 2)) == MediaTime(value: 1, timescale: 2))
        #expect(machine.itemTime(of: MediaTime(value: 3, timescale: 1)) == Self.duration,
                "the end of the last pass begun is the item's end")
        #expect(machine.passIndex(containing: MediaTime(value: 2_999_999, timescale: 1_000_000)) == 2)
    }

    @Test func aStalePassOrASeekLeavesTheTimelineAsTheItems() {
        var machine = T.playing(Self.streams)
        _ = machine.handle(.passBegan(Self.pass(1, serial: 7)), now: .zero)
        #expect(machine.loopPass == nil, "a pass of another serial is stale")
        _ = machine.handle(.passBegan(Self.pass(1)), now: .zero)
        #expect(machine.loopPass != nil)
        _ = machine.handle(.seek(PM.Seek(id: 1, serial: 1, target: .zero, discardUntil: .negativeInfinity)), now: .zero)
        #expect(machine.loopPass == nil && machine.pass == 0)
    }

    /// Looping turned off while the next pass was already read: that pass plays, and the item
    /// ends at its end, with the item's own end time.
    @Test func anItemThatStopsLoopingEndsAfterThePassAlreadyRead() {
        var machine = T.playing(Self.streams)
        _ = Self.run(through: 40, machine: &machine)
        var now = MediaTime(value: 40, timescale: 30)
        var ended = false
        var next = 41
        while !ended, now < MediaTime(value: 3, timescale: 1) {
            let queued = Self.frames(next..<60)
            let step = machine.step(now: now, buffers: T.buffers(queued, videoEnded: true))
            if step.actions.contains(where: { if case .present = $0 { true } else { false } }) { next += 1 }
            ended = step.actions.contains(.reportEnd)
            now = step.wake ?? now + MediaTime(value: 1, timescale: 30)
        }
        #expect(ended)
        #expect(machine.currentTime == MediaTime(value: 2, timescale: 1))
        #expect(machine.itemTime(of: machine.currentTime) == Self.duration)
    }
}
