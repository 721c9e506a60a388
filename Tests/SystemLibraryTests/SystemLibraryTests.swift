import Testing
import CFFmpeg
import CSDL2

/// The C bridges import, link, and report the versions Reel is built against.
@Suite struct SystemLibraryTests {
    /// libavfilter is not linked but loaded on first use; the same loader the engine uses.
    private func loadedLavfi() throws -> ReelLavfi {
        let table = UnsafeMutablePointer<ReelLavfi>.allocate(capacity: 1)
        defer { table.deallocate() }
        var error = [CChar](repeating: 0, count: 256)
        let loaded = reel_lavfi_load(table, &error, error.count) == 1
        try #require(loaded, "libavfilter loads: \(String(cString: error))")
        return table.pointee
    }

    @Test func ffmpegLibrariesLinkAndReportVersions() throws {
        // Each library's runtime version must match the headers we compiled against
        // (major and minor), or the ABI Swift sees is not the one that runs.
        let pairs: [(String, UInt32, UInt32)] = [
            ("avformat", avformat_version(), reel_header_avformat_version()),
            ("avcodec", avcodec_version(), reel_header_avcodec_version()),
            ("avutil", avutil_version(), reel_header_avutil_version()),
            ("swscale", swscale_version(), reel_header_swscale_version()),
            ("swresample", swresample_version(), reel_header_swresample_version()),
            ("avfilter", try loadedLavfi().avfilter_version(), reel_header_avfilter_version()),
        ]
        for (name, runtime, header) in pairs {
            #expect(runtime >> 8 == header >> 8, "\(name) runtime \(runtime) vs headers \(header)")
        }
        #expect(avformat_version() >> 16 >= 59, "Reel needs FFmpeg 5.1 or newer")
        let text = String(cString: av_version_info())
        #expect(!text.isEmpty)
    }

    @Test func ffmpegHasTheCodecsReelPlays() throws {
        for name in ["h264", "hevc", "vp9", "mpeg4", "aac", "opus", "mp3"] {
            #expect(avcodec_find_decoder_by_name(name) != nil, "decoder \(name)")
        }
        #expect(avcodec_find_encoder_by_name("libx264") != nil, "fixtures are encoded with libx264")
        #expect(try loadedLavfi().avfilter_get_by_name("atempo") != nil, "2x playback keeps pitch with atempo")
    }

    @Test func sdlLinksAndReportsVersion() {
        var linked = SDL_version()
        SDL_GetVersion(&linked)
        #expect(linked.major == 2)
        #expect(Int32(linked.minor) >= 0)
        let ttf = TTF_Linked_Version()
        #expect(ttf?.pointee.major == 2)
    }
}
