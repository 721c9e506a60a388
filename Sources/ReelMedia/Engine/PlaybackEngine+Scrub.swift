import Foundation
import ReelCore

// Scrubbing's decode-on: a target forward of the frame on screen, in the GOP the decoder is in,
// is reached by decoding on from where the decoder is — no demuxer seek, no decoder flush, no
// return to the keyframe (Media3's scrubbing mode does the same). The serial still moves on, so
// the presentation machine lands on the target as it does after any seek, but the chain of
// packets and frames it continues is kept: the queued packets and frames are restamped with the
// new serial, the frames before the target are dropped, and the video decode thread takes the
// new target as its seek window without flushing (`EngineState.chainSerial`).

extension PlaybackEngine {
    /// Moves to `target` by decoding on; `false` (nothing changed) when that cannot reach it
    /// exactly: a seek still being carried out, no frame on screen in this serial, a target at or
    /// before it, the video decoder already at the input's end, a loop's later pass, an item that
    /// never ran, or a target inside the frame on screen (the frames queued all come after it).
    /// The input's end already read is no reason: its end marks are queued and restamped too.
    func continueDecoding(id: Int, to target: MediaTime) -> Bool {
        monitor.update { state -> Bool in
            guard !state.closing, state.failure == nil, state.seekRequest == nil,
                  state.streams?.hasVideo == true, state.loop.pass == 0,
                  // An item that never ran holds its first picture only; its frame-threaded
                  // decoder has not had the keyframe yet.
                  state.machine.hasRun,
                  state.videoEndedSerial != state.serial, state.machine.phase != .opening,
                  let shown = state.presentedFrame, shown.serial == state.serial, target > shown.pts else { return false }
            if case .seeking = state.machine.phase { return false }
            var frames = (state.handoffFrame.map { [$0] } ?? []) + state.videoFrames.filter { $0.serial == state.serial }
            if let first = frames.first, first.pts > target { return false }
            state.serial += 1
            let serial = state.serial
            frames = frames.map { $0.restamped(serial) }
            // From the last frame at or before the target on; when that is the last one queued,
            // the decode thread decides (the next frame it decodes may still be before it).
            state.handoffFrame = nil
            if let at = frames.lastIndex(where: { $0.pts <= target }) {
                if at == frames.count - 1 {
                    state.handoffFrame = frames[at]
                    frames = []
                } else {
                    frames.removeFirst(at)
                }
            }
            state.videoFrames = frames
            if let first = frames.first {
                state.firstVideoSerial = serial
                state.firstVideoTime = first.pts
            }
            state.videoPackets.restamp(serial)
            // Audio is not heard while scrubbing, but stays in step for the release.
            state.carryAudioOn(from: serial - 1, to: serial, target: target)
            state.discardUntil = target
            state.captions.seeked()
            let seek = PresentationMachine.Seek(id: id, serial: serial, target: target, discardUntil: target)
            state.commands.append(.seek(seek))
            scheduleStepLocked(&state, at: clock.now)
            return true
        }
    }

    /// What the video decode thread takes next: a packet of the current serial, its seek
    /// window, and — when the serial moved on inside the chain `decodingSerial` belongs to (a
    /// decode-on) — the frame handed back to it. `nil` once the engine closes or fails.
    func nextVideoPacket(_ worker: PipelineMonitor<EngineState>.Worker, decodingSerial: Int) -> VideoPacket? {
        while true {
            let next = monitor.wait(worker, until: { state in
                state.closing || state.failure != nil || !state.videoPackets.isEmpty
            }, then: { state -> (VideoPacket, Bool)? in
                if state.closing || state.failure != nil { return nil }
                let entry = state.videoPackets.pop()!
                var packet = VideoPacket(entry: entry, discardUntil: state.discardUntil)
                if entry.serial == state.serial, entry.serial != decodingSerial, decodingSerial >= state.chainSerial {
                    packet.continuation = VideoPacket.Continuation(handoff: state.handoffFrame)
                    state.handoffFrame = nil
                }
                return (packet, entry.serial == state.serial)
            })
            guard let (packet, current) = next else { return nil }
            if current { return packet }
        }
    }

    /// What queuing a decoded frame came to.
    enum FrameOffer {
        case queued
        /// The frame's serial is gone (a seek that flushed, or closing): drop it.
        case stale
        /// The serial moved on by a decode-on: take the new window (and the frame handed back)
        /// and decide again.
        case retargeted(serial: Int, discardUntil: MediaTime?, handoff: VideoFrame?)
    }

    /// Queues a decoded frame, waiting for room; a decode-on while waiting says so instead.
    func offer(_ frame: VideoFrame, worker: PipelineMonitor<EngineState>.Worker) -> FrameOffer {
        let capacity = configuration.videoFrameCapacity
        let idleCapacity = configuration.idleCapacity
        return monitor.wait(worker, until: { state in
            state.closing || state.serial != frame.serial
                || state.videoFrames.count < (state.machine.hasRun ? capacity : idleCapacity)
        }, then: { state -> FrameOffer in
            guard !state.closing else { return .stale }
            guard state.serial == frame.serial else {
                guard frame.serial >= state.chainSerial else { return .stale }
                defer { state.handoffFrame = nil }
                return .retargeted(serial: state.serial, discardUntil: state.discardUntil, handoff: state.handoffFrame)
            }
            state.videoFrames.append(frame)
            state.decodedVideoFrames += 1
            if state.firstVideoSerial != frame.serial {
                state.firstVideoSerial = frame.serial
                state.firstVideoTime = frame.pts
            }
            if state.report.firstFrameDecodedMs == nil { state.report.firstFrameDecodedMs = phaseNowMs() }
            kickOwnerLocked(&state)
            return .queued
        })
    }

    /// The video's keyframes as presentation-ordered times (the container's index; MP4 gives
    /// decode times, a frame or two early), for deciding which GOP a target is in.
    func keyframeTimesNow() -> [MediaTime] {
        guard let demuxer = monitor.read({ $0.demuxer }), let index = demuxer.videoStreamIndex else { return [] }
        let timeBase = demuxer.timeBase(of: index)
        return demuxer.keyframeTimestamps(streamIndex: index).map { timeBase.time($0) }
    }

    /// The frame on screen (its pts as decoded), when the item has shown one in this serial.
    func presentedFrameNow() -> MediaTime? {
        monitor.read { state in state.presentedFrame.flatMap { $0.serial == state.serial ? $0.pts : nil } }
    }

    /// The video's frame interval and whether audio plays, once the item is open.
    func scrubStreamsNow() -> (frameDuration: MediaTime, hasAudio: Bool)? {
        monitor.read { state in state.streams.map { ($0.frameDuration, $0.hasAudio && $0.hasVideo) } }
    }
}

/// A packet for the video decode thread (see ``PlaybackEngine/nextVideoPacket(_:decodingSerial:)``).
struct VideoPacket {
    /// The serial moved on inside the decoder's chain (a decode-on): keep the decoder.
    struct Continuation {
        var handoff: VideoFrame?
    }

    var entry: PacketQueue.Entry
    var discardUntil: MediaTime?
    var continuation: Continuation?
}

extension VideoFrame {
    /// The same picture in serial `serial` (a decode-on moved the generation on).
    func restamped(_ serial: Int) -> VideoFrame {
        serial == self.serial ? self : VideoFrame(box: box, pts: pts, duration: duration, rotation: rotation, serial: serial)
    }
}
