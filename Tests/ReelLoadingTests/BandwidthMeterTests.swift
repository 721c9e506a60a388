import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
import ReelOrigin
import ReelTestSupport
import Synchronization
import Testing

/// Remembers every transfer event, in order, per URL.
final class RecordingTransferListener: TransferListener {
    struct Transfer: Sendable, Hashable {
        var url: URL
        var bytes: Int64 = 0
        var ended = false
    }

    private let state = Mutex<(transfers: [Transfer], violations: [String])>(([], []))

    var transfers: [Transfer] { state.withTrackedLock { $0.transfers } }
    var violations: [String] { state.withTrackedLock { $0.violations } }

    func transferStarted(_ url: URL) {
        state.withTrackedLock { $0.transfers.append(Transfer(url: url)) }
    }

    func bytesTransferred(_ count: Int, url: URL) {
        state.withTrackedLock { state in
            guard let index = state.transfers.lastIndex(where: { $0.url == url && !$0.ended }) else {
                state.violations.append("bytes of \(url.lastPathComponent) outside a transfer")
                return
            }
            state.transfers[index].bytes += Int64(count)
        }
    }

    func transferEnded(_ url: URL) {
        state.withTrackedLock { state in
            guard let index = state.transfers.lastIndex(where: { $0.url == url && !$0.ended }) else {
                state.violations.append("end of \(url.lastPathComponent) without a start")
                return
            }
            state.transfers[index].ended = true
        }
    }
}

private func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1_000_000) }

@Suite struct SlidingPercentileTests {
    @Test func theWeightedMedianOfSamples() {
        var window = SlidingPercentile(maxWeight: 100)
        #expect(window.percentile(0.5) == nil)
        window.add(weight: 1, value: 10)
        window.add(weight: 1, value: 30)
        window.add(weight: 3, value: 20)
        // Ascending: 10 (1), 20 (3), 30 (1): half of 5 is reached at 20.
        #expect(window.percentile(0.5) == 20)
        #expect(window.percentile(0.1) == 10)
        #expect(window.percentile(1) == 30)
    }

    @Test func theOldestSamplesLoseWeightThenLeave() {
        var window = SlidingPercentile(maxWeight: 10)
        window.add(weight: 6, value: 1_000)
        window.add(weight: 6, value: 10)
        // The first keeps weight 4 of 6: the median (5 of 10) is at the cheap sample.
        #expect(window.totalWeight == 10)
        #expect(window.percentile(0.5) == 10)
        window.add(weight: 10, value: 50)
        // Both older ones are gone.
        #expect(window.percentile(0) == 50)
        #expect(window.totalWeight == 10)
    }
}

@Suite struct BandwidthMeterTests {
    static let url = URL(string: "https://origin.example/v/seg-0.m4s")!

    @Test func nothingIsKnownUntilEnoughIsMeasured() {
        let clock = ManualClock()
        let meter = BandwidthMeter(clock: clock)
        #expect(meter.bandwidthEstimate == .unknown)
        // 100 kB in 0.5 s: a sample, but neither 2 s nor 512 KiB yet.
        meter.transferStarted(Self.url)
        meter.bytesTransferred(100_000, url: Self.url)
        clock.advance(by: seconds(0.5))
        meter.transferEnded(Self.url)
        #expect(meter.bandwidthEstimate.bitsPerSecond == nil)
        #expect(meter.bandwidthEstimate.samples == 1)
        // 1.5 s more of transfers: 2 s measured, the median of the two.
        meter.transferStarted(Self.url)
        meter.bytesTransferred(300_000, url: Self.url)
        clock.advance(by: seconds(1.5))
        meter.transferEnded(Self.url)
        let estimate = meter.bandwidthEstimate
        #expect(estimate.source == .measured)
        #expect(estimate.bitsPerSecond == 1_600_000)
    }

    @Test func theInitialEstimateStandsInUntilThen() {
        let clock = ManualClock()
        let meter = BandwidthMeter(configuration: .init(initialBitsPerSecond: 3_000_000), clock: clock)
        #expect(meter.bandwidthEstimate == BandwidthEstimate(bitsPerSecond: 3_000_000, source: .initial))
        meter.transferStarted(Self.url)
        meter.bytesTransferred(1_000_000, url: Self.url)
        clock.advance(by: seconds(1))
        meter.transferEnded(Self.url)
        #expect(meter.bandwidthEstimate == BandwidthEstimate(bitsPerSecond: 8_000_000, source: .measured, samples: 1))
    }

    @Test func overlappingTransfersShareTheirTime() {
        let clock = ManualClock()
        let meter = BandwidthMeter(clock: clock)
        let other = URL(string: "https://origin.example/v/seg-1.m4s")!
        // Two transfers of 400 kB each, both during the same second: 800 kB/s together.
        meter.transferStarted(Self.url)
        meter.transferStarted(other)
        meter.bytesTransferred(400_000, url: Self.url)
        meter.bytesTransferred(400_000, url: other)
        clock.advance(by: seconds(1))
        meter.transferEnded(Self.url)
        // The second ends at the same instant: no time of its own, its bytes carried on.
        meter.transferEnded(other)
        #expect(meter.bandwidthEstimate.bitsPerSecond == 6_400_000)
        #expect(meter.recentSamples.count == 1)
    }

