import Foundation
import ReelCore
import ReelCaptions
internal import CFFmpeg

/// One libavcodec subtitle decoder: a container's subtitle stream (SubRip, ASS, WebVTT,
/// mov_text, the bitmap formats) or a sideloaded file's, turned into ``CaptionEvent``s.
///
/// Times are the packet's own, in its stream's time base, plus the decoder's display offsets
/// (milliseconds): the same timeline as the video frames' timestamps, with no rounding through
/// `AV_TIME_BASE`. A cue whose end the decoder leaves open (CEA-608, bitmap sets) ends at
/// `+infinity` until the next one of its track closes it (``CaptionTimeline/close(_:at:)``).
///
/// `@unchecked`: it wraps an `AVCodecContext`, used by one thread at a time (the demux thread
/// for a container's stream, a caption loader thread for a file).
final class CaptionDecoder: @unchecked Sendable {
    let context: UnsafeMutablePointer<AVCodecContext>
    let track: CaptionTrack
    let timeBase: TimeBase
    /// The size bitmap positions refer to when the stream does not say (the video's).
    let canvas: (width: Int, height: Int)
    /// Packets the decoder refused in a row; past ``maximumFailures`` the track is given up.
    private(set) var failures = 0
    static let maximumFailures = 50
    /// The last packet's timestamp, for the empty packet that drains the decoder at the end.
    private var lastTimestamp: Int64?

    /// What one packet gave: cues, and for a clearing set (a bitmap stream's empty display set)
    /// the time the track's open cues end.
    struct Output {
        var events: [CaptionEvent] = []
        var closesOpenCuesAt: MediaTime?
    }

