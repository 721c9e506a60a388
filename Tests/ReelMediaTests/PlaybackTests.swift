import Foundation
import ReelCore
@testable import ReelMedia
import ReelTestSupport
import Testing

/// Every kind of media plays, every frame in order, identical to a plain decode.
@Suite struct MediaPlaybackTests {
    static let specs: [(String, ClipSpec)] = [
        ("H.264 + AAC, moov first", ClipSpec()),
        ("H.264, moov at the end", ClipSpec(container: .mp4MoovAtEnd)),
        ("fragmented MP4", ClipSpec(container: .fragmentedMP4)),
        ("H.264 10-bit", ClipSpec(pixelFormat: "yuv420p10le")),
        ("H.264 4:4:4, odd size", ClipSpec(width: 161, height: 121, pixelFormat: "yuv444p", audioCodec: nil)),
        ("HEVC", ClipSpec(videoCodec: .hevc)),
        ("VP9 + Opus in WebM", ClipSpec(videoCodec: .vp9, bFrames: 0, audioCodec: .opus, container: .webm)),
        ("AV1 in Matroska", ClipSpec(duration: 1, videoCodec: .av1, bFrames: 0, audioCodec: .opus, container: .mkv)),
        ("MPEG-4 Part 2 + MP3 in AVI", ClipSpec(videoCodec: .mpeg4, bFrames: 0, audioCodec: .mp3, container: .avi)),
        ("rotated 90", ClipSpec(rotation: 90)),
        ("video only", ClipSpec(audioCodec: nil)),
    ]

    @Test(arguments: specs.map(\.0))
    func playsEveryFrameLikeAPlainDecode(_ name: String) async throws {
        let spec = Self.specs.first { $0.0 == name }!.1
        let file = try Fixtures.clip(spec)
        let reference = try referenceFrames(file)
        #expect(reference.count >= Int(spec.duration * Double(spec.frameRate)) - 2)

        let harness = PlayerHarness(data: try Data(contentsOf: file), name: file.lastPathComponent)
        harness.load()
        harness.player.play()
        let ended = await harness.run(upTo: seconds(spec.duration + 5)) { harness.ended }
        #expect(ended, "reached the end")
        #expect(harness.failure == nil)
        let shown = harness.video.frames
        #expect(shown.map(\.md5) == reference.map(\.md5), "presented frames equal a plain decode, in order")
        #expect(shown.map(\.pts) == reference.map(\.pts))
        #expect(shown.last?.droppedSoFar == 0)
        if spec.rotation != 0 {
            #expect(shown.first?.rotation == spec.rotation)
            #expect(harness.player.presentationSize?.width == spec.height)
        }
        if spec.audioCodec != nil {
            // About the clip's length of audio reached the sink.
            let seconds = Double(harness.audio.audibleFrameCount) / 48_000
            #expect(abs(seconds - spec.duration) < 0.2, "audio played \(seconds) s")
        }
    }

    @Test func audioOnlyFilesPlayWithProgressAndNoVideo() async throws {
        let file = try Fixtures.clip(ClipSpec(duration: 1.5, videoCodec: nil, container: .mp4))
        let harness = PlayerHarness(data: try Data(contentsOf: file), name: "audio.m4a")
        harness.load()
        harness.player.play()
        #expect(await harness.run(upTo: seconds(1)) { false } == false)
        let midway = harness.player.currentTime.seconds
        #expect(midway > 0.8 && midway < 1.1, "progress moves with the audio (\(midway))")
        #expect(await harness.run(upTo: seconds(3)) { harness.ended })
        #expect(harness.video.frames.isEmpty)
        #expect(abs(Double(harness.audio.audibleFrameCount) / 48_000 - 1.5) < 0.1)
    }

    @Test func truncatedFilesPlayWhatIsDecodableThenEnd() async throws {
        let full = try Fixtures.data(ClipSpec(duration: 2, audioCodec: nil, container: .mp4))
        let harness = PlayerHarness(data: full.prefix(full.count * 6 / 10), name: "truncated.mp4")
        harness.load()
        harness.player.play()
        #expect(await harness.run(upTo: seconds(6)) { harness.ended || harness.failure != nil })
        #expect(harness.video.frames.count > 10, "the decodable part played")
    }

    @Test func garbageFailsWithAClearMessage() async throws {
        let harness = PlayerHarness(data: Fixtures.garbage(), name: "garbage.mp4")
        harness.load()
        harness.player.play()
        #expect(await harness.run(upTo: seconds(2)) { harness.failure != nil })
        let message = harness.failure?.description ?? ""
        #expect(message.contains("garbage.mp4"))
        #expect(message.contains("not a media file"))
        guard case .failed = harness.player.status else {
            Issue.record("status is \(harness.player.status)")
            return
        }
    }

    @Test func aLoaderErrorFailsWithTheURLAndRange() async throws {
        let data = try Fixtures.data(ClipSpec(duration: 2))
        let harness = PlayerHarness(data: data, script: .init(fault: .failAtOffset(Int64(data.count / 2))))
        harness.load()
        harness.player.play()
        #expect(await harness.run(upTo: seconds(5)) { harness.failure != nil || harness.ended })
        // Either the error surfaced with where it happened, or the half that arrived played out.
        if let failure = harness.failure {
            #expect(failure.description.contains("fake.example"))
            #expect(failure.description.contains("bytes"))
        }
    }
}
