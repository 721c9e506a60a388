import Foundation
import ReelCore
import ReelTestSupport
import Testing

private func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }
private let url = URL(string: "https://fake.example/clip.mp4")!
private let bytes = LoaderContract.pattern(count: 10_000, seed: 3)

/// The scripts of the fake, on a manual clock: nothing arrives until the clock
/// moves, then it arrives synchronously.
@Suite struct FakeResourceLoaderTests {
    private func makeLoader(_ script: FakeResourceLoader.Script) -> (FakeResourceLoader, ManualClock) {
        let clock = ManualClock()
        let loader = FakeResourceLoader(clock: clock, script: script)
        loader.add(bytes, at: url, contentType: "video/mp4")
        return (loader, clock)
    }

    @Test func latencyHoldsBackTheInformationAndTheFirstByte() throws {
        let (loader, clock) = makeLoader(.init(latency: ms(40)))
        let stream = loader.read(url, range: .all)
        #expect(stream.receivedContentInformation == nil)
        #expect(stream.isIdle)
        clock.advance(by: ms(39))
        #expect(stream.receivedContentInformation == nil)
        clock.advance(by: ms(1))
        #expect(stream.receivedContentInformation?.length == 10_000)
        #expect(stream.receivedContentInformation?.contentType == "video/mp4")
        #expect(stream.bufferedByteCount == 10_000, "no throughput limit: everything at once")
    }

    @Test func throughputSpreadsTheBytesOverTime() async throws {
        // 1000 bytes per second in 100-byte chunks: one chunk each 100 ms after the latency.
        let (loader, clock) = makeLoader(.init(latency: ms(10), bytesPerSecond: 1000, chunkSize: 100))
        let stream = loader.read(url, range: ByteRange(offset: 0, length: 350))
        clock.advance(by: ms(10))
        #expect(stream.bufferedByteCount == 100)
        clock.advance(by: ms(99))
        #expect(stream.bufferedByteCount == 100)
        clock.advance(by: ms(1))
        #expect(stream.bufferedByteCount == 200)
        clock.advance(by: ms(200))
        #expect(stream.bufferedByteCount == 350)
        // The end comes when the last byte's time is up: 10 ms + 350 bytes at 1000 per second.
        clock.advance(by: ms(50))
        #expect(try await stream.collect() == bytes.prefix(350))
        #expect(loader.bytesServed == 350)
    }

    @Test func failureAtAnOffsetDeliversTheBytesBeforeItThenAnErrorNamingTheRange() async throws {
        let (loader, _) = makeLoader(.init(fault: .failAtOffset(2500)))
        let range = ByteRange(offset: 1000)
        let stream = loader.read(url, range: range)
        var received = Data()
        await #expect(throws: ResourceLoaderError.network(url: url, range: range, reason: "scripted failure at byte 2500")) {
            for try await chunk in stream { received.append(chunk) }
        }
        #expect(received == bytes.subdata(in: 1000..<2500))
    }

    @Test func failureBeforeResponseGivesNoInformation() async throws {
        let (loader, clock) = makeLoader(.init(latency: ms(5), fault: .failBeforeResponse))
        let stream = loader.read(url, range: .all)
        clock.advance(by: ms(5))
        await #expect(throws: ResourceLoaderError.self) { try await stream.contentInformation() }
        #expect(stream.receivedContentInformation == nil)
    }

    @Test func stallHoldsTheRestUntilResumed() async throws {
        let (loader, clock) = makeLoader(.init(fault: .stallAtOffset(4000)))
        let stream = loader.read(url, range: .all)
        #expect(stream.bufferedByteCount == 4000)
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == bytes.prefix(4000))
        #expect(stream.isIdle, "a reader now waits on the stall")
        clock.advance(by: ms(10_000))
        #expect(stream.bufferedByteCount == 0)
        loader.resumeStalls()
        #expect(!stream.isIdle)
        var rest = Data()
        while let piece = try await iterator.next() { rest.append(piece) }
        #expect(rest == bytes.suffix(from: 4000))
    }

    @Test func queuedScriptsApplyToTheNextRequestsInOrder() async throws {
        let (loader, clock) = makeLoader(.instant)
        loader.enqueueScripts([.init(fault: .failBeforeResponse), .init(latency: ms(100))], for: url)
        let first = loader.read(url, range: .all)
        await #expect(throws: ResourceLoaderError.self) { try await first.contentInformation() }
        let second = loader.read(url, range: .all)
        #expect(second.receivedContentInformation == nil)
        clock.advance(by: ms(100))
        #expect(second.receivedContentInformation != nil)
        let third = loader.read(url, range: .all)
        #expect(third.receivedContentInformation != nil, "back to the default script")
    }

    @Test func countsRequestsWithTheirRangesAndTimes() throws {
        let (loader, clock) = makeLoader(.instant)
        _ = loader.read(url, range: ByteRange(offset: 0, length: 10))
        clock.advance(by: ms(25))
        _ = loader.read(url, range: ByteRange(offset: 500))
        #expect(loader.requestCount == 2)
        #expect(loader.requests.map(\.range) == [ByteRange(offset: 0, length: 10), ByteRange(offset: 500)])
        #expect(loader.requests.map(\.time) == [.zero, ms(25)])
        #expect(loader.bytesServed == 10 + 9500)
        loader.resetCounts()
        #expect(loader.requestCount == 0 && loader.bytesServed == 0)
    }

    @Test func cancellingStopsDeliveryAndTheScheduledWork() throws {
        let (loader, clock) = makeLoader(.init(bytesPerSecond: 1000, chunkSize: 100))
        let stream = loader.read(url, range: .all)
        #expect(loader.activeRequestCount == 1)
        stream.cancel()
        #expect(loader.activeRequestCount == 0)
        clock.advance(by: ms(5000))
        #expect(loader.bytesServed == 100, "only the first chunk, delivered before the cancel")
    }

    @Test func replacingAResourceChangesItsEntityTag() async throws {
        let (loader, _) = makeLoader(.instant)
        let before = try await loader.contentInformation(for: url)
        loader.add(Data(bytes.reversed()), at: url)
        let after = try await loader.contentInformation(for: url)
        #expect(before.entityTag != nil)
        #expect(before.entityTag != after.entityTag)
    }

    @Test func sameScriptSameTimeline() throws {
        // Determinism: the same script on the same clock steps gives the same deliveries.
        func run() -> [Int] {
            let (loader, clock) = makeLoader(.init(latency: ms(30), bytesPerSecond: 20_000, chunkSize: 700))
            let stream = loader.read(url, range: .all)
            var sizes: [Int] = []
            for _ in 0..<40 {
                clock.advance(by: ms(13))
                sizes.append(stream.bufferedByteCount)
            }
            return sizes
        }
        let first = run()
        #expect(first.last == 10_000)
        for _ in 0..<5 { #expect(run() == first) }
    }
}
