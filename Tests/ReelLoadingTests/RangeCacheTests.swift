import Foundation
import Logging
import ReelCore
@testable import ReelLoading
import ReelTestSupport
import Synchronization
import Testing

/// A wall clock a test moves by hand.
final class TestWallClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withTrackedLock { $0 } }
    func advance(hours: Double) { current.withTrackedLock { $0 += hours * 3600 } }
}

/// Bytes the cache wrote so far (a fault fires past a total).
final class WrittenBytes: Sendable {
    private let total = Mutex(0)
    /// Adds `count`; the new total.
    func add(_ count: Int) -> Int { total.withTrackedLock { $0 += count; return $0 } }
}

/// Counts log lines at warning level and above.
final class LogCounter: Sendable {
    private let lines = Mutex<[String]>([])
    var warnings: [String] { lines.withTrackedLock { $0 } }
    func record(_ line: String) { lines.withTrackedLock { $0.append(line) } }

    var logger: Logger {
        Logger(label: "test") { _ in CountingHandler(counter: self) }
    }

    struct CountingHandler: LogHandler {
        let counter: LogCounter
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            if event.level >= .warning { counter.record("\(event.message)") }
        }
    }
}

let fakeBase = URL(string: "https://fake.example/v/")!
func fakeURL(_ name: String) -> URL { fakeBase.appendingPathComponent(name) }

/// A CachingLoader over an instant fake serving `files`, with a cache in `directory`.
func makeFakeStack(
    _ directory: TemporaryDirectory, files: [String: Data], segmentSize: Int = 64 * 1024,
    configure: (inout RangeCache.Configuration) -> Void = { _ in }
) throws -> (FakeResourceLoader, RangeCache, CachingLoader) {
    let fake = FakeResourceLoader(clock: HostClock.shared, script: .instant)
    for (name, data) in files { fake.add(data, at: fakeURL(name)) }
    let cache = try makeTestCache(directory, segmentSize: segmentSize, configure: configure)
    return (fake, cache, CachingLoader(upstream: fake, cache: cache))
}

@Suite("RangeCache")
struct RangeCacheTests {
    let bytes = LoaderContract.pattern(count: 300_000, seed: 21)

