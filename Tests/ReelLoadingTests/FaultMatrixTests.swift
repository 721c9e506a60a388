import Foundation
import ReelCore
@testable import ReelLoading
import ReelOrigin
import ReelTestSupport
import Testing

/// Every ReelOrigin fault, read through the whole stack (CachingLoader over HTTPLoader):
/// the bytes are the file's or the read fails with a clean ResourceLoaderError, and
/// whatever the cache kept is byte for byte what the origin served under the entity
/// tag the cache recorded.
@Suite("Fault matrix")
struct FaultMatrixTests {
    static let file = LoaderContract.pattern(count: 900_000, seed: 41)

    /// Faults a reader must get through with the right bytes.
    static let survivable: [OriginFault] = [.ignoreRange, .dropMidBody, .fiveHundredFirst, .stallAfterHeaders, .noContentLength]

    @Test(arguments: OriginFault.allCases)
    func playbackGetsTheFileOrACleanErrorAndNothingWrongIsStored(_ fault: OriginFault) async throws {
        let origin = try await TestOrigin(files: ["clip.mp4": Self.file], fault: fault)
        let http = HTTPLoader(configuration: httpConfiguration(for: fault))
        let directory = try TemporaryDirectory()
        defer { Task { await http.shutdown(); await origin.stop(); directory.remove() } }
        let cache = try makeTestCache(directory, segmentSize: 128 * 1024)
        let loader = CachingLoader(upstream: http, cache: cache)
        let url = origin.url("clip.mp4")

        // A player-like pattern: the head, a seek into the middle, then the rest. Each read
        // must give the bytes of the version it reported (with content-changed, the origin
        // serves a new one each time), or fail with a loader error.
        for range in [0..<200_000, 600_000..<700_000, 0..<900_000] {
            let stream = loader.read(url, range: ByteRange(Int64(range.lowerBound)..<Int64(range.upperBound)))
            do {
                let info = try await stream.contentInformation()
                let data = try await stream.collect()
                #expect(data.fingerprint == Self.version(of: info.entityTag).subdata(in: range).fingerprint, "\(fault): wrong bytes for \(range)")
            } catch {
                #expect(error is ResourceLoaderError, "\(fault): \(error) is not a ResourceLoaderError")
                #expect(!Self.survivable.contains(fault), "\(fault) should be survivable, got \(error)")
            }
        }
        try expectCacheHoldsOnlyServedBytes(cache: cache, url: url, fault: fault)
        #expect(RangeCache.inspect(directory: directory.url, verifyContents: true).isClean)

        if Self.survivable.contains(fault) {
            // Warm: the same bytes again, with nothing from the network.
            loader.resetStatistics()
            #expect((try await loader.data(url)).fingerprint == (Self.file).fingerprint)
            #expect(loader.statistics.bytesFromNetwork == 0)
        }
    }

    /// The bytes ReelOrigin serves under `entityTag`: the file, or with content-changed
    /// its version n (tag suffix `-vN`), the file XOR ((n - 2) % 255 + 1).
    static func version(of entityTag: String?) -> Data {
        guard let tag = entityTag, let last = tag.split(separator: "-").last, last.hasPrefix("v"),
              let version = Int(last.dropFirst().dropLast()) else { return file }
        let mask = UInt8((version - 2) % 255 + 1)
        return Data(file.map { $0 ^ mask })
    }

    /// Every cached range equals the origin's bytes for the recorded entity.
    private func expectCacheHoldsOnlyServedBytes(cache: RangeCache, url: URL, fault: OriginFault) throws {
        guard let summary = cache.summary(for: url) else { return }
        let expected = Self.version(of: summary.entityTag)
        let lease = cache.lease(url)
        defer { lease.release() }
        for range in summary.ranges {
            var position = range.lowerBound
            while position < range.upperBound {
                guard case .cached(let path, let offset, let available) = lease.lookup(position) else {
                    Issue.record("\(fault): \(position) is in a cached range but not in a span")
                    return
                }
                let handle = try #require(FileHandle(forReadingAtPath: path))
                try handle.seek(toOffset: UInt64(offset))
                let count = Int(min(available, range.upperBound - position))
                let data = try handle.read(upToCount: count) ?? Data()
                try handle.close()
                #expect(data.fingerprint == expected.subdata(in: Int(position)..<Int(position) + count).fingerprint, "\(fault): cached bytes at \(position) differ from the origin's")
                position += Int64(count)
            }
        }
    }
}
