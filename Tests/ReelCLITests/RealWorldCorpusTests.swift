import Foundation
import ReelCore
import ReelTestSupport
import Testing

/// The CI-sized part of the real-world corpus (`scripts/corpus.sh` runs all of it): a few
/// files from other projects' test assets (`corpus/files`, sources and licences in
/// `corpus/MANIFEST.tsv`) and a few clips `scripts/corpus-generate.sh` makes with the ffmpeg
/// CLI, each played by `reel play FILE --headless --clock fast --trace T` and compared with
/// FFmpeg's own decode of the same file: every frame presented is FFmpeg's frame at or after
/// the start (`ffmpeg -noautorotate -copyts -i FILE -map 0:V -fps_mode passthrough
/// -enc_time_base -1 -f framemd5 -`), same hash and same pts, none missing, none twice; an
/// audio-only file plays to its end (exit 0 and an `end` event).
@Suite("real-world corpus")
struct RealWorldCorpusTests {
    struct Item: Sendable, CustomTestStringConvertible {
        enum Source: Sendable { case committed(String), generated(String) }
        let source: Source
        let audioOnly: Bool
        var testDescription: String {
            switch source {
            case .committed(let path): path
            case .generated(let name): "generated/\(name)"
            }
        }
    }

    static let items: [Item] = [
        // Other projects' files.
        Item(source: .committed("files/mp4parse/video_rotation_90.mp4"), audioOnly: false),   // rotation matrix
        Item(source: .committed("files/mp4ff/ed_hevc.mp4"), audioOnly: false),                // HEVC + AAC, edit lists
        Item(source: .committed("files/mkvparse/example.mkv"), audioOnly: false),              // Matroska, one frame
        Item(source: .committed("files/shaka/first-period.webm"), audioOnly: false),           // WebM VP9
        Item(source: .committed("files/shaka/video.ts"), audioOnly: false),                    // MPEG-TS starting at 57.4 s
        Item(source: .committed("files/mp4parser/MOV00006.3gp"), audioOnly: false),            // a phone's 3GP: H.263 + AMR
        Item(source: .committed("files/flac/subset-63-24bit.flac"), audioOnly: true),
        // Generated: the cases of issue 22.
        Item(source: .generated("late-audio-100ms.mp4"), audioOnly: false),
        Item(source: .generated("editlist-midgop.mp4"), audioOnly: false),
        Item(source: .generated("start-3of30.avi"), audioOnly: false),
        Item(source: .generated("duration0-5frames.mp4"), audioOnly: false),
        Item(source: .generated("audio-wav-80k-20samples.wav"), audioOnly: true),
        // Generated in place of GPL files that left the corpus: 8-bit unsigned PCM at 16 kHz, an
        // M4B with a chapter track.
        Item(source: .generated("audio-wav-16k-u8.wav"), audioOnly: true),
        Item(source: .generated("audio-m4b-chapters.m4b"), audioOnly: true),
    ]

    static let corpus = ReelBinary.packageRoot.appendingPathComponent("corpus")

    /// The generated clips, made once for the suite into the package's build directory (kept
    /// out of git and reused by later runs, so runs leave nothing behind in the temporary
    /// directory; the script writes every clip anew each time).
    static let generated: Task<URL, any Error> = Task {
        let directory = ReelBinary.packageRoot.appendingPathComponent(".build/reel-corpus-generated")
        let names = items.compactMap { item -> String? in
            if case .generated(let name) = item.source { return name }
            return nil
        }
        let script = ReelBinary.packageRoot.appendingPathComponent("scripts/corpus-generate.sh").path
        let result = try await runSeparately(URL(fileURLWithPath: "/usr/bin/env"), ["bash", script, directory.path] + names)
        guard result.status == 0 else { throw Failure("corpus-generate.sh: exit \(result.status): \(result.stderr)") }
        return directory
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// An exact time: numerator over denominator, reduced.
    struct Time: Hashable, CustomStringConvertible {
        let value: Int64
        let scale: Int64
        init(_ value: Int64, _ scale: Int64) {
            func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? Swift.abs(a) : gcd(b, a % b) }
            let divisor = Swift.max(1, gcd(value, scale))
            self.value = value / divisor
            self.scale = scale / divisor
        }
        /// `v/ts` (a trace's pts), or a decimal such as `57.400000` (ffprobe's start_time).
        init?(_ text: String) {
            let text = text.split(separator: "@").first.map(String.init) ?? text
            if let slash = text.firstIndex(of: "/") {
                guard let v = Int64(text[..<slash]), let s = Int64(text[text.index(after: slash)...]), s > 0 else { return nil }
                self.init(v, s)
            } else {
                let parts = text.split(separator: ".", omittingEmptySubsequences: false)
                guard parts.count <= 2, let whole = Int64(parts[0].isEmpty ? "0" : parts[0]) else { return nil }
                let fraction = parts.count == 2 ? String(parts[1]) : ""
                guard fraction.allSatisfy(\.isNumber), fraction.count <= 9 else { return nil }
                var scale: Int64 = 1
                for _ in 0..<fraction.count { scale *= 10 }
                let sign: Int64 = text.hasPrefix("-") ? -1 : 1
                self.init(whole * scale + sign * (Int64(fraction) ?? 0), scale)
            }
        }
        static func < (a: Time, b: Time) -> Bool { a.value * b.scale < b.value * a.scale }
        var description: String { "\(value)/\(scale)" }
    }

