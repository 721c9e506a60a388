import ReelCore
import ReelMedia

/// A backend that draws a ``DrawCommand`` list into the window: OpenGL with our shaders,
/// or SDL_Renderer. `draw` renders into the back buffer, `readPixels` reads that back
/// (before `present`), `present` shows it (at vsync where the driver paces).
protocol WindowRenderer: AnyObject {
    var name: String { get }
    /// The drawable size in pixels (larger than the window on HiDPI).
    var drawableSize: (width: Int, height: Int) { get }
    func draw(_ list: [DrawCommand])
    func readPixels() -> RGBImage
    func present()
}

/// Which renderer draws the window.
public enum RendererKind: String, Sendable, CaseIterable {
    /// OpenGL 3.3 core with the GLSL in `shaders/`.
    case gl
    /// SDL_Renderer in software, for machines without GL.
    case software
}

/// Frame formats the GL path samples directly, and conversions for the rest.
enum FrameUpload {
    /// Whether `format` is planar or semi-planar YUV of 8 to 16 bits in native little-endian words.
    static func isNative(_ format: PixelFormat) -> Bool {
        guard format.isYUV, format.planeCount >= 3 || format.isSemiPlanar, format.bitDepth <= 16 else { return false }
        if format.name.hasPrefix("nv21") || format.name.hasPrefix("nv42") { return false }
        return format.bitDepth == 8 || format.name.hasSuffix("le")
    }

    /// The depth the codes have inside their words: MSB-aligned formats (P010) count as 16.
    static func effectiveBitDepth(_ format: PixelFormat) -> Int {
        let name = format.name
        if format.isSemiPlanar, name.hasPrefix("p0") || name.hasPrefix("p2") || name.hasPrefix("p4") { return 16 }
        return format.bitDepth
    }

    /// The frame itself when the GL path takes it, else converted to 8-bit 4:2:0.
    static func prepared(_ frame: VideoFrame, scaler: FrameScaler) -> VideoFrame? {
        if isNative(frame.pixelFormat) { return frame }
        return try? scaler.convert(frame, to: .yuv420p)
    }
}