    /// A decoder for `parameters` (a stream's), or `nil` when this FFmpeg has none for the codec
    /// or it would not open.
    init?(parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational, id: CaptionTrackID,
          origin: CaptionTrack.Origin, language: String?, label: String?, disposition: Int32,
          canvas: (width: Int, height: Int), characterEncoding: String? = nil, options extra: [String: String] = [:]) {
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id),
              let context = avcodec_alloc_context3(codec) else { return nil }
        var owned: UnsafeMutablePointer<AVCodecContext>? = context
        guard avcodec_parameters_to_context(context, parameters) >= 0 else {
            avcodec_free_context(&owned)
            return nil
        }
        context.pointee.pkt_timebase = timeBase
        // Keep the ASS ReadOrder counting across flushes (a seek), as players do.
        context.pointee.flags2 |= AV_CODEC_FLAG2_RO_FLUSH_NOOP
        var options: OpaquePointer?
        if let characterEncoding {
            av_dict_set(&options, "sub_charenc", characterEncoding, 0)
            av_dict_set(&options, "sub_charenc_mode", "pre_decoder", 0)
        }
        for (key, value) in extra { av_dict_set(&options, key, value, 0) }
        let code = avcodec_open2(context, codec, &options)
        av_dict_free(&options)
        guard code >= 0 else {
            avcodec_free_context(&owned)
            return nil
        }
        self.context = context
        self.timeBase = TimeBase(timeBase)
        let width = Int(context.pointee.width)
        let height = Int(context.pointee.height)
        self.canvas = width > 0 && height > 0 ? (width, height) : canvas
        var header: String?
        if let bytes = context.pointee.subtitle_header, context.pointee.subtitle_header_size > 0 {
            header = String(decoding: UnsafeBufferPointer(start: bytes, count: Int(context.pointee.subtitle_header_size)), as: UTF8.self)
        }
        track = CaptionTrack(
            id: id, origin: origin, format: CaptionTrack.Format(decoderName: String(cString: codec.pointee.name)),
            language: language, label: label,
            isDefault: disposition & AV_DISPOSITION_DEFAULT != 0,
            isForced: disposition & AV_DISPOSITION_FORCED != 0,
            isHearingImpaired: disposition & AV_DISPOSITION_HEARING_IMPAIRED != 0,
            assHeader: header)
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&pointer)
    }

    /// Whether the track was given up (its decoder kept failing).
    var isGivenUp: Bool { failures > Self.maximumFailures }

    /// Decodes one packet of the stream. A packet the decoder refuses gives nothing.
    func decode(_ packet: Packet) -> Output {
        guard !isGivenUp, let ts = packet.timestamp else { return Output() }
        lastTimestamp = ts
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        let code = avcodec_decode_subtitle2(context, &subtitle, &got, packet.pointer)
        guard code >= 0 else {
            failures += 1
            return Output()
        }
        failures = 0
        guard got != 0 else { return Output() }
        defer { avsubtitle_free(&subtitle) }
        // The packet's own time, exactly, unless the decoder timed the cue itself (cc_dec gives
        // a caption the time its first byte pair came, in AV_TIME_BASE).
        var base = timeBase.time(ts)
        let rescaled = av_rescale_q(ts, context.pointee.pkt_timebase, AVRational(num: 1, den: reel_av_time_base()))
        if subtitle.pts != AV_NOPTS, subtitle.pts != rescaled {
            base = MediaTime(value: subtitle.pts, timescale: reel_av_time_base())
        }
        let start = base + MediaTime(value: Int64(subtitle.start_display_time), timescale: 1000)
        let endOffset = subtitle.end_display_time
        // 0 or UINT32_MAX: the decoder does not know when the cue ends (CEA-608, bitmap sets).
        let end = endOffset == 0 || endOffset == UInt32.max
            ? MediaTime.positiveInfinity
            : base + MediaTime(value: Int64(endOffset), timescale: 1000)
        var output = Output()
        if subtitle.num_rects == 0 {
            // An empty set clears the screen (PGS, DVB).
            output.closesOpenCuesAt = start
            return output
        }
        if end.isPositiveInfinity { output.closesOpenCuesAt = start }
        for index in 0..<Int(subtitle.num_rects) {
            guard let rect = subtitle.rects[index]?.pointee,
                  let content = content(of: rect) else { continue }
            output.events.append(CaptionEvent(track: track.id, start: start, end: end, content: content, language: track.language))
        }
        return output
    }

    /// The end of the input: what a decoder that holds cues back (CEA-608 keeps a caption until
    /// its end is known) still has, as `ffmpeg` drains it.
    func drain() -> Output {
        guard let ts = lastTimestamp, let packet = Packet() else { return Output() }
        packet.pointer.pointee.pts = ts
        packet.pointer.pointee.dts = ts
        return decode(packet)
    }

    /// Forgets what the decoder holds between packets (a seek).
    func flush() {
        avcodec_flush_buffers(context)
    }

    private func content(of rect: AVSubtitleRect) -> CaptionEvent.Content? {
        if let ass = rect.ass {
            let line = String(cString: ass)
            if let dialogue = ASSDialogue(chunk: line) { return .text(dialogue) }
            // A full "Dialogue:" line (older decoders) or plain words.
            return .text(ASSDialogue(text: line))
        }
        if let text = rect.text {
            return .text(ASSDialogue(text: Self.escapedForASS(String(cString: text))))
        }
        guard rect.type == SUBTITLE_BITMAP, rect.w > 0, rect.h > 0, let pixels = rect.data.0 else { return nil }
        let width = Int(rect.w)
        let height = Int(rect.h)
        let stride = Int(rect.linesize.0)
        guard stride >= width else { return nil }
        var indices = [UInt8](repeating: 0, count: width * height)
        indices.withUnsafeMutableBufferPointer { out in
            for row in 0..<height {
                (out.baseAddress! + row * width).update(from: pixels + row * stride, count: width)
            }
        }
        var palette: [UInt32] = []
        if let colours = rect.data.1, rect.nb_colors > 0 {
            let entries = UnsafeRawPointer(colours).assumingMemoryBound(to: UInt32.self)
            palette = (0..<Int(min(rect.nb_colors, 256))).map { entries[$0] }
        }
        // The size the stream itself gives once decoding (a PGS composition's video size), else
        // the one known at open (the stream's parameters, else the video's).
        let live = (width: Int(context.pointee.width), height: Int(context.pointee.height))
        let known = live.width > 0 && live.height > 0 ? live : canvas
        let canvasWidth = max(known.width, Int(rect.x) + width)
        let canvasHeight = max(known.height, Int(rect.y) + height)
        return .bitmap(CaptionBitmap(x: Int(rect.x), y: Int(rect.y), width: width, height: height,
                                     canvasWidth: canvasWidth, canvasHeight: canvasHeight, indices: indices, palette: palette))
    }

    /// Plain words as ASS dialogue text: braces and backslashes kept literal, lines as `\N`.
    static func escapedForASS(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\n": result += "\\N"
            case "\r": continue
            default: result += ASSDialogue.escaped(String(character))
            }
        }
        return result
    }
}
