import Foundation
import ReelCore
import ReelCaptions
import ReelMedia

/// A window's side of captions: what a ``CaptionOverlay`` holds, rasterized for the current
/// layout. The ``CaptionRasterizer`` is made at the first cue to draw (libass's font scan stays
/// off the first frame's path); when libass cannot start, one warning line and no captions.
///
/// Owned by a window and used on its thread only (the rasterizer checks).
final class WindowCaptions {
    private enum Rasterizer {
        case notYet, ready(CaptionRasterizer), failed
    }

    // Immutable after init.
    /// The font file libass falls back to: the one the window's text already uses.
    private let fontPath: String?

    // Owner thread only.
    private var rasterizer: Rasterizer = .notYet

    init(fontPath: String?) { self.fontPath = fontPath }

    /// The layer for `overlay`'s latest frame over `video` (drawable pixels), its text as it is at
    /// `time` (the player's current time: animated ASS moves); `tracks` gives the item's tracks
    /// when the overlay was handed none (the player's). `nil`: nothing to draw.
    func layer(_ overlay: CaptionOverlay, at time: MediaTime?, tracks: () -> [CaptionTrack], video: UIRect,
               videoWidth: Int, videoHeight: Int) -> CaptionLayer? {
        let current = overlay.current
        guard let frame = current.frame, !frame.events.isEmpty else { return nil }
        if case .notYet = rasterizer {
            do {
                rasterizer = .ready(try CaptionRasterizer(fontPath: fontPath))
            } catch {
                rasterizer = .failed
                FileHandle.standardError.write(Data("reel: captions cannot be drawn (\(error))\n".utf8))
            }
        }
        guard case .ready(let captionRasterizer) = rasterizer else { return nil }
        captionRasterizer.setTracks(current.tracks.isEmpty ? tracks() : current.tracks)
        return captionRasterizer.layer(for: frame, at: time, video: video, videoWidth: videoWidth, videoHeight: videoHeight)
    }
}