    @Test func theSpanIndexIsRebuiltFromDiskOnOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes, "b": bytes])
            _ = try await loader.data(fakeURL("a"), range: ByteRange(offset: 1000, length: 100_000))
            _ = try await loader.data(fakeURL("a"), range: ByteRange(offset: 250_000, length: 10_000))
            _ = try await loader.data(fakeURL("b"))
            #expect(cache.cachedRanges(for: fakeURL("a")) == [1000..<101_000, 250_000..<260_000])
            cache.close()
        }
        let (fake, cache, loader) = try makeFakeStack(directory, files: ["a": bytes, "b": bytes])
        #expect(cache.cachedRanges(for: fakeURL("a")) == [1000..<101_000, 250_000..<260_000])
        #expect(cache.summary(for: fakeURL("b"))?.area == .media)
        #expect(cache.summary(for: fakeURL("a"))?.area == .temp)
        #expect(cache.contentInformation(for: fakeURL("a"))?.length == 300_000)
        // Served from disk: no request to the origin.
        #expect((try await loader.data(fakeURL("a"), range: ByteRange(offset: 2000, length: 50_000))).fingerprint == (bytes.subdata(in: 2000..<52_000)).fingerprint)
        #expect((try await loader.data(fakeURL("b"))).fingerprint == (bytes).fingerprint)
        #expect(fake.requestCount == 0)
    }

    @Test func aCompleteResourceMovesToMedia() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes])
        _ = try await loader.data(fakeURL("a"), range: ByteRange(offset: 0, length: 200_000))
        #expect(cache.summary(for: fakeURL("a"))?.area == .temp)
        _ = try await loader.data(fakeURL("a"), range: ByteRange(offset: 150_000))
        let summary = try #require(cache.summary(for: fakeURL("a")))
        #expect(summary.area == .media)
        #expect(summary.ranges == [0..<300_000])
        let name = CacheLayout.directoryName(forKey: fakeURL("a").absoluteString)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/media/\(name)/meta.json"))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/temp/\(name)"))
    }

    @Test func theCacheKeyFunctionIsPluggable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (fake, cache, loader) = try makeFakeStack(directory, files: [:]) { configuration in
            configuration.cacheKey = { url in
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
                components.query = nil
                return components.string!
            }
        }
        let signedA = URL(string: "https://fake.example/v/a?sig=1")!
        let signedB = URL(string: "https://fake.example/v/a?sig=2")!
        fake.add(bytes, at: signedA)
        fake.add(bytes, at: signedB)
        _ = try await loader.data(signedA)
        #expect((try await loader.data(signedB)).fingerprint == (bytes).fingerprint)
        #expect(fake.requests.map(\.url) == [signedA])
        #expect(cache.summary(for: signedB)?.key == "https://fake.example/v/a")
        #expect(CacheLayout.directoryName(forKey: "https://fake.example/v/a").count == 32)
    }

    @Test func leastRecentlyUsedGoesFirstAndInUseStays() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = TestWallClock()
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes, "b": bytes, "c": bytes, "d": bytes]) { configuration in
            configuration.mediaLimit = .init(maxBytes: 700_000, maxAge: 48 * 3600)
            configuration.now = { clock.now }
        }
        _ = try await loader.data(fakeURL("a"))
        clock.advance(hours: 0.1)
        _ = try await loader.data(fakeURL("b"))
        clock.advance(hours: 0.1)
        _ = try await loader.data(fakeURL("a"), range: ByteRange(offset: 0, length: 10))  // a is now more recent than b
        clock.advance(hours: 0.1)
        _ = try await loader.data(fakeURL("c"))  // 900 kB > 700 kB: the least recently used (b) goes
        #expect(cache.summary(for: fakeURL("b")) == nil)
        #expect(cache.summary(for: fakeURL("a")) != nil)
        #expect(cache.summary(for: fakeURL("c")) != nil)

        // A read holds c; c is older than a, but being in use is what matters.
        clock.advance(hours: 0.1)
        let held = cache.lease(fakeURL("c"))
        clock.advance(hours: 0.1)
        _ = try await loader.data(fakeURL("a"), range: ByteRange(offset: 0, length: 10))
        clock.advance(hours: 0.1)
        _ = try await loader.data(fakeURL("d"))
        // c is the least recently used, but in use: a goes instead.
        #expect(cache.summary(for: fakeURL("c")) != nil)
        #expect(cache.summary(for: fakeURL("a")) == nil)
        #expect(cache.summary(for: fakeURL("d")) != nil)
        held.release()
        #expect(cache.statistics.evictions == 2)
    }

    @Test func areasExpireByAgeOnTheInjectedClock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = TestWallClock()
        let (_, cache, loader) = try makeFakeStack(directory, files: ["partial": bytes, "whole": bytes]) { configuration in
            configuration.now = { clock.now }
        }
        _ = try await loader.data(fakeURL("partial"), range: ByteRange(offset: 0, length: 1000))
        _ = try await loader.data(fakeURL("whole"))
        clock.advance(hours: 23)
        cache.trim()
        #expect(cache.summary(for: fakeURL("partial")) != nil)
        clock.advance(hours: 2)  // temp/ keeps a day
        cache.trim()
        #expect(cache.summary(for: fakeURL("partial")) == nil)
        #expect(cache.summary(for: fakeURL("whole")) != nil)
        clock.advance(hours: 24)  // media/ keeps two
        cache.trim()
        #expect(cache.summary(for: fakeURL("whole")) == nil)
        // Evicted resources went to trash/ and are purged in the background.
        #expect(await eventually() { POSIXFile.list(directory.path + "/trash").isEmpty })
        #expect(POSIXFile.list(directory.path + "/temp").isEmpty)
        #expect(POSIXFile.list(directory.path + "/media").isEmpty)
    }

    @Test func theTempAreaLimitIsHeld() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes, "b": bytes, "c": bytes]) { configuration in
            configuration.tempLimit = .init(maxBytes: 250_000, maxAge: 24 * 3600)
        }
        for name in ["a", "b", "c"] {
            #expect((try await loader.data(fakeURL(name), range: ByteRange(offset: 0, length: 200_000))).fingerprint == (bytes.prefix(200_000)).fingerprint)
        }
        #expect(cache.statistics.tempBytes <= 250_000 + 64 * 1024)
        #expect(cache.summary(for: fakeURL("c")) != nil)
        #expect(cache.summary(for: fakeURL("a")) == nil)
    }

    @Test func aSecondCacheOnTheDirectoryIsReadOnlyOrRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, first, loader) = try makeFakeStack(directory, files: ["a": bytes, "b": bytes])
        #expect(!first.isReadOnly)
        _ = try await loader.data(fakeURL("a"), range: ByteRange(offset: 0, length: 100_000))

        #expect(throws: RangeCacheError.self) {
            _ = try RangeCache(configuration: .init(directory: directory.url, access: .exclusive))
        }
        let second = try RangeCache(configuration: .init(directory: directory.url))
        #expect(second.isReadOnly)
        #expect(second.readOnlyReason?.contains("pid \(getpid())") == true)
        let fake = FakeResourceLoader(clock: HostClock.shared, resources: [fakeURL("a"): bytes, fakeURL("b"): bytes])
        let reader = CachingLoader(upstream: fake, cache: second)
        // It sees what the first one cached, and reads the rest without storing.
        #expect((try await reader.data(fakeURL("a"), range: ByteRange(offset: 50_000, length: 100_000))).fingerprint == (bytes.subdata(in: 50_000..<150_000)).fingerprint)
        #expect(fake.bytesServed == 50_000)
        #expect((try await reader.data(fakeURL("b"))).fingerprint == (bytes).fingerprint)
        #expect(second.summary(for: fakeURL("b")) == nil)
        #expect(first.summary(for: fakeURL("b")) == nil)
        second.removeAll()  // does nothing read-only
        #expect(first.summary(for: fakeURL("a")) != nil)

        // Once the first lets go, the directory can be taken.
        first.close()
        let third = try RangeCache(configuration: .init(directory: directory.url, access: .exclusive))
        #expect(third.cachedRanges(for: fakeURL("a")) == [0..<100_000])
        third.close()
    }

    @Test func oneWriterPerRange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes])
        _ = try await loader.contentInformation(for: fakeURL("a"))
        let one = cache.lease(fakeURL("a"))
        let two = cache.lease(fakeURL("a"))
        defer { one.release(); two.release() }
        let claim = one.prepareFetch(at: 10_000, takeOver: false, priority: .playback)
        let writer = try #require(claim.writer)
        #expect(claim.holeEnd == 300_000)
        // The same bytes cannot be claimed twice...
        #expect(two.prepareFetch(at: 10_000, takeOver: false, priority: .playback).blocked)
        #expect(two.prepareFetch(at: 200_000, takeOver: false, priority: .playback).blocked)
        guard case .pending = two.lookup(20_000) else { Issue.record("not pending"); return }
        // ...but a reader far ahead can take the rest over: the first writer now stops at 200 000.
        let takeOver = two.prepareFetch(at: 200_000, takeOver: true, priority: .playback)
        let second = try #require(takeOver.writer)
        #expect(writer.limitSnapshot() == 200_000)
        #expect(writer.append(bytes.subdata(in: 10_000..<20_000)) == 10_000)
        guard case .written = two.lookup(15_000) else { Issue.record("written bytes not readable"); return }
        writer.finish()
        second.abandon()
        #expect(cache.cachedRanges(for: fakeURL("a")).contains(10_000..<20_000))
    }

    @Test func concurrentReadersShareOneDownload() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fake = FakeResourceLoader(clock: HostClock.shared, script: .init(bytesPerSecond: 3_000_000, chunkSize: 16 * 1024))
        fake.add(bytes, at: fakeURL("a"))
        let cache = try makeTestCache(directory, segmentSize: 64 * 1024)
        // Followers wait for a writer that makes progress; the 2 s stall fallback (fetch it
        // yourself) is a real-time rule that a starved core trips, so here it is only a watchdog.
        let loader = CachingLoader(upstream: fake, cache: cache, configuration: .init(writerStallTimeout: hangWatchdog))
        async let first = loader.data(fakeURL("a"))
        async let second = loader.data(fakeURL("a"))
        async let third = loader.data(fakeURL("a"), range: ByteRange(offset: 100_000, length: 50_000))
        let (a, b, c) = try await (first, second, third)
        #expect((a).fingerprint == (bytes).fingerprint)
        #expect((b).fingerprint == (bytes).fingerprint)
        #expect((c).fingerprint == (bytes.subdata(in: 100_000..<150_000)).fingerprint)
        // The followers waited for the writer instead of fetching the same bytes again.
        #expect(fake.bytesServed < Int64(bytes.count) * 3 / 2)
    }

    /// A follower waits for the writer of its bytes only while that writer makes progress: a
    /// writer stalled for `writerStallTimeout` is taken over, the follower fetches the rest
    /// itself, and the stalled reader, once its bytes flow again, still reads every byte right.
    /// The stall lasts until the test ends it, so however late the timeout fires, it fires.
    @Test func aFollowerTakesOverFromAStalledWriter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = fakeURL("a")
        let fake = FakeResourceLoader(clock: HostClock.shared)
        fake.add(bytes, at: url)
        fake.enqueueScripts([.init(chunkSize: 16 * 1024, fault: .stallAtOffset(100_000))], for: url)
        let cache = try makeTestCache(directory, segmentSize: 64 * 1024)
        let loader = CachingLoader(upstream: fake, cache: cache, configuration: .init(writerStallTimeout: .milliseconds(100)))
        let stalled = Task { try await loader.data(url) }
        #expect(await eventually { fake.stalledURLs == [url] }, "the first download stalls at 100 000")
        // A watchdog: a follower that waited for the stalled writer for ever would hang here.
        let follower = Mutex<Data?>(nil)
        let finished = await finishes {
            let data = try? await loader.data(url)
            follower.withTrackedLock { $0 = data }
        }
        #expect(finished, "the follower is not left waiting for a writer that makes no progress")
        #expect(follower.withTrackedLock { $0 }?.fingerprint == bytes.fingerprint)
        let requests = fake.requests
        #expect(requests.count == 2, "\(requests.map(\.range))")
        #expect(requests.last.map { $0.range.offset >= 100_000 } == true, "the follower fetched only what the stalled writer had not: \(requests.map(\.range))")
        fake.resumeStalls()
        #expect((try await stalled.value).fingerprint == bytes.fingerprint)
        cache.close()
        let report = RangeCache.inspect(directory: directory.url, verifyContents: true)
        #expect(report.isClean, "\(report.problems)")
    }

    @Test func aFullDiskStopsCachingWithOneLogLineAndReadsGoOn() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let log = LogCounter()
        let written = WrittenBytes()
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes, "b": bytes]) { configuration in
            configuration.logger = log.logger
            configuration.faults = .init(beforeWrite: { count in
                written.add(count) > 100_000 ? ENOSPC : nil
            })
        }
        #expect((try await loader.data(fakeURL("a"))).fingerprint == (bytes).fingerprint)
        #expect((try await loader.data(fakeURL("b"))).fingerprint == (bytes).fingerprint)
        #expect(!cache.isStoring)
        #expect(cache.statistics.storingStopped)
        #expect(log.warnings.count == 1)
        #expect(log.warnings.first?.contains("disk full") == true)
        // What was committed before the failure is intact; nothing partial is left.
        let report = RangeCache.inspect(directory: directory.url, verifyContents: true)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.unfinishedWrites == 0)
        #expect(cache.cachedRanges(for: fakeURL("a")).first.map { $0.lowerBound == 0 && $0.upperBound <= 100_000 } ?? true)
        #expect(cache.summary(for: fakeURL("b")).map { $0.cachedBytes == 0 } ?? true)
    }

    @Test func aFailedMetadataWriteStopsCaching() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes]) { configuration in
            configuration.logger = LogCounter().logger
            configuration.faults = .init(beforeMetadataWrite: { ENOSPC })
        }
        #expect((try await loader.data(fakeURL("a"))).fingerprint == (bytes).fingerprint)
        #expect(!cache.isStoring)
        #expect(RangeCache.inspect(directory: directory.url, verifyContents: true).isClean)
    }

    @Test func whatACrashLeavesIsDiscardedAndDamageDropped() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let name = CacheLayout.directoryName(forKey: fakeURL("a").absoluteString)
        do {
            let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes])
            _ = try await loader.data(fakeURL("a"), range: ByteRange(offset: 0, length: 200_000))
            cache.close()
        }
        let resource = directory.path + "/temp/" + name
        let spans = POSIXFile.list(resource).filter { $0.hasSuffix(".span") }.sorted { CacheLayout.parseSpanName($0)!.offset < CacheLayout.parseSpanName($1)!.offset }
        #expect(spans.count == 4)
        // A write a crash interrupted, a truncated span, a span grown past its name,
        // a stray file, a directory whose creation was interrupted, spans without metadata.
        try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: resource + "/200000-\(UUID()).partial"))
        try Data("{".utf8).write(to: URL(fileURLWithPath: resource + "/meta.json.tmp"))
        let truncated = resource + "/" + spans[1]
        try FileHandle(forWritingAtPath: truncated)!.truncate(atOffset: 100)
        let grown = FileHandle(forWritingAtPath: resource + "/" + spans[2])!
        try grown.seekToEnd()
        try grown.write(contentsOf: Data([1, 2, 3]))
        try grown.close()
        try Data("?".utf8).write(to: URL(fileURLWithPath: resource + "/notes.txt"))
        try FileManager.default.createDirectory(atPath: directory.path + "/temp/" + String(repeating: "a", count: 32), withIntermediateDirectories: true)
        let orphan = directory.path + "/temp/" + String(repeating: "b", count: 32)
        try FileManager.default.createDirectory(atPath: orphan, withIntermediateDirectories: true)
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: orphan + "/0-10-\(String(repeating: "0", count: 32)).span"))

        let before = RangeCache.inspect(directory: directory.url, verifyContents: true)
        #expect(before.unfinishedWrites == 3)  // .partial, meta.json.tmp, the empty directory
        #expect(Set(before.problems.map(\.kind)) == [.corruptSpan, .orphan, .badMetadata])
        #expect(before.problems.count == 4)

        let (fake, cache, loader) = try makeFakeStack(directory, files: ["a": bytes])
        // Only the two intact spans are trusted; the rest was dropped or discarded.
        let firstSpan = CacheLayout.parseSpanName(spans[0])!
        let lastSpan = CacheLayout.parseSpanName(spans[3])!
        #expect(cache.cachedRanges(for: fakeURL("a")) == [0..<firstSpan.length, lastSpan.offset..<lastSpan.offset + lastSpan.length])
        #expect((try await loader.data(fakeURL("a"))).fingerprint == (bytes).fingerprint)
        #expect(fake.bytesServed == Int64(bytes.count) - firstSpan.length - lastSpan.length)
        cache.purgeTrash()
        let after = RangeCache.inspect(directory: directory.url, verifyContents: true)
        #expect(after.isClean, "\(after.problems)")
        #expect(after.unfinishedWrites == 0)
        #expect(after.completeResources == 1)
    }

    @Test func verifyFindsFlippedBytes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes])
        _ = try await loader.data(fakeURL("a"))
        cache.close()
        #expect(RangeCache.inspect(directory: directory.url, verifyContents: true).isClean)
        let resource = directory.path + "/media/" + CacheLayout.directoryName(forKey: fakeURL("a").absoluteString)
        let span = try #require(POSIXFile.list(resource).first { $0.hasSuffix(".span") })
        let handle = try #require(FileHandle(forUpdatingAtPath: resource + "/" + span))
        try handle.seek(toOffset: 10)
        try handle.write(contentsOf: Data([0xFF ^ bytes[10]]))
        try handle.close()
        let report = RangeCache.inspect(directory: directory.url, verifyContents: true)
        #expect(report.problems.map(\.kind) == [.corruptSpan])
        #expect(report.problems.first?.path.hasSuffix(span) == true)
        // Without reading contents, sizes alone look fine.
        #expect(RangeCache.inspect(directory: directory.url, verifyContents: false).isClean)
    }

    @Test func removeInvalidatesAndReadsUnderWayNotice() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes])
        _ = try await loader.data(fakeURL("a"))
        cache.remove(fakeURL("a"))
        #expect(cache.summary(for: fakeURL("a")) == nil)
        #expect((try await loader.data(fakeURL("a"))).fingerprint == (bytes).fingerprint)
        cache.removeAll()
        #expect(cache.statistics.resources == 0)
    }

    @Test func theDefaultDirectoryFollowsXDG() {
        #expect(RangeCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"]).path == "/x/cache/reel")
        #expect(RangeCache.defaultDirectory(environment: ["HOME": "/home/u"]).path == "/home/u/.cache/reel")
        #expect(RangeCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/home/u"]).path == "/home/u/.cache/reel")
    }
}
