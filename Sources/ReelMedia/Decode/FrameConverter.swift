import Foundation
import ReelCore
internal import CFFmpeg

/// Scales and converts frames with libswscale, keeping its context between calls
/// of the same shape (make one per consumer thread; it is not thread-safe).
///
/// `@unchecked`: it wraps a `SwsContext`, reallocated by each call; nothing guards it — its
/// owner (a renderer, a converter call) uses it from one thread at a time.
public final class FrameScaler: @unchecked Sendable {
    private var context: UnsafeMutableRawPointer?
    /// `rgb`'s context, made for the source's chroma siting, and what it was made for.
    private var sitedContext: UnsafeMutableRawPointer?
    private var sitedKey: SitedKey?
    private let flags: Int32

    /// `rgb`'s filter: area averaging, or bicubic (swscale's bilinear misplaces chroma samples by
    /// up to a quarter of a chroma sample, whatever siting it is told: ChromaLocationTests).
    private let sitedFlags: Int32

    /// `smooth` uses area averaging (best for large downscales, the terminal's
    /// case); otherwise bicubic for pictures (bilinear for conversions at the same size).
    public init(smooth: Bool = true) {
        flags = smooth ? reel_sws_area() : reel_sws_bilinear()
        sitedFlags = smooth ? reel_sws_area() : reel_sws_bicubic()
    }

    deinit {
        reel_sws_free_context(context)
        reel_sws_free_context(sitedContext)
    }

    /// What a sited context depends on.
    private struct SitedKey: Equatable {
        var width: Int32, height: Int32, format: Int32, outWidth: Int, outHeight: Int, outFormat: Int32
        var chromaX: Int32, chromaY: Int32
    }

    /// A context for `frame` to `width` × `height` in `format` whose chroma upsampling puts each
    /// chroma sample where the frame's chroma location says (swscale's own default is the centre,
    /// where H.264 and HEVC put it on the left), kept while the shape stays.
    private func sitedContext(_ frame: VideoFrame, width: Int, height: Int, format: AVPixelFormat) -> UnsafeMutableRawPointer? {
        let source = frame.box.pointer.pointee
        let pixelFormat = frame.pixelFormat
        let position = pixelFormat.isYUV ? frame.color.chromaLocation.position(shiftX: pixelFormat.chromaShiftX, shiftY: pixelFormat.chromaShiftY) : (x: 0, y: 0)
        let key = SitedKey(width: source.width, height: source.height, format: source.format, outWidth: width, outHeight: height,
                           outFormat: format.rawValue, chromaX: Int32((position.x * 256).rounded()), chromaY: Int32((position.y * 256).rounded()))
        if key == sitedKey, let sitedContext { return sitedContext }
        reel_sws_free_context(sitedContext)
        sitedContext = reel_sws_sited_context(source.width, source.height, AVPixelFormat(rawValue: source.format), Int32(width), Int32(height),
                                              format, sitedFlags, key.chromaX, key.chromaY)
        sitedKey = sitedContext == nil ? nil : key
        return sitedContext
    }

    /// `frame` scaled to `width` × `height` as packed RGB (no rotation applied). HDR and
    /// wide-gamut frames are scaled to 16 bits a component and brought to the SDR display
    /// through ``ColorMapper``'s table, dithered to 8 bits (the window's shader does the same);
    /// everything else goes straight to 8 bits as it always has.
    public func rgb(_ frame: VideoFrame, width: Int, height: Int) throws -> RGBImage {
        guard width > 0, height > 0 else { return RGBImage(width: max(width, 0), height: max(height, 0)) }
        if frame.color.needsMapping, let table = colorMapper.table(for: frame) {
            let stride = try scale(frame, width: width, height: height, to: AV_PIX_FMT_RGB48LE, bytesPerPixel: 6)
            var bytes: [UInt8] = []
            table.map(rgb48: scratch, stride: stride, width: width, height: height, into: &bytes)
            return RGBImage(width: width, height: height, bytes: bytes)
        }
        let paddedStride = try scale(frame, width: width, height: height, to: AV_PIX_FMT_RGB24, bytesPerPixel: 3)
        let packedStride = width * 3
        var bytes = [UInt8](repeating: 0, count: packedStride * height)
        bytes.withUnsafeMutableBufferPointer { out in
            scratch.withUnsafeBufferPointer { source in
                for row in 0..<height {
                    (out.baseAddress! + row * packedStride).update(from: source.baseAddress! + row * paddedStride, count: packedStride)
                }
            }
        }
        return RGBImage(width: width, height: height, bytes: bytes)
    }

    /// Decides the colour path of ``rgb(_:width:height:)`` (made on first use, with the options then current).
    private lazy var colorMapper = ColorMapper()
    /// What swscale writes ``rgb(_:width:height:)``'s rows into, kept between calls.
    private var scratch: [UInt8] = []

