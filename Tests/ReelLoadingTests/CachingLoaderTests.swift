import Foundation
import ReelCore
@testable import ReelLoading
import ReelOrigin
import ReelTestSupport
import Testing

/// An MP4-shaped file: `ftyp`, then `mdat` of `mediaBytes`, then `moov` of `indexBytes`.
func mp4WithIndexAtEnd(mediaBytes: Int, indexBytes: Int) -> Data {
    func box(_ type: String, _ payload: Data) -> Data {
        var data = Data()
        let size = UInt32(8 + payload.count)
        data.append(contentsOf: [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
        data.append(contentsOf: Array(type.utf8))
        data.append(payload)
        return data
    }
    var file = box("ftyp", Data("isom\u{0}\u{0}\u{2}\u{0}isomiso2".utf8))
    file.append(box("mdat", LoaderContract.pattern(count: mediaBytes, seed: 5)))
    file.append(box("moov", LoaderContract.pattern(count: indexBytes, seed: 6)))
    return file
}

@Suite("CachingLoader")
struct CachingLoaderTests {
    let bytes = LoaderContract.pattern(count: 1_500_000, seed: 9)

    @Test func aWarmReadFetchesNothing() async throws {
        let origin = try await TestOrigin(files: ["a.mp4": bytes])
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let directory = try TemporaryDirectory()
        defer { Task { await http.shutdown(); await origin.stop(); directory.remove() } }
        let loader = CachingLoader(upstream: http, cache: try makeTestCache(directory))
        #expect((try await loader.data(origin.url("a.mp4"))).fingerprint == (bytes).fingerprint)
        let served = origin.server.statistics.bytesServed
        let requests = origin.server.statistics.requestCount
        loader.resetStatistics()
        #expect((try await loader.data(origin.url("a.mp4"))).fingerprint == (bytes).fingerprint)
        #expect((try await loader.data(origin.url("a.mp4"), range: ByteRange(offset: 777, length: 100_000))).fingerprint == (bytes.subdata(in: 777..<100_777)).fingerprint)
        #expect(try await loader.contentInformation(for: origin.url("a.mp4")).length == 1_500_000)
        #expect(origin.server.statistics.bytesServed == served)
        #expect(origin.server.statistics.requestCount == requests)
        #expect(loader.statistics.bytesFromNetwork == 0)
        #expect(loader.statistics.bytesFromCache == 1_600_000)
    }

    @Test func readsAcrossCachedAndMissingRangesAreStitched() async throws {
        let origin = try await TestOrigin(files: ["a.mp4": bytes])
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let directory = try TemporaryDirectory()
        defer { Task { await http.shutdown(); await origin.stop(); directory.remove() } }
        let loader = CachingLoader(upstream: http, cache: try makeTestCache(directory))
        _ = try await loader.data(origin.url("a.mp4"), range: ByteRange(offset: 100_000, length: 100_000))
        _ = try await loader.data(origin.url("a.mp4"), range: ByteRange(offset: 300_000, length: 100_000))
        origin.server.resetStatistics()
        #expect((try await loader.data(origin.url("a.mp4"), range: ByteRange(offset: 50_000))).fingerprint == (bytes.suffix(from: 50_000)).fingerprint)
        // Only the holes went to the network, each as its own range.
        #expect(origin.server.statistics.requests.map(\.range) == ["bytes=50000-99999", "bytes=200000-299999", "bytes=400000-1499999"])
        #expect(origin.server.statistics.bytesServed == 1_450_000 - 200_000)
    }

    @Test func aSeekBeyondTheDownloadStartsItsOwnRequestAtOnce() async throws {
        let origin = try await TestOrigin(files: ["a.mp4": bytes], bandwidthKbps: 4000)
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let directory = try TemporaryDirectory()
        defer { Task { await http.shutdown(); await origin.stop(); directory.remove() } }
        // Small segments, so what the head wrote is committed and shows in the ranges.
        let cache = try makeTestCache(directory, segmentSize: 16 * 1024)
        // The head's reader takes one chunk and stops, so the head can buffer no more than
        // 64 KiB ahead of it: its writer stays far behind byte 1 400 000 however the machine
        // runs. A tail read that waited for that writer would wait ten minutes for its stall.
        let loader = CachingLoader(upstream: http, cache: cache, configuration: .init(
            highWaterMark: 64 * 1024, writerStallTimeout: .seconds(600)
        ))
        let url = origin.url("a.mp4")
        let head = loader.read(url, range: .all)
        var iterator = head.makeAsyncIterator()
        _ = try await iterator.next()
        let tail = LockedValue<Data?>(nil)
        #expect(await finishes() {
            tail.set(try? await loader.data(url, range: ByteRange(offset: 1_400_000)))
        }, "the tail waited for the head's writer")
        #expect(tail.value?.fingerprint == bytes.suffix(from: 1_400_000).fingerprint)
        // The tail had its own request, and the head was still far behind when it was cached.
        #expect(origin.server.statistics.requests.contains { $0.range == "bytes=1400000-1499999" })
        let ranges = cache.cachedRanges(for: url)
        #expect(ranges.count == 2 && ranges[0].lowerBound == 0 && ranges[0].upperBound < 1_400_000, "\(ranges)")
        #expect(ranges.last == 1_400_000..<1_500_000)
        head.cancel()
    }

    @Test func aChangedEntityInvalidatesTheCachedResource() async throws {
        let origin = try await TestOrigin(files: ["a.mp4": bytes])
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let directory = try TemporaryDirectory()
        defer { Task { await http.shutdown(); await origin.stop(); directory.remove() } }
        let cache = try makeTestCache(directory)
        let loader = CachingLoader(upstream: http, cache: cache)
        _ = try await loader.data(origin.url("a.mp4"), range: ByteRange(offset: 0, length: 100_000))
        let changed = LoaderContract.pattern(count: 1_400_000, seed: 10)
        try origin.directory.write(changed, to: "a.mp4")
        // The read reported the cached (old) version, then met the new one at the origin.
        await #expect(throws: ResourceLoaderError.self) {
            _ = try await loader.data(origin.url("a.mp4"))
        }
        #expect(loader.statistics.entityChanges == 1)
        #expect(cache.statistics.invalidations == 1)
        // The next read sees only the new version, and caches it.
        #expect((try await loader.data(origin.url("a.mp4"))).fingerprint == (changed).fingerprint)
        #expect((try await loader.data(origin.url("a.mp4"))).fingerprint == (changed).fingerprint)
        #expect(cache.summary(for: origin.url("a.mp4"))?.length == 1_400_000)
        #expect(RangeCache.inspect(directory: directory.url, verifyContents: true).isClean)
    }

    @Test func anMP4IndexAfterTheMediaIsFetchedWithTheHead() async throws {
        // The media is longer than the head's limit (1 MiB) and what the read may have taken
        // in ahead of its consumer when it left (up to the 1 MiB buffer and a chunk): on a
        // starved core, with 2 MB of media, the first cached range was once not a head short of
        // the media's end.
        let file = mp4WithIndexAtEnd(mediaBytes: 4_000_000, indexBytes: 40_000)
        let mdatEnd = Int64(24 + 8 + 4_000_000)
        let origin = try await TestOrigin(files: ["late.mp4": file], latency: .milliseconds(50), bandwidthKbps: 16_000)
        let http = HTTPLoader(configuration: fastHTTPConfiguration())
        let directory = try TemporaryDirectory()
        defer { Task { await http.shutdown(); await origin.stop(); directory.remove() } }
        let cache = try makeTestCache(directory)
        let loader = CachingLoader(upstream: http, cache: cache)
        let url = origin.url("late.mp4")

        // A player: reads the head, leaves for the index, comes back to the media.
        let head = loader.read(url, range: .all)
        var iterator = head.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.fingerprint == file.prefix(first.count).fingerprint)
        head.cancel()
        // The tail was asked for without anyone reading it.
        #expect(await eventually() { origin.server.statistics.requests.contains { $0.range == "bytes=\(mdatEnd)-\(file.count - 1)" } })
        #expect(loader.statistics.indexPrefetches == 1)
        #expect((try await loader.data(url, range: ByteRange(offset: mdatEnd))).fingerprint == (file.suffix(from: Int(mdatEnd))).fingerprint)
        // The head went on downloading after the player left, up to its limit.
        // (The range from byte 0: the index's range may be cached first and alone.)
        let head0 = { cache.cachedRanges(for: url).first { $0.lowerBound == 0 } }
        #expect(await eventually() { (head0()?.upperBound ?? 0) >= 1 << 20 }, "cached: \(cache.cachedRanges(for: url))")
        #expect(head0().map { $0.upperBound < mdatEnd } == true, "cached: \(cache.cachedRanges(for: url))")
        let requestsBefore = origin.server.statistics.requestCount
        #expect((try await loader.data(url, range: ByteRange(offset: 32, length: 500_000))).fingerprint == (file.subdata(in: 32..<500_032)).fingerprint)
        #expect(origin.server.statistics.requestCount == requestsBefore)
        #expect(cache.contentInformation(for: url) != nil)
        #expect(cache.lease(url).metadataAndRelease()?.mp4IndexOffset == mdatEnd)
    }

    @Test func theLayoutOfTheHeadIsRecognised() {
        let late = mp4WithIndexAtEnd(mediaBytes: 5000, indexBytes: 300)
        #expect(MP4Layout.examine(head: late.prefix(64), length: Int64(late.count)) == .indexAfterMedia(offset: 5032))
        #expect(MP4Layout.examine(head: late.prefix(32), length: nil) == .indexAfterMedia(offset: 5032))
        #expect(MP4Layout.examine(head: late.prefix(30), length: nil) == .undetermined)
        #expect(MP4Layout.examine(head: late.prefix(5032), length: 5032) == .indexFirst)
        #expect(MP4Layout.examine(head: Data("not an mp4 at all".utf8), length: nil) == .notMP4)
        var early = Data([0, 0, 0, 16]) + Data("ftypisom".utf8) + Data([0, 0, 0, 0])
        early += Data([0, 0, 0, 8]) + Data("moov".utf8)
        #expect(MP4Layout.examine(head: early, length: nil) == .indexFirst)
        // 64-bit sizes.
        var large = Data([0, 0, 0, 16]) + Data("ftypisom".utf8) + Data([0, 0, 0, 0])
        large += Data([0, 0, 0, 1]) + Data("mdat".utf8) + Data([0, 0, 0, 0, 0, 0, 0x10, 0])
        #expect(MP4Layout.examine(head: large, length: 100_000) == .indexAfterMedia(offset: 16 + 4096))
    }
}