    @Test func aSampleWeighsByItsBytes() {
        let clock = ManualClock()
        let meter = BandwidthMeter(clock: clock)
        // Many small slow transfers (latency-bound) and one large fast one: weights are
        // √bytes, so the large one (√4 000 000 = 2000) outweighs 10 × √10 000 = 1000.
        for _ in 0..<10 {
            meter.transferStarted(Self.url)
            meter.bytesTransferred(10_000, url: Self.url)
            clock.advance(by: seconds(0.1))
            meter.transferEnded(Self.url)
        }
        meter.transferStarted(Self.url)
        meter.bytesTransferred(4_000_000, url: Self.url)
        clock.advance(by: seconds(1))
        meter.transferEnded(Self.url)
        // The window holds 2000 of weight: the large sample is all of it.
        #expect(meter.bandwidthEstimate.bitsPerSecond == 32_000_000)
    }

    @Test func theFakeLoaderAtAScriptedRateIsMeasuredAtThatRate() async throws {
        let clock = ManualClock()
        let meter = BandwidthMeter(clock: clock)
        let fake = FakeResourceLoader(clock: clock, script: .init(latency: seconds(0.05), bytesPerSecond: 250_000, chunkSize: 16 * 1024))
        fake.setTransferListener(meter)
        fake.add(Data(count: 750_000), at: Self.url)
        let stream = fake.read(Self.url, range: .all)
        // 0.05 s of latency (not measured) and 3 s of body, all delivered by the clock's
        // actions: the whole transfer runs here, in simulated time, with no thread to wait for.
        let measured = clock.runUntil { meter.bandwidthEstimate.source == .measured }
        guard measured else {
            stream.cancel()
            Issue.record("not measured: \(meter.bandwidthEstimate), clock at \(clock.now)")
            return
        }
        #expect(try await stream.collect().count == 750_000)
        #expect(meter.bandwidthEstimate.bitsPerSecond == 2_000_000)
    }

    @Test func cacheHitsAreNotMeasured() async throws {
        let directory = try TemporaryDirectory("reel-meter-cache")
        defer { directory.remove() }
        let cache = try makeTestCache(directory)
        defer { cache.close() }
        let recorder = RecordingTransferListener()
        let fake = FakeResourceLoader()
        fake.setTransferListener(recorder)
        fake.add(LoaderContract.pattern(count: 300_000, seed: 7), at: Self.url)
        let loader = CachingLoader(upstream: fake, cache: cache)
        _ = try await loader.data(Self.url)
        let network = recorder.transfers.reduce(0) { $0 + $1.bytes }
        #expect(network >= 300_000)
        _ = try await loader.data(Self.url)
        #expect(recorder.transfers.reduce(0) { $0 + $1.bytes } == network, "the warm read came from the cache")
        #expect(recorder.violations.isEmpty)
    }
}

/// The fake loader and the HTTP loader over ReelOrigin report the same transfers for the
/// same reads: one start and one end per response body, every body byte in between.
@Suite struct TransferReportingContractTests {
    static let files: [String: Data] = [
        "small.bin": LoaderContract.pattern(count: 1_000, seed: 1),
        "large.bin": LoaderContract.pattern(count: 700_000, seed: 2),
    ]

    /// Each read's (name, range) and what the listener heard of it.
    static func run(_ loader: any ResourceLoader, url: (String) -> URL, recorder: RecordingTransferListener) async throws -> [String] {
        _ = try await loader.data(url("small.bin"))
        _ = try await loader.data(url("large.bin"), range: ByteRange(offset: 100_000, length: 200_000))
        _ = try await loader.data(url("large.bin"))
        let finished = recorder.transfers.map { "\($0.url.lastPathComponent) ended=\($0.ended)" }
        // A cancelled read ends its transfer too (if its body had started: the fake's had, at
        // once; the origin's may not have).
        let stream = loader.read(url("large.bin"), range: .all)
        _ = try await stream.contentInformation()
        stream.cancel()
        _ = await eventually() { recorder.transfers.allSatisfy(\.ended) }
        let allEnded = recorder.transfers.allSatisfy { $0.ended }
        #expect(allEnded)
        #expect(recorder.transfers.count <= 4)
        return finished
    }

    @Test func theFakeAndTheRealLoaderReportAlike() async throws {
        let fakeRecorder = RecordingTransferListener()
        let fake = FakeResourceLoader()
        fake.setTransferListener(fakeRecorder)
        let base = URL(string: "https://fake.example/m/")!
        for (name, data) in Self.files { fake.add(data, at: base.appendingPathComponent(name)) }
        let fakeLog = try await Self.run(fake, url: { base.appendingPathComponent($0) }, recorder: fakeRecorder)

        let origin = try await TestOrigin(files: Self.files)
        let httpRecorder = RecordingTransferListener()
        // A read timeout long past any stall: a starved core (one core beside the whole suite)
        // once held a body over 30 s, the loader resumed it in a second transfer, and the
        // contract compared two responses with three.
        let http = HTTPLoader(configuration: fastHTTPConfiguration(readTimeout: .seconds(600)), transferListener: httpRecorder)
        let httpLog: [String]
        do {
            httpLog = try await Self.run(http, url: { origin.url($0) }, recorder: httpRecorder)
        } catch {
            await http.shutdown()
            await origin.stop()
            throw error
        }
        await http.shutdown()
        await origin.stop()

        #expect(fakeLog == httpLog)
        #expect(fakeRecorder.violations.isEmpty && httpRecorder.violations.isEmpty)
        // The finished reads' bytes, alike: the whole body of each.
        let fakeBytes = fakeRecorder.transfers.prefix(3).map(\.bytes)
        let httpBytes = httpRecorder.transfers.prefix(3).map(\.bytes)
        #expect(fakeBytes == [1_000, 200_000, 700_000])
        #expect(httpBytes == fakeBytes)
    }
}
