// A looping item's passes on the presentation's continuous timeline. The demuxer reads pass
// `k` ahead of the end with every timestamp `k × duration` later (``LoopMachine``), so frames,
// audio and the clock run on past the item's end and time never restarts; the machine counts
// the passes time crosses (``Action/reportLoop``) and maps continuous times back to the
// item's own (``itemTime(of:)``) for everything the user sees.

extension PresentationMachine {
    /// The time at host instant `now` as the item times it (within one pass).
    public func itemTime(at now: MediaTime) -> MediaTime {
        itemTime(of: mediaTime(at: now))
    }

    /// `time` on the continuous timeline, as the item times it: minus the passes before the
    /// one it falls in. The end of the last pass stays the item's end.
    public func itemTime(of time: MediaTime) -> MediaTime {
        guard let loop = loopPass else { return time }
        let index = passIndex(containing: time)
        return index == 0 ? time : time - loop.duration.multiplied(by: Int32(clamping: index))
    }

    /// The pass `time` falls in (0 without a loop; at most the last pass begun).
    public func passIndex(containing time: MediaTime) -> Int {
        guard let loop = loopPass, time.isNumeric else { return 0 }
        let estimate = ((time - loop.start).seconds / loop.duration.seconds).rounded(.down)
        var index = estimate.isFinite ? Int(max(0, min(Double(loop.index), estimate))) : 0
        while index < loop.index, Self.start(of: index + 1, loop) <= time { index += 1 }
        while index > 0, Self.start(of: index, loop) > time { index -= 1 }
        return index
    }

    /// Where pass `index` starts on the continuous timeline (computed afresh: nothing accumulates).
    static func start(of index: Int, _ loop: Pass) -> MediaTime {
        loop.start + loop.duration.multiplied(by: Int32(clamping: index))
    }

    /// Where the last pass begun ends.
    static func end(of loop: Pass) -> MediaTime {
        start(of: loop.index + 1, loop)
    }

    /// The demuxer began a pass of the serial being presented.
    mutating func beginPass(_ next: Pass) {
        guard next.serial == serial, next.duration.isNumeric, next.duration > .zero else { return }
        if let current = loopPass, current.index >= next.index { return }
        loopPass = next
    }

    /// A seek: the serial starts again in pass 0.
    mutating func forgetPasses() {
        loopPass = nil
        pass = 0
    }

    /// Reports each pass boundary time has crossed since the last step.
    mutating func reportPassesCrossed(at media: MediaTime, into out: inout Step) {
        let reached = passIndex(containing: media)
        while pass < reached {
            pass += 1
            out.actions.append(.reportLoop)
        }
    }
}
