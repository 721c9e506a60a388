import Foundation
import ReelCore
@testable import ReelLoading
import ReelDigest
import ReelTestSupport
import Testing

/// The cache names directories and spans by MD5 (ReelDigest's tests hold the digest itself).
/// These names were made by older Reels (swift-crypto's `Insecure.MD5`, then libavutil's), and
/// are checked against other implementations here, so a cache written before stays valid.
@Suite("Cache names")
struct CacheNameTests {
    @Test func cacheKeysAreNamedAsBefore() {
        #expect(CacheLayout.directoryName(forKey: "https://fake.example/v/legacy.mp4") == Self.legacyDirectory)
        #expect(CacheLayout.directoryName(forKey: "https://例え.jp/動画/1.mp4?t=ü") == "346b9ba7815b493eaac5c95e5be6abf0")
    }

    /// Spans the cache writes today carry the MD5 `md5sum` computes of their bytes.
    @Test func spanNamesAgreeWithMd5sum() async throws {
        let md5sum = URL(fileURLWithPath: "/usr/bin/md5sum")
        guard FileManager.default.isExecutableFile(atPath: md5sum.path) else { return }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = LoaderContract.pattern(count: 300_000, seed: 5)
        let (_, cache, loader) = try makeFakeStack(directory, files: ["a": bytes])
        _ = try await loader.data(fakeURL("a"))
        cache.close()
        let resource = directory.path + "/media/" + CacheLayout.directoryName(forKey: fakeURL("a").absoluteString)
        let spans = POSIXFile.list(resource).filter { $0.hasSuffix(".span") }
        #expect(!spans.isEmpty)
        for span in spans {
            // md5sum is waited for on a thread of its own, not on the concurrency pool.
            let text = try await offThePool { () throws -> String in
                let process = Process()
                process.executableURL = md5sum
                process.arguments = [resource + "/" + span]
                let output = Pipe()
                process.standardOutput = output
                try process.run()
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                _ = process.waitForEndBlocking()
                return text
            }
            let digest = try #require(CacheLayout.parseSpanName(span)?.digest)
            #expect(text.hasPrefix(digest + " "), "\(span): md5sum says \(text)")
        }
    }

    /// A cache as an older Reel left it on disk (names made by swift-crypto's MD5): it opens,
    /// verifies clean, and serves its bytes without asking the origin.
    @Test func aCacheWrittenBeforeStaysValid() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = URL(string: "https://fake.example/v/legacy.mp4")!
        let resource = directory.path + "/media/" + Self.legacyDirectory
        try FileManager.default.createDirectory(atPath: resource, withIntermediateDirectories: true)
        let metadata = CacheMetadata(
            key: url.absoluteString, url: url,
            information: ContentInformation(length: Int64(Self.legacyBytes.count), contentType: "video/mp4"),
            now: Date(timeIntervalSince1970: 1_800_000_000))
        try metadata.encoded().write(to: URL(fileURLWithPath: resource + "/meta.json"))
        try Self.legacyBytes.write(to: URL(fileURLWithPath: resource + "/0-200000-\(Self.legacyDigest).span"))

        #expect(RangeCache.inspect(directory: directory.url, verifyContents: true).isClean)
        let fake = FakeResourceLoader(clock: HostClock.shared, script: .instant)
        let cache = try makeTestCache(directory)
        defer { cache.close() }
        let loader = CachingLoader(upstream: fake, cache: cache)
        #expect(cache.summary(for: url)?.area == .media)
        let read = try await loader.data(url)
        #expect(read.fingerprint == Self.legacyBytes.fingerprint)
        #expect(fake.requestCount == 0)
    }

    static let legacyDirectory = "d0ac263800fdabd763ba67ac7910649e"
    static let legacyBytes = Data((0..<200_000).map { UInt8(($0 * 7 + 3) % 251) })
    static let legacyDigest = "40f3587844b8c6bce33ce9248a561ebb"
}
