import Foundation
import ReelCore
internal import ReelDigest
internal import CFFmpeg

/// A pixel format, described the way renderers need it.
public struct PixelFormat: Sendable, Hashable, CustomStringConvertible {
    /// FFmpeg's name (`yuv420p`, `yuv420p10le`, `nv12`).
    public let name: String
    /// Bits per component (8, 10, 12).
    public let bitDepth: Int
    /// Planes in memory (3 for planar YUV, 2 for NV12).
    public let planeCount: Int
    /// Horizontal chroma subsampling as a shift: a chroma plane is `width >> chromaShiftX`
    /// samples wide, rounded up (1 for 4:2:0 and 4:2:2, 0 for 4:4:4).
    public let chromaShiftX: Int
    /// Vertical chroma subsampling as a shift: a chroma plane is `height >> chromaShiftY` rows,
    /// rounded up (1 for 4:2:0, 0 for 4:2:2 and 4:4:4).
    public let chromaShiftY: Int
    /// Components are YUV (not RGB or gray).
    public let isYUV: Bool
    /// U and V share one interleaved plane (NV12, P010).
    public let isSemiPlanar: Bool

    let raw: Int32

    init(_ format: AVPixelFormat) {
        raw = format.rawValue
        name = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "unknown"
        guard let descriptor = av_pix_fmt_desc_get(format) else {
            bitDepth = 8; planeCount = 1; chromaShiftX = 0; chromaShiftY = 0; isYUV = false; isSemiPlanar = false
            return
        }
        let d = descriptor.pointee
        bitDepth = Int(d.comp.0.depth)
        planeCount = Int(av_pix_fmt_count_planes(format))
        chromaShiftX = Int(d.log2_chroma_w)
        chromaShiftY = Int(d.log2_chroma_h)
        isYUV = d.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 && d.nb_components >= 3
        isSemiPlanar = isYUV && planeCount == 2
    }

    var avFormat: AVPixelFormat { AVPixelFormat(rawValue: raw) }

    /// FFmpeg's name for the format, ``name``.
    public var description: String { name }

    /// 8-bit 4:2:0 planar YUV, the format renderers handle natively.
    public static let yuv420p = PixelFormat(AV_PIX_FMT_YUV420P)
    /// Packed 8-bit RGB.
    public static let rgb24 = PixelFormat(AV_PIX_FMT_RGB24)
}

/// The YUV → RGB matrix a frame was encoded with.
public enum ColorMatrix: String, Sendable, Hashable, Codable {
    /// ITU-R BT.601 (tags SMPTE 170M and BT.470 BG; SMPTE 240M and FCC are read as it too):
    /// standard definition, and what untagged SD video is taken to be.
    case bt601
    /// ITU-R BT.709: HD, and what untagged HD video is taken to be.
    case bt709
    /// ITU-R BT.2020's non-constant-luminance matrix: UHD and HDR (a stream tagged constant
    /// luminance is converted with it too).
    case bt2020
}

/// Whether a frame's values use the limited (16–235) or full (0–255) range.
public enum ColorRange: String, Sendable, Hashable, Codable {
    /// Limited ("TV", "MPEG") range: 8-bit luma 16–235, chroma 16–240 (scaled by 4 at 10 bits).
    case limited
    /// Full ("PC", "JPEG") range: every code value, 0–255 at 8 bits.
    case full
}

/// One decoded video frame. It owns FFmpeg's frame (freed with it) and is
/// immutable, so any thread may read it: checked `Sendable`, as its frame is a `FrameBox`.
public final class VideoFrame: Sendable {
    let box: FrameBox
    /// Presentation time, in the stream's time base.
    public let pts: MediaTime
    /// How long the frame is shown, when known.
    public let duration: MediaTime?
    /// The decoded picture's width in pixels, before rotation (see ``displayWidth``).
    public let width: Int
    /// The decoded picture's height in pixels, before rotation (see ``displayHeight``).
    public let height: Int
    /// How the pixels are laid out in memory.
    public let pixelFormat: PixelFormat
    /// The matrix to convert the frame to RGB with: ``color``'s, tagged or assumed.
    public let colorMatrix: ColorMatrix
    /// The range of the frame's values: ``color``'s, tagged or limited.
    public let colorRange: ColorRange
    /// The frame's colour from its own tags and side data (transfer, primaries, HDR metadata),
    /// with the documented fallbacks for what is untagged.
    public let color: ColorDescription
    /// Clockwise degrees to rotate for display (0, 90, 180, 270).
    public let rotation: Int
    /// Whether the frame is a keyframe: decodable on its own, a point a seek can start from.
    public let isKeyframe: Bool
    /// The seek generation the frame belongs to (frames of older generations are stale).
    let serial: Int

