import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// Real uploads rarely start both streams at zero: phones put AAC priming in an edit list so
/// audio starts a frame or two after video, editors cut between key frames, some containers
/// start at a time other than zero. Each item here is made with the `ffmpeg` command the way
/// such files are made, played on the manual clock, and every frame shown is compared with
/// what `ffmpeg -f framemd5` decodes from the same file.
@Suite struct StartTimeTests {
    /// Runs `ffmpeg` with `arguments` (inputs and output in `directory`) on a thread of its
    /// own: the wait for the child never blocks the concurrency pool.
    static func ffmpeg(_ arguments: [String], in directory: URL) async throws {
        try await offThePool { try ffmpegBlocking(arguments, in: directory) }
    }

    static func ffmpegBlocking(_ arguments: [String], in directory: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-nostdin", "-v", "error", "-y"] + arguments
        process.currentDirectoryURL = directory
        process.standardError = FileHandle.nullDevice
        try process.run()
        let end = process.waitForEndBlocking()
        guard end == ProcessEnd(status: 0, signalled: false) else {
            throw MediaError.encoding("ffmpeg \(arguments.joined(separator: " ")): \(end)")
        }
    }

    /// FFmpeg's decode of the first video stream, every frame with its own timestamp
    /// (`-copyts`, no frame rate conversion), from the stream's start on: a decoder that does
    /// not drop an edit list's pre-roll itself (libdav1d in FFmpeg 5.1) returns it too.
    static func ffmpegFramesFromStart(_ file: URL) throws -> [String] {
        let start = try commandOutput(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=start_time",
                                    "-of", "default=noprint_wrappers=1:nokey=1", file.path])
        let startSeconds = Double(start.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -.infinity
        let lines = try commandOutput(["ffmpeg", "-nostdin", "-v", "error", "-copyts", "-i", file.path, "-map", "0:v:0",
                                    "-vsync", "passthrough", "-f", "framemd5", "-"]).split(separator: "\n")
        var timeBase = 1.0
        var md5s: [String] = []
        for line in lines {
            if line.hasPrefix("#tb 0:") {
                let parts = line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: "/").compactMap { Double($0) }
                if parts.count == 2 { timeBase = parts[0] / parts[1] }
                continue
            }
            guard !line.hasPrefix("#") else { continue }
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count >= 6, let pts = Double(fields[2]) else { continue }
            if pts * timeBase >= startSeconds - 1e-6 { md5s.append(fields[5]) }
        }
        return md5s
    }

    /// A directory of its own holding `a.mp4` (1 s of 30000/1001 fps H.264 with AAC), the
    /// issue's own recipe, for the variants below to be cut from.
    static func source(video: String = "testsrc2=s=320x240:r=30000/1001:d=1", gop: Int = 250) async throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await ffmpeg(["-f", "lavfi", "-i", video, "-f", "lavfi", "-i", "sine=r=44100:d=1",
                    "-c:v", "libx264", "-g", "\(gop)", "-bf", "2", "-c:a", "aac", "-shortest", "a.mp4"], in: directory)
        return directory
    }

    /// Plays `file` through a player on the manual clock to its end.
    static func play(_ file: URL) async throws -> PlayerHarness {
        let harness = PlayerHarness(data: try Data(contentsOf: file), name: file.lastPathComponent)
        harness.load()
        harness.player.play()
        let ended = await harness.run(upTo: seconds(20)) { harness.ended || harness.failure != nil }
        #expect(ended, "\(file.lastPathComponent) reached its end")
        #expect(harness.failure == nil, "\(String(describing: harness.failure))")
        return harness
    }

    /// The frames shown equal FFmpeg's decode of the same file, every one, none dropped.
    static func expectEveryFrameAsFFmpeg(_ file: URL, harness: PlayerHarness) async throws {
        let reference = try await offThePool { try ffmpegFramesFromStart(file) }
        let shown = harness.video.frames
        #expect(reference.count >= 5, "FFmpeg decoded \(reference.count) frames")
        #expect(shown.map(\.md5) == reference, "\(file.lastPathComponent): \(shown.count) frames shown, FFmpeg decodes \(reference.count)")
        #expect(shown.last?.droppedSoFar == 0, "\(file.lastPathComponent): \(shown.last?.droppedSoFar ?? -1) dropped")
        #expect(harness.player.statistics.droppedFrames == 0)
        // Each frame is shown once, stamped with its own time.
        let times = shown.map(\.pts)
        #expect(times == times.sorted() && Set(times).count == times.count, "\(times.prefix(5))")
    }

    @Test func audioThatStartsAfterVideoDropsNoFrameAndIsPrecededBySilence() async throws {
        let directory = try await Self.source(video: "testsrc2=s=1080x720:r=30000/1001:d=1")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.ffmpeg(["-i", "a.mp4", "-itsoffset", "0.1", "-i", "a.mp4", "-map", "0:v", "-map", "1:a", "-c", "copy", "late.mp4"],
                        in: directory)
        let file = directory.appendingPathComponent("late.mp4")
        let harness = try await Self.play(file)
        try await Self.expectEveryFrameAsFFmpeg(file, harness: harness)
        #expect(harness.video.frames.count == 30)
        #expect(harness.video.frames.first?.pts == .zero)
        // The device heard silence until the audio's own first sample, 0.1 s in, then the tone.
        let samples = harness.audio.written
        let channels = 2
        let firstSound = stride(from: 0, to: samples.count, by: channels).first { abs(samples[$0]) > 0.01 }.map { $0 / channels }
        let onset = Double(firstSound ?? 0) / 48_000
        #expect(abs(onset - 0.1) < 0.03, "sound starts \(onset) s in")
    }

    @Test func lateAudioDropsNoFrameWhenTheItemLoopsOrSeeksToItsStart() async throws {
        let directory = try await Self.source()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.ffmpeg(["-i", "a.mp4", "-itsoffset", "0.1", "-i", "a.mp4", "-map", "0:v", "-map", "1:a", "-c", "copy", "late.mp4"],
                        in: directory)
        let file = directory.appendingPathComponent("late.mp4")
        let reference = try await offThePool { try Self.ffmpegFramesFromStart(file) }
        let harness = PlayerHarness(data: try Data(contentsOf: file), name: "late.mp4")
        harness.player.actionAtItemEnd = .loop
        harness.load()
        harness.player.play()
        // Three passes: the first, and two loops (each a seek to the start).
        let looped = await harness.run(upTo: seconds(20)) { harness.video.frames.count >= 3 * reference.count }
        #expect(looped, "\(harness.video.frames.count) frames in 20 s")
        let shown = harness.video.frames.prefix(3 * reference.count).map(\.md5)
        #expect(Array(shown) == reference + reference + reference)
        #expect(harness.player.statistics.droppedFrames == 0)
        // A seek back to the start, paused, then played: every frame again.
        harness.player.pause()
        let before = harness.video.frames.count
        #expect(await harness.seek(to: .zero))
        harness.player.play()
        await harness.run(upTo: seconds(3)) { harness.video.frames.count >= before + reference.count }
        let again = harness.video.frames.dropFirst(before).prefix(reference.count).map(\.md5)
        #expect(Array(again) == reference)
        #expect(harness.player.statistics.droppedFrames == 0)
    }

    @Test func videoThatStartsAfterAudioShowsEveryFrame() async throws {
        let directory = try await Self.source()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.ffmpeg(["-itsoffset", "0.1", "-i", "a.mp4", "-i", "a.mp4", "-map", "0:v", "-map", "1:a", "-c", "copy", "late.mp4"],
                        in: directory)
        let file = directory.appendingPathComponent("late.mp4")
        let harness = try await Self.play(file)
        try await Self.expectEveryFrameAsFFmpeg(file, harness: harness)
        let first = try #require(harness.video.frames.first?.pts)
        #expect(abs(first.seconds - 0.1) < 0.01, "the first frame keeps its own time: \(first)")
    }

    @Test func anEditListStartingBetweenKeyFramesShowsFromItsStart() async throws {
        let directory = try await Self.source(video: "testsrc2=s=320x240:r=30:d=3", gop: 30)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A stream copy cut half a second in: the edit list starts 15 frames after a key frame,
        // so those 15 are decoded to reach it and never shown.
        try await Self.ffmpeg(["-ss", "0.5", "-i", "a.mp4", "-c", "copy", "cut.mp4"], in: directory)
        let file = directory.appendingPathComponent("cut.mp4")
        let harness = try await Self.play(file)
        try await Self.expectEveryFrameAsFFmpeg(file, harness: harness)
        #expect(harness.video.frames.first?.pts == .zero)
        #expect(harness.video.frames.allSatisfy { $0.pts >= .zero })
    }

    @Test func aDecoderThatKeepsThePreRollStillShowsFromTheStart() async throws {
        // libdav1d returns the frames an edit list marks as pre-roll (FFmpeg 5.1 drops them
        // only for decoders it drives itself): Reel must not show them either way.
        let directory = try await Self.source()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=30:d=3", "-c:v", "libaom-av1", "-cpu-used", "8", "-g", "30",
                         "-an", "av1.mp4"], in: directory)
        try await Self.ffmpeg(["-ss", "0.5", "-i", "av1.mp4", "-c", "copy", "cut.mp4"], in: directory)
        let file = directory.appendingPathComponent("cut.mp4")
        let harness = try await Self.play(file)
        try await Self.expectEveryFrameAsFFmpeg(file, harness: harness)
        #expect(harness.video.frames.first?.pts == .zero)
    }

    @Test(arguments: ["mkv", "ts", "mp4"])
    func aFirstTimestampOtherThanZeroIsShownOnceAtItsOwnTime(_ container: String) async throws {
        let directory = try await Self.source()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.ffmpeg(["-i", "a.mp4", "-c", "copy", "-output_ts_offset", "0.1", "offset.\(container)"], in: directory)
        let file = directory.appendingPathComponent("offset.\(container)")
        let harness = try await Self.play(file)
        try await Self.expectEveryFrameAsFFmpeg(file, harness: harness)
    }

    @Test func aVideoWhoseContainerDeclaresNoDurationPlaysEveryFrame() async throws {
        let directory = try await Self.source(video: "testsrc2=s=320x240:r=30:d=0.1667")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.ffmpeg(["-i", "a.mp4", "-an", "-c", "copy", "five.mkv"], in: directory)
        let file = directory.appendingPathComponent("five.mkv")
        let harness = try await Self.play(file)
        try await Self.expectEveryFrameAsFFmpeg(file, harness: harness)
    }
}