    /// The frame scaled into ``scratch``, rows padded to 64 bytes with slack at the end:
    /// swscale's SIMD output paths write whole blocks and may run past a row's last pixel (and
    /// past the buffer after the last row). Returns the rows' stride.
    private func scale(_ frame: VideoFrame, width: Int, height: Int, to format: AVPixelFormat,
                       bytesPerPixel: Int) throws -> Int {
        let source = frame.box.pointer
        guard let context = sitedContext(frame, width: width, height: height, format: format) else {
            throw MediaError.ffmpeg(operation: "sws_getCachedContext", code: -22, message: "unsupported conversion from \(frame.pixelFormat)", url: nil)
        }
        applyColorDetails(context, frame: frame)
        let paddedStride = (width * bytesPerPixel + 63) & ~63
        // Kept from frame to frame (swscale overwrites what is read): no allocation, no page
        // faults, no clearing per frame once the shape is steady.
        let needed = paddedStride * height + Self.outputSlack
        if scratch.count < needed { scratch = [UInt8](repeating: 0, count: needed) }
        let scaled = scratch.withUnsafeMutableBufferPointer { out -> Int32 in
            var destination: UnsafeMutablePointer<UInt8>? = out.baseAddress
            var stride = Int32(paddedStride)
            return withUnsafePointer(to: &source.pointee.data) { dataTuple in
                withUnsafePointer(to: &source.pointee.linesize) { lineTuple in
                    dataTuple.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { data in
                        lineTuple.withMemoryRebound(to: Int32.self, capacity: 8) { lines in
                            reel_sws_scale(context, data, lines, 0, source.pointee.height, &destination, &stride)
                        }
                    }
                }
            }
        }
        guard scaled > 0 else {
            throw MediaError.ffmpeg(operation: "sws_scale", code: scaled, message: ffmpegErrorString(scaled), url: nil)
        }
        return paddedStride
    }

    /// Bytes past the picture that swscale may write to.
    private static let outputSlack = 256

    /// `frame` converted to `format` at its own size.
    public func convert(_ frame: VideoFrame, to format: PixelFormat) throws -> VideoFrame {
        let source = frame.box.pointer
        context = reel_sws_get_cached_context(
            context, source.pointee.width, source.pointee.height, AVPixelFormat(rawValue: source.pointee.format),
            source.pointee.width, source.pointee.height, format.avFormat, reel_sws_bilinear()
        )
        guard let context, let out = FrameBox() else {
            throw MediaError.ffmpeg(operation: "sws_getCachedContext", code: -22, message: "unsupported conversion from \(frame.pixelFormat) to \(format)", url: nil)
        }
        out.pointer.pointee.width = source.pointee.width
        out.pointer.pointee.height = source.pointee.height
        out.pointer.pointee.format = format.avFormat.rawValue
        try ffcall("av_frame_get_buffer") { av_frame_get_buffer(out.pointer, 0) }
        try ffcall("av_frame_copy_props") { av_frame_copy_props(out.pointer, source) }
        applyColorDetails(context, frame: frame)
        let scaled = withUnsafePointer(to: &source.pointee.data) { dataTuple in
            withUnsafePointer(to: &source.pointee.linesize) { lineTuple in
                withUnsafeMutablePointer(to: &out.pointer.pointee.data) { outData in
                    withUnsafePointer(to: &out.pointer.pointee.linesize) { outLines in
                        dataTuple.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { data in
                            lineTuple.withMemoryRebound(to: Int32.self, capacity: 8) { lines in
                                outData.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { od in
                                    outLines.withMemoryRebound(to: Int32.self, capacity: 8) { ol in
                                        reel_sws_scale(context, data, lines, 0, source.pointee.height, od, ol)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        guard scaled > 0 else {
            throw MediaError.ffmpeg(operation: "sws_scale", code: scaled, message: ffmpegErrorString(scaled), url: nil)
        }
        return VideoFrame(box: out, pts: frame.pts, duration: frame.duration, rotation: frame.rotation, serial: frame.serial)
    }

    /// Tells swscale the source's matrix and range, so colours come out right.
    private func applyColorDetails(_ context: UnsafeMutableRawPointer, frame: VideoFrame) {
        guard frame.pixelFormat.isYUV else { return }
        let space: Int32
        switch frame.colorMatrix {
        case .bt601: space = SWS_CS_ITU601
        case .bt709: space = SWS_CS_ITU709
        case .bt2020: space = SWS_CS_BT2020
        }
        var inverse: UnsafeMutablePointer<Int32>?
        var table: UnsafeMutablePointer<Int32>?
        var srcRange: Int32 = 0, dstRange: Int32 = 0, brightness: Int32 = 0, contrast: Int32 = 0, saturation: Int32 = 0
        guard reel_sws_get_colorspace_details(context, &inverse, &srcRange, &table, &dstRange, &brightness, &contrast, &saturation) >= 0 else { return }
        let coefficients = sws_getCoefficients(space)
        _ = reel_sws_set_colorspace_details(context, coefficients, frame.colorRange == .full ? 1 : 0, table, dstRange, brightness, contrast, saturation)
    }
}

enum FrameConverter {
    static func rgb(_ frame: VideoFrame, width: Int, height: Int) throws -> RGBImage {
        try FrameScaler().rgb(frame, width: width, height: height)
    }

    static func convert(_ frame: VideoFrame, to format: PixelFormat) throws -> VideoFrame {
        try FrameScaler().convert(frame, to: format)
    }
}
