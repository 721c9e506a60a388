import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// A looping item on the manual clock: the demuxer reads the next pass ahead, timestamps run
/// on, the clock never restarts. The sound of N passes is N copies of FFmpeg's decode of one
/// pass trimmed to the edit list; the pictures are N copies of its frames at an unbroken
/// cadence; audio that starts late keeps in step with the video pass after pass.
@Suite struct SeamlessLoopTests {
    static let passes = 40

    /// A directory holding `a.mp4`: 1 s of 160×120 testsrc2 at 30 fps and a 48 kHz 440 Hz
    /// tone, H.264 and AAC (noise substitution off, so two decodes of the same packets agree
    /// to the sample whatever came before; see `SeamlessLoopCommandTests`).
    static func source() async throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-loop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await StartTimeTests.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=s=160x120:r=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-t", "1", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-aac_pns", "0",
            "a.mp4",
        ], in: directory)
        return directory
    }

    /// FFmpeg's decode of the file's audio as stereo floats, interleaved (its padding included).
    static func ffmpegAudio(_ file: URL, in directory: URL) async throws -> [Float] {
        try await StartTimeTests.ffmpeg(["-i", file.path, "-map", "0:a", "-ac", "2", "-f", "f32le", "ref.f32"], in: directory)
        let data = try Data(contentsOf: directory.appendingPathComponent("ref.f32"))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    @Test func theSoundOfNPassesIsNCopiesOfOneDecodeTrimmedToTheEditList() async throws {
        let directory = try await Self.source()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a.mp4")
        let reference = try await Self.ffmpegAudio(file, in: directory)
        let pass = 48_000 * 2
        try #require(reference.count > pass, "FFmpeg keeps the AAC padding: \(reference.count / 2) frames")
        let frames = try await offThePool { try StartTimeTests.ffmpegFramesFromStart(file) }

        let harness = PlayerHarness(data: try Data(contentsOf: file), name: "a.mp4")
        harness.player.actionAtItemEnd = .loop
        harness.load()
        harness.player.play()
        let loops = { harness.events.filter { if case .ended(looping: true) = $0 { true } else { false } }.count }
        #expect(await harness.run(upTo: seconds(Double(Self.passes) + 2)) { loops() >= Self.passes })

        let written = harness.audio.written
        try #require(written.count >= Self.passes * pass, "\(written.count / 2) frames written")
        for k in 0..<Self.passes {
            var worst: Float = 0
            for i in 0..<pass { worst = max(worst, abs(written[k * pass + i] - reference[i])) }
            #expect(worst <= 1e-6, "pass \(k) differs from FFmpeg's decode by \(worst)")
        }

        let shown = harness.video.frames
        try #require(shown.count >= Self.passes * frames.count)
        #expect(shown.prefix(Self.passes * frames.count).map(\.md5) == Array(repeating: frames, count: Self.passes).flatMap { $0 })
        #expect(shown.allSatisfy { $0.pts >= .zero && $0.pts < seconds(1) }, "frames are timed within the item")
        let times = shown.dropFirst().prefix(Self.passes * frames.count - 1).map(\.presentedAt)
        // An unbroken cadence, loop points included: every frame one interval after the one
        // before, to the audio device's block (the clock video follows).
        let deviations = zip(times, times.dropFirst()).map { abs(($1 - $0).seconds - 1.0 / 30) }
        #expect(deviations.max() ?? 1 <= 0.0105, "a frame \((deviations.max() ?? 1) * 1000) ms off its interval")
        let starts = zip(shown.prefix(Self.passes * frames.count), shown.prefix(Self.passes * frames.count).indices)
            .filter { $0.0.pts == .zero }.map { $0.0.presentedAt }
        #expect(starts.count == Self.passes)
        for (a, b) in zip(starts.dropFirst(), starts.dropFirst(2)) {
            #expect(abs((b - a).seconds - 1) <= 0.002, "a pass lasted \((b - a).seconds) s")
        }
        #expect(harness.player.statistics.droppedFrames == 0)
        #expect(harness.player.currentTime < seconds(1), "the player's time is the item's")
    }

    /// Audio 0.1 s late in a 1 s video makes a 1.1 s item whose audio leaves 0.1 s without
    /// sound at each loop point: silence fills it, so the audio clock (which video follows)
    /// keeps to the passes' timestamps.
    @Test func lateAudioStaysInStepPassAfterPass() async throws {
        let directory = try await Self.source()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await StartTimeTests.ffmpeg(["-i", "a.mp4", "-itsoffset", "0.1", "-i", "a.mp4", "-map", "0:v", "-map", "1:a",
                                         "-c", "copy", "late.mp4"], in: directory)
        let harness = PlayerHarness(data: try Data(contentsOf: directory.appendingPathComponent("late.mp4")), name: "late.mp4")
        harness.player.actionAtItemEnd = .loop
        harness.load()
        harness.player.play()
        let loops = { harness.events.filter { if case .ended(looping: true) = $0 { true } else { false } }.count }
        #expect(await harness.run(upTo: seconds(12)) { loops() >= 8 })
        // The sound of each pass starts one pass (1.1 s) after the one before: after 0.1 s of
        // silence, wherever the pass's audio ended (without the fill it drifts 70 ms a pass).
        let left = stride(from: 0, to: harness.audio.written.count, by: 2).map { harness.audio.written[$0] }
        var onsets: [Int] = []
        var quiet = 0
        for (i, sample) in left.enumerated() {
            if abs(sample) >= 0.01 {
                if quiet >= 2400 || onsets.isEmpty { onsets.append(i) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        #expect(onsets.count >= 8, "\(onsets.count) passes heard")
        for (a, b) in zip(onsets, onsets.dropFirst()) {
            #expect(abs(b - a - 52_800) <= 96, "a pass's sound began \(Double(b - a) / 48) ms after the one before")
        }
        let worst = try #require(harness.player.statistics.avOffsetMaxMs)
        #expect(worst <= 1000.0 / 30, "video within a frame of the audio after 8 loops: \(worst) ms")
        // The item lasts 1.1 s (its audio's end): video's last frame shows until then, and the
        // next pass's first frame comes exactly one pass after the one before.
        let frames = harness.video.frames.dropFirst()
        for (a, b) in zip(frames, frames.dropFirst()) where b.pts != .zero {
            #expect((b.presentedAt - a.presentedAt).seconds * 30 <= 1.5, "frame \(b.pts.seconds) came late")
        }
        let starts = frames.filter { $0.pts == .zero }.map(\.presentedAt.seconds)
        #expect(starts.count >= 8)
        for (a, b) in zip(starts, starts.dropFirst()) {
            #expect(abs(b - a - 1.1) <= 0.002, "a pass lasted \(b - a) s")
        }
    }
}
