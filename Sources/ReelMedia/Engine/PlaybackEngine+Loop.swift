import Foundation
import ReelCore
internal import CFFmpeg

// The driver of a seamless loop (ReelCore's `LoopMachine` decides; see it and ReelMedia's
// README). The demux thread, at the end of the input, seeks the demuxer back to the item's
// start and reads on: the next pass is demuxed ahead of the end, its packets timed a pass
// later and its audio trimmed to the item's duration, into the same queues and serial. The
// decoders run on (no flush), the audio renderer writes on, and the presentation machine,
// told of the pass, lets time run into it; nothing restarts. State: `EngineState.loop`, under
// the monitor (the demux thread and seeks use it; `setLooping` from any thread).

extension PlaybackEngine {
    /// Turns looping on or off from now on (`Player.actionAtItemEnd`). A pass already read
    /// ahead still plays.
    func setLooping(_ on: Bool) {
        monitor.update { _ = $0.loop.handle(.loopingChanged(on)) }
    }

    /// The item as the loop sees it: `nil` when it cannot loop seamlessly (live, no duration).
    func loopItem(_ demuxer: Demuxer, streams: OpenedStreams) -> LoopMachine.Item? {
        guard !streams.info.isLive, streams.duration.isNumeric, streams.duration > .zero else { return nil }
        return LoopMachine.Item(start: demuxer.itemStart, duration: streams.duration)
    }

    /// At the end of the input of `serial`: when the item loops, seeks the demuxer to the
    /// item's start so the next pass is read on (`true`); otherwise (or when that seek fails)
    /// the end is queued as usual (`false`).
    func readNextPassIfLooping(serial: Int, demuxer: Demuxer) -> Bool {
        let start = monitor.update { state -> MediaTime? in
            guard !state.closing, serial >= state.chainSerial, state.seekRequest == nil else { return nil }
            for case .readNextPass(let start, let pass, _) in state.loop.handle(.endOfInput) {
                guard let item = state.loop.item else { return nil }
                state.commands.append(.passBegan(PresentationMachine.Pass(
                    serial: state.serial, index: pass, start: item.start, duration: item.duration)))
                return start
            }
            return nil
        }
        guard let start else { return false }
        do {
            try demuxer.seekToBeginning(start: start)
            logger.trace("looping: reading the next pass of \(url.absoluteString)")
            return true
        } catch {
            if monitor.read({ $0.closing }) { return true }
            logger.debug("looping: seeking to the start failed (\(error)); the item ends")
            return false
        }
    }
}

extension EngineState {
    /// Times and trims a packet of the pass being read (call with the lock, before queuing it);
    /// `false` when the packet is left out.
    mutating func applyLoopLocked(to packet: Packet, isVideo: Bool, isAudio: Bool, streams: OpenedStreams) -> Bool {
        let timeBase = isVideo ? streams.videoTimeBase : streams.audioTimeBase
        let kind: LoopMachine.Stream = isVideo ? .video : isAudio ? .audio : .other
        let pts = packet.pts != AV_NOPTS ? timeBase.time(packet.pts) : nil
        let duration = packet.duration > 0 ? timeBase.time(packet.duration) : nil
        let decision = loop.packet(kind, pts: pts, duration: duration, decodes: isAudio ? streams.audioFrameDuration : nil)
        if decision.drop { return false }
        if decision.trimEnd > .zero, let rate = streams.audioSampleRate {
            let samples = decision.trimEnd.convertScale(Int32(rate), method: .halfAwayFromZero).value
            packet.discardAtEnd(samples: Int(samples))
        }
        if decision.offset != .zero {
            packet.shift(by: timeBase.timestamp(decision.offset, rounding: .halfAwayFromZero))
        }
        return true
    }
}

extension PresentationMachine {
    /// `frame` as the user sees it: timed within its pass of a loop (the same picture).
    func itemFrame(_ frame: VideoFrame) -> VideoFrame {
        let pts = itemTime(of: frame.pts)
        guard pts != frame.pts else { return frame }
        return VideoFrame(box: frame.box, pts: pts, duration: frame.duration, rotation: frame.rotation, serial: frame.serial)
    }
}
