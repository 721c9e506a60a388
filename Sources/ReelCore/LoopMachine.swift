/// The demux side of a seamless loop, as a value: the way a gapless playlist reads its next
/// item ahead, a looping item's demuxer reads its next pass ahead of the end. At the end of
/// the input it goes back to the start of the item and reads on, every packet of pass `k`
/// timed `k` item durations later, so decoders run on and the presentation clock never
/// restarts. Each pass lasts exactly the item's duration: audio that runs past it (an AAC
/// encoder's padding behind the edit list) is trimmed, and pass `k` starts at `k × duration`
/// computed afresh (nothing accumulates, nothing drifts).
///
/// The engine (ReelMedia's `PlaybackEngine`, its demux thread) feeds it the item, the user's
/// wish, seeks and the end of the input, and asks it about each packet; it carries out what
/// comes back (seek the demuxer, shift and trim packets). No thread, lock or clock here.
public struct LoopMachine: Sendable, Hashable {
    /// What the item is, for looping: where its timeline starts and how long one pass lasts
    /// (the container's duration: the edit list's, encoder delay and padding trimmed).
    public struct Item: Sendable, Hashable {
        public var start: MediaTime
        public var duration: MediaTime

        public init(start: MediaTime, duration: MediaTime) {
            self.start = start
            self.duration = duration
        }

        /// Whether a pass can be read seamlessly: a known, positive duration.
        public var isLoopable: Bool { start.isNumeric && duration.isNumeric && duration > .zero }
    }

    public enum Event: Sendable, Hashable {
        /// The container opened: the item, or `nil` when it cannot loop seamlessly (a live
        /// stream, no duration); such an item ends and the player restarts it, as before.
        case opened(Item?)
        /// The user turned looping on or off.
        case loopingChanged(Bool)
        /// A seek: the demuxer reads pass 0 again from the seek's target.
        case restarted
        /// The demuxer reached the end of the input.
        case endOfInput
    }

    public enum Action: Sendable, Hashable {
        /// Seek the demuxer to `start` (the item's start) and read on: pass `pass` begins,
        /// its packets timed `offset` later than the item says.
        case readNextPass(start: MediaTime, pass: Int, offset: MediaTime)
        /// The input really ends: tell the decoders.
        case endInput
    }

    /// What to do with one demuxed packet.
    public struct PacketDecision: Sendable, Hashable {
        /// Add this to the packet's timestamps.
        public var offset: MediaTime
        /// Leave the packet out (audio wholly past the pass's end).
        public var drop = false
        /// Audio to cut from the packet's end (the part past the pass's end).
        public var trimEnd: MediaTime = .zero
    }

    public enum Stream: Sendable, Hashable {
        case video, audio, other
    }

    public private(set) var item: Item?
    public private(set) var looping: Bool
    /// The pass the demuxer reads (0 until the first wrap, and again after a seek).
    public private(set) var pass = 0
    /// Media packets read in this pass: a pass that yields none ends the item (a seek to the
    /// start that reads nothing must not spin).
    public private(set) var packetsInPass = 0

    public init(looping: Bool = false) {
        self.looping = looping
    }

    /// Whether the item loops seamlessly now.
    public var loopsSeamlessly: Bool { looping && item?.isLoopable == true }

    /// When pass `pass` starts on the continuous timeline (the item's start in pass 0).
    public var offset: MediaTime {
        guard let item, pass > 0 else { return .zero }
        return item.duration.multiplied(by: Int32(clamping: pass))
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .opened(let opened):
            item = opened.flatMap { $0.isLoopable ? $0 : nil }
            return []
        case .loopingChanged(let on):
            looping = on
            return []
        case .restarted:
            pass = 0
            packetsInPass = 0
            return []
        case .endOfInput:
            guard loopsSeamlessly, let item, packetsInPass > 0, pass < Int(Int32.max) else { return [.endInput] }
            pass += 1
            packetsInPass = 0
            return [.readNextPass(start: item.start, pass: pass, offset: offset)]
        }
    }

    /// Decides about one packet read in the current pass, timed as the item times it (`pts`
    /// and `duration`, `nil` when unknown); counts it. `decodes` is what an audio packet
    /// decodes to when the codec's frames have one size (AAC's 1024 samples): a container
    /// that trims its last packet to the edit list says so only in that packet's duration
    /// (MP4: 640 of 1024), and the decoder would still give the whole frame.
    public mutating func packet(_ stream: Stream, pts: MediaTime?, duration: MediaTime?,
                                decodes: MediaTime? = nil) -> PacketDecision {
        if stream != .other { packetsInPass += 1 }
        var decision = PacketDecision(offset: offset)
        // Only a looping item is cut to its duration: played once, an item plays all its
        // decoder gives, as FFmpeg does.
        guard stream == .audio, loopsSeamlessly, let item, let pts, pts.isNumeric else { return decision }
        let end = item.start + item.duration
        if pts >= end {
            decision.drop = true
        } else if let extent = [duration, decodes].compactMap({ $0 }).filter(\.isNumeric).max(), pts + extent > end {
            decision.trimEnd = pts + extent - end
        }
        return decision
    }
}
