import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// Exact seeks into the middle of an HLS segment, on the manual clock with the fake loader.
///
/// MPEG-TS segments only: with fMP4 segments libavformat's HLS demuxer (5.1) re-requests the
/// segments after `av_seek_frame` and then reports the end of the input — an open issue.
@Suite struct StreamingSeekTests {
    /// Keyframes every 2 s and segments of about 2 s: a target inside a segment needs decoding
    /// from its keyframe.
    static let spec = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 4, keyframeInterval: 60, bFrames: 3)

    struct Frame: Sendable { var pts: MediaTime; var md5: String }

    @Test(arguments: [0.5, 1.5, 2.7, 3.3])
    func anExactSeekInsideASegmentLandsOnTheFrameWhoseIntervalContainsTheTarget(_ target: Double) async throws {
        let stream = try PackagedStream.make(.hlsTS, spec: Self.spec)
        defer { stream.remove() }
        let base = URL(string: "https://origin.example/seek/")!
        // The stream's own timeline (segments carry no edit list): its frames, decoded in order.
        let plain = FakeResourceLoader()
        stream.serve(on: plain, at: base)
        let reference = try await offThePool { () -> [Frame] in
            var frames: [Frame] = []
            try SequentialDecoder.decodeVideo(base.appendingPathComponent("index.m3u8"), loader: plain, threads: 1) { frame in
                frames.append(Frame(pts: frame.pts, md5: frame.md5()))
                return true
            }
            return frames
        }
        #expect(reference.map(\.md5) == (try referenceFrames(stream.clip).map(\.md5)))
        let expected = reference.last { $0.pts <= seconds(target) }!
        let clock = ManualClock()
        let loader = FakeResourceLoader(clock: clock)
        stream.serve(on: loader, at: base)
        let video = RecordingVideoSink()
        let player = Player(clock: clock, videoSink: video, audioSink: RecordingAudioSink())
        let driver = ManualClockDriver(clock: clock, players: [player])
        player.replaceCurrentItem(with: PlayerItem(url: base.appendingPathComponent("index.m3u8"), loader: loader))
        #expect(await driver.run(upTo: seconds(1)) { player.status == .readyToPlay })
        video.reset()
        let result = ResultBox<Bool>()
        player.seek(to: seconds(target), toleranceBefore: .zero, toleranceAfter: .zero) { result.set($0) }
        await driver.run(upTo: seconds(10)) { result.value != nil }
        #expect(result.value == true)
        let shown = video.frames.first
        #expect(shown?.md5 == expected.md5, "target \(target): showed \(shown?.pts.seconds ?? -1), want \(expected.pts.seconds)")
        #expect(loader.requests.allSatisfy { $0.url.absoluteString.hasPrefix(base.absoluteString) })
    }
}
