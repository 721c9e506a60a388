import Foundation
import ReelTestSupport
import Testing

/// The player under stress, each scenario in a process of its own (ReelStressRunner) so that
/// its engine threads and its memory can be counted. `REEL_STRESS_RUNS=20` repeats each.
@Suite(.serialized) struct StressTests {
    struct Result: Decodable {
        var scenario: String
        var operations: Int
        var threadsBefore: Int
        var threadsAfter: Int
        var rssBefore: Int
        var rssAfter: Int
        var presented: Int
        var referenceFrames: Int
        var mismatches: Int
        var outOfOrder: Int
        var ended: Bool
        var enginesAlive: Int
    }

    static var runs: Int { Int(ProcessInfo.processInfo.environment["REEL_STRESS_RUNS"] ?? "") ?? 1 }
    /// Under a sanitizer the allocator keeps freed memory (ASan's quarantine, TSan's shadow):
    /// resident memory says nothing about the player then.
    static var sanitized: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["ASAN_OPTIONS"] != nil || environment["TSAN_OPTIONS"] != nil
    }

    static func runner() throws -> URL {
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let url = bundle.deletingLastPathComponent().appendingPathComponent("ReelStressRunner")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
        }
        return url
    }

    /// Runs one scenario; the runner's own watchdog reports a deadlock with every thread's state.
    static func run(_ arguments: [String]) async throws -> Result? {
        let (status, stdout, stderr) = try await runSeparately(try runner(), arguments, timeout: .seconds(600))
        guard status == 0, let line = stdout.split(separator: "\n").last else {
            Issue.record("stress \(arguments) exited \(status):\n\(stderr.suffix(6000))")
            return nil
        }
        return try JSONDecoder().decode(Result.self, from: Data(line.utf8))
    }

    @Test func eightThreadsOfRandomCommandsThenANormalPlayIsStillExact() async throws {
        for _ in 0..<Self.runs {
            guard let result = try await Self.run(["commands", "5"]) else { return }
            #expect(result.operations > 100, "the threads did work: \(result.operations) commands")
            #expect(result.ended, "the normal play reached the end")
            #expect(result.presented >= result.referenceFrames / 2, "\(result.presented) of \(result.referenceFrames) frames shown")
            #expect(result.mismatches == 0, "every frame shown is the plain decode's")
            #expect(result.outOfOrder == 0)
            #expect(result.threadsAfter <= result.threadsBefore, "threads: \(result.threadsBefore) before, \(result.threadsAfter) after")
            #expect(result.enginesAlive == 0, "every pipeline was freed")
            if !Self.sanitized {
                #expect(Double(result.rssAfter) <= Double(result.rssBefore) * 1.1, "memory \(result.rssBefore) → \(result.rssAfter)")
            }
        }
    }

    @Test func twoHundredOpensWhoseFirstReadStallsAreReleased() async throws {
        for _ in 0..<Self.runs {
            guard let result = try await Self.run(["stalled-opens"]) else { return }
            #expect(result.operations == 200)
            #expect(result.threadsAfter <= result.threadsBefore, "threads: \(result.threadsBefore) before, \(result.threadsAfter) after")
            #expect(result.enginesAlive == 0, "every pipeline was freed")
            if !Self.sanitized {
                #expect(Double(result.rssAfter) <= Double(result.rssBefore) * 1.1, "memory \(result.rssBefore) → \(result.rssAfter)")
            }
        }
    }
}
