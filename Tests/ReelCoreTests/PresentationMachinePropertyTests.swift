import PropertyBased
import Testing
@testable import ReelCore

/// The presentation machine against a simulated pipeline, over random orders of commands,
/// data arrivals and steps: whatever happens, what it decides stays sane.
@Suite("PresentationMachine properties")
struct PresentationMachinePropertyTests {
    typealias PM = PresentationMachine

    /// A pipeline as the machine sees it: a 60-frame, 30 fps video (and audio, optionally)
    /// that a "decoder" delivers in bursts, a seek restarting it at a keyframe (every 15 frames).
    struct Pipeline {
        static let frameCount = 60
        var serial = 0
        var nextFrame = 0
        var queue: [PM.FrameHead] = []
        var discardUntil: MediaTime?
        var audioQueued: MediaTime = .zero
        var hasAudio: Bool

        var videoEnded: Bool { nextFrame >= Self.frameCount && queue.isEmpty }

        mutating func decode(_ count: Int) {
            for _ in 0..<count where queue.count < 4 && nextFrame < Self.frameCount {
                let frame = PM.FrameHead(pts: MediaTime(value: Int64(nextFrame), timescale: 30), duration: MediaTime(value: 1, timescale: 30))
                nextFrame += 1
                // The decoder holds back what a seek discards (but the frame holding the target).
                if let limit = discardUntil, nextFrame < Self.frameCount,
                   MediaTime(value: Int64(nextFrame), timescale: 30) <= limit { continue }
                discardUntil = nil
                queue.append(frame)
            }
        }

        mutating func seek(to target: MediaTime, exact: Bool) {
            serial += 1
            let index = min(Self.frameCount - 1, max(0, Int((target.seconds * 30).rounded(.down))))
            nextFrame = index / 15 * 15
            queue = []
            discardUntil = exact ? target : nil
            audioQueued = .zero
        }

        func buffers(audioClock: MediaTime?) -> PM.Buffers {
            var buffers = PM.Buffers(serial: serial)
            buffers.video = queue
            buffers.videoEnded = videoEnded
            buffers.audioQueued = hasAudio ? audioQueued : .zero
            buffers.audioEnded = hasAudio && nextFrame >= Self.frameCount
            buffers.audioClock = audioClock
            return buffers
        }

        mutating func apply(_ actions: [PM.Action]) -> (presented: [(pts: MediaTime, first: Bool)], dropped: Int) {
            var presented: [(MediaTime, Bool)] = []
            var dropped = 0
            for action in actions {
                switch action {
                case .present(let dropping, let first, _):
                    #expect(dropping < queue.count, "drops \(dropping) of \(queue.count) and still presents")
                    queue.removeFirst(min(dropping, queue.count))
                    dropped += dropping
                    if !queue.isEmpty { presented.append((queue.removeFirst().pts, first)) }
                case .drop(let count):
                    #expect(count <= queue.count)
                    queue.removeFirst(min(count, queue.count))
                    dropped += count
                default:
                    break
                }
            }
            return (presented, dropped)
        }
    }

    /// What a run observed, to check invariants across steps.
    struct Observer {
        var lastPresented: (serial: Int, pts: MediaTime)?
        var firstFrames = 0
        var readies = 0
        var stalled = false
        var audioRunning = false
        var endedSerials: Set<Int> = []
        var completedSeeks: Set<Int> = []
        var pendingSeeks: [Int: PM.Seek] = [:]
    }

    @Test func decisionsStaySaneWhateverTheOrderOfEvents() async {
        let events = Gen.int(in: 0...999).array(of: 20...300)
        await propertyCheck(count: 300, input: events, Gen.bool) { codes, hasAudio in
            // Seconds of pure computation in all: each case lets the rest of the suite run
            // first, so this test never holds a concurrency thread for long.
            await Task.yield()
            run(codes, hasAudio: hasAudio)
        }
    }

