import Foundation
internal import CFFmpeg

/// FFmpeg's own logging, quiet unless asked: Reel reports errors itself.
public enum FFmpegLog {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var chosen = false

    /// Sets FFmpeg's log level: quiet by default, verbose with `reel --verbose`.
    public static func setVerbose(_ verbose: Bool) {
        lock.withLock {
            chosen = true
            av_log_set_level(verbose ? AV_LOG_VERBOSE : AV_LOG_QUIET)
        }
    }

    /// Quiets FFmpeg unless someone chose a level already (called before FFmpeg work).
    static func applyDefault() {
        lock.withLock {
            guard !chosen else { return }
            chosen = true
            av_log_set_level(AV_LOG_QUIET)
        }
    }
}
