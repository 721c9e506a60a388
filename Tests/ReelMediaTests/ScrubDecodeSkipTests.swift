import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// Frames before a seek's target that no other frame refers to are not decoded at all
/// (`Decoder.skipsNonReferenceFrames`, which the video decode loop sets for packets whose
/// successor is still at or before the target): what is decoded stays bit for bit FFmpeg's.
@Suite struct ScrubDecodeSkipTests {
    /// Decodes the clip's video with frame threading, skipping non-reference frames for the
    /// packets `skip` says; the frames that came out.
    static func decode(_ url: URL, skip: (MediaTime) -> Bool) throws -> [(pts: MediaTime, md5: String)] {
        let demuxer = try Demuxer(url: url, loader: FileLoaderForTests(), fastStart: false)
        defer { demuxer.close() }
        let index = try #require(demuxer.videoStreamIndex)
        let stream = try #require(demuxer.stream(index))
        let decoder = try Decoder(parameters: stream.pointee.codecpar, timeBase: stream.pointee.time_base, url: url, threads: 0)
        let timeBase = TimeBase(stream.pointee.time_base)
        var frames: [(MediaTime, String)] = []
        func drain() throws {
            while case .frame(let box) = try decoder.receive() {
                let pts = timeBase.time(box.pointer.pointee.best_effort_timestamp)
                frames.append((pts, VideoFrame(box: box, pts: pts, duration: nil, rotation: 0, serial: 0).md5()))
            }
        }
        while let packet = try demuxer.readPacket() {
            guard packet.streamIndex == index else { continue }
            decoder.skipsNonReferenceFrames = skip(timeBase.time(packet.pts))
            while try !decoder.send(packet) { try drain() }
            try drain()
        }
        _ = try decoder.send(nil)
        try drain()
        return frames
    }

    @Test func skippedFramesAreNotDecodedAndTheRestAreExact() throws {
        let file = try Fixtures.clip(ScrubbingTests.clip)
        let reference = try referenceFrames(file)
        let md5 = Dictionary(reference.map { ($0.pts, $0.md5) }, uniquingKeysWith: { a, _ in a })
        // Skipping up to 3 s (a GOP and a half), as a seek to 3 s would.
        let cut = MediaTime(value: 3, timescale: 1)
        let frames = try Self.decode(file) { $0 < cut }
        let before = frames.filter { $0.pts < cut }
        let referenceBefore = reference.filter { $0.pts < cut }
        #expect(before.count < referenceBefore.count * 3 / 4, "B-frames no one refers to are skipped: \(before.count) of \(referenceBefore.count)")
        #expect(before.count >= referenceBefore.count / 4, "the frames others refer to are decoded: \(before.count)")
        // Every frame that came out, before the cut and after, is FFmpeg's own decode of it.
        for frame in frames {
            #expect(md5[frame.pts] == frame.md5, "frame \(frame.pts.seconds) differs from the reference decode")
        }
        // From the cut on, every frame is there.
        #expect(frames.filter { $0.pts >= cut }.map(\.pts) == reference.filter { $0.pts >= cut }.map(\.pts))
    }
}
