import Foundation
import ReelCore
import ReelMedia
internal import CFFmpeg

/// Plain FFmpeg, as a program that does nothing clever would use it: the yardstick
/// `reel bench` measures Reel against in the same run, on the same origin.
///
/// Unlike the ``Player``, FFmpeg opens the URL itself here (its own `http` protocol,
/// default options): `avformat_open_input`, `avformat_find_stream_info`, the best
/// video stream's decoder with default options, then read and decode until the first
/// frame comes out.
public enum FFmpegBaseline {
    /// The phases of one first-frame measurement, in milliseconds since the start.
    public struct FirstFrameTiming: Sendable, Hashable, Codable {
        /// `avformat_open_input` returned.
        public var openMs: Double
        /// `avformat_find_stream_info` returned.
        public var streamInfoMs: Double
        /// The first video frame came out of the decoder.
        public var firstFrameMs: Double
        /// Bytes FFmpeg's I/O layer had read by then.
        public var bytesRead: Int64
    }

    /// Decode-only throughput of a file's video stream.
    public struct DecodeThroughput: Sendable, Hashable, Codable {
        public var frames: Int
        /// Wall time from opening to the last frame, in seconds.
        public var wallSeconds: Double
        /// User + system CPU time of the process meanwhile, in seconds.
        public var cpuSeconds: Double
        public var framesPerSecond: Double { wallSeconds > 0 ? Double(frames) / wallSeconds : 0 }
    }

    /// Opens `url` (http(s) or a file path/URL) with FFmpeg's defaults and times the way
    /// to the first decoded video frame.
    public static func firstFrame(url: URL) throws -> FirstFrameTiming {
        FFmpegLog.applyDefault()
        _ = networkInit
        let start = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 }
        let location = url.isFileURL ? url.path : url.absoluteString

        var format: UnsafeMutablePointer<AVFormatContext>?
        try ffcall("avformat_open_input", url: url) { avformat_open_input(&format, location, nil, nil) }
        defer { avformat_close_input(&format) }
        guard let format else { throw MediaError.unrecognizedFormat(url: url, message: "no context") }
        let openMs = elapsed()
        try ffcall("avformat_find_stream_info", url: url) { avformat_find_stream_info(format, nil) }
        let streamInfoMs = elapsed()

        let index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, let stream = format.pointee.streams[Int(index)] else { throw MediaError.noPlayableStreams(url: url) }
        let context = try openDecoder(stream.pointee.codecpar, url: url, threads: nil)
        var ctx: UnsafeMutablePointer<AVCodecContext>? = context
        defer { avcodec_free_context(&ctx) }

        guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else {
            throw MediaError.ffmpeg(operation: "av_packet_alloc", code: -12, message: "out of memory", url: url)
        }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        var f: UnsafeMutablePointer<AVFrame>? = frame
        defer { av_packet_free(&p); av_frame_free(&f) }

