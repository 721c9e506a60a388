import Foundation
import ReelTestSupport
import Testing

/// An item with two audio streams (English: a 440 Hz tone; French: seeded white noise), packaged
/// by FFmpeg's Matroska, MP4 and MPEG-TS muxers, and as an HLS master with the two as
/// `EXT-X-MEDIA TYPE=AUDIO` renditions by its HLS muxer: `reel probe` lists both, `reel play --audio-language fra`
/// plays the French one sample for sample as FFmpeg decodes that stream (within one step of
/// 16 bits: the two convert decoded floats to integers each their own way), and a language the
/// item lacks falls back to its default track, the trace saying why.
@Suite struct AudioTrackSelectionTests {
    static let env = URL(fileURLWithPath: "/usr/bin/env")

    /// The two-language item in `container` (`mkv`: FLAC, `mp4`: AAC).
    static func item(_ container: String, in scratch: Scratch) async throws -> String {
        let path = scratch.file("two.\(container)")
        let codec = container == "mkv" ? "flac" : "aac"
        let result = try await runSeparately(env, [
            "ffmpeg", "-nostdin", "-v", "error", "-y",
            "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=2",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
            "-f", "lavfi", "-i", "anoisesrc=color=white:seed=1:sample_rate=48000:duration=2:amplitude=0.3",
            "-map", "0:v", "-map", "1:a", "-map", "2:a", "-ac", "2", "-c:v", "libx264", "-c:a", codec,
            "-metadata:s:a:0", "language=eng", "-metadata:s:a:0", "title=English",
            "-metadata:s:a:1", "language=fra", "-metadata:s:a:1", "title=Français", path,
        ])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return path
    }