    struct Frame: Hashable, CustomStringConvertible {
        let pts: Time
        let md5: String
        var description: String { "\(pts) \(md5.prefix(8))" }
    }

    /// FFmpeg's frames of the first video stream that is not a cover picture, at or after
    /// the file's start time.
    static func reference(_ path: String) async throws -> [Frame] {
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let probe = try await runSeparately(env, ["ffprobe", "-v", "error", "-show_entries", "format=start_time",
                                                  "-of", "default=nw=1:nk=1", path])
        let start = Time(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let decode = try await runSeparately(env, ["ffmpeg", "-nostdin", "-v", "error", "-noautorotate", "-copyts", "-i", path,
                                                   "-map", "0:V:0", "-fps_mode", "passthrough", "-enc_time_base", "-1",
                                                   "-f", "framemd5", "-"])
        guard decode.status == 0 else { throw Failure("ffmpeg framemd5 of \(path): exit \(decode.status): \(decode.stderr)") }
        var timebase = Time(1, 1)
        var frames: [Frame] = []
        for line in decode.stdout.split(separator: "\n") {
            if line.hasPrefix("#tb 0:") {
                timebase = Time(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) ?? timebase
            } else if !line.hasPrefix("#") {
                let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                guard fields.count == 6, let pts = Int64(fields[2]) else { continue }
                frames.append(Frame(pts: Time(pts * timebase.value, timebase.scale), md5: fields[5]))
            }
        }
        // ffprobe prints the start with 6 decimals (1/15 is 0.066667): a microsecond of slack.
        if let start { frames.removeAll { $0.pts < Time(start.value * 1_000_000 - start.scale, start.scale * 1_000_000) } }
        return frames
    }

    @Test(arguments: items)
    func playsLikeFFmpeg(_ item: Item) async throws {
        let path: String
        switch item.source {
        case .committed(let relative): path = Self.corpus.appendingPathComponent(relative).path
        case .generated(let name): path = try await Self.generated.value.appendingPathComponent(name).path
        }
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-corpus-play")
        defer { scratch.remove() }
        let trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", path, "--headless", "--clock", "fast", "--trace", trace],
                                             timeout: Child.watchdog)
        #expect(result.status == 0, "reel play: exit \(result.status): \(result.stderr)")
        let objects = FileManager.default.fileExists(atPath: trace) ? try traceObjects(trace) : []
        #expect(objects.contains { $0["type"] as? String == "end" }, "no end event")
        #expect(!objects.contains { $0["type"] as? String == "error" }, "an error event")
        guard !item.audioOnly else { return }
        let expected = try await Self.reference(path)
        try #require(!expected.isEmpty, "FFmpeg decodes no frame")
        let shown = frames(objects).map { object in
            Frame(pts: Time(object["pts"] as? String ?? "") ?? Time(-1, 1), md5: object["md5"] as? String ?? "")
        }
        #expect(shown.first == expected.first, "first frame: reel \(shown.first.map(String.init(describing:)) ?? "none"), FFmpeg \(expected[0])")
        #expect(shown == expected, "reel \(shown.count) frames, FFmpeg \(expected.count); first difference at \(Array(zip(shown, expected)).firstIndex { $0.0 != $0.1 } ?? Swift.min(shown.count, expected.count))")
    }
}
