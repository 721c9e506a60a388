import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// Audio that FFmpeg decodes plays, whatever its rate, sample format or length, and a file cut
/// short plays what it holds and ends. The files are made with the `ffmpeg` command.
@Suite struct AudioFormatTests {
    /// Plays `file` (made by `ffmpeg arguments` in a directory of its own) to its end on the
    /// manual clock; the harness, for its sinks and events.
    static func play(_ name: String, making arguments: [String], upTo limit: Double = 10) async throws -> PlayerHarness {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await StartTimeTests.ffmpeg(arguments + [name], in: directory)
        return try await play(Data(contentsOf: directory.appendingPathComponent(name)), name: name, upTo: limit)
    }

    static func play(_ data: Data, name: String, upTo limit: Double = 10) async throws -> PlayerHarness {
        let harness = PlayerHarness(data: data, name: name)
        harness.load()
        harness.player.play()
        let done = await harness.run(upTo: seconds(limit)) { harness.ended || harness.failure != nil }
        #expect(done, "\(name) ended or failed")
        #expect(harness.failure == nil, "\(name): \(String(describing: harness.failure))")
        #expect(harness.ended, "\(name) reached its end")
        return harness
    }

    /// Frames of the recording from the first to the last that is not silence.
    static func soundingFrames(_ harness: PlayerHarness) -> Int {
        let samples = harness.audio.written
        let frames = stride(from: 0, to: samples.count, by: 2).filter { abs(samples[$0]) > 1e-4 }.map { $0 / 2 }
        guard let first = frames.first, let last = frames.last else { return 0 }
        return last - first + 1
    }

    @Test func aFileShorterThanTheResamplersFilterPlays() async throws {
        // 20 samples at 80 kHz: all of it sits in libswresample's filter until the end.
        let harness = try await Self.play("tiny.wav", making: ["-f", "lavfi", "-i", "sine=r=80000:f=1000:d=0.00025",
                                                               "-c:a", "pcm_s16le"])
        #expect(Self.soundingFrames(harness) >= 10, "\(Self.soundingFrames(harness)) frames heard of 12")
    }

    @Test(arguments: [8000, 44100, 96000, 192000, 384000])
    func everyRateIsResampledToTheDeviceWholeToItsLastSample(_ rate: Int) async throws {
        let harness = try await Self.play("tone.wav", making: ["-f", "lavfi", "-i", "sine=r=\(rate):f=440:d=1", "-c:a", "pcm_s16le"])
        // One second, to within a resampled sample or two at each end (the tone starts at 0).
        let heard = Self.soundingFrames(harness)
        #expect(abs(heard - 48_000) <= 4, "\(rate) Hz: \(heard) frames heard")
    }

    @Test(arguments: ["s16", "s32", "flt", "dbl", "u8"])
    func everySampleFormatPlays(_ format: String) async throws {
        let codec = ["s16": "pcm_s16le", "s32": "pcm_s32le", "flt": "pcm_f32le", "dbl": "pcm_f64le", "u8": "pcm_u8"][format]!
        let harness = try await Self.play("tone.wav", making: ["-f", "lavfi", "-i", "sine=r=48000:f=440:d=0.5", "-c:a", codec])
        #expect(abs(Self.soundingFrames(harness) - 24_000) <= 4)
    }

    @Test func twentyFourBitFLACPlays() async throws {
        let harness = try await Self.play("tone.flac", making: ["-f", "lavfi", "-i", "sine=r=96000:f=440:d=0.5",
                                                                "-c:a", "flac", "-sample_fmt", "s32"])
        #expect(abs(Self.soundingFrames(harness) - 24_000) <= 4)
    }

    @Test func anMP4CutAtItsMoovEndsCleanly() async throws {
        // Moov first, then nothing: FFmpeg reads the header, finds no sample and exits 0.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await StartTimeTests.ffmpeg(["-f", "lavfi", "-i", "sine=r=44100:d=2", "-c:a", "aac", "-movflags", "+faststart", "book.m4b"],
                                  in: directory)
        let whole = try Data(contentsOf: directory.appendingPathComponent("book.m4b"))
        let mdat = try #require(whole.range(of: Data("mdat".utf8)))
        let harness = try await Self.play(whole.prefix(mdat.lowerBound - 4), name: "book.m4b")
        #expect(harness.audio.audibleFrameCount == 0)
        // Cut inside the media: what is there plays.
        let part = try await Self.play(whole.prefix(mdat.upperBound + 8000), name: "part.m4b")
        #expect(part.audio.audibleFrameCount > 1000)
    }
}
