import Foundation
import ReelCore
import ReelLoading
import ReelOrigin
import ReelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

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

/// The committed span files anywhere under a cache directory.
func committedSpans(in directory: URL) -> Int {
    let files = FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []
    return files.filter { $0.hasSuffix(".span") }.count
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
                // Each kill lands at a random point of the download, counted in bytes the
                // origin sent (not in wall-clock time, which a busy machine stretches at
                // will); the first only once a span was committed, so there is something
                // for the later rounds and the check below to keep.
                let servedBefore = origin.server.statistics.bytesServed
                let killAfter = Int64.random(in: 200_000...3_000_000, using: &random)
                let child = try Child(reel, ["cache", "fetch", url, "--cache-dir", cache.path])
                let reached = await eventually(poll: .milliseconds(5)) {
                    child.end != nil
                        || (origin.server.statistics.bytesServed - servedBefore >= killAfter
                            && (round > 1 || committedSpans(in: cache.url) > 0))
                }
                #expect(reached, "round \(round), seed \(seed): the fetch made no progress")
                child.kill(SIGKILL)
                let status = await child.exitStatus()
                #expect(status == SIGKILL || status == 0,
                        "round \(round), seed \(seed): status \(status.map(String.init) ?? "none"), \(child.end?.description ?? "running"): \(child.output)")
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
            ["play", "--terminal", "--graphics-timeout", "0", "/tmp/a.mp4"],
            ["feed", "/tmp/none.json", "--terminal", "--graphics-timeout", "61"],
        ] {
            let result = try await run(reel, arguments)
            #expect(result.status == 2, "\(arguments): \(result.output)")
            #expect(result.output.hasPrefix("reel: "), "\(arguments): \(result.output)")
            #expect(!result.output.contains("Fatal error"), "\(arguments): \(result.output)")
        }
        let unreachable = try await run(reel, ["cache", "fetch", "http://127.0.0.1:9/a.mp4", "--cache-dir", FileManager.default.temporaryDirectory.path + "/reel-cli-\(UUID())"])
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
        let printed = await eventually() {
            server.output.split(separator: "\n").first?.hasPrefix("http://") == true
        }
        let line = printed ? server.output.split(separator: "\n").first.map(String.init) : nil
        let url = try #require(line.flatMap(URL.init(string:)), "no URL printed: \(server.output)").appendingPathComponent("clip.mp4")
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let stream = http.read(url, range: ByteRange(offset: 1000, length: 5000))
        #expect(try await stream.contentInformation().contentType == "video/mp4")
        #expect(try await stream.collect().fingerprint == clip.subdata(in: 1000..<6000).fingerprint)
        #expect(http.statistics.retries == 1)
        await http.shutdown()
        server.kill(SIGTERM)
        let status = await server.exitStatus()
        if status == nil { server.kill(SIGKILL) }
        #expect(status == 0, "\(server.output)")
    }
}
