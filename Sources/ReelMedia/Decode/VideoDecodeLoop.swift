import Foundation
import ReelCore
internal import CFFmpeg

/// The video decode thread's work on each packet: decode, time the frames, apply a seek's
/// window, queue. Belongs to that thread alone.
final class VideoDecodeLoop {
    /// The thread's state for the current serial.
    private struct Serial {
        var serial = -1
        /// A frame the seek window holds back: shown when the next one passes the target.
        var held: VideoFrame?
        var discardUntil: MediaTime?
        /// Frames up to this time were shown by the throwaway first-frame decoder.
        var skipThrough: MediaTime?
        var lastPts: MediaTime?
        /// Packets sent since the last frame: a decoder that takes packet after packet and
        /// gives nothing back is rejecting the stream.
        var packetsSinceFrame = 0
        /// The stream was given up for this serial; its packets are skipped.
        var gaveUp = false
        /// A live join's target: frames before it are decoded, not shown (the first serial only).
        var joinStart: MediaTime?
    }

    private let engine: PlaybackEngine
    private let worker: PipelineMonitor<EngineState>.Worker
    /// Replaced at a seam whose codec parameters differ (a switch of variant).
    private var decoder: Decoder
    private let codec: CodecParameters
    private let timeBase: TimeBase
    private let frameDuration: MediaTime
    private let rotation: Int
    /// The stream's start: frames before it are decoded, not shown.
    private let start: MediaTime?
    private var fastFirst: Bool
    private var state = Serial()
    /// The item's loader was asked where a live join's presentation starts (once, at the first frame).
    private var joinAsked = false
    /// CEA-608 captions in the frames, once a frame carried some.
    private var closedCaptions: ClosedCaptionExtractor?
    private var closedCaptionsUnavailable = false

    init(engine: PlaybackEngine, worker: PipelineMonitor<EngineState>.Worker, decoder: Decoder, codec: CodecParameters) {
        self.engine = engine
        self.worker = worker
        self.decoder = decoder
        self.codec = codec
        timeBase = TimeBase(codec.timeBase)
        (frameDuration, rotation, start) = engine.monitor.read {
            ($0.streams?.frameDuration ?? .zero, $0.streams?.rotation ?? 0, $0.streams?.videoStart)
        }
        fastFirst = engine.configuration.fastFirstFrame
    }

    /// The serial the thread decodes now.
    var serial: Int { state.serial }

    /// Decodes one queue entry; `false` when the thread must stop (the item failed).
    func handle(_ next: VideoPacket) -> Bool {
        let entry = next.entry
        if entry.serial != state.serial {
            if let continuation = next.continuation {
                // A scrub's decode-on: the same decoder decodes on towards the new target.
                adopt(serial: entry.serial, discardUntil: next.discardUntil, handoff: continuation.handoff)
            } else {
                decoder.flush()
                closedCaptions?.flush()
                state = Serial(serial: entry.serial, discardUntil: next.discardUntil)
            }
        }
        if state.gaveUp { return true }
        guard let packet = entry.packet else {
            finishInput(serial: entry.serial)
            return true
        }
        if fastFirst, packet.isKeyframe, state.discardUntil == nil {
            fastFirst = false
            if let frame = engine.decodeAlone(packet, codec: codec, serial: entry.serial, rotation: rotation), shows(frame) {
                state.skipThrough = frame.pts
                state.lastPts = frame.pts
                guard engine.emit(frame, worker: worker) else { return true }
                // When an item that never ran keeps only its first picture, the keyframe goes to
                // the frame-threaded decoder once it plays; a seek before that starts a new
                // serial, and this packet is stale.
                if engine.configuration.idleFramesAhead == 0 {
                    guard engine.waitForFirstRun(worker, serial: entry.serial) else { return true }
                }
            }
        }
        fastFirst = false
        if let parameters = packet.newParameters {
            // A seam with other parameters (a switch of variant): every frame of the old
            // stream comes out first, then a decoder for the new one takes over.
            _ = try? decoder.send(nil)
            guard drain(serial: entry.serial) else { return true }
            do {
                decoder = try Decoder(parameters: parameters.pointer, timeBase: parameters.timeBase, url: engine.url, threads: 0)
            } catch {
                engine.fail(error as? MediaError ?? .unsupportedCodec(name: "video", url: engine.url))
                return false
            }
        }
        state.packetsSinceFrame += 1
        decoder.skipsNonReferenceFrames = isBeforeTarget(packet)
        do {
            while try !decoder.send(packet) {
                guard drain(serial: entry.serial) else { break }
            }
            _ = drain(serial: entry.serial)
        } catch {
            engine.fail(error as? MediaError ?? .ffmpeg(operation: "decode", code: -1, message: "\(error)", url: engine.url))
            return false
        }
        if state.packetsSinceFrame > PlaybackEngine.undecodablePacketLimit, state.lastPts == nil {
            state.gaveUp = true
            engine.giveUp(video: true, serial: entry.serial,
                          reason: .undecodable(stream: "video", codec: decoder.codecName, url: engine.url))
        }
        return true
    }

