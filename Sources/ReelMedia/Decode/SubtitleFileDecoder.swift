import Foundation
import ReelCore
import ReelCaptions
internal import CFFmpeg

/// A whole caption file (SubRip, WebVTT, ASS/SSA) already in memory, read by libavformat's own
/// demuxer for it and decoded by libavcodec — the same code `ffmpeg -i file.srt` runs, so the
/// cues equal FFmpeg's. Nothing is opened by name: the bytes come through an ``AVIOBridge`` over
/// a one-resource loader, with FFmpeg's protocols off.
///
/// Text that is not UTF-8 (nor UTF-16 with a byte order mark, which the demuxers read) is
/// recoded: first as GB18030, then as Windows-1252; ``Result/recodedFrom`` names the guess.
enum SubtitleFileDecoder {
    struct Result {
        var track: CaptionTrack
        var events: [CaptionEvent]
        /// The character encoding the text was recoded from, when it was not UTF-8.
        var recodedFrom: String?
    }

    /// The demuxers a caption file may be read by.
    static let formats = "srt,webvtt,ass"

    /// Decodes `data` (a file named `url`, for messages) as track `id`. Throws
    /// ``MediaError`` with a one-line reason when it is not a caption file FFmpeg can read.
    static func decode(_ data: Data, url: URL, id: CaptionTrackID, language: String?, label: String?) throws -> Result {
        let utf8 = data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF]) || String(validating: data, as: UTF8.self) != nil
        let encodings: [String?] = utf8 ? [nil] : ["GB18030", "CP1252"]
        var lastError: MediaError?
        for encoding in encodings {
            do {
                var result = try decode(data, url: url, id: id, language: language, label: label, encoding: encoding)
                result.recodedFrom = encoding
                return result
            } catch let error as MediaError {
                lastError = error
            }
        }
        throw lastError ?? MediaError.unrecognizedFormat(url: url, message: "not a caption file")
    }

    private struct RecodingFailed: Error {}

    private static func decode(_ data: Data, url: URL, id: CaptionTrackID, language: String?, label: String?,
                               encoding: String?) throws -> Result {
        FFmpegLog.applyDefault()
        let bridge = try AVIOBridge(url: url, loader: MemoryLoader(url: url, data: data))
        defer { bridge.close() }
        guard let context = avformat_alloc_context() else {
            throw MediaError.ffmpeg(operation: "avformat_alloc_context", code: -12, message: "out of memory", url: url)
        }
        context.pointee.pb = bridge.context
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var options: OpaquePointer?
        av_dict_set(&options, "protocol_whitelist", "none", 0)
        av_dict_set(&options, "format_whitelist", formats, 0)
        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        let code = avformat_open_input(&opened, "captions", nil, &options)
        av_dict_free(&options)
        guard code >= 0, let format = opened else {
            throw MediaError.unrecognizedFormat(url: url, message: "not a SubRip, WebVTT or ASS file")
        }
        defer { avformat_close_input(&opened) }
        var streamIndex: Int32?
        for i in 0..<Int(format.pointee.nb_streams) where format.pointee.streams[i]?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE {
            streamIndex = Int32(i)
            break
        }
        guard let streamIndex, let stream = format.pointee.streams[Int(streamIndex)] else {
            throw MediaError.unrecognizedFormat(url: url, message: "no caption stream")
        }
        guard let decoder = CaptionDecoder(
            parameters: stream.pointee.codecpar, timeBase: stream.pointee.time_base, id: id,
            origin: .sideloaded(url), language: language, label: label, disposition: 0, canvas: (0, 0),
            characterEncoding: encoding) else {
            throw MediaError.unsupportedCodec(name: String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id)), url: url)
        }
        var timeline = CaptionTimeline()
        var refused = 0
        var damaged = 0
        while true {
            guard let packet = Packet() else { break }
            let read = av_read_frame(format, packet.pointer)
            if read == AVERROR_EOF_CODE { break }
            if read < 0 {
                damaged += 1
                if damaged > 64 { break }
                continue
            }
            guard packet.streamIndex == streamIndex else { continue }
            let before = decoder.failures
            let output = decoder.decode(packet)
            if decoder.failures > before { refused += 1 }
            if let closing = output.closesOpenCuesAt { timeline.close(id, at: closing) }
            for event in output.events { timeline.insert(event) }
        }
        let drained = decoder.drain()
        if let closing = drained.closesOpenCuesAt { timeline.close(id, at: closing) }
        for event in drained.events { timeline.insert(event) }
        // A recoding that fails on some cue is the wrong guess: try the next encoding.
        if encoding != nil, refused > 0 {
            throw MediaError.unrecognizedFormat(url: url, message: "text in no encoding Reel recognises")
        }
        let events = timeline.events(of: id)
        // Nothing to show is a broken file as far as the user can tell (a truncated one, cues
        // whose times do not parse): say so rather than offer an empty track.
        guard !events.isEmpty else {
            throw MediaError.unrecognizedFormat(url: url, message: "no cue with valid times")
        }
        return Result(track: decoder.track, events: events)
    }
}
