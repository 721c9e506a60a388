import Foundation
import ReelCore

extension PlaybackEngine {
    /// Where a live item joined before its target offset starts being shown: the loader's
    /// answer (``LiveLatencyReporting/presentationStart(of:firstDecoded:)``) for the item's first
    /// decoded frame at `pts`; `nil` to show from that frame. Asked once, on the video decode thread.
    func liveJoinStart(firstDecoded pts: MediaTime) -> MediaTime? {
        guard pts.isNumeric, let reporting = loader as? any LiveLatencyReporting,
              let start = reporting.presentationStart(of: url, firstDecoded: pts.seconds), start.isFinite else { return nil }
        logger.debug("\(url.absoluteString): live join, frames from \(pts.seconds) decoded, shown from \(start)")
        return MediaTime(seconds: start, preferredTimescale: 1_000_000)
    }
}
