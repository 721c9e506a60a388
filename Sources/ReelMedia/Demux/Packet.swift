import ReelCore
// `package`: the media tools (ReelMediaTools) encode into these; nothing public shows a C type.
package import CFFmpeg

/// One demuxed packet (owns its `AVPacket`).
///
/// `@unchecked`: it wraps an `AVPacket`, written by the demux thread before it is queued (under
/// the engine's monitor) and only read by the decode thread that takes it.
package final class Packet: @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<AVPacket>

    package init?() {
        guard let packet = av_packet_alloc() else { return nil }
        pointer = packet
    }

    /// A new reference to the same data.
    init?(referencing other: Packet) {
        guard let packet = av_packet_alloc() else { return nil }
        guard av_packet_ref(packet, other.pointer) >= 0 else {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
            return nil
        }
        pointer = packet
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }

    /// The stream's new codec parameters, on the first packet of a stream section whose
    /// parameters differ (a switch of variant): the decoder drains and reopens with them.
    var newParameters: CodecParameters?

    package var streamIndex: Int32 { pointer.pointee.stream_index }
    var pts: Int64 { pointer.pointee.pts }
    var dts: Int64 { pointer.pointee.dts }
    var duration: Int64 { pointer.pointee.duration }
    var size: Int { Int(pointer.pointee.size) }
    var isKeyframe: Bool { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }
    /// The best timestamp available: pts, else dts.
    var timestamp: Int64? {
        if pts != AV_NOPTS { return pts }
        if dts != AV_NOPTS { return dts }
        return nil
    }
}

/// An owned `AVFrame`.
///
/// `@unchecked`: it wraps an `AVFrame`, filled by one decoder thread and only read after it is
/// handed on (through the engine's monitor, or as a ``VideoFrame``).
package final class FrameBox: @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<AVFrame>

    /// The decoder marked the frame as one not to show (an edit list's pre-roll). Decoders
    /// drop such frames themselves, except those that return frames on their own (libdav1d
    /// in FFmpeg 5.1).
    var isDiscarded: Bool { pointer.pointee.flags & AV_FRAME_FLAG_DISCARD != 0 }

    package init?() {
        guard let frame = av_frame_alloc() else { return nil }
        pointer = frame
    }

    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }
}

/// A rational time base as Reel times.
struct TimeBase: Sendable, Hashable {
    var num: Int32
    var den: Int32

    init(_ rational: AVRational) {
        num = rational.num
        den = rational.den > 0 ? rational.den : 1
        if num <= 0 { num = 1 }
    }

    /// `ts` in this time base as a MediaTime (`value/timescale`, exactly when it fits).
    func time(_ ts: Int64) -> MediaTime {
        if num == 1 { return MediaTime(value: ts, timescale: den) }
        let (high, low) = ts.multipliedFullWidth(by: Int64(num))
        if (high == 0 && low <= UInt64(Int64.max)) || (high == -1 && low >= UInt64(1) << 63) {
            return MediaTime(value: ts &* Int64(num), timescale: den)
        }
        return MediaTime(value: ts, timescale: den).multiplied(by: num)
    }

    /// `time` as a timestamp in this time base, rounded toward negative infinity
    /// (so a seek to it never lands after `time`).
    func timestamp(_ time: MediaTime, rounding: MediaTime.RoundingMethod = .towardNegativeInfinity) -> Int64 {
        guard time.isNumeric else { return time < .zero ? Int64.min / 2 : Int64.max / 2 }
        // ts = time * den / num
        let scaled = time.convertScale(den, method: rounding)
        return num == 1 ? scaled.value : scaled.value / Int64(num)
    }

    var description: String { "\(num)/\(den)" }
}

/// An owned copy of a stream's codec parameters (independent of the demuxer's lifetime).
///
/// `@unchecked`: it wraps an `AVCodecParameters`, written once when copied and only read after.
final class CodecParameters: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVCodecParameters>
    let timeBase: AVRational

    init?(copying source: UnsafePointer<AVCodecParameters>, timeBase: AVRational) {
        guard let copy = avcodec_parameters_alloc() else { return nil }
        guard avcodec_parameters_copy(copy, source) >= 0 else {
            var p: UnsafeMutablePointer<AVCodecParameters>? = copy
            avcodec_parameters_free(&p)
            return nil
        }
        pointer = copy
        self.timeBase = timeBase
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecParameters>? = pointer
        avcodec_parameters_free(&p)
    }
}