    /// FFmpeg's decode of the item's `audio`th audio stream, as the WAV sink writes (s16, 48 kHz, stereo).
    static func reference(_ path: String, audio: Int, in scratch: Scratch) async throws -> [Int16] {
        let raw = scratch.file("reference-\(audio).raw")
        let result = try await runSeparately(env, ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", path, "-map", "0:a:\(audio)",
                                                   "-f", "s16le", "-ar", "48000", "-ac", "2", raw])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return samples(try Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    static func samples(_ data: Data) -> [Int16] {
        data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// `reel play` with `arguments`: its WAV's samples and its `audioTracks` trace line.
    static func play(_ path: String, _ arguments: [String], in scratch: Scratch) async throws -> ([Int16], [String: Any]) {
        let reel = try await ReelBinary.locate()
        let wav = scratch.file("out.wav")
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", path, "--headless", "--clock", "fast", "--audio-out", wav, "--trace", trace] + arguments)
        try #require(result.status == 0, "reel play: \(result.stderr)")
        let line = try traceObjects(trace).first { $0["type"] as? String == "audioTracks" }
        return (samples(try Data(contentsOf: URL(fileURLWithPath: wav)).dropFirst(44)), try #require(line))
    }

    /// The largest difference over the reference's length, 10 ms in from either end.
    static func largestDifference(_ played: [Int16], _ reference: [Int16]) -> Int {
        let margin = 960
        guard played.count >= reference.count, reference.count > 2 * margin else { return .max }
        return (margin..<(reference.count - margin)).map { abs(Int(played[$0]) - Int(reference[$0])) }.max() ?? .max
    }

    @Test(arguments: ["mkv", "mp4", "ts"])
    func theFrenchTrackPlaysAsFFmpegDecodesIt(container: String) async throws {
        let scratch = try Scratch("reel-audio-tracks")
        defer { scratch.remove() }
        let path = try await Self.item(container, in: scratch)
        let (played, line) = try await Self.play(path, ["--audio-language", "fra"], in: scratch)
        let tracks = try #require(line["tracks"] as? [[String: Any]])
        #expect(tracks.compactMap { $0["language"] as? String } == ["eng", "fra"])
        #expect(line["selected"] as? Int == 2)
        #expect(line["reason"] as? String == "language fra")
        let french = try await Self.reference(path, audio: 1, in: scratch)
        let english = try await Self.reference(path, audio: 0, in: scratch)
        #expect(Self.largestDifference(played, french) <= 1)
        #expect(Self.largestDifference(played, english) > 1000)
    }

    /// The two as HLS audio renditions (`LANGUAGE` eng, the `DEFAULT`, and fra) beside one video
    /// variant: FFmpeg's HLS demuxer offers both as streams, and the preference picks.
    @Test func anHLSAudioRenditionIsChosenByLanguage() async throws {
        let scratch = try Scratch("reel-audio-hls")
        defer { scratch.remove() }
        let item = try await Self.item("mkv", in: scratch)
        let packaged = try await runSeparately(Self.env, [
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-i", item, "-map", "0:v", "-map", "0:a:0", "-map", "0:a:1",
            "-c:v", "copy", "-c:a", "aac", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
            "-master_pl_name", "master.m3u8",
            "-var_stream_map", "v:0,agroup:aud a:0,agroup:aud,language:eng,name:English,default:yes a:1,agroup:aud,language:fra,name:French",
            "-hls_segment_filename", scratch.file("s%v_%03d.ts"), scratch.file("p%v.m3u8"),
        ])
        try #require(packaged.status == 0, "ffmpeg: \(packaged.stderr)")
        let (played, line) = try await Self.play(scratch.file("master.m3u8"), ["--audio-language", "fra"], in: scratch)
        let tracks = try #require(line["tracks"] as? [[String: Any]])
        #expect(tracks.compactMap { $0["language"] as? String } == ["eng", "fra"])
        // The renditions' NAMEs, as FFmpeg's muxer writes them.
        #expect(tracks.compactMap { $0["label"] as? String } == ["audio_1", "audio_2"])
        #expect(line["reason"] as? String == "language fra")
        let french = try await Self.reference(scratch.file("pFrench.m3u8"), audio: 0, in: scratch)
        #expect(Self.largestDifference(played, french) <= 1)
    }

    /// A rendition whose `CHARACTERISTICS` say it describes the video is listed with that role
    /// and is not what `--audio-language` picks; `--audio-role describes-video` picks it.
    @Test func anAudioDescriptionRenditionIsChosenOnlyByItsRole() async throws {
        let scratch = try Scratch("reel-audio-description")
        defer { scratch.remove() }
        let item = try await Self.item("mkv", in: scratch)
        let packaged = try await runSeparately(Self.env, [
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-i", item, "-map", "0:v", "-map", "0:a:0", "-map", "0:a:1",
            "-c:v", "copy", "-c:a", "aac", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
            "-master_pl_name", "packaged.m3u8",
            "-var_stream_map", "v:0,agroup:aud a:0,agroup:aud,language:eng,name:Main,default:yes a:1,agroup:aud,language:eng,name:Described",
            "-hls_segment_filename", scratch.file("s%v_%03d.ts"), scratch.file("p%v.m3u8"),
        ])
        try #require(packaged.status == 0, "ffmpeg: \(packaged.stderr)")
        // FFmpeg's muxer writes no CHARACTERISTICS: the described rendition is marked here.
        let master = try String(contentsOfFile: scratch.file("packaged.m3u8"), encoding: .utf8)
            .replacingOccurrences(of: "URI=\"pDescribed.m3u8\"",
                                  with: "CHARACTERISTICS=\"public.accessibility.describes-video\",URI=\"pDescribed.m3u8\"")
        try master.write(toFile: scratch.file("master.m3u8"), atomically: true, encoding: .utf8)
        let (_, byLanguage) = try await Self.play(scratch.file("master.m3u8"), ["--audio-language", "en"], in: scratch)
        let tracks = try #require(byLanguage["tracks"] as? [[String: Any]])
        #expect(tracks.map { $0["roles"] as? [String] ?? ["?"] } == [[], ["describes-video"]])
        #expect(byLanguage["selected"] as? Int == 0)
        let (played, byRole) = try await Self.play(scratch.file("master.m3u8"), ["--audio-language", "en", "--audio-role", "describes-video"],
                                                   in: scratch)
        #expect(byRole["selected"] as? Int == 1)
        #expect(byRole["reason"] as? String == "language en, role describes-video")
        let described = try await Self.reference(scratch.file("pDescribed.m3u8"), audio: 0, in: scratch)
        #expect(Self.largestDifference(played, described) <= 1)
    }

    @Test func aLanguageTheItemLacksPlaysItsDefaultTrackAndSaysWhy() async throws {
        let scratch = try Scratch("reel-audio-fallback")
        defer { scratch.remove() }
        let path = try await Self.item("mkv", in: scratch)
        let (played, line) = try await Self.play(path, ["--audio-language", "de"], in: scratch)
        #expect(line["selected"] as? Int == 1)
        #expect(line["reason"] as? String == "no audio track in de: the default track")
        #expect(Self.largestDifference(played, try await Self.reference(path, audio: 0, in: scratch)) <= 1)
    }

    @Test func probeListsBothAudioTracksWithTheirLanguagesAndNames() async throws {
        let scratch = try Scratch("reel-audio-probe")
        defer { scratch.remove() }
        let path = try await Self.item("mkv", in: scratch)
        let result = try await runSeparately(try await ReelBinary.locate(), ["probe", path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("#1 audio: flac 48000 Hz stereo [eng] \"English\" default *"), "\(result.stdout)")
        #expect(result.stdout.contains("#2 audio: flac 48000 Hz stereo [fra] \"Français\""), "\(result.stdout)")
    }
}
