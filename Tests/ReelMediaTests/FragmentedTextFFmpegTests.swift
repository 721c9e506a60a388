import Foundation
import ReelCaptions
import ReelCore
import ReelTestSupport
import Testing

/// Reel's reading of fragmented MP4 text samples against FFmpeg's mov demuxer, which reads the
/// same tracks as data streams: every sample's time, size and bytes must be FFmpeg's packet's.
/// Two of shaka-player's assets are left out on purpose: their run offsets miss the media data,
/// and FFmpeg reads the misplaced bytes where Reel (like shaka-player) reads from the media data
/// (FragmentedTextTests checks those against shaka-player's expected cues).
@Suite struct FragmentedTextFFmpegTests {
    @Test(arguments: [
        ("vtt-init.mp4", "vtt-segment.mp4"), ("vtt-init.mp4", "vtt-segment-no-duration.mp4"),
        ("vtt-init.mp4", "vtt-segment-settings.mp4"), ("ttml-init.mp4", "ttml-segment.mp4"),
        ("ttml-init.mp4", "ttml-segment-multiple-sample.mp4"),
    ])
    func samplesEqualFFmpegsPackets(initialization: String, segment: String) async throws {
        let directory = CaptionTests.fragmentedText
        let initData = try Data(contentsOf: directory.appendingPathComponent(initialization))
        let segmentData = try Data(contentsOf: directory.appendingPathComponent(segment))
        let samples = try FragmentedTextTrack(initialization: initData).samples(in: segmentData)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-fmp4-text-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let joined = scratch.appendingPathComponent("joined.mp4")
        try (initData + segmentData).write(to: joined)
        let payloads = scratch.appendingPathComponent("payloads.bin")
        let packets = try await offThePool { () throws -> String in
            _ = try commandOutput(["ffmpeg", "-nostdin", "-v", "error", "-i", joined.path, "-map", "0:0", "-c", "copy", "-f", "data", payloads.path])
            return try commandOutput(["ffprobe", "-v", "error", "-select_streams", "0", "-show_entries", "packet=pts,size",
                                      "-of", "csv=p=0", joined.path])
        }
        let reference = packets.split(whereSeparator: \.isNewline).map { line in
            line.split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        }
        // The track's time base is 1/1000 in every one of these files.
        #expect(reference.map { MediaTime(value: $0[0], timescale: 1000) } == samples.map(\.start))
        #expect(reference.map { Int($0[1]) } == samples.map(\.bytes.count))
        #expect(try Data(contentsOf: payloads) == Data(samples.flatMap(\.bytes)))
        #expect(!samples.isEmpty)
    }
}
