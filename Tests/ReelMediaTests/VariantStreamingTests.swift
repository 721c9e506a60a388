import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
import ReelMedia
import ReelTestSupport
import Synchronization
import Testing

/// Starting an HLS master on the variant the network can carry: the fake loader delivers a
/// warm-up resource at a scripted rate on a manual clock, the feed's bandwidth meter measures
/// it, and the master then opens only the variant that fits 0.7 of the estimate.
@Suite struct VariantStreamingTests {
    static let base = URL(string: "https://origin.example/ladder/")!
    static let warmUp = URL(string: "https://origin.example/warm-up.bin")!

    /// The estimate the meter reaches after the fake delivered 1 MB at `bytesPerSecond`
    /// (none when `nil`), then `entry` (an HLS master or a DASH manifest, served with the
    /// ladder at `base`) decoded through the variant choice.
    static func play(_ ladder: StreamLadder, warmUpBytesPerSecond: Int64?, base: URL = base,
                     entry: String = "master.m3u8") async throws
        -> (md5s: [String], requested: [URL], choice: VariantChoice?, estimate: BandwidthEstimate) {
        let clock = ManualClock()
        let meter = BandwidthMeter(clock: clock)
        let fake = FakeResourceLoader(clock: clock)
        fake.setTransferListener(meter)
        ladder.serve(on: fake, at: base)
        if let rate = warmUpBytesPerSecond {
            fake.add(Data(count: 1_000_000), at: warmUp)
            fake.setScript(.init(latency: seconds(0.04), bytesPerSecond: rate, chunkSize: 32 * 1024), for: warmUp)
            let stream = fake.read(warmUp, range: .all)
            // The fake delivers inside the clock's actions: the warm-up runs here, in simulated time.
            let measured = clock.runUntil { meter.bandwidthEstimate.source == .measured }
            stream.cancel()
            try #require(measured, "the warm-up was not measured: \(meter.bandwidthEstimate)")
        }
        let estimate = meter.bandwidthEstimate
        fake.resetCounts()
        // The stream itself is served at once: the choice is made before any of it is read.
        let loader = VariantSelectingLoader(upstream: fake, bandwidth: meter)
        let master = base.appendingPathComponent(entry)
        let md5s = try await decodedMD5s(master, loader: loader)
        return (md5s, fake.requests.map(\.url), loader.choice(for: master), estimate)
    }

