import Foundation
import ReelTestSupport
import Testing

/// The five audio cases the corpus lost with mutagen's GPL test files, covered again: a FLAC
/// stream with a variable block size (ietf-wg-cellar's CC0 test file), and four that
/// `scripts/corpus-generate.sh` makes at the byte level (`scripts/corpus-audio.py`): WavPack DSD,
/// an Ogg Vorbis setup header spread over several pages, AAC in ADIF, and an M4B with Nero
/// chapters but no sample. Each test first checks that the file is the case it stands for (the
/// bits and boxes that make it so), then what `reel play --headless --clock fast` does with it:
/// the playable three play sample for sample as FFmpeg decodes them (within a few 16-bit steps:
/// Reel and FFmpeg turn the same resampled floats into integers each their own way), ADIF is
/// refused with one line and exit 3, and the sample-less M4B ends at once with nothing shown.
@Suite struct AudioCorpusCasesTests {
    static let env = URL(fileURLWithPath: "/usr/bin/env")
    static let root = ReelBinary.packageRoot

    static let generatedNames = ["audio-vorbis-setup-pages.ogg", "audio-wavpack-dsd64.wv", "audio-aac-adif.aac",
                                 "audio-m4b-nero-chapters-no-samples.m4b"]

    /// The generated clips, made once into the build directory (as RealWorldCorpusTests' are).
    static let generated: Task<URL, any Error> = Task {
        let directory = root.appendingPathComponent(".build/reel-corpus-generated")
        let script = root.appendingPathComponent("scripts/corpus-generate.sh").path
        let result = try await runSeparately(env, ["bash", script, directory.path] + generatedNames)
        guard result.status == 0 else { throw Failure("corpus-generate.sh: exit \(result.status): \(result.stderr)") }
        return directory
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func clip(_ name: String) async throws -> String {
        try await generated.value.appendingPathComponent(name).path
    }

    /// What `reel play` did: exit status, standard error, trace, and the samples its WAV sink wrote.
    struct Played {
        let status: Int32
        let stderr: String
        let trace: [[String: Any]]
        let samples: [Int16]
        var ended: Bool { trace.contains { $0["type"] as? String == "end" } }
        var frames: Int { trace.filter { $0["type"] as? String == "frame" }.count }
    }

    static func play(_ path: String, in scratch: Scratch) async throws -> Played {
        let reel = try await ReelBinary.locate()
        let wav = scratch.file("out.wav"), trace = scratch.file("trace.jsonl")
        let result = try await runSeparately(reel, ["play", path, "--headless", "--clock", "fast", "--audio-out", wav,
                                                    "--trace", trace], timeout: Child.watchdog)
        let objects = FileManager.default.fileExists(atPath: trace) ? try traceObjects(trace) : []
        let data = (try? Data(contentsOf: URL(fileURLWithPath: wav))) ?? Data()
        return Played(status: result.status, stderr: result.stderr, trace: objects, samples: samples(data.dropFirst(44)))
    }

    /// FFmpeg's decode of the file as the WAV sink writes it: s16, 48 kHz, stereo.
    static func reference(_ path: String, in scratch: Scratch) async throws -> [Int16] {
        let raw = scratch.file("reference.raw")
        let result = try await runSeparately(env, ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", path,
                                                   "-f", "s16le", "-ar", "48000", "-ac", "2", raw])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return samples(try Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    static func samples(_ data: Data) -> [Int16] {
        data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// The largest difference over the reference's length, 10 ms in from either end; `Int.max`
    /// when Reel played less than FFmpeg decoded.
    static func largestDifference(_ played: [Int16], _ reference: [Int16]) -> Int {
        let margin = 960
        guard played.count >= reference.count, reference.count > 2 * margin else { return .max }
        return (margin..<(reference.count - margin)).map { abs(Int(played[$0]) - Int(reference[$0])) }.max() ?? .max
    }

    /// Plays `path` and compares it with FFmpeg's decode; returns the samples Reel played.
    static func playsAsFFmpegDecodes(_ path: String, tolerance: Int) async throws -> [Int16] {
        let scratch = try Scratch("reel-audio-case")
        defer { scratch.remove() }
        let played = try await play(path, in: scratch)
        #expect(played.status == 0, "reel play: exit \(played.status): \(played.stderr)")
        #expect(played.ended, "no end event")
        let reference = try await reference(path, in: scratch)
        let difference = largestDifference(played.samples, reference)
        #expect(difference <= tolerance, "reel \(played.samples.count) samples, FFmpeg \(reference.count), largest difference \(difference)")
        return played.samples
    }

    // MARK: FLAC with a variable block size

    @Test func aVariableBlockSizeFLACPlaysAsFFmpegDecodesIt() async throws {
        let path = Self.root.appendingPathComponent("corpus/files/flac/subset-26-variable-blocksize.flac").path
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // The case: STREAMINFO's smallest and largest block differ, and the first frame's sync
        // code carries the variable-blocksize bit (0xFFF9, not 0xFFF8).
        try #require(bytes.starts(with: Array("fLaC".utf8)))
        var at = 4, frame: Int?
        while at + 4 <= bytes.count {
            let last = bytes[at] & 0x80 != 0, length = Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            if bytes[at] & 0x7F == 0 {
                let minimum = Int(bytes[at + 4]) << 8 | Int(bytes[at + 5]), maximum = Int(bytes[at + 6]) << 8 | Int(bytes[at + 7])
                #expect(minimum < maximum, "STREAMINFO block sizes \(minimum)...\(maximum)")
            }
            at += 4 + length
            if last { frame = at; break }
        }
        let first = try #require(frame)
        #expect(bytes[first] == 0xFF && bytes[first + 1] == 0xF9, "first frame sync \(bytes[first]) \(bytes[first + 1])")
        // 44.1 kHz, resampled to 48 kHz by both.
        let played = try await Self.playsAsFFmpegDecodes(path, tolerance: 4)
        #expect(played.count >= 2 * 48_000 * 24, "under 24 s of 25 played")
    }

    // MARK: WavPack DSD

    @Test func wavPackDSDPlaysAsFFmpegDecodesIt() async throws {
        let path = try await Self.clip("audio-wavpack-dsd64.wv")
        let probe = try await runSeparately(Self.env, ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate",
                                                       "-of", "compact=p=0:nk=1", path])
        // The case: WavPack whose samples are DSD (FFmpeg decimates DSD64 by 8: 352.8 kHz).
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "wavpack|352800", "ffprobe: \(probe.stdout)")
        let played = try await Self.playsAsFFmpegDecodes(path, tolerance: 2)
        // What the DSD carries: 1 kHz on the left at half scale (RMS 0.354 of full scale), so
        // 2000 zero crossings a second, measured over the middle 0.3 s.
        let left = stride(from: 0, to: played.count, by: 2).map { Double(played[$0]) / 32768 }
        try #require(left.count >= 24_000)
        let middle = Array(left[4_800..<19_200])
        let rms = (middle.map { $0 * $0 }.reduce(0, +) / Double(middle.count)).squareRoot()
        let crossings = zip(middle, middle.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(abs(rms - 0.3536) < 0.02, "left RMS \(rms)")
        #expect(abs(Double(crossings) / 0.3 - 2000) < 20, "\(crossings) zero crossings in 0.3 s")
    }

    // MARK: Ogg Vorbis, setup header over several pages

    @Test func aVorbisSetupHeaderOverSeveralPagesPlaysAsFFmpegDecodesIt() async throws {
        let path = try await Self.clip("audio-vorbis-setup-pages.ogg")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // The case: pages 2 onwards carry the setup header; a page where no packet ends has
        // granule -1, and the pages after the first of them are continuations (flag 1).
        var at = 0, pages: [(flags: UInt8, granule: Int64)] = []
        while at + 27 <= bytes.count, bytes[at..<(at + 4)].elementsEqual("OggS".utf8) {
            let granule = (0..<8).reduce(Int64(0)) { $0 | Int64(bytes[at + 6 + $1]) << (8 * Int64($1)) }
            let count = Int(bytes[at + 26])
            let body = bytes[(at + 27)..<(at + 27 + count)].reduce(0) { $0 + Int($1) }
            pages.append((bytes[at + 5], granule))
            at += 27 + count + body
        }
        #expect(at == bytes.count, "pages end at \(at) of \(bytes.count)")
        try #require(pages.count > 6)
        let setup = pages[2...].prefix { $0.granule == -1 }
        #expect(setup.count >= 2, "the setup header starts \(setup.count) pages where no packet ends")
        #expect(pages[3].flags & 1 == 1 && pages[2 + setup.count].flags & 1 == 1, "continuation flags")
        _ = try await Self.playsAsFFmpegDecodes(path, tolerance: 4)
    }

    // MARK: AAC in ADIF

    @Test func aacInADIFIsRefusedWithOneLine() async throws {
        let path = try await Self.clip("audio-aac-adif.aac")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes.starts(with: Array("ADIF".utf8)))
        let scratch = try Scratch("reel-audio-adif")
        defer { scratch.remove() }
        let played = try await Self.play(path, in: scratch)
        // FFmpeg 5.1 has no ADIF demuxer: nothing in the file decodes, and Reel says so.
        #expect(played.status == 3, "reel play: exit \(played.status): \(played.stderr)")
        let lines = played.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains(path), "standard error: \(played.stderr)")
        #expect(played.frames == 0 && !played.ended)
    }

