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
/// Belongs to the video decode thread (made there at the first frame with caption data).
final class ClosedCaptionExtractor {
    let decoder: CaptionDecoder

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
        guard let decoder = CaptionDecoder(
            parameters: parameters, timeBase: timeBase, id: .closedCaptions(1), origin: .closedCaptions(channel: 1),
            language: nil, label: "CC1", disposition: 0, canvas: (0, 0)) else { return nil }
        self.decoder = decoder
    }

    var track: CaptionTrack { decoder.track }

    /// The caption bytes of `frame`, if it has any, decoded at its timestamp.
    func decode(_ frame: FrameBox) -> CaptionDecoder.Output? {
        guard let side = av_frame_get_side_data(frame.pointer, AV_FRAME_DATA_A53_CC), side.pointee.size > 0,
              let data = side.pointee.data else { return nil }
        let pts = frame.pointer.pointee.best_effort_timestamp
        guard pts != AV_NOPTS, let packet = Packet() else { return nil }
        let size = Int32(clamping: side.pointee.size)
        guard av_new_packet(packet.pointer, size) >= 0, let bytes = packet.pointer.pointee.data else { return nil }
        bytes.update(from: data, count: Int(size))
        packet.pointer.pointee.pts = pts
        packet.pointer.pointee.dts = pts
        return decoder.decode(packet)
    }

    /// The end of the video: what the decoder still holds.
    func drain() -> CaptionDecoder.Output { decoder.drain() }

    /// A seek: what the decoder holds belongs to the old position.
    func flush() { decoder.flush() }

    /// Whether `frame` carries caption data at all.
    static func hasCaptions(_ frame: FrameBox) -> Bool {
        av_frame_get_side_data(frame.pointer, AV_FRAME_DATA_A53_CC) != nil
    }
}
