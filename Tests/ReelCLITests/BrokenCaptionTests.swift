import Foundation
import ReelCore
import ReelOrigin
import ReelTestSupport
import Testing

/// `reel play --captions` with caption files that are broken in the ways real ones are, served
/// by the NIO origin: each leaves the video playing to its last frame, with exit 0 and exactly
/// one warning line, and never a crash or a hang.
@Suite struct BrokenCaptionTests {
    static let video: Task<URL, any Error> = Task {
        let scratch = try Scratch("reel-broken-captions-video")
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let result = try await runSeparately(env, ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                                                   "testsrc2=size=160x120:rate=25:duration=2", "-c:v", "libx264", "-g", "25",
                                                   scratch.file("clip.mp4")])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return URL(fileURLWithPath: scratch.file("clip.mp4"))
    }

    enum Broken: String, CaseIterable, Sendable {
        case badTimestamps, windows1252, truncated, garbage50MB, ttmlWithEntities, refusedScheme

        /// The file's bytes (nil: not served).
        var bytes: Data? {
            switch self {
            case .badTimestamps: Data("1\n00:00:99,999 --> 00:00:0x,000\nnever\n\n2\n-00:00:01,000 --> 00:00:00,500\nbackwards\n".utf8)
            case .windows1252: Data([0x31, 0x0A] + Array("00:00:00,100 --> 00:00:01,500\n".utf8) + [0x63, 0x61, 0x66, 0xE9, 0x0A])
            case .truncated: Data("WEBVTT\n\n00:00:00.100 --> 00:0".utf8)
            case .garbage50MB: Data((0..<(50 << 20)).lazy.map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 7) })
            case .ttmlWithEntities: Data(#"<?xml version="1.0"?><!DOCTYPE tt [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><tt xmlns="http://www.w3.org/ns/ttml"><body><div><p begin="0s" end="1s">&b;</p></div></body></tt>"#.utf8)
            case .refusedScheme: nil
            }
        }
    }

    @Test(arguments: Broken.allCases)
    func aBrokenCaptionFileLeavesTheVideoPlayingWithOneWarning(_ broken: Broken) async throws {
        let reel = try await ReelBinary.locate()
        let video = try await Self.video.value
        let scratch = try Scratch("reel-broken-captions")
        defer { scratch.remove() }
        let served = URL(fileURLWithPath: scratch.file("served"), isDirectory: true)
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: video, to: served.appendingPathComponent("clip.mp4"))
        if let bytes = broken.bytes { try bytes.write(to: served.appendingPathComponent("captions.srt")) }
        let server = OriginServer(configuration: .init(root: served))
        _ = try await server.start()
        let trace = scratch.file("trace.jsonl")
        // Everything from the origin, except the refused case: a data: URL is no caption source.
        let caption = broken == .refusedScheme ? "data:text/plain,hello" : server.url(for: "captions.srt").absoluteString
        let result = try await runSeparately(reel, ["play", server.url(for: "clip.mp4").absoluteString, "--captions", caption,
                                                    "--headless", "--clock", "fast", "--no-cache", "--trace", trace])
        await server.stop()
        if broken == .refusedScheme {
            #expect(result.status == 2, "a usage error: \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            return
        }
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { !$0.isEmpty }
        #expect(warnings.count == 1, "one warning line: \(result.stderr)")
        let objects = try traceObjects(trace)
        #expect(frames(objects).count == 50, "every frame shown")
        #expect(objects.contains { $0["type"] as? String == "end" })
        if broken == .windows1252 {
            #expect(warnings.first?.contains("CP1252") == true)
            #expect(objects.contains { $0["type"] as? String == "caption" && $0["text"] as? String == "café" })
        } else {
            #expect(objects.contains { $0["type"] as? String == "captionError" })
        }
    }
}
