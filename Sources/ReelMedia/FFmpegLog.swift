internal import CFFmpeg

/// FFmpeg's own logging, quiet unless asked: Reel reports errors itself.
public enum FFmpegLog {
    /// Sets FFmpeg's log level: `quiet` by default, `verbose` with `reel --verbose`.
    public static func setVerbose(_ verbose: Bool) {
        av_log_set_level(verbose ? AV_LOG_VERBOSE : AV_LOG_QUIET)
    }
}
