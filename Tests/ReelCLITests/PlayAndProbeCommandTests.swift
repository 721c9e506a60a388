import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// The command-line contract of `reel probe` and `reel play`, run as a user runs them.
@Suite("reel probe and reel play")
struct PlayAndProbeCommandTests {
    static let clip = ClipSpec(width: 160, height: 120, frameRate: 30, duration: 2, keyframeInterval: 60, bFrames: 2)

    @Test func probePrintsStreamsAsJSON() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(ClipSpec(rotation: 90))
        let result = try await runSeparately(reel, ["probe", file.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect((json["container"] as? String)?.contains("mp4") == true)
        let duration = try #require(json["duration"] as? String)
        #expect(MediaTime(string: duration).map { abs($0.seconds - 2) < 0.1 } == true, "duration \(duration)")
        #expect(abs((json["durationSeconds"] as? Double ?? 0) - 2) < 0.1)
        let streams = try #require(json["streams"] as? [[String: Any]])
        let video = try #require(streams.first { $0["type"] as? String == "video" })
        #expect(video["codec"] as? String == "h264")
        #expect(video["width"] as? Int == 160 && video["height"] as? Int == 120)
        #expect(video["rotation"] as? Int == 90)
        #expect(video["pixelFormat"] as? String == "yuv420p")
        let audio = try #require(streams.first { $0["type"] as? String == "audio" })
        #expect(audio["codec"] as? String == "aac")
        #expect(audio["sampleRate"] as? Int == 48_000 && audio["channels"] as? Int == 2)
    }

    @Test func playWritesATraceOfEveryFrameWithFramemd5Hashes() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        let scratch = try Scratch("reel-play")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", file.path, "--headless", "--clock", "fast", "--trace", trace])
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try traceObjects(trace)
        let shown = frames(objects)
        #expect(shown.compactMap { $0["md5"] as? String } == (try referenceMD5s(file)))
        for frame in shown {
            #expect(frame["pts"] is String && frame["seconds"] is Double && frame["presentedAt"] is Double)
            #expect(frame["dropped"] as? Int == 0)
        }
        #expect(MediaTime(string: shown[1]["pts"] as! String) == MediaTime(value: 1, timescale: 30))
        let first = try #require(objects.first { $0["type"] as? String == "firstFrame" })
        let phases = try #require(first["phasesMs"] as? [String: Double])
        for key in ["contentInfo", "firstByte", "headerParsed", "firstPacket", "firstFrameDecoded", "firstFramePresented"] {
            #expect(phases[key] != nil, "phase \(key)")
        }
        #expect((first["bytesRead"] as? Int ?? 0) > 0 && first["requests"] as? Int == 1)
        #expect(objects.contains { $0["type"] as? String == "end" })
    }

    @Test func startIsAnExactSeekAndFramesStopsEarly() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        let scratch = try Scratch("reel-play")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", file.path, "--headless", "--clock", "fast", "--start", "1.25",
                                                    "--frames", "5", "--trace", trace])
        #expect(result.status == 0, "\(result.stderr)")
        let shown = frames(try traceObjects(trace))
        #expect(shown.count == 5)
        // At 30 fps the frame showing 1.25 s is the one at 37/30 s.
        #expect(shown.first?["pts"] as? String == "18944/15360" || (shown.first?["seconds"] as? Double).map { abs($0 - 37.0 / 30) < 1e-6 } == true,
                "first frame \(String(describing: shown.first))")
        let reference = try referenceMD5s(file)
        #expect(shown.compactMap { $0["md5"] as? String } == Array(reference[37..<42]))
    }

    @Test func doubleRateWritesHalfAsMuchAudioAtTheSamePitch() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(ClipSpec(duration: 2, toneFrequency: 1000))
        let scratch = try Scratch("reel-wav")
        defer { scratch.remove() }
        let wav = scratch.file("out.wav")
        let result = try await runSeparately(reel, ["play", file.path, "--headless", "--clock", "fast", "--rate", "2", "--audio-out", wav])
        #expect(result.status == 0, "\(result.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: wav))
        #expect(String(decoding: data.prefix(4), as: UTF8.self) == "RIFF")
        let pcm = data.dropFirst(44)
        let frames = pcm.count / 4
        #expect(abs(Double(frames) / 48_000 - 1.0) < 0.1, "2 s at 2x is about 1 s (got \(Double(frames) / 48_000))")
        let samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let mono = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let window = mono[min(4_800, mono.count)..<min(28_800, mono.count)]
        let crossings = zip(window, window.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(abs(Double(crossings) / 2 / 0.5 - 1000) < 40, "pitch ~1000 Hz: \(Double(crossings) / 2 / 0.5)")
    }

    @Test func corruptInputExitsThreeWithOneLine() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-bad")
        defer { scratch.remove() }
        let garbage = scratch.file("garbage.mp4")
        try Fixtures.garbage().write(to: URL(fileURLWithPath: garbage))
        for command in [["play", garbage, "--headless", "--clock", "fast"], ["probe", garbage]] {
            // Never a hang: runSeparately fails the test past its timeout.
            let result = try await runSeparately(reel, command)
            #expect(result.status == 3, "\(command): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "one line: \(result.stderr)")
            #expect(result.stderr.contains("garbage.mp4"))
        }
        let missing = try await runSeparately(reel, ["play", scratch.file("nope.mp4"), "--headless"])
        #expect(missing.status == 3 && missing.stderr.contains("nope.mp4"))
    }

    @Test func usageErrorsExitTwo() async throws {
        let reel = try await ReelBinary.locate()
        let file = try Fixtures.clip(Self.clip)
        for command in [["play", file.path, "--headless", "--rate", "9"], ["play"], ["play", file.path, "--headless", "--clock", "slow"],
                        ["bogus"], ["play", file.path, "--headless", "--frames", "0"]] {
            let result = try await runSeparately(reel, command)
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.hasPrefix("reel: "), "\(result.stderr)")
        }
        let help = try await runSeparately(reel, ["--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE"))
    }
}
