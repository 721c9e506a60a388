import Foundation
import ReelCore
import ReelThreads

/// Decodes pictures (covers, image posts, thumbnails) through FFmpeg, reading
/// through a loader like everything else, and downsamples them as they are
/// decoded: what is kept is at most the display size, so memory does not grow
/// with the resolution of the source.
public enum ImageDecoder {
    /// The picture at `url` (PNG, JPEG, WebP, BMP… or the first frame of a video),
    /// scaled to fit inside `maxWidth` × `maxHeight` with its aspect kept. Never
    /// scales up. The full-size frame exists only while it is being scaled.
    public static func decode(_ url: URL, loader: any ResourceLoader, maxWidth: Int, maxHeight: Int) async throws -> RGBImage {
        try await onOwnThread(named: "reel.image") {
            try decodeNow(url, loader: loader, maxWidth: maxWidth, maxHeight: maxHeight)
        }
    }

    /// ``decode(_:loader:maxWidth:maxHeight:)`` on the calling thread, which it blocks
    /// until the picture is read and decoded (call it from a thread or queue of your own,
    /// never from the concurrency pool).
    public static func decodeNow(_ url: URL, loader: any ResourceLoader, maxWidth: Int, maxHeight: Int) throws -> RGBImage {
        precondition(maxWidth > 0 && maxHeight > 0, "the display size must be positive")
        var image: RGBImage?
        var failure: (any Error)?
        try SequentialDecoder.decodeVideo(url, loader: loader, threads: 1) { frame in
            let size = fittedSize(width: frame.displayWidth, height: frame.displayHeight, maxWidth: maxWidth, maxHeight: maxHeight)
            do {
                // Scale in the frame's own orientation, then turn the small result.
                let (w, h) = frame.rotation % 180 == 0 ? size : (size.1, size.0)
                image = try FrameScaler(smooth: true).rgb(frame, width: w, height: h).rotated(clockwise: frame.rotation)
            } catch {
                failure = error
            }
            return false
        }
        if let failure { throw failure }
        guard let image else { throw MediaError.noPlayableStreams(url: url) }
        return image
    }

    /// `width` × `height` scaled down (never up) to fit inside the bounds, aspect kept,
    /// each side at least one pixel.
    public static func fittedSize(width: Int, height: Int, maxWidth: Int, maxHeight: Int) -> (Int, Int) {
        guard width > 0, height > 0 else { return (max(1, min(width, maxWidth)), max(1, min(height, maxHeight))) }
        let scale = min(1, Double(maxWidth) / Double(width), Double(maxHeight) / Double(height))
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }
}
