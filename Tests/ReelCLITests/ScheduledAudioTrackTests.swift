import Foundation
import ReelOrigin
import ReelStreaming
import ReelTestSupport
import Testing

/// An HLS master with two audio renditions in two languages (English: a 440 Hz tone; French:
/// seeded white noise), packaged as fragmented MP4 by FFmpeg's HLS muxer and served over HTTP
/// by the project's origin, so Reel's own segment scheduler reads it: `--audio-language fra`
/// lists both renditions, reads the French one beside the video (never a segment of the
/// English), and plays it sample for sample as FFmpeg decodes its playlist.
@Suite struct ScheduledAudioTrackTests {
    /// The master and its playlists in `scratch/hls`.
    static func packaged(in scratch: Scratch) async throws -> URL {
        let directory = scratch.url.appendingPathComponent("hls")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let result = try await runSeparately(AudioTrackSelectionTests.env, [
            "ffmpeg", "-nostdin", "-v", "error", "-y",
            "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=3",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3",
            "-f", "lavfi", "-i", "anoisesrc=color=white:seed=1:sample_rate=48000:duration=3:amplitude=0.3",
            "-map", "0:v", "-map", "1:a", "-map", "2:a", "-ac", "2", "-c:v", "libx264", "-g", "25", "-c:a", "aac",
            "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4",
            "-hls_fmp4_init_filename", "init_%v.mp4", "-master_pl_name", "master.m3u8",
            "-var_stream_map", "v:0,agroup:aud a:0,agroup:aud,language:eng,name:English,default:yes a:1,agroup:aud,language:fra,name:French",
            "-hls_segment_filename", directory.appendingPathComponent("s%v_%03d.m4s").path, directory.appendingPathComponent("p%v.m3u8").path,
        ])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return directory
    }