    init(box: FrameBox, pts: MediaTime, duration: MediaTime?, rotation: Int, serial: Int) {
        self.box = box
        let f = box.pointer.pointee
        self.pts = pts
        self.duration = duration
        self.width = Int(f.width)
        self.height = Int(f.height)
        self.pixelFormat = PixelFormat(AVPixelFormat(rawValue: f.format))
        self.rotation = rotation
        self.isKeyframe = reel_frame_is_key(box.pointer) != 0
        self.serial = serial
        let color = ColorDescription(frame: box.pointer)
        self.color = color
        self.colorRange = color.range
        self.colorMatrix = color.matrix
    }

    /// The width in pixels as displayed, after ``rotation`` (the height for 90 and 270).
    public var displayWidth: Int { rotation % 180 == 0 ? width : height }
    /// The height in pixels as displayed, after ``rotation`` (the width for 90 and 270).
    public var displayHeight: Int { rotation % 180 == 0 ? height : width }

    /// The MD5 of the frame's planes packed without line padding, in its decoded
    /// pixel format — the convention of FFmpeg's `framemd5` muxer, so the two can be
    /// compared frame by frame.
    public func md5() -> String {
        let f = box.pointer
        let format = AVPixelFormat(rawValue: f.pointee.format)
        let size = av_image_get_buffer_size(format, f.pointee.width, f.pointee.height, 1)
        guard size > 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: Int(size))
        let copied = buffer.withUnsafeMutableBufferPointer { out -> Int32 in
            withUnsafePointer(to: &f.pointee.data) { dataTuple in
                withUnsafePointer(to: &f.pointee.linesize) { lineTuple in
                    dataTuple.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { data in
                        lineTuple.withMemoryRebound(to: Int32.self, capacity: 8) { lines in
                            av_image_copy_to_buffer(out.baseAddress, size, data, lines, format, f.pointee.width, f.pointee.height, 1)
                        }
                    }
                }
            }
        }
        guard copied > 0 else { return "" }
        return MD5.hex(of: buffer)
    }

    /// One plane's bytes, for renderers inside the package.
    package struct Plane {
        package let bytes: UnsafeRawBufferPointer
        package let stride: Int
        package let width: Int
        package let height: Int
    }

    /// Calls `body` with the frame's planes (valid only during the call).
    package func withPlanes<R>(_ body: ([Plane]) throws -> R) rethrows -> R {
        let f = box.pointer.pointee
        var planes: [Plane] = []
        let pointers = [f.data.0, f.data.1, f.data.2, f.data.3]
        let strides = [f.linesize.0, f.linesize.1, f.linesize.2, f.linesize.3]
        for i in 0..<pixelFormat.planeCount {
            guard let base = pointers[i] else { break }
            let isChroma = pixelFormat.isYUV && i > 0 && i < 3
            let planeHeight = isChroma ? (height + (1 << pixelFormat.chromaShiftY) - 1) >> pixelFormat.chromaShiftY : height
            let planeWidth = isChroma ? (width + (1 << pixelFormat.chromaShiftX) - 1) >> pixelFormat.chromaShiftX : width
            let stride = Int(strides[i])
            guard stride > 0 else { break }
            planes.append(Plane(
                bytes: UnsafeRawBufferPointer(start: base, count: stride * planeHeight),
                stride: stride, width: planeWidth, height: planeHeight
            ))
        }
        return try body(planes)
    }

    /// The frame scaled to `width` × `height` as packed RGB (no rotation applied).
    /// Uses libswscale with area averaging for downscaling.
    public func rgbImage(width: Int? = nil, height: Int? = nil) throws -> RGBImage {
        try FrameConverter.rgb(self, width: width ?? self.width, height: height ?? self.height)
    }

    /// The frame converted to `format` at its own size (for renderers that only
    /// take a few formats).
    public func converted(to format: PixelFormat) throws -> VideoFrame {
        try FrameConverter.convert(self, to: format)
    }
}
