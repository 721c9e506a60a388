import Foundation
import ReelCore
import ReelLoading
import ReelOrigin
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built `reel` executable: beside this test bundle (the scratch directory in use),
/// else the newest `.build*/debug/reel` of the package, else built for the tests.
enum ReelBinary {
    enum Failure: Error, CustomStringConvertible {
        case buildFailed(String)
        var description: String {
            switch self {
            case .buildFailed(let output): "could not build reel for the tests: \(output)"
            }
        }
    }

    static let packageRoot: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) { return directory }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    private static let located = LockedValue<URL?>(nil)

    static func locate() async throws -> URL {
        if let url = located.value { return url }
        // The products directory this test bundle was built into.
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var candidates = [bundle.deletingLastPathComponent().appendingPathComponent("reel")]
        // Any scratch directory of the package.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: packageRoot.path)) ?? []
        for name in names where name.hasPrefix(".build") {
            let scratch = packageRoot.appendingPathComponent(name)
            candidates.append(scratch.appendingPathComponent("debug/reel"))
        }
        let existing = candidates.filter { FileManager.default.isExecutableFile(atPath: $0.path) }
        if let first = existing.first, first == candidates[0] {
            located.set(first)
            return first
        }
        if let newest = existing.max(by: { modified($0) < modified($1) }) {
            located.set(newest)
            return newest
        }
        // Not built yet: build it in a scratch directory of its own (the one `swift test`
        // uses is locked while the tests run).
        let scratch = packageRoot.appendingPathComponent(".build-reel-tests")
        let result = try await run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swift", "build", "--product", "reel", "--scratch-path", scratch.path, "--package-path", packageRoot.path],
            timeout: .seconds(1200)
        )
        let built = scratch.appendingPathComponent("debug/reel")
        guard result.status == 0, FileManager.default.isExecutableFile(atPath: built.path) else {
            throw Failure.buildFailed(String(result.output.suffix(2000)))
        }
        located.set(built)
        return built
    }

    private static func modified(_ url: URL) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date) ?? .distantPast
    }
}

final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}

/// A child process whose output is collected as it comes.
final class Child: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var collected = Data()

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                self?.lock.withLock { self?.collected.append(data) }
            }
        }
        try process.run()
    }

    var output: String { lock.withLock { String(decoding: collected, as: UTF8.self) } }
    var pid: Int32 { process.processIdentifier }

    /// Waits for the exit (polling; `waitUntilExit` would block a pool thread). `nil` on timeout.
    func exitStatus(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
        // Let the last output arrive.
        try? await Task.sleep(for: .milliseconds(20))
        return process.terminationStatus
    }

    func kill(_ signal: Int32) { Glibc.kill(process.processIdentifier, signal) }
}

/// Runs a command to its end; its exit status and output.
func run(_ executable: URL, _ arguments: [String], timeout: Duration = .seconds(30)) async throws -> (status: Int32, output: String) {
    let child = try Child(executable, arguments)
    guard let status = await child.exitStatus(timeout: timeout) else {
        child.kill(SIGKILL)
        _ = await child.exitStatus()
        return (-1, child.output + "\n(timed out)")
    }
    return (status, child.output)
}

/// SplitMix64: a seeded generator, so a failing run can be repeated.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("reel command line")
struct CommandLineTests {
    @Test func killedFetchesNeverLeaveAWrongByte() async throws {
        let reel = try await ReelBinary.locate()
        let file = LoaderContract.pattern(count: 12_000_000, seed: 61)
        // 48 Mbit/s: 12 MB take two seconds, so every kill lands mid-download.
        let origin = try await TestOrigin(files: ["clip.mp4": file], latency: .milliseconds(5), bandwidthKbps: 48_000)
        let cache = try TemporaryDirectory("reel-crash")
        let output = try TemporaryDirectory("reel-crash-out")
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        var random = SeededGenerator(state: seed)
        let url = origin.url("clip.mp4").absoluteString
        do {
            for round in 1...4 {
                let child = try Child(reel, ["cache", "fetch", url, "--cache-dir", cache.path])
                try await Task.sleep(for: .milliseconds(Int.random(in: 250...650, using: &random)))
                child.kill(SIGKILL)
                let status = await child.exitStatus()
                #expect(status == SIGKILL || status == 0, "round \(round), seed \(seed): \(child.output)")
                let verify = try await run(reel, ["cache", "verify", "--cache-dir", cache.path])
                #expect(verify.status == 0, "round \(round), seed \(seed): \(verify.output)")
            }
            let before = RangeCache.inspect(directory: cache.url, verifyContents: true)
            #expect(before.isClean)
            let cachedBytes = before.tempBytes + before.mediaBytes
            #expect(cachedBytes > 0, "nothing was cached before the kills (seed \(seed))")

            origin.server.resetStatistics()
            let target = output.path + "/clip.mp4"
            let fetch = try await run(reel, ["cache", "fetch", url, "--cache-dir", cache.path, "-o", target])
            #expect(fetch.status == 0, "\(fetch.output)")
            let fetched = try Data(contentsOf: URL(fileURLWithPath: target))
            #expect(fetched.fingerprint == file.fingerprint, "seed \(seed)")
            // What was cached came from the disk; only the rest crossed the network.
            #expect(origin.server.statistics.bytesServed == Int64(file.count) - cachedBytes, "seed \(seed): \(fetch.output)")
            #expect(fetch.output.contains("\(cachedBytes) from cache"), "\(fetch.output)")

            origin.server.resetStatistics()
            let again = try await run(reel, ["cache", "fetch", url, "--cache-dir", cache.path, "-o", target])
            #expect(again.status == 0)
            #expect(origin.server.statistics.bytesServed == 0)
            #expect(try Data(contentsOf: URL(fileURLWithPath: target)).fingerprint == file.fingerprint)
            let stats = try await run(reel, ["cache", "stats", "--cache-dir", cache.path])
            #expect(stats.output.contains("resources  1 (1 complete)"), "\(stats.output)")
            let verify = try await run(reel, ["cache", "verify", "--cache-dir", cache.path])
            #expect(verify.status == 0, "\(verify.output)")
        } catch {
            await origin.stop()
            cache.remove()
            output.remove()
            throw error
        }
        await origin.stop()
        cache.remove()
        output.remove()
    }