    private func run(_ codes: [Int], hasAudio: Bool) {
        var machine = PM()
        var pipeline = Pipeline(hasAudio: hasAudio)
        var observer = Observer()
        var now = MediaTime.zero
        var seekID = 0
        let streams = PM.Streams(hasVideo: true, hasAudio: hasAudio, duration: MediaTime(value: 2, timescale: 1),
                                 frameDuration: MediaTime(value: 1, timescale: 30))
        var opened = false
        for code in codes {
            now = now + MediaTime(value: Int64(code % 7) * 5, timescale: 1000)
            var actions: [PM.Action] = []
            switch code % 10 {
            case 0 where !opened:
                opened = true
                actions = machine.handle(.opened(streams), now: now)
            case 1:
                actions = machine.handle(.runClock(rate: [0.5, 1, 1, 2][code % 4]), now: now)
            case 2 where code % 3 == 0:
                actions = machine.handle(.stopClock, now: now)
            case 3 where code % 4 == 0:
                seekID += 1
                let target = MediaTime(value: Int64(code % 60), timescale: 30) + MediaTime(value: Int64(code % 11), timescale: 1000)
                let exact = code % 2 == 0
                pipeline.seek(to: target, exact: exact)
                let seek = PM.Seek(id: seekID, serial: pipeline.serial, target: target,
                                   discardUntil: exact ? target : .negativeInfinity)
                observer.pendingSeeks[seekID] = seek
                actions = machine.handle(.seek(seek), now: now)
            case 4, 5:
                pipeline.decode(code % 3 + 1)
                if hasAudio { pipeline.audioQueued = pipeline.audioQueued + MediaTime(value: Int64(code % 5) * 30, timescale: 1000) }
            default:
                let audioClock = hasAudio && machine.timeRuns && code % 2 == 0 ? machine.mediaTime(at: now) : nil
                let step = machine.step(now: now, buffers: pipeline.buffers(audioClock: audioClock))
                if let wake = step.wake { #expect(wake > now, "a wake-up in the past would spin") }
                actions = step.actions
            }
            check(actions, machine: machine, pipeline: &pipeline, observer: &observer, now: now)
        }
    }

    private func check(_ actions: [PM.Action], machine: PM, pipeline: inout Pipeline, observer: inout Observer, now: MediaTime) {
        let serialBefore = pipeline.serial
        let (presented, _) = pipeline.apply(actions)
        for (pts, first) in presented {
            if let last = observer.lastPresented, last.serial == serialBefore {
                #expect(last.pts < pts, "frames of a serial are shown in order: \(last.pts) then \(pts)")
            }
            if !first {
                #expect(pts <= machine.currentTime + MediaTime(value: 1, timescale: 1000),
                        "a frame is shown when its time has come: \(pts) at \(machine.currentTime)")
            }
            #expect(!observer.endedSerials.contains(serialBefore), "nothing is shown after the end")
            observer.lastPresented = (serialBefore, pts)
        }
        for action in actions {
            switch action {
            case .reportFirstFrame:
                observer.firstFrames += 1
                #expect(observer.firstFrames == 1, "one first frame per item")
            case .reportReady:
                observer.readies += 1
                #expect(observer.readies == 1, "ready once")
            case .reportStall(let stalled):
                #expect(stalled != observer.stalled, "stalls and recoveries alternate")
                observer.stalled = stalled
            case .runAudio(let run):
                #expect(run != observer.audioRunning, "audio starts and stops alternately")
                #expect(pipeline.hasAudio, "no audio device work for a video-only item")
                observer.audioRunning = run
            case .reportEnd:
                #expect(!observer.endedSerials.contains(serialBefore), "one end per serial")
                observer.endedSerials.insert(serialBefore)
            case .reportSeekCompleted(let id, let landed):
                #expect(!observer.completedSeeks.contains(id), "a seek completes once")
                observer.completedSeeks.insert(id)
                if let seek = observer.pendingSeeks[id], seek.discardUntil.isNumeric {
                    #expect(landed >= seek.discardUntil, "an exact seek never lands before its target")
                }
            case .reportNoProgress:
                Issue.record("a clip that decodes fine never counts as stuck")
            default:
                break
            }
        }
        #expect(machine.currentTime >= .zero && machine.currentTime <= MediaTime(value: 2, timescale: 1))
        #expect(machine.timeRuns == (machine.runRequested && machine.phase == .playing))
    }
}
