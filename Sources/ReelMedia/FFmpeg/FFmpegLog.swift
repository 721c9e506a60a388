import Foundation
import Synchronization
internal import CFFmpeg

/// FFmpeg's own logging, quiet unless asked: Reel reports errors itself.
public enum FFmpegLog {
    /// Whether a level was chosen (guards the choice and FFmpeg's global level with it).
    private static let chosen = Mutex(false)

    /// Sets FFmpeg's log level: quiet by default, verbose with `reel --verbose`.
    public static func setVerbose(_ verbose: Bool) {
        chosen.withTrackedLock { chosen in
            chosen = true
            av_log_set_level(verbose ? AV_LOG_VERBOSE : AV_LOG_QUIET)
        }
    }

    /// Quiets FFmpeg unless someone chose a level already (called before FFmpeg work).
    package static func applyDefault() {
        chosen.withTrackedLock { chosen in
            guard !chosen else { return }
            chosen = true
            av_log_set_level(AV_LOG_QUIET)
        }
    }
}
