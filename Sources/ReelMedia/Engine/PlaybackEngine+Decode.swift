import Foundation
import ReelCore
internal import CFFmpeg

extension PlaybackEngine {
    /// Packets a decoder may swallow without output before its stream counts as undecodable
    /// (frame threading and reordering hold back a few dozen at most).
    static let undecodablePacketLimit = 300

    /// The video decode thread.
    func runVideoDecoder(_ worker: PipelineMonitor<EngineState>.Worker, decoder: Decoder, parameters codec: CodecParameters) {
        defer { monitor.exit(worker) }
        MediaResources.videoDecoderOpened()
        monitor.update { $0.videoDecoderOpen = true }
        defer {
            monitor.update { $0.videoDecoderOpen = false }
            MediaResources.videoDecoderClosed()
        }
        let loop = VideoDecodeLoop(engine: self, worker: worker, decoder: decoder, codec: codec)
        while let packet = nextVideoPacket(worker, decodingSerial: loop.serial) {
            guard loop.handle(packet) else { return }
        }
    }

    /// Decodes one keyframe on a single-threaded decoder and drains it, so the first frame
    /// appears after one packet, without frame threading's delay.
    func decodeAlone(_ packet: Packet, codec: CodecParameters, serial: Int, rotation: Int) -> VideoFrame? {
        guard let single = try? Decoder(parameters: codec.pointer, timeBase: codec.timeBase, url: url, threads: 1) else { return nil }
        guard (try? single.send(packet)) == true else { return nil }
        _ = try? single.send(nil)
        var received = try? single.receive()
        while case .damaged? = received { received = try? single.receive() }
        guard case .frame(let box)? = received, !box.isDiscarded else { return nil }
        let tb = TimeBase(codec.timeBase)
        let f = box.pointer.pointee
        // The key frame's own timestamp: a decoder that saw one packet can only guess from
        // it, and the frame-threaded decoder, which sees more, must find the same time to
        // know this picture was already shown.
        let ticks = packet.timestamp ?? (f.best_effort_timestamp != AV_NOPTS ? f.best_effort_timestamp : nil)
        let pts = ticks.map(tb.time) ?? .zero
        return VideoFrame(box: box, pts: pts, duration: Self.frameDuration(of: box, tb), rotation: rotation, serial: serial)
    }

    /// Parks the video decode thread until the item is first asked to play, the serial goes
    /// stale or the engine closes; `false` unless it is to play. Called after the first picture
    /// came from ``decodeAlone(_:codec:serial:rotation:)``: the frame-threaded decoder gets its
    /// first packet only then, so an item that is only shown (a pre-rendered page) never holds
    /// its frame pool.
    func waitForFirstRun(_ worker: PipelineMonitor<EngineState>.Worker, serial: Int) -> Bool {
        monitor.wait(worker, until: { state in
            state.closing || state.serial != serial || state.machine.hasRun
        }, then: { state in !state.closing && state.serial == serial })
    }

    static func frameDuration(of box: FrameBox, _ tb: TimeBase) -> MediaTime? {
        let ticks = reel_frame_duration(box.pointer)
        return ticks > 0 ? tb.time(ticks) : nil
    }

    /// Queues a decoded frame, waiting for room. Returns `false` when the frame's serial went
    /// stale (a seek; a scrub's decode-on too, for the callers that do not decide again) or the
    /// engine is closing.
    func emit(_ frame: VideoFrame, worker: PipelineMonitor<EngineState>.Worker) -> Bool {
        if case .queued = offer(frame, worker: worker) { return true }
        return false
    }

    /// Waits for the next packet of a queue that belongs to the current serial (stale ones
    /// are dropped), with the seek window of that serial; `nil` once the engine closes or fails.
    func nextPacket(_ worker: PipelineMonitor<EngineState>.Worker, video: Bool)
        -> (entry: PacketQueue.Entry, discardUntil: MediaTime?)? {
        while true {
            let next = monitor.wait(worker, until: { state in
                state.closing || state.failure != nil || !(video ? state.videoPackets : state.audioPackets).isEmpty
            }, then: { state -> (PacketQueue.Entry, MediaTime?, Bool)? in
                if state.closing || state.failure != nil { return nil }
                let entry = video ? state.videoPackets.pop()! : state.audioPackets.pop()!
                return (entry, state.discardUntil, entry.serial == state.serial)
            })
            guard let (entry, discardUntil, current) = next else { return nil }
            if current { return (entry, discardUntil) }
        }
    }

    /// Ends a stream that decodes nothing for `serial`: its packets are no longer queued, and
    /// the owner plays the other stream or fails the item with `reason`.
    func giveUp(video: Bool, serial: Int, reason: MediaError) {
        logger.debug("giving up the \(video ? "video" : "audio") stream: \(reason)")
        monitor.update { state in
            guard serial == state.serial else { return }
            state.undecodable = reason
            if video {
                state.videoCutSerial = serial
                state.videoPackets.removeAll()
                state.videoEndedSerial = serial
            } else {
                state.audioCutSerial = serial
                state.audioPackets.removeAll()
                state.audioEndedSerial = serial
            }
            kickOwnerLocked(&state)
        }
    }

    /// Records that a stream decoded everything of `serial`, if that is still current (or an
    /// earlier serial of the current chain: a scrub's decode-on restamped what was left).
    func markEnded(video: Bool, serial ended: Int) {
        monitor.update { state in
            guard ended == state.serial || (ended >= state.chainSerial && ended < state.serial) else { return }
            if video { state.videoEndedSerial = state.serial } else { state.audioEndedSerial = state.serial }
            kickOwnerLocked(&state)
        }
    }
}