    // MARK: M4B with Nero chapters and no sample

    @Test func aSampleLessNeroChapterM4BEndsAtOnceShowingNothing() async throws {
        let path = try await Self.clip("audio-m4b-nero-chapters-no-samples.m4b")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        // The case: Nero chapters (`chpl`) and a chapter track, no media data, 169022 s long.
        #expect(data.range(of: Data("chpl".utf8)) != nil && data.range(of: Data("chap".utf8)) != nil)
        #expect(data.range(of: Data("mdat".utf8)) == nil)
        let probe = try await runSeparately(Self.env, ["ffprobe", "-v", "error", "-show_entries", "format=duration",
                                                       "-of", "default=nw=1:nk=1", path])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "169022.000000")
        let scratch = try Scratch("reel-audio-m4b")
        defer { scratch.remove() }
        let played = try await Self.play(path, in: scratch)
        #expect(played.status == 0, "reel play: exit \(played.status): \(played.stderr)")
        #expect(played.ended && played.frames == 0)
        let end = try #require(played.trace.first { $0["type"] as? String == "end" })
        #expect((end["at"] as? Double).map { $0 < 1 } == true, "ended at \(end["at"] ?? "?") s of the header's 169022")
        #expect(played.samples.allSatisfy { $0 == 0 }, "a sample-less file sounded")
    }
}
