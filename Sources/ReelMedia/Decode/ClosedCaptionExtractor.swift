import Foundation
import ReelCore
import ReelCaptions
internal import CFFmpeg

/// CEA-608 captions carried in the video itself (ATSC A/53 `cc_data` in H.264/HEVC SEI or
/// MPEG-2 user data, which libavcodec hands over as each decoded frame's `A53_CC` side data),
/// decoded by libavcodec's `cc_dec` as `ffmpeg -f lavfi -i "movie=…[out0+subcc]"` does. Frames
/// come out of the decoder in display order, the order the caption byte pairs are meant in.
/// CEA-708 service blocks have no decoder in FFmpeg and are not shown.
///
/// `cc_dec` gives a caption once the next one replaced it (its end known): filed then, a caption
/// would reach the screen when it is over. So every byte pair also goes to a second `cc_dec` in
/// its `real_time` mode, which gives the screen as soon as it changes: that screen is filed as a
/// provisional cue from the frame it changed on, and the settled cue from the first decoder
/// replaces it (``CaptionTimeline``). Pop-on captions are the same words both ways, so the
/// caption shows from its own frame with the words and times `cc_dec` gives; a roll-up or
/// paint-on screen shows as it is painted (at most every 200 ms, as `real_time` gives it).
///
/// Times are the frames' own: a settled cue's start and end (microseconds in `cc_dec`) are the
/// exact timestamps of the frames whose byte pairs began and ended it.
///
/// Belongs to the video decode thread (made there at the first frame with caption data).
final class ClosedCaptionExtractor {
    /// The cues as `ffmpeg` gives them.
    let decoder: CaptionDecoder
    /// The screen as it changes.
    private let live: CaptionDecoder
    private let timeBase: AVRational
    /// Recent frames' timestamps by their time in microseconds (a settled cue's start came from
    /// one of them), oldest first: about two minutes of frames.
    private var recent: [(micros: Int64, time: MediaTime)] = []
    private static let recentLimit = 4096

    /// A decoder for captions timed in `timeBase` (the video stream's), or `nil` when this
    /// FFmpeg has no `cc_dec`.
    init?(timeBase: AVRational) {
        guard let parameters = avcodec_parameters_alloc() else { return nil }
        defer {
            var pointer: UnsafeMutablePointer<AVCodecParameters>? = parameters
            avcodec_parameters_free(&pointer)
        }
        parameters.pointee.codec_type = AVMEDIA_TYPE_SUBTITLE
        parameters.pointee.codec_id = AV_CODEC_ID_EIA_608
        func make(_ options: [String: String]) -> CaptionDecoder? {
            CaptionDecoder(parameters: parameters, timeBase: timeBase, id: .closedCaptions(1), origin: .closedCaptions(channel: 1),
                           language: nil, label: "CC1", disposition: 0, canvas: (0, 0), options: options)
        }
        guard let decoder = make([:]), let live = make(["real_time": "1"]) else { return nil }
        self.decoder = decoder
        self.live = live
        self.timeBase = timeBase
    }

    var track: CaptionTrack { decoder.track }

    /// The caption bytes of `frame`, if it has any, decoded at its timestamp: the screen's
    /// change (provisional) and the cues `cc_dec` settled, as one output to file.
    func decode(_ frame: FrameBox) -> CaptionDecoder.Output? {
        guard let side = av_frame_get_side_data(frame.pointer, AV_FRAME_DATA_A53_CC), side.pointee.size > 0,
              let data = side.pointee.data else { return nil }
        let pts = frame.pointer.pointee.best_effort_timestamp
        guard pts != AV_NOPTS, let first = packet(data, Int(side.pointee.size), pts),
              let second = packet(data, Int(side.pointee.size), pts) else { return nil }
        let now = TimeBase(timeBase).time(pts)
        remember(pts, now)
        var output = provisional(live.decode(first), at: now)
        let settled = decoder.decode(second)
        output.events += settled.events.map { exact($0, now: now) }
        return output
    }

    /// The end of the video: what the decoder still holds.
    func drain() -> CaptionDecoder.Output {
        var output = decoder.drain()
        output.events = output.events.map { exact($0, now: nil) }
        return output
    }

    /// A seek: what the decoders hold belongs to the old position.
    func flush() {
        decoder.flush()
        live.flush()
        recent.removeAll()
    }

    /// Whether `frame` carries caption data at all.
    static func hasCaptions(_ frame: FrameBox) -> Bool {
        av_frame_get_side_data(frame.pointer, AV_FRAME_DATA_A53_CC) != nil
    }

    private func packet(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ pts: Int64) -> Packet? {
        guard let packet = Packet(), av_new_packet(packet.pointer, Int32(clamping: size)) >= 0,
              let bytes = packet.pointer.pointee.data else { return nil }
        bytes.update(from: data, count: size)
        packet.pointer.pointee.pts = pts
        packet.pointer.pointee.dts = pts
        return packet
    }

    /// `real_time` gave the screen at `now` (its own times are the previous change's): it shows
    /// from `now` until the next change; an empty screen only ends what was shown.
    private func provisional(_ output: CaptionDecoder.Output, at now: MediaTime) -> CaptionDecoder.Output {
        guard !output.events.isEmpty || output.closesOpenCuesAt != nil else { return CaptionDecoder.Output() }
        var result = CaptionDecoder.Output(closesOpenCuesAt: now)
        for var event in output.events where !event.plainText.isEmpty {
            event.start = now
            event.end = .positiveInfinity
            event.isProvisional = true
            result.events.append(event)
        }
        return result
    }

    /// A settled cue on the frames' own times: its start the frame whose time in microseconds
    /// it is, its end this frame's when it ends here (`cc_dec` gives whole milliseconds).
    private func exact(_ event: CaptionEvent, now: MediaTime?) -> CaptionEvent {
        var event = event
        let micros = MediaTime(value: 1, timescale: 1_000_000)
        if let match = recent.last(where: { MediaTime.abs(MediaTime(value: $0.micros, timescale: 1_000_000) - event.start) < micros }) {
            event.start = match.time
        }
        if let now, event.end.isNumeric, MediaTime.abs(event.end - now) < MediaTime(value: 1, timescale: 1000), now > event.start {
            event.end = now
        }
        return event
    }

    private func remember(_ pts: Int64, _ time: MediaTime) {
        let micros = av_rescale_q(pts, timeBase, AVRational(num: 1, den: 1_000_000))
        recent.append((micros, time))
        if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
    }
}
