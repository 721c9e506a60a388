import Testing
import CFFmpeg
import CSDL2
import CLibass

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

    @Test func libassLinksAndReportsItsVersion() {
        // Runtime and headers agree on major.minor (the ABI Swift sees is the one that runs),
        // and both are at least 0.13, the oldest libass whose API CaptionRasterizer uses unguarded.
        let runtime = UInt32(bitPattern: ass_library_version())
        let header = UInt32(bitPattern: reel_ass_header_version())
        #expect(runtime >> 16 == header >> 16, "libass runtime \(String(runtime, radix: 16)) vs headers \(String(header, radix: 16))")
        #expect(runtime >= 0x0130_0000, "libass \(String(runtime, radix: 16)) is older than 0.13")
    }

    @Test func libassRendersACJKGlyphThroughFontconfig() throws {
        let glyph = try libassCoverage(of: "字")
        // A code point no font has (private use): whatever libass draws for a missing glyph.
        let missing = try libassCoverage(of: "\u{E000}")
        // A 40 px "字" covers hundreds of pixels, and not the same ones as a missing glyph's box.
        #expect(glyph.count > 150, "\"字\" rendered \(glyph.count) covered pixels")
        #expect(glyph != missing, "\"字\" rendered like a glyph no font has")
    }

    /// The positions libass covers when it draws `text` at 40 px with fontconfig alone (no font file).
    private func libassCoverage(of text: String) throws -> Set<Int> {
        let library = try #require(ass_library_init())
        defer { ass_library_done(library) }
        reel_ass_set_quiet(library)
        let renderer = try #require(ass_renderer_init(library))
        defer { ass_renderer_done(renderer) }
        ass_set_frame_size(renderer, 320, 180)
        ass_set_fonts(renderer, nil, "sans-serif", Int32(ASS_FONTPROVIDER_FONTCONFIG.rawValue), nil, 1)
        let track = try #require(ass_new_track(library))
        defer { ass_free_track(track) }
        var header = Array("""
        [Script Info]
        ScriptType: v4.00+
        PlayResX: 320
        PlayResY: 180

        [V4+ Styles]
        Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
        Style: Default,sans-serif,40,&H00FFFFFF,&H00FFFFFF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,0,0,2,10,10,10,1

        [Events]
        Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text

        """.utf8CString)
        header.withUnsafeMutableBufferPointer { ass_process_codec_private(track, $0.baseAddress, Int32($0.count - 1)) }
        var chunk = Array("0,0,Default,,0,0,0,,\(text)".utf8CString)
        chunk.withUnsafeMutableBufferPointer { ass_process_chunk(track, $0.baseAddress, Int32($0.count - 1), 0, 1000) }
        var change: Int32 = 0
        var covered = Set<Int>()
        var image = ass_render_frame(renderer, track, 500, &change)
        while let current = image {
            let i = current.pointee
            for row in 0..<Int(i.h) {
                for column in 0..<Int(i.w) where i.bitmap[row * Int(i.stride) + column] > 0 {
                    covered.insert((Int(i.dst_y) + row) * 320 + Int(i.dst_x) + column)
                }
            }
            image = i.next
        }
        return covered
    }
}
