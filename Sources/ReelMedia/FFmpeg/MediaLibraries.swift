internal import CFFmpeg

/// The FFmpeg libraries Reel runs on, as linked at run time.
public enum MediaLibraries {
    /// FFmpeg's own version string (`5.1.6-0+deb12u1`).
    public static var ffmpegVersion: String { String(cString: av_version_info()) }

    /// Each library and its `major.minor.micro` version. libavfilter is loaded to ask it
    /// (Reel loads it only when it is needed; "not loadable" when it cannot be).
    public static var libraryVersions: [(name: String, version: String)] {
        var libraries: [(String, UInt32?)] = [
            ("libavformat", avformat_version()),
            ("libavcodec", avcodec_version()),
            ("libavutil", avutil_version()),
            ("libswscale", swscale_version()),
            ("libswresample", swresample_version()),
        ]
        libraries.append(("libavfilter", (try? Lavfi.functions()).map { $0.avfilter_version() }))
        return libraries.map { name, version in
            (name, version.map { "\($0 >> 16).\(($0 >> 8) & 0xff).\($0 & 0xff)" } ?? "not loadable")
        }
    }
}
