import Foundation
import ReelCore
import ReelLoading
import ReelStreaming
import ReelTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The estimate one process leaves in the cache directory for the next.
@Suite struct SavedBandwidthEstimateTests {
    static let url = URL(string: "https://origin.example/v/seg-0.m4s")!

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-saved-estimate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func itIsTrustedLessAsItAgesAndNotAtAllWhenStaleOrFromTheFuture() {
        let saved = SavedBandwidthEstimate(bitsPerSecond: 8_000_000, samples: 12, measuredAt: 1_000_000)
        #expect(saved.startingBitsPerSecond(at: 1_000_000) == 8_000_000)
        #expect(saved.startingBitsPerSecond(at: 1_000_000 + SavedBandwidthEstimate.halfLife) == 6_000_000)
        let day = saved.startingBitsPerSecond(at: 1_000_000 + 86_400) ?? 0
        #expect(day > 4_000_000 && day < 4_300_000)
        #expect(saved.startingBitsPerSecond(at: 1_000_000 + SavedBandwidthEstimate.maximumAge + 1) == nil)
        #expect(saved.startingBitsPerSecond(at: 999_000) == nil, "measured in the future: the clock moved back")
        #expect(SavedBandwidthEstimate(bitsPerSecond: 0, samples: 1, measuredAt: 1_000_000).startingBitsPerSecond(at: 1_000_000) == nil)
    }

    @Test func itRoundTripsAndAnythingElseReadsAsNothing() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(SavedBandwidthEstimate.load(from: directory) == nil)
        let saved = SavedBandwidthEstimate(bitsPerSecond: 5_000_000, samples: 3, measuredAt: 1_700_000_000.5)
        try saved.save(to: directory)
        #expect(SavedBandwidthEstimate.load(from: directory) == saved)
        // Only the file itself is left: the temporary one was renamed over it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [SavedBandwidthEstimate.fileName])
        let file = directory.appendingPathComponent(SavedBandwidthEstimate.fileName)
        for damaged in [Data(), Data("{\"bitsPerSecond\":".utf8), Data("{\"bitsPerSecond\":-5,\"samples\":1,\"measuredAt\":1}".utf8),
                        Data(repeating: 0x7B, count: 100_000), Fixtures.garbage(count: 300)] {
            try damaged.write(to: file)
            #expect(SavedBandwidthEstimate.load(from: directory) == nil)
        }
    }

    /// The file is part of the cache directory's layout: `reel cache verify` finds no orphan.
    @Test func aCacheWithASavedEstimateVerifiesClean() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try RangeCache(configuration: .init(directory: directory))
        try SavedBandwidthEstimate(bitsPerSecond: 1_000_000, samples: 2, measuredAt: 1_700_000_000).save(to: directory)
        cache.close()
        let report = RangeCache.inspect(directory: directory, verifyContents: true)
        #expect(report.problems.isEmpty, "\(report.problems)")
    }

    /// A process killed between writing the estimate and renaming it leaves its temporary
    /// file: `verify` counts it as an unfinished write, not as damage, and the next open
    /// removes it once its process is gone, never while it runs.
    @Test func aKilledWritersTemporaryEstimateIsAnUnfinishedWriteTheNextOpenRemoves() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = ".\(SavedBandwidthEstimate.fileName).\(finished.processIdentifier).3141.tmp"
        let live = ".\(SavedBandwidthEstimate.fileName).\(getpid()).2718.tmp"
        let foreign = ".\(SavedBandwidthEstimate.fileName).notapid.tmp"
        for name in [dead, live] { try Data("{\"bitsPerSecond\":".utf8).write(to: directory.appendingPathComponent(name)) }

        let before = RangeCache.inspect(directory: directory, verifyContents: true)
        #expect(before.isClean, "\(before.problems)")
        #expect(before.unfinishedWrites == 2)

        let cache = try RangeCache(configuration: .init(directory: directory))
        cache.close()
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!left.contains(dead), "its process is gone: the next open removed it")
        #expect(left.contains(live), "a running process's file is being written: left alone")
        #expect(RangeCache.inspect(directory: directory, verifyContents: true).unfinishedWrites == 1)

        try Data().write(to: directory.appendingPathComponent(foreign))
        let report = RangeCache.inspect(directory: directory, verifyContents: true)
        #expect(report.problems.map(\.path) == [foreign], "a name the cache never writes is still an orphan")
    }

    @Test func theMeterStartsFromItUnlessGivenAnInitialEstimateAndAMeasurementReplacesIt() {
        let clock = ManualClock()
        var configuration = BandwidthMeter.Configuration()
        configuration.savedBitsPerSecond = 6_000_000
        configuration.savedAge = 120
        let recorded = Mutex<[(Int64, Int)]>([])
        let meter = BandwidthMeter(configuration: configuration, clock: clock, measured: { value, samples in
            recorded.withLock { $0.append((value, samples)) }
        })
        #expect(meter.bandwidthEstimate == BandwidthEstimate(bitsPerSecond: 6_000_000, source: .saved(age: 120)))
        meter.transferStarted(Self.url)
        meter.bytesTransferred(1_000_000, url: Self.url)
        clock.advance(by: MediaTime(value: 1, timescale: 1))
        meter.transferEnded(Self.url)
        #expect(meter.bandwidthEstimate == BandwidthEstimate(bitsPerSecond: 8_000_000, source: .measured, samples: 1))
        #expect(recorded.withLock { $0.map(\.0) } == [8_000_000])
        configuration.initialBitsPerSecond = 1_000_000
        #expect(BandwidthMeter(configuration: configuration, clock: clock).bandwidthEstimate.source == .initial)
    }

    @Test func theStoreWritesTheLatestMeasurement() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = BandwidthEstimateStore(directory: directory, interval: 3600)
        store.record(bitsPerSecond: 1_000_000, samples: 1)
        store.record(bitsPerSecond: 9_000_000, samples: 5)
        await store.flush()
        let saved = try #require(SavedBandwidthEstimate.load(from: directory))
        #expect(saved.bitsPerSecond == 9_000_000 && saved.samples == 5)
        #expect(abs(saved.measuredAt - Date().timeIntervalSince1970) < 600)
        // A flush with nothing new leaves the file as it was.
        try FileManager.default.removeItem(at: directory.appendingPathComponent(SavedBandwidthEstimate.fileName))
        await store.flush()
        #expect(SavedBandwidthEstimate.load(from: directory) == nil)
    }
}