    /// The end of the input: drain, show what the seek held back, mark the end.
    private func finishInput(serial: Int) {
        _ = try? decoder.send(nil)
        guard drain(serial: serial) else { return }
        if let extractor = closedCaptions { engine.file(extractor.drain(), track: extractor.track.id) }
        if let last = state.held {
            state.held = nil
            guard engine.emit(last, worker: worker) else { return }
        }
        decoder.flush()
        engine.markEnded(video: true, serial: serial)
    }

    /// Receives what the decoder has; `false` when the serial went stale.
    private func drain(serial: Int) -> Bool {
        while true {
            guard let output = try? decoder.receive() else { return true }
            switch output {
            case .frame(let box):
                state.packetsSinceFrame = 0
                let frame = makeFrame(box, serial: state.serial)
                // Every frame's caption bytes, shown or not: 608 is a stream of byte pairs.
                extractClosedCaptions(box)
                guard !box.isDiscarded, shows(frame) else { continue }
                if let skip = state.skipThrough, frame.pts <= skip { continue }
                state.skipThrough = nil
                guard process(frame) else { return false }
            case .damaged:
                continue
            case .needsInput, .endOfStream:
                return true
            }
        }
    }

    private func extractClosedCaptions(_ box: FrameBox) {
        guard !closedCaptionsUnavailable, ClosedCaptionExtractor.hasCaptions(box) else { return }
        if closedCaptions == nil {
            closedCaptions = ClosedCaptionExtractor(timeBase: codec.timeBase)
            guard let extractor = closedCaptions else {
                closedCaptionsUnavailable = true
                return
            }
            engine.addCaptionTrack(extractor.track)
        }
        if let extractor = closedCaptions, let output = extractor.decode(box) {
            engine.file(output, track: extractor.track.id)
        }
    }

    private func makeFrame(_ box: FrameBox, serial: Int) -> VideoFrame {
        let f = box.pointer.pointee
        let pts: MediaTime
        if f.best_effort_timestamp != AV_NOPTS {
            pts = timeBase.time(f.best_effort_timestamp)
        } else {
            pts = state.lastPts.map { $0 + frameDuration } ?? .zero
        }
        state.lastPts = pts
        return VideoFrame(box: box, pts: pts, duration: PlaybackEngine.frameDuration(of: box, timeBase), rotation: rotation, serial: serial)
    }

    /// Whether a frame is at or after the stream's start (pre-roll before it is never shown:
    /// the first frame shown is the first at or after the start, as FFmpeg decodes it).
    private func shows(_ frame: VideoFrame) -> Bool {
        if !joinAsked {
            joinAsked = true
            if state.discardUntil == nil { state.joinStart = engine.liveJoinStart(firstDecoded: frame.pts) }
        }
        if let joinStart = state.joinStart, frame.pts < joinStart { return false }
        guard let start else { return true }
        return frame.pts >= start
    }

    /// Applies the seek window, then queues; `false` when the serial went stale.
    private func process(_ frame: VideoFrame) -> Bool {
        if let limit = state.discardUntil {
            if frame.pts <= limit {
                if state.held.map({ frame.pts >= $0.pts }) ?? true { state.held = frame }
                return true
            }
            state.discardUntil = nil
            if let previous = state.held {
                state.held = nil
                guard queue(previous) else { return false }
            }
        }
        return queue(frame)
    }

    /// Queues a frame; a decode-on that moved the serial meanwhile gives the new window, and
    /// the frame is decided again in it. `false` when the serial went stale.
    private func queue(_ frame: VideoFrame) -> Bool {
        switch engine.offer(frame, worker: worker) {
        case .queued:
            return true
        case .stale:
            return false
        case .retargeted(let serial, let discardUntil, let handoff):
            if serial != state.serial { adopt(serial: serial, discardUntil: discardUntil, handoff: handoff) }
            return process(frame.restamped(serial))
        }
    }

    /// Whether `packet`'s frame is followed by another at or before the seek's target, so it is
    /// never shown: if no other frame refers to it, it need not be decoded (Media3's scrubbing
    /// mode skips such frames too). Not in a stream that carries CEA-608 captions: their byte
    /// pairs ride in every frame, shown or not, and a frame not decoded would lose them.
    private func isBeforeTarget(_ packet: Packet) -> Bool {
        guard closedCaptions == nil, let limit = state.discardUntil, packet.pts != AV_NOPTS, packet.duration > 0 else { return false }
        return timeBase.time(packet.pts + packet.duration) <= limit
    }

    /// Takes a decode-on's serial and target without flushing: frames up to the target are
    /// decoded and not shown; the last of them (or the frame handed back) shows when the next
    /// passes it.
    private func adopt(serial: Int, discardUntil: MediaTime?, handoff: VideoFrame?) {
        state.serial = serial
        state.discardUntil = discardUntil
        state.skipThrough = nil
        state.held = state.held?.restamped(serial)
        if let handoff, state.held.map({ handoff.pts >= $0.pts }) ?? true { state.held = handoff }
    }
}