    @Test func theSchedulerPlaysTheFrenchRenditionAsFFmpegDecodesIt() async throws {
        let scratch = try Scratch("reel-scheduled-audio")
        defer { scratch.remove() }
        let directory = try await Self.packaged(in: scratch)
        let server = OriginServer(configuration: .init(root: directory))
        _ = try await server.start()
        let master = server.url(for: "master.m3u8")
        let played: [Int16]
        let line: [String: Any]
        do {
            (played, line) = try await AudioTrackSelectionTests.play(master.absoluteString, ["--audio-language", "fra", "--no-cache"], in: scratch)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        let tracks = try #require(line["tracks"] as? [[String: Any]])
        #expect(tracks.compactMap { $0["language"] as? String } == ["eng", "fra"])
        #expect(tracks.compactMap { $0["label"] as? String } == ["audio_1", "audio_2"], "the renditions' NAMEs")
        #expect(tracks.compactMap { $0["id"] as? Int } == [0, 1])
        #expect(line["selected"] as? Int == 1)
        #expect(line["reason"] as? String == "language fra")
        // Reel's scheduler read it (FFmpeg's HLS demuxer does not report its segments), the
        // French rendition only.
        let fetched = try traceObjects(scratch.file("trace.jsonl")).filter { $0["type"] as? String == "liveFetch" }
            .compactMap { ($0["url"] as? String).map { URL(string: $0)?.lastPathComponent ?? $0 } }
        #expect(fetched.contains { $0.hasPrefix("sFrench_") }, "\(fetched)")
        #expect(!fetched.contains { $0.hasPrefix("sEnglish_") }, "\(fetched)")
        let french = try await AudioTrackSelectionTests.reference(directory.appendingPathComponent("pFrench.m3u8").path, audio: 0, in: scratch)
        let english = try await AudioTrackSelectionTests.reference(directory.appendingPathComponent("pEnglish.m3u8").path, audio: 0, in: scratch)
        #expect(AudioTrackSelectionTests.largestDifference(played, french) <= 1)
        #expect(AudioTrackSelectionTests.largestDifference(played, english) > 1000)
    }

    /// Without a preference the `DEFAULT` rendition plays, as before renditions were chosen.
    @Test func withoutAPreferenceTheDefaultRenditionPlays() async throws {
        let scratch = try Scratch("reel-scheduled-audio-default")
        defer { scratch.remove() }
        let directory = try await Self.packaged(in: scratch)
        let server = OriginServer(configuration: .init(root: directory))
        _ = try await server.start()
        let result = try? await AudioTrackSelectionTests.play(server.url(for: "master.m3u8").absoluteString, ["--no-cache"], in: scratch)
        await server.stop()
        let (played, line) = try #require(result)
        #expect(line["selected"] as? Int == 0)
        #expect(line["reason"] as? String == "the default track")
        let english = try await AudioTrackSelectionTests.reference(directory.appendingPathComponent("pEnglish.m3u8").path, audio: 0, in: scratch)
        #expect(AudioTrackSelectionTests.largestDifference(played, english) <= 1)
    }

    /// The same two languages as a DASH manifest's two audio AdaptationSets (`lang` eng and fra,
    /// equal bandwidths, no `Role`), packaged by FFmpeg's DASH muxer: `--audio-language fra`
    /// reads the French set's segments only and plays them as FFmpeg decodes that Representation.
    @Test func aDASHAudioAdaptationSetIsChosenByLanguage() async throws {
        let scratch = try Scratch("reel-scheduled-audio-dash")
        defer { scratch.remove() }
        let directory = scratch.url.appendingPathComponent("dash")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let packaged = try await runSeparately(AudioTrackSelectionTests.env, [
            "ffmpeg", "-nostdin", "-v", "error", "-y",
            "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=3",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3",
            "-f", "lavfi", "-i", "anoisesrc=color=white:seed=1:sample_rate=48000:duration=3:amplitude=0.3",
            "-map", "0:v", "-map", "1:a", "-map", "2:a", "-ac", "2", "-c:v", "libx264", "-g", "25", "-c:a", "aac",
            "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra",
            "-f", "dash", "-seg_duration", "1", "-use_template", "1", "-use_timeline", "0",
            "-adaptation_sets", "id=0,streams=v id=1,streams=1 id=2,streams=2", directory.appendingPathComponent("stream.mpd").path,
        ])
        try #require(packaged.status == 0, "ffmpeg: \(packaged.stderr)")
        // The French Representation as one file (its init section and the segments the manifest
        // lists: the muxer writes a fourth past its duration): what FFmpeg decodes it to.
        let mpd = directory.appendingPathComponent("stream.mpd")
        let representation = try #require(try DASHManifest(Data(contentsOf: mpd), url: mpd).representations.first { $0.language == "fra" })
        var french = Data()
        for segment in [representation.initialization].compactMap({ $0 }) + representation.segments {
            french += try Data(contentsOf: segment.url)
        }
        #expect(representation.segments.count == 3)
        try french.write(to: URL(fileURLWithPath: scratch.file("french.mp4")))
        let server = OriginServer(configuration: .init(root: directory))
        _ = try await server.start()
        let result = try? await AudioTrackSelectionTests.play(server.url(for: "stream.mpd").absoluteString,
                                                              ["--audio-language", "fra", "--no-cache"], in: scratch)
        await server.stop()
        let (played, line) = try #require(result)
        let tracks = try #require(line["tracks"] as? [[String: Any]])
        #expect(tracks.compactMap { $0["language"] as? String } == ["eng", "fra"])
        #expect(tracks.compactMap { $0["default"] as? Bool } == [true, false], "no Role main: the first of the lowest bandwidth")
        #expect(line["selected"] as? Int == 1)
        #expect(line["reason"] as? String == "language fra")
        let fetched = try traceObjects(scratch.file("trace.jsonl")).filter { $0["type"] as? String == "liveFetch" }
            .compactMap { ($0["url"] as? String).map { URL(string: $0)?.lastPathComponent ?? $0 } }
        #expect(fetched.contains { $0.hasPrefix("chunk-stream2-") }, "\(fetched)")
        #expect(!fetched.contains { $0.hasPrefix("chunk-stream1-") }, "\(fetched)")
        let reference = try await AudioTrackSelectionTests.reference(scratch.file("french.mp4"), audio: 0, in: scratch)
        #expect(AudioTrackSelectionTests.largestDifference(played, reference) <= 1)
    }
}