    // Rates (bytes/s) whose estimate × 0.7 admits exactly the expected rendition.
    @Test func startsOnTheVariantTheScriptedBandwidthCarries() async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader()) }
        defer { ladder.remove() }
        let bandwidths = ladder.renditions.map(\.bandwidth)
        #expect(bandwidths == bandwidths.sorted() && Set(bandwidths).count == 3, "\(bandwidths)")
        // Between the middle's and the top's need; and well above the top's.
        let middle = Int64(Double(bandwidths[1]) / 0.7 / 8 * 1.1)
        let high = Int64(Double(bandwidths[2]) / 0.7 / 8 * 1.5)
        #expect(Double(middle * 8) * 0.7 < Double(bandwidths[2]), "the middle rate must not carry the top")
        for (rate, expected) in [(nil, 0), (middle, 1), (high, 2)] as [(Int64?, Int)] {
            let run = try await Self.play(ladder, warmUpBytesPerSecond: rate)
            let clip = ladder.clips[expected]
            let reference = try await offThePool { try referenceFrames(clip).map(\.md5) }
            #expect(run.md5s == reference, "rate \(rate.map(String.init) ?? "unknown"): bit-exact with rendition \(expected)")
            let choice = try #require(run.choice)
            #expect(choice.rank == expected, "\(choice) at \(run.estimate)")
            #expect(choice.bandwidth == bandwidths[expected])
            if rate == nil { #expect(choice.reason == .noEstimate) } else { #expect(choice.reason == .fits) }
            // Only the master and the chosen variant's own files were requested.
            let chosen = ladder.renditions[expected].directory
            for url in run.requested {
                let path = String(url.absoluteString.dropFirst(Self.base.absoluteString.count))
                #expect(path == "master.m3u8" || path.hasPrefix(chosen + "/"), "\(path) read while starting on \(chosen)")
            }
            #expect(run.requested.contains { $0.absoluteString.hasSuffix(chosen + "/index.m3u8") })
        }
    }

    /// The preloader warms an HLS item as the player will open it: the master, the chosen
    /// variant's playlist, its init segment and first segment (the last two side by side);
    /// the first frame then needs no request for any of them.
    @Test func aPreloadedStreamsFirstFrameNeedsNoRequestForWhatWasWarmed() async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader()) }
        defer { ladder.remove() }
        let fake = FakeResourceLoader(script: .init(latency: ms(30)))
        ladder.serve(on: fake, at: Self.base)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-preload-hls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try RangeCache(configuration: .init(directory: directory))
        defer { cache.close() }
        let caching = CachingLoader(upstream: fake, cache: cache)
        // 0.7 × 1.2 × the middle's bandwidth carries the middle one and not the top.
        let estimate = Int64(Double(ladder.renditions[1].bandwidth) / 0.7 * 1.2)
        let variants = VariantSelectingLoader(upstream: caching, bandwidth: FixedBandwidth(bitsPerSecond: estimate))
        let preloader = Preloader(loader: caching, coordinator: PlaybackLoadCoordinator(), variants: variants)
        let master = Self.base.appendingPathComponent("master.m3u8")
        let chosen = ladder.renditions[1].directory
        // The init segment holds its body back until the first segment is asked for: they can
        // only both arrive if they were fetched side by side, however slow the machine is.
        let initSegment = Self.base.appendingPathComponent("\(chosen)/init.mp4")
        let firstSegment = Self.base.appendingPathComponent("\(chosen)/seg-0.m4s")
        fake.setScript(.init(latency: ms(30), fault: .stallAtOffset(0)), for: initSegment)
        preloader.setPreloadQueue([.seconds(2, of: master)])
        // Three watchdogs: on one core beside the whole suite, the preloader had asked for the
        // master and the variant's playlist only, 300 s in (and went on to finish after).
        let sideBySide = await eventually(timeout: hangWatchdog * 3) {
            fake.requests.contains { $0.url == firstSegment } && fake.stalledURLs.contains(initSegment)
        }
        // The stall is lifted for good before the stalled read goes on: on a starved core the
        // init segment may be asked for only after this point, and must not stall then.
        let seen = "asked for \(fake.requests.map(\.url.lastPathComponent)), stalled \(fake.stalledURLs.map(\.lastPathComponent))"
        fake.setScript(.init(latency: ms(30)), for: initSegment)
        fake.resumeStalls()
        #expect(sideBySide, "the first segment was asked for while the init segment was still arriving: \(seen)")
        await preloader.waitUntilIdle()
        #expect(preloader.statistics.completed == [master])
        let warmed: Set<URL> = Set(["master.m3u8", "\(chosen)/index.m3u8", "\(chosen)/init.mp4", "\(chosen)/seg-0.m4s"]
            .map { Self.base.appendingPathComponent($0) })
        #expect(Set(fake.requests.map(\.url)) == warmed)
        #expect(variants.choice(for: master)?.rank == 1)

        fake.resetCounts()
        let first = try await offThePool { () throws -> String? in
            var md5: String?
            _ = try SequentialDecoder.decodeVideo(master, loader: variants, threads: 1) { frame in
                md5 = frame.md5()
                return false
            }
            return md5
        }
        #expect(first == (try referenceFrames(ladder.clips[1]).first?.md5))
        let again = fake.requests.map(\.url).filter { warmed.contains($0) }
        #expect(again.isEmpty, "requested again after the preload: \(again.map(\.path))")
    }
}
