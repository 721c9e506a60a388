import Foundation
import ReelTestSupport
import Testing

/// `reel play --loop`: a looping clip plays pass after pass with no hole. Over five passes of a
/// 3 s 48 kHz and a 4 s 44.1 kHz H.264 + AAC clip (testsrc2 540×960 at 30 fps, a 440 Hz tone),
/// on the simulated clock: no quiet stretch over 2 ms in the written audio, no frame presented
/// more than 1.5 frame intervals after the one before, every pass within 2 ms of the clip's
/// duration; and each pass's sound is FFmpeg's decode of the clip trimmed to its edit list.
@Suite struct SeamlessLoopCommandTests {
    static let env = URL(fileURLWithPath: "/usr/bin/env")
    static let passes = 5
    static let fps = 30.0

    struct Clip: Sendable, CustomStringConvertible {
        var sampleRate: Int
        var seconds: Int
        var description: String { "\(seconds) s at \(sampleRate) Hz" }
    }

    /// A clip as the measurement makes it; `-aac_pns 0` for a decode that repeats
    /// exactly (with noise substitution the AAC decoder's noise generator runs on from pass to
    /// pass, a few 16-bit steps apart, as it does between any two decodes that do not start
    /// together).
    static func make(_ clip: Clip, in scratch: Scratch, exactNoise: Bool = false) async throws -> String {
        let path = scratch.file("clip-\(clip.sampleRate).mp4")
        let made = try await runSeparately(env, [
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=540x960:rate=30",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(clip.sampleRate)", "-t", "\(clip.seconds)",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-ar", "\(clip.sampleRate)",
        ] + (exactNoise ? ["-aac_pns", "0"] : []) + [path])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        return path
    }

    /// Plays `path` looping on the simulated clock for five passes and a little more.
    static func play(_ path: String, clip: Clip, in scratch: Scratch) async throws -> (wav: [Float], trace: [[String: Any]]) {
        let reel = try await ReelBinary.locate()
        let frames = passes * clip.seconds * Int(fps) + 10
        let result = try await runSeparately(reel, ["play", path, "--headless", "--loop", "--clock", "fast",
                                                    "--frames", "\(frames)", "--audio-out", scratch.file("loop.wav"),
                                                    "--trace", scratch.file("trace.jsonl")])
        try #require(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: scratch.file("trace.jsonl"), encoding: .utf8).split(separator: "\n")
        let trace = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return (try leftChannel(ofWAV: scratch.file("loop.wav")), trace)
    }

    /// The left channel of a 16-bit stereo WAV as Reel writes it (44-byte header).
    static func leftChannel(ofWAV path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try #require(data.count > 44)
        return data.dropFirst(44).withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: samples.count - 1, by: 2).map { Float(Int16(littleEndian: samples[$0])) / 32767 }
        }
    }

    /// The longest stretch (ms) in `samples[range]` where no sample reaches `floor`: the tone's
    /// zero crossings last a sample, a hole lasts as long as it is.
    static func longestQuiet(_ samples: [Float], in range: Range<Int>, floor: Float = 0.01, rate: Double = 48_000) -> Double {
        var longest = 0
        var run = 0
        for i in range {
            if abs(samples[i]) < floor { run += 1 } else { run = 0 }
            longest = max(longest, run)
        }
        return Double(longest) / rate * 1000
    }

    @Test(arguments: [Clip(sampleRate: 48_000, seconds: 3), Clip(sampleRate: 44_100, seconds: 4)])
    func fivePassesPlayWithNoHole(_ clip: Clip) async throws {
        let scratch = try Scratch("reel-loop")
        defer { scratch.remove() }
        let (wav, trace) = try await Self.play(try await Self.make(clip, in: scratch), clip: clip, in: scratch)
        let duration = Double(clip.seconds)

        // Frames: an unbroken cadence across every loop point.
        let frames = trace.filter { $0["type"] as? String == "frame" }
        let presented = frames.compactMap { $0["presentedAt"] as? Double }
        let pts = frames.compactMap { $0["seconds"] as? Double }
        try #require(presented.count == frames.count && pts.count == frames.count)
        try #require(frames.count >= Self.passes * clip.seconds * Int(Self.fps))
        for i in 1..<presented.count {
            #expect((presented[i] - presented[i - 1]) * Self.fps <= 1.5,
                    "frame \(i) (pts \(pts[i])) came \((presented[i] - presented[i - 1]) * 1000) ms after the one before")
        }
        #expect(pts.max() ?? .infinity < duration, "frames are timed within the item: \(pts.max() ?? 0)")

        // Passes: each begins exactly one duration after the one before, by the clock.
        let starts = zip(pts, presented).filter { $0.0 == 0 }.map(\.1)
        #expect(starts.count == Self.passes + 1, "pass starts at \(starts)")
        for (a, b) in zip(starts, starts.dropFirst()) {
            #expect(abs(b - a - duration) <= 0.002, "a pass lasted \((b - a) * 1000) ms")
        }
        let loops = trace.filter { $0["type"] as? String == "end" }
        #expect(loops.count == Self.passes && loops.allSatisfy { $0["looping"] as? Bool == true })

        // Sound: no hole at any loop point (nor anywhere in the five passes).
        try #require(wav.count >= Int(Double(Self.passes) * duration * 48_000) + 4800)
        let quiet = Self.longestQuiet(wav, in: 0..<(Int(Double(Self.passes) * duration * 48_000) + 4800))
        #expect(quiet <= 2, "a quiet stretch of \(quiet) ms")
    }

    /// Each pass's sound is FFmpeg's decode of the clip trimmed to the edit list (144 000 of its
    /// 144 384 samples), to the 16-bit step: the loop adds nothing, drops nothing, shifts nothing.
    @Test func eachPassSoundsAsFFmpegDecodesTheClip() async throws {
        let clip = Clip(sampleRate: 48_000, seconds: 3)
        let scratch = try Scratch("reel-loop-exact")
        defer { scratch.remove() }
        let path = try await Self.make(clip, in: scratch, exactNoise: true)
        let (wav, _) = try await Self.play(path, clip: clip, in: scratch)
        let decoded = try await runSeparately(Self.env, ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a",
                                                         "-ac", "2", "-f", "f32le", scratch.file("ref.f32")])
        try #require(decoded.status == 0, "ffmpeg: \(decoded.stderr)")
        let reference = try Data(contentsOf: URL(fileURLWithPath: scratch.file("ref.f32"))).withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: Float.self)
            return stride(from: 0, to: samples.count - 1, by: 2).map { samples[$0] }
        }
        let pass = 144_000
        try #require(reference.count == pass + 384, "FFmpeg decodes the AAC padding too: \(reference.count)")
        try #require(wav.count >= Self.passes * pass)
        for k in 0..<Self.passes {
            var worst: Float = 0
            for i in 0..<pass { worst = max(worst, abs(wav[k * pass + i] - reference[i])) }
            #expect(worst * 32767 <= 1, "pass \(k) is \(worst * 32767) steps from FFmpeg's decode")
        }
    }
}
