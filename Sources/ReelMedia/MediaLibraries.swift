internal import CFFmpeg

/// The FFmpeg libraries Reel runs on, as linked at run time.
public enum MediaLibraries {
    /// FFmpeg's own version string (`5.1.6-0+deb12u1`).
    public static var ffmpegVersion: String { String(cString: av_version_info()) }

    /// Each library and its `major.minor.micro` version.
    public static var libraryVersions: [(name: String, version: String)] {
        [
            ("libavformat", avformat_version()),
            ("libavcodec", avcodec_version()),
            ("libavutil", avutil_version()),
            ("libswscale", swscale_version()),
            ("libswresample", swresample_version()),
            ("libavfilter", avfilter_version()),
        ].map { ($0.0, "\($0.1 >> 16).\(($0.1 >> 8) & 0xff).\($0.1 & 0xff)") }
    }
}
