import Foundation
import ReelCore
internal import CFFmpeg

/// One open libavcodec decoder.
///
/// `@unchecked`: it wraps an `AVCodecContext`, which is not thread-safe; it is made by the demux
/// thread (or by a decode thread, for its first-frame decoder) and then used by one decode
/// thread alone.
final class Decoder: @unchecked Sendable {
    let context: UnsafeMutablePointer<AVCodecContext>
    let url: URL
    let timeBase: TimeBase

    /// A decoder for the stream's parameters. `threads` 0 lets FFmpeg choose
    /// (frame and slice threading); 1 decodes on the calling thread only, which
    /// gives a frame for the first packet without frame threading's delay.
    init(parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational, url: URL, threads: Int32) throws {
        self.url = url
        self.timeBase = TimeBase(timeBase)
        let codecID = parameters.pointee.codec_id
        guard let codec = avcodec_find_decoder(codecID) else {
            throw MediaError.unsupportedCodec(name: String(cString: avcodec_get_name(codecID)), url: url)
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError.ffmpeg(operation: "avcodec_alloc_context3", code: -12, message: "out of memory", url: url)
        }
        // Every stored property is set from here on, so a throw below runs `deinit`, which
        // frees the context: freeing it here too crashed on any codec that fails to open.
        self.context = context
        try ffcall("avcodec_parameters_to_context", url: url) { avcodec_parameters_to_context(context, parameters) }
        context.pointee.pkt_timebase = timeBase
        context.pointee.thread_count = threads
        if threads != 1 {
            context.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        }
        try ffcall("avcodec_open2 (\(String(cString: codec.pointee.name)))", url: url) { avcodec_open2(context, codec, nil) }
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&pointer)
    }

    var codecName: String { String(cString: avcodec_get_name(context.pointee.codec_id)) }

    /// Sends a packet (`nil` to drain). Returns `false` when the decoder is full
    /// and frames must be received first.
    func send(_ packet: Packet?) throws -> Bool {
        let code = avcodec_send_packet(context, packet?.pointer)
        if code == AVERROR_EAGAIN_CODE { return false }
        if code == AVERROR_EOF_CODE { return true }
        if code < 0 {
            // Corrupt data: skip the packet, as players do; the next keyframe recovers.
            if code == reel_averror_invaliddata() { return true }
            throw MediaError.ffmpeg(operation: "avcodec_send_packet (\(codecName))", code: code, message: ffmpegErrorString(code), url: url)
        }
        return true
    }

    enum Output {
        case frame(FrameBox)
        case needsInput
        case endOfStream
        /// A frame could not be decoded (damaged data); more may follow.
        case damaged
    }

    /// The next decoded frame, if one is ready.
    func receive() throws -> Output {
        guard let frame = FrameBox() else {
            throw MediaError.ffmpeg(operation: "av_frame_alloc", code: -12, message: "out of memory", url: url)
        }
        let code = avcodec_receive_frame(context, frame.pointer)
        if code == AVERROR_EAGAIN_CODE { return .needsInput }
        if code == AVERROR_EOF_CODE { return .endOfStream }
        if code < 0 {
            if code == reel_averror_invaliddata() { return .damaged }
            throw MediaError.ffmpeg(operation: "avcodec_receive_frame (\(codecName))", code: code, message: ffmpegErrorString(code), url: url)
        }
        return .frame(frame)
    }

    /// Whether the packets sent from now on skip their frames that no other frame refers to
    /// (FFmpeg's `skip_frame`, honoured per packet under frame threading too): those frames are
    /// not decoded at all. For frames before a seek's target, which are never shown.
    var skipsNonReferenceFrames = false {
        didSet {
            guard skipsNonReferenceFrames != oldValue else { return }
            context.pointee.skip_frame = skipsNonReferenceFrames ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
        }
    }

    /// Forgets everything buffered (after a seek).
    func flush() {
        avcodec_flush_buffers(context)
    }
}