    @Test func verifyFailsOnACorruptCacheAndClearEmptiesIt() async throws {
        let reel = try await ReelBinary.locate()
        let origin = try await TestOrigin(files: ["a.bin": LoaderContract.pattern(count: 300_000, seed: 62)])
        let cache = try TemporaryDirectory("reel-cli")
        defer { cache.remove() }
        let fetch = try await run(reel, ["cache", "fetch", origin.url("a.bin").absoluteString, "--cache-dir", cache.path])
        await origin.stop()
        #expect(fetch.status == 0, "\(fetch.output)")
        #expect(fetch.output.contains("300000 bytes: 0 from cache, 300000 from network"))
        // Flip a byte of a span.
        let media = cache.path + "/media"
        let resource = try #require(try FileManager.default.contentsOfDirectory(atPath: media).first)
        let span = try #require(try FileManager.default.contentsOfDirectory(atPath: media + "/" + resource).first { $0.hasSuffix(".span") })
        let handle = try #require(FileHandle(forUpdatingAtPath: media + "/" + resource + "/" + span))
        let byte = try handle.read(upToCount: 1)!
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: Data([byte[0] ^ 0x55]))
        try handle.close()
        let verify = try await run(reel, ["cache", "verify", "--cache-dir", cache.path])
        #expect(verify.status == 3)
        #expect(verify.output.contains("corrupt span"))
        #expect(verify.output.contains("reel: cache \(cache.url.standardizedFileURL.path): 1 problem"))

        // clear refuses while another process writes the cache, then empties it.
        let holder = try RangeCache(configuration: .init(directory: cache.url))
        let refused = try await run(reel, ["cache", "clear", "--cache-dir", cache.path])
        #expect(refused.status == 3)
        #expect(refused.output.contains("in use by another process (pid \(getpid()))"))
        holder.close()
        let cleared = try await run(reel, ["cache", "clear", "--cache-dir", cache.path])
        #expect(cleared.status == 0, "\(cleared.output)")
        #expect(cleared.output.contains("cleared 1 resources"))
        let after = try await run(reel, ["cache", "verify", "--cache-dir", cache.path])
        #expect(after.status == 0)
        #expect(after.output.contains("clean: 0 resources"))
    }

    @Test func badInputIsOneLineAndExitTwo() async throws {
        let reel = try await ReelBinary.locate()
        for arguments in [
            ["cache", "fetch", "not a url"],
            ["cache", "fetch", "ftp://example.com/a.mp4"],
            ["cache", "stats", "--cache-dir", ""],
            ["serve", "/nonexistent-reel-directory"],
            ["serve", "/tmp", "--fault", "no-such-fault"],
            ["serve", "/tmp", "--kbps", "0"],
        ] {
            let result = try await run(reel, arguments)
            #expect(result.status == 2, "\(arguments): \(result.output)")
            #expect(result.output.hasPrefix("reel: "), "\(arguments): \(result.output)")
            #expect(!result.output.contains("Fatal error"), "\(arguments): \(result.output)")
        }
        let unreachable = try await run(reel, ["cache", "fetch", "http://127.0.0.1:9/a.mp4", "--cache-dir", FileManager.default.temporaryDirectory.path + "/reel-cli-\(UUID())"], timeout: .seconds(60))
        #expect(unreachable.status == 3, "\(unreachable.output)")
        #expect(unreachable.output.split(separator: "\n").count == 1, "\(unreachable.output)")
    }

    @Test func serveAnswersUntilTerminated() async throws {
        let reel = try await ReelBinary.locate()
        let directory = try TemporaryDirectory("reel-serve")
        defer { directory.remove() }
        let clip = LoaderContract.pattern(count: 100_000, seed: 63)
        try directory.write(clip, to: "clip.mp4")
        let server = try Child(reel, ["serve", directory.path, "--rtt-ms", "10", "--fault", "500-first"])
        var base: URL?
        for _ in 0..<500 {
            if let line = server.output.split(separator: "\n").first, line.hasPrefix("http://") {
                base = URL(string: String(line))
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        let url = try #require(base, "no URL printed: \(server.output)").appendingPathComponent("clip.mp4")
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let stream = http.read(url, range: ByteRange(offset: 1000, length: 5000))
        #expect(try await stream.contentInformation().contentType == "video/mp4")
        #expect(try await stream.collect().fingerprint == clip.subdata(in: 1000..<6000).fingerprint)
        #expect(http.statistics.retries == 1)
        await http.shutdown()
        server.kill(SIGTERM)
        let status = await server.exitStatus(timeout: .seconds(5))
        if status == nil { server.kill(SIGKILL) }
        #expect(status == 0, "\(server.output)")
    }
}