        var draining = false
        while true {
            if !draining {
                let code = av_read_frame(format, packet)
                if code == AVERROR_EOF_CODE {
                    draining = true
                    _ = avcodec_send_packet(context, nil)
                } else if code < 0 {
                    throw MediaError.ffmpeg(operation: "av_read_frame", code: code, message: ffmpegErrorString(code), url: url)
                } else {
                    defer { av_packet_unref(packet) }
                    guard packet.pointee.stream_index == index else { continue }
                    let sent = avcodec_send_packet(context, packet)
                    if sent < 0 && sent != AVERROR_EAGAIN_CODE && sent != reel_averror_invaliddata() {
                        throw MediaError.ffmpeg(operation: "avcodec_send_packet", code: sent, message: ffmpegErrorString(sent), url: url)
                    }
                }
            }
            let received = avcodec_receive_frame(context, frame)
            if received >= 0 {
                let firstFrameMs = elapsed()
                let bytes = format.pointee.pb.map { Int64(avio_tell($0)) } ?? 0
                return FirstFrameTiming(openMs: openMs, streamInfoMs: streamInfoMs, firstFrameMs: firstFrameMs, bytesRead: bytes)
            }
            if received == AVERROR_EOF_CODE { throw MediaError.noPlayableStreams(url: url) }
            if received != AVERROR_EAGAIN_CODE && received != reel_averror_invaliddata() {
                throw MediaError.ffmpeg(operation: "avcodec_receive_frame", code: received, message: ffmpegErrorString(received), url: url)
            }
        }
    }

    /// Decodes every video frame of a local file as fast as possible: FFmpeg's own file
    /// I/O, the decoder with `threads` (0: FFmpeg picks, as the `ffmpeg` tool does).
    /// `maxFrames` stops after that many frames (the first seconds of a file).
    public static func decodeThroughput(file: URL, threads: Int = 0, maxFrames: Int? = nil) throws -> DecodeThroughput {
        FFmpegLog.applyDefault()
        let cpuStart = processCPUSeconds()
        let start = DispatchTime.now().uptimeNanoseconds

        var format: UnsafeMutablePointer<AVFormatContext>?
        try ffcall("avformat_open_input", url: file) { avformat_open_input(&format, file.path, nil, nil) }
        defer { avformat_close_input(&format) }
        guard let format else { throw MediaError.unrecognizedFormat(url: file, message: "no context") }
        try ffcall("avformat_find_stream_info", url: file) { avformat_find_stream_info(format, nil) }
        let index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, let stream = format.pointee.streams[Int(index)] else { throw MediaError.noPlayableStreams(url: file) }
        let context = try openDecoder(stream.pointee.codecpar, url: file, threads: Int32(threads))
        var ctx: UnsafeMutablePointer<AVCodecContext>? = context
        defer { avcodec_free_context(&ctx) }
        guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else {
            throw MediaError.ffmpeg(operation: "av_packet_alloc", code: -12, message: "out of memory", url: file)
        }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        var f: UnsafeMutablePointer<AVFrame>? = frame
        defer { av_packet_free(&p); av_frame_free(&f) }

        var frames = 0
        func drain() {
            while avcodec_receive_frame(context, frame) >= 0 {
                frames += 1
                av_frame_unref(frame)
            }
        }
        let limit = maxFrames ?? .max
        while frames < limit, av_read_frame(format, packet) >= 0 {
            if packet.pointee.stream_index == index {
                while avcodec_send_packet(context, packet) == AVERROR_EAGAIN_CODE { drain() }
                drain()
            }
            av_packet_unref(packet)
        }
        if frames < limit {
            _ = avcodec_send_packet(context, nil)
            drain()
        }
        frames = min(frames, limit)
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return DecodeThroughput(frames: frames, wallSeconds: wall, cpuSeconds: processCPUSeconds() - cpuStart)
    }

    /// User + system CPU seconds this process has used (all threads).
    public static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// `threads` nil leaves the decoder's default (as a program that sets nothing gets).
    private static func openDecoder(_ parameters: UnsafeMutablePointer<AVCodecParameters>, url: URL,
                                    threads: Int32?) throws -> UnsafeMutablePointer<AVCodecContext> {
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw MediaError.unsupportedCodec(name: String(cString: avcodec_get_name(parameters.pointee.codec_id)), url: url)
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError.ffmpeg(operation: "avcodec_alloc_context3", code: -12, message: "out of memory", url: url)
        }
        do {
            try ffcall("avcodec_parameters_to_context", url: url) { avcodec_parameters_to_context(context, parameters) }
            if let threads { context.pointee.thread_count = threads }
            try ffcall("avcodec_open2", url: url) { avcodec_open2(context, codec, nil) }
        } catch {
            var pointer: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&pointer)
            throw error
        }
        return context
    }

    private static let networkInit: Void = { _ = avformat_network_init() }()
}
