import Foundation
import ReelTestSupport
import Testing

/// `reel play --loudness`: clips mastered at -32, -18 and -6 LUFS each write a WAV that FFmpeg's
/// `ebur128` measures at the target, none with a true peak over -1 dBTP, and the trace says
/// what levelling decided.
@Suite struct LoudnessCommandTests {
    static let env = URL(fileURLWithPath: "/usr/bin/env")

    /// FFmpeg's `ebur128` reading of `path`: integrated loudness and true peak.
    static func ebur128(_ path: String) async throws -> (integrated: Double, truePeak: Double) {
        let result = try await runSeparately(env, ["ffmpeg", "-nostdin", "-hide_banner", "-i", path, "-af", "ebur128=peak=true",
                                                   "-f", "null", "-"])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        let summary = try #require(result.stderr.range(of: "Summary:")).upperBound
        func value(_ label: String) throws -> Double {
            let at = try #require(result.stderr.range(of: label, range: summary..<result.stderr.endIndex)).upperBound
            return try #require(Double(result.stderr[at...].drop { $0 == " " }.prefix { "-0123456789.".contains($0) }))
        }
        return (try value("I:"), try value("Peak:"))
    }

    @Test(arguments: [-32.0, -18.0, -6.0])
    func aClipAtAnyLoudnessPlaysAtTheTarget(_ mastered: Double) async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-loudness")
        defer { scratch.remove() }
        // A stereo 440 Hz tone at `mastered` LUFS (a sine's loudness is about its peak in dBFS
        // less 0.7 dB at this pitch), over testsrc2, AAC in MP4.
        let amplitude = pow(10, (mastered + 0.7) / 20)
        let made = try await runSeparately(Self.env, [
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=30:d=3",
            "-f", "lavfi", "-i", "aevalsrc=\(amplitude)*sin(2*PI*440*t)|\(amplitude)*sin(2*PI*440*t):s=48000:d=3",
            "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-b:a", "192k", "-shortest", scratch.file("clip.mp4"),
        ])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        let source = try await Self.ebur128(scratch.file("clip.mp4"))
        #expect(abs(source.integrated - mastered) <= 0.5, "the clip is at \(source.integrated) LUFS")

        let result = try await runSeparately(reel, ["play", scratch.file("clip.mp4"), "--headless", "--clock", "fast",
                                                    "--loudness", "-14", "--audio-out", scratch.file("out.wav"),
                                                    "--trace", scratch.file("trace.jsonl")])
        #expect(result.status == 0, "\(result.stderr)")
        let played = try await Self.ebur128(scratch.file("out.wav"))
        #expect(abs(played.integrated + 14) <= 1, "\(mastered) LUFS played at \(played.integrated) LUFS")
        #expect(played.truePeak <= -1, "true peak \(played.truePeak) dBTP")

        let lines = try String(contentsOfFile: scratch.file("trace.jsonl"), encoding: .utf8).split(separator: "\n")
        let reports = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "loudness" }
        let report = try #require(reports.first, "a loudness line in the trace")
        #expect(report["source"] as? String == "measured")
        let gain = try #require(report["gain"] as? Double)
        #expect(abs(gain - (-14 - mastered)) <= 0.5, "gain \(gain) dB")
    }

    @Test func aLoudnessThatIsNotOneIsAUsageError() async throws {
        let reel = try await ReelBinary.locate()
        for value in ["loud", "5", "-90"] {
            let result = try await runSeparately(reel, ["play", "/nonexistent.mp4", "--headless", "--loudness", value])
            #expect(result.status == 2, "--loudness \(value): \(result.stderr)")
            #expect(result.stderr.contains("--loudness"), "\(result.stderr)")
        }
    }
}
