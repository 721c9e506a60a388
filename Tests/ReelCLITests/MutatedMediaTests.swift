import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `reel play FILE --headless` on damaged media ends — played to its end (exit 0) or
/// failed with one line (exit 3), never a crash, never a hang — on the realtime clock and
/// on `--clock fast`. The files are made here: clips of every codec and container Reel's
/// encoder writes, and two pictures, each damaged by ``MediaMutator`` with several seeds.
///
/// A failure names the file by its source and seed (`vp9-opus.webm seed 1000004:
/// Cluster size ← unknown (was 0x1d2) at 0x2f1`): `MediaMutator.mutate(source, seed:)`
/// makes it again. More seeds by hand: `scripts/mutate-corpus.sh` (the environment
/// variables below).
@Suite("reel play on mutated media")
struct MutatedMediaTests {
    /// The sources: small, short, every codec and container.
    static let clips: [(name: String, spec: ClipSpec)] = {
        func clip(_ video: ClipSpec.VideoCodec?, _ audio: ClipSpec.AudioCodec?, _ container: ClipSpec.Container,
                  keyframes: Int = 10) -> ClipSpec {
            ClipSpec(width: 96, height: 64, frameRate: 15, duration: 1, videoCodec: video, keyframeInterval: keyframes,
                     bFrames: 2, audioCodec: audio, container: container)
        }
        return [
            ("h264-aac.mp4", clip(.h264, .aac, .mp4)),
            ("h264-aac-moov-last.mp4", clip(.h264, .aac, .mp4MoovAtEnd)),
            ("h264-aac-fragmented.mp4", clip(.h264, .aac, .fragmentedMP4, keyframes: 5)),
            ("hevc-aac.mp4", clip(.hevc, .aac, .mp4)),
            ("vp9-opus.webm", clip(.vp9, .opus, .webm)),
            ("av1-opus.mkv", clip(.av1, .opus, .mkv)),
            ("h264-mp3.mkv", clip(.h264, .mp3, .mkv)),
            ("mpeg4-mp3.avi", clip(.mpeg4, .mp3, .avi)),
        ]
    }()

    /// Seeds per source: `REEL_MUTATION_SEEDS` (a count, from 1), else 6 (10 sources × 6 = 60
    /// files, each played on both clocks: 120 runs).
    static var seeds: Range<UInt64> {
        let count = ProcessInfo.processInfo.environment["REEL_MUTATION_SEEDS"].flatMap { UInt64($0) } ?? 6
        return 1..<(1 + max(1, count))
    }
    /// Runs at once: `REEL_MUTATION_JOBS`, else 6 (a realtime run mostly waits for its clock).
    static var jobs: Int { ProcessInfo.processInfo.environment["REEL_MUTATION_JOBS"].flatMap { Int($0) } ?? 6 }
    /// Where the files go: `REEL_MUTATION_DIR` keeps them; else a scratch directory, removed.
    static var keptDirectory: URL? {
        ProcessInfo.processInfo.environment["REEL_MUTATION_DIR"].map { URL(fileURLWithPath: $0, isDirectory: true) }
    }
    /// A watchdog against hangs, not a time limit: a 1 s clip plays in about 1 s.
    static let watchdog: Duration = .seconds(30)

    /// The clips and pictures (the pictures made in `directory`), encoded on a thread of
    /// their own (encoding is long, blocking work).
    static func sources(pictureDirectory directory: URL) async throws -> [(name: String, data: Data)] {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    var sources: [(name: String, data: Data)] = []
                    for (name, spec) in clips { sources.append((name, try Fixtures.data(spec))) }
                    for name in ["testsrc2.jpg", "testsrc2.png"] {
                        let url = directory.appendingPathComponent("source-" + name)
                        try ClipEncoder.encodeImage(source: "testsrc2=size=128x96", width: 128, height: 96, to: url)
                        sources.append((name, try Data(contentsOf: url)))
                    }
                    continuation.resume(returning: sources)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// What one run did.
    struct Run: Sendable {
        var file: String
        var clock: String
        var status: Int32?
        var signalled: Bool
        var stderr: String
        var problem: String? {
            guard let status else { return "hung (killed after \(MutatedMediaTests.watchdog))" }
            if signalled { return "crashed (signal \(status)): \(stderr.suffix(300))" }
            switch status {
            case 0: return nil
            case 3:
                let lines = stderr.split(separator: "\n", omittingEmptySubsequences: true)
                guard lines.count == 1, lines[0].hasPrefix("reel: ") else {
                    return "exit 3 without a one-line error: \(stderr.suffix(400).debugDescription)"
                }
                return nil
            default: return "exit \(status): \(stderr.suffix(300))"
            }
        }
    }

    /// Plays `file` headless on `clock` ("realtime" or "fast").
    static func play(_ reel: URL, _ file: MediaMutator.CorpusFile, clock: String) async throws -> Run {
        var arguments = ["play", file.url.path, "--headless"]
        if clock == "fast" { arguments += ["--clock", "fast"] }
        // After an exit 3, its line (ending in a newline) is all that may still be on its way.
        let result = try await runToEnd(reel, arguments, timeout: watchdog) { status, _, stderr in status != 3 || stderr.hasSuffix("\n") }
        return Run(file: file.description, clock: clock, status: result.status, signalled: result.signalled, stderr: result.stderr)
    }

    @Test func everyMutatedFileEndsOrFailsWithOneLineOnBothClocks() async throws {
        let reel = try await ReelBinary.locate()
        let scratch = try Scratch("reel-mutated")
        defer { if Self.keptDirectory == nil { scratch.remove() } }
        let directory = Self.keptDirectory ?? scratch.url
        let sources = try await Self.sources(pictureDirectory: scratch.url)
        let files = try MediaMutator.writeCorpus(sources: sources, seeds: Self.seeds, into: directory)
        let jobs = [(files, "realtime"), (files, "fast")].flatMap { list, clock in list.map { ($0, clock) } }

        let runs = try await withThrowingTaskGroup(of: Run.self) { group in
            var results: [Run] = []
            var next = 0
            for _ in 0..<min(Self.jobs, jobs.count) {
                let (file, clock) = jobs[next]
                next += 1
                group.addTask { try await Self.play(reel, file, clock: clock) }
            }
            while let run = try await group.next() {
                results.append(run)
                if next < jobs.count {
                    let (file, clock) = jobs[next]
                    next += 1
                    group.addTask { try await Self.play(reel, file, clock: clock) }
                }
            }
            return results
        }

        #expect(runs.count == files.count * 2)
        let problems = runs.filter { $0.problem != nil }.sorted { ($0.clock, $0.file) < ($1.clock, $1.file) }
        for run in problems {
            Issue.record("\(run.file) [\(run.clock) clock]: \(run.problem!)")
        }
        let failed = runs.filter { $0.status == 3 }.count
        let played = runs.filter { $0.status == 0 }.count
        print("mutated media: \(runs.count) runs of \(files.count) files: \(played) played, \(failed) failed with one line, "
              + "\(problems.count) problems" + (Self.keptDirectory.map { " (files in \($0.path))" } ?? ""))
        // The damage is real: some of the files fail (else the mutator changed nothing that matters).
        #expect(failed > 0, "no mutated file made reel fail")
    }
}
