import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// Captions in media nobody on the team made, played by `reel play --trace` and compared cue for
/// cue with FFmpeg's decode of the same file: CEA-608 in H.264 SEI (shaka-player's
/// captions-test.ts, read by FFmpeg through lavfi's `movie=…[out0+subcc]`) and an MP4 `c608`
/// track (mp4ff's multitrack main_1.mp4). Sources and licences: corpus/MANIFEST.tsv.
@Suite struct CaptionCorpusTests {
    struct Cue: Equatable, CustomStringConvertible {
        var start: Double
        var end: Double
        var text: String
        var description: String { String(format: "%.3f–%.3f %@", start, end, text) }
        /// Equal within `tolerance` seconds (ASS writes centiseconds, cut down).
        func matches(_ other: Cue, tolerance: Double) -> Bool {
            abs(start - other.start) <= tolerance && abs(end - other.end) <= tolerance && text == other.text
        }
    }

    /// `h:mm:ss.cc` from an ASS Dialogue line.
    static func assTime(_ text: Substring) -> Double {
        let parts = text.split(separator: ":").compactMap { Double($0) }
        return parts.count == 3 ? parts[0] * 3600 + parts[1] * 60 + parts[2] : -1
    }

    /// FFmpeg's cues: `ffmpeg -copyts … -f ass -` of the first subtitle stream of `input`.
    static func reference(_ input: [String]) async throws -> [Cue] {
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let result = try await runSeparately(env, ["ffmpeg", "-nostdin", "-v", "error", "-copyts"] + input + ["-map", "0:s:0", "-f", "ass", "-"])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return result.stdout.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("Dialogue:") }.map { line in
            let fields = line.split(separator: ",", maxSplits: 9, omittingEmptySubsequences: false)
            return Cue(start: assTime(fields[1]), end: assTime(fields[2]), text: ASSDialogue.plainText(of: String(fields[9])))
        }
    }

    /// Reel's cues: every `caption` line of `reel play FILE --headless --clock fast --trace`.
    static func played(_ path: String) async throws -> [Cue] {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-caption-corpus")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", path, "--headless", "--clock", "fast", "--trace", trace])
        #expect(result.status == 0, "reel play: exit \(result.status): \(result.stderr)")
        return try traceObjects(trace).filter { $0["type"] as? String == "caption" }.map { object in
            func seconds(_ key: String) -> Double {
                let parts = (object[key] as? String ?? "").split(separator: "/").compactMap { Double($0) }
                return parts.count == 2 ? parts[0] / parts[1] : -1
            }
            return Cue(start: seconds("start"), end: seconds("end"), text: object["text"] as? String ?? "")
        }
    }

    static func expectSame(_ reel: [Cue], _ ffmpeg: [Cue]) {
        #expect(!ffmpeg.isEmpty)
        #expect(reel.count == ffmpeg.count, "reel \(reel), FFmpeg \(ffmpeg)")
        for (mine, theirs) in zip(reel, ffmpeg) {
            #expect(mine.matches(theirs, tolerance: 0.01), "reel \(mine), FFmpeg \(theirs)")
        }
    }

    @Test func cea608InH264EqualsFFmpegsCCDecoder() async throws {
        let path = RealWorldCorpusTests.corpus.appendingPathComponent("files/shaka/captions-test.ts").path
        let reference = try await Self.reference(["-f", "lavfi", "-i", "movie=\(path)[out0+subcc]"])
        #expect(reference.count == 3)
        Self.expectSame(try await Self.played(path), reference)
    }

    @Test func anMP4c608TrackEqualsFFmpegsDecode() async throws {
        let path = RealWorldCorpusTests.corpus.appendingPathComponent("files/mp4ff/multitrack_main_1.mp4").path
        let reference = try await Self.reference(["-i", path])
        Self.expectSame(try await Self.played(path), reference)
    }
}
