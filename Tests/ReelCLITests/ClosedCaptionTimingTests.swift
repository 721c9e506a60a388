import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// CEA-608 captions in the video are shown from the frame they start on, with the words and
/// times FFmpeg's `cc_dec` gives: `reel play --trace` writes one `caption` line per cue, its
/// `pts` the frame the cue's words were first on screen. Played: shaka-player's HLS stream with
/// pop-on captions in MPEG-TS (corpus/streams/hls-ts-608-popon), the same stream remuxed into MP4
/// by FFmpeg (the captions in the H.264 SEI), and shaka-player's captions-test.ts.
@Suite struct ClosedCaptionTimingTests {
    struct Shown {
        var cue: CaptionCorpusTests.Cue
        /// The frame the cue was first on screen.
        var pts: Double
    }

    static let frame = 1.0 / 30

    static func played(_ path: String) async throws -> (cues: [Shown], firstFrame: Double) {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-608-timing")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", path, "--headless", "--clock", "fast", "--trace", trace])
        #expect(result.status == 0, "reel play: exit \(result.status): \(result.stderr)")
        func seconds(_ object: [String: Any], _ key: String) -> Double {
            let parts = (object[key] as? String ?? "").split(separator: "/").compactMap { Double($0) }
            return parts.count == 2 ? parts[0] / parts[1] : -1
        }
        let objects = try traceObjects(trace)
        let firstFrame = objects.first { $0["type"] as? String == "frame" }.map { seconds($0, "pts") } ?? -1
        let cues = objects.filter { $0["type"] as? String == "caption" }.map { object in
            Shown(cue: CaptionCorpusTests.Cue(start: seconds(object, "start"), end: seconds(object, "end"),
                                              text: object["text"] as? String ?? ""),
                  pts: seconds(object, "pts"))
        }
        return (cues.sorted { $0.cue.start < $1.cue.start }, firstFrame)
    }

    /// Every cue as FFmpeg's, each first on screen with the frame its start falls on (the first
    /// frame for a cue that starts before it).
    static func expectOnTime(_ path: String, reference: [String]) async throws {
        let ffmpeg = try await CaptionCorpusTests.reference(reference)
        let (shown, firstFrame) = try await played(path)
        CaptionCorpusTests.expectSame(shown.map(\.cue), ffmpeg)
        for item in shown {
            let due = max(item.cue.start, firstFrame)
            #expect(item.pts >= due - frame && item.pts < due + frame,
                    "\(item.cue) first shown at \(item.pts), due at \(due)")
        }
    }

    static var popOnStream: String {
        RealWorldCorpusTests.corpus.appendingPathComponent("streams/hls-ts-608-popon/prog_index.m3u8").path
    }

    @Test func popOnCaptionsInHLSShowOnTheirFrameAsFFmpegDecodesThem() async throws {
        let path = Self.popOnStream
        try await Self.expectOnTime(path, reference: ["-f", "lavfi", "-i", "movie=\(path)[out0+subcc]"])
    }

    @Test func popOnCaptionsInMP4SEIShowOnTheirFrameAsFFmpegDecodesThem() async throws {
        let scratch = try Scratch("reel-608-mp4")
        defer { scratch.remove() }
        let mp4 = scratch.file("popon.mp4")
        let remux = try await runSeparately(URL(fileURLWithPath: "/usr/bin/env"),
                                            ["ffmpeg", "-nostdin", "-v", "error", "-i", Self.popOnStream, "-c", "copy", "-f", "mp4", mp4])
        try #require(remux.status == 0, "ffmpeg: \(remux.stderr)")
        try await Self.expectOnTime(mp4, reference: ["-f", "lavfi", "-i", "movie=\(mp4)[out0+subcc]"])
    }

    /// captions-test.ts: two pop-on captions on their frames; the first caption is painted
    /// (roll-up mode) from 1.53 s to 2.10 s, and `cc_dec` starts it at 0: it shows as it is
    /// painted, its last words on screen by the frame they came in (2.1007 s), not before
    /// the stream said them.
    @Test func captionsTestShowsEachCaptionOnceItsWordsCame() async throws {
        let path = RealWorldCorpusTests.corpus.appendingPathComponent("files/shaka/captions-test.ts").path
        let ffmpeg = try await CaptionCorpusTests.reference(["-f", "lavfi", "-i", "movie=\(path)[out0+subcc]"])
        let (shown, _) = try await Self.played(path)
        CaptionCorpusTests.expectSame(shown.map(\.cue), ffmpeg)
        try #require(shown.count == 3)
        #expect(shown[0].pts <= 2.1007 + Self.frame / 2, "the painted caption first shown at \(shown[0].pts)")
        for item in shown.dropFirst() {
            #expect(abs(item.pts - item.cue.start) < Self.frame, "\(item.cue) first shown at \(item.pts)")
        }
    }
}
