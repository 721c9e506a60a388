import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing

/// A read past the head of a resource of unknown length, while another read is still
/// downloading the head, ends where the resource ends (it once looped there forever).
@Suite struct CacheSeekProbe {
    @Test func aTailReadOfAnUnknownLengthResourceEndsAtItsEnd() async throws {
        let file = try Fixtures.clip(ClipSpec(width: 320, height: 240, duration: 3, container: .mp4MoovAtEnd, bitRateKbps: 1200))
        let data = try Data(contentsOf: file)
        let origin = FakeResourceLoader(clock: HostClock.shared, script: .init(latency: MediaTime(value: 20, timescale: 1000), bytesPerSecond: 2_500_000, chunkSize: 16 * 1024))
        let url = URL(string: "https://origin.example/clip.mp4")!
        origin.add(data, at: url, reportsLength: false)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try RangeCache(configuration: .init(directory: directory))
        defer { cache.close() }
        let loader = CachingLoader(upstream: origin, cache: cache)
        let head = loader.read(url, range: ByteRange(offset: 0))
        _ = try await head.contentInformation()
        var got = 0
        for try await chunk in head { got += chunk.count; if got > 60_000 { break } }
        head.cancel()
        let tailStart = data.count - 3000
        let tail = loader.read(url, range: ByteRange(offset: Int64(tailStart)))
        let bytes = try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask { try await tail.collect() }
            group.addTask { try await Task.sleep(nanoseconds: 3_000_000_000); return nil }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        #expect(bytes == data.suffix(3000))
    }
}
