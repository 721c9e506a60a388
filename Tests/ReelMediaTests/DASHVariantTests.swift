import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
import ReelMedia
import ReelTestSupport
import Testing

/// Starting a DASH manifest on the video Representation the network can carry, by the same
/// rule as HLS masters: the fake loader delivers a warm-up resource at a scripted rate on a
/// manual clock, the meter measures it, and only the chosen Representation is fetched.
@Suite struct DASHVariantTests {
    static let base = URL(string: "https://origin.example/dash-ladder/")!

    /// The warm-up and the decode of the manifest through the variant choice, as for HLS.
    static func play(_ ladder: StreamLadder, warmUpBytesPerSecond: Int64?) async throws
        -> (md5s: [String], requested: [URL], choice: VariantChoice?, estimate: BandwidthEstimate) {
        try await VariantStreamingTests.play(ladder, warmUpBytesPerSecond: warmUpBytesPerSecond, base: base, entry: "manifest.mpd")
    }

    /// Whether `path` (under the ladder) is the kept audio: the first rendition's `a0`, files `*-1*`.
    static func isAudio(_ path: String) -> Bool {
        path.hasPrefix("v0/init-1.") || path.hasPrefix("v0/chunk-1-")
    }

    @Test func startsOnTheRepresentationTheScriptedBandwidthCarries() async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), format: .dash) }
        defer { ladder.remove() }
        let bandwidths = ladder.renditions.map(\.bandwidth)
        #expect(bandwidths == bandwidths.sorted() && Set(bandwidths).count == 3, "\(bandwidths)")
        let parsed = try DASHManifest(Data(contentsOf: ladder.master), url: ladder.master)
        #expect(parsed.videos.map(\.bandwidth) == bandwidths, "the manifest's @bandwidth is the packager's")
        let middle = Int64(Double(bandwidths[1]) / 0.7 / 8 * 1.1)
        let high = Int64(Double(bandwidths[2]) / 0.7 / 8 * 1.5)
        #expect(Double(middle * 8) * 0.7 < Double(bandwidths[2]), "the middle rate must not carry the top")
        for (rate, expected) in [(nil, 0), (middle, 1), (high, 2)] as [(Int64?, Int)] {
            let run = try await Self.play(ladder, warmUpBytesPerSecond: rate)
            let clip = ladder.clips[expected]
            let reference = try await offThePool { try referenceFrames(clip).map(\.md5) }
            #expect(run.md5s == reference, "rate \(rate.map(String.init) ?? "unknown"): bit-exact with representation \(expected)")
            let choice = try #require(run.choice)
            #expect(choice.rank == expected, "\(choice) at \(run.estimate)")
            #expect(choice.bandwidth == bandwidths[expected])
            #expect(choice.representationID == "v\(expected)")
            #expect(choice.resolution == "\(StreamLadder.specs[expected].width)x\(StreamLadder.specs[expected].height)")
            if rate == nil { #expect(choice.reason == .noEstimate) } else { #expect(choice.reason == .fits) }
            // Only the manifest, the chosen Representation's files and the kept audio were requested.
            let chosen = ladder.renditions[expected].directory
            for url in run.requested {
                let path = String(url.absoluteString.dropFirst(Self.base.absoluteString.count))
                #expect(path == "manifest.mpd" || path.hasPrefix(chosen + "/init-0.") || path.hasPrefix(chosen + "/chunk-0-") || Self.isAudio(path),
                        "\(path) read while starting on \(chosen)")
            }
            #expect(run.requested.contains(Self.base.appendingPathComponent(chosen + "/init-0.m4s")))
            #expect(run.requested.contains(Self.base.appendingPathComponent(chosen + "/chunk-0-00001.m4s")))
        }
    }

    /// The preloader warms a DASH item as the player will open it: the manifest (its
    /// Representation chosen), then the chosen video's and the audio's initialization and first
    /// segments side by side; the first frame then needs no request for any of them.
    @Test func aPreloadedManifestsFirstFrameNeedsNoRequestForWhatWasWarmed() async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), format: .dash) }
        defer { ladder.remove() }
        let fake = FakeResourceLoader(script: .init(latency: ms(30)))
        ladder.serve(on: fake, at: Self.base)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-preload-dash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try RangeCache(configuration: .init(directory: directory))
        defer { cache.close() }
        let caching = CachingLoader(upstream: fake, cache: cache)
        let estimate = Int64(Double(ladder.renditions[1].bandwidth) / 0.7 * 1.2)
        let variants = VariantSelectingLoader(upstream: caching, bandwidth: FixedBandwidth(bitsPerSecond: estimate))
        let preloader = Preloader(loader: caching, coordinator: PlaybackLoadCoordinator(), variants: variants)
        let manifest = Self.base.appendingPathComponent("manifest.mpd")
        preloader.setPreloadQueue([.seconds(2, of: manifest)])
        await preloader.waitUntilIdle()
        #expect(preloader.statistics.completed == [manifest])
        let chosen = ladder.renditions[1].directory
        let warmed: Set<URL> = Set(["manifest.mpd", "\(chosen)/init-0.m4s", "\(chosen)/chunk-0-00001.m4s",
                                    "v0/init-1.m4s", "v0/chunk-1-00001.m4s"].map { Self.base.appendingPathComponent($0) })
        #expect(Set(fake.requests.map(\.url)) == warmed)
        #expect(fake.mostActiveRequests >= 2, "the parts were fetched side by side")
        #expect(variants.choice(for: manifest)?.rank == 1)

        fake.resetCounts()
        let first = try await offThePool { () throws -> String? in
            var md5: String?
            _ = try SequentialDecoder.decodeVideo(manifest, loader: variants, threads: 1) { frame in
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
