import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
import ReelTestSupport
import Synchronization
import Testing

@Suite struct VariantChoiceTests {
    static let master = """
    #EXTM3U
    #EXT-X-VERSION:7
    #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="lo",NAME="en",URI="audio/lo.m3u8"
    #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="en",URI="audio/hi.m3u8"
    #EXT-X-STREAM-INF:BANDWIDTH=2400000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="hi"
    mid/index.m3u8
    #EXT-X-STREAM-INF:BANDWIDTH=600000,AVERAGE-BANDWIDTH=500000,RESOLUTION=640x360,AUDIO="lo"
    low/index.m3u8
    #EXT-X-STREAM-INF:BANDWIDTH=6000000,RESOLUTION=1920x1080,AUDIO="hi"
    https://cdn.example/high/index.m3u8
    #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="low/iframes.m3u8"

    """
    static let url = URL(string: "https://origin.example/s/master.m3u8")!

    @Test func readsTheVariantsAndTheirAttributes() throws {
        let playlist = try #require(HLSMasterPlaylist(Data(Self.master.utf8)))
        #expect(playlist.variants.map(\.bandwidth) == [2_400_000, 600_000, 6_000_000])
        #expect(playlist.variants[0].codecs == "avc1.64001f,mp4a.40.2")
        #expect(playlist.variants[1].averageBandwidth == 500_000)
        #expect(playlist.variants[1].groups == ["lo"])
        #expect(playlist.variants[2].height == 1080)
        // A media playlist is not a master.
        #expect(HLSMasterPlaylist(Data("#EXTM3U\n#EXTINF:1,\nseg-0.ts\n".utf8)) == nil)
        #expect(HLSMasterPlaylist(Data("not a playlist".utf8)) == nil)
    }

    /// An audio-only variant (as packagers list one for a link too slow for any picture) is
    /// never where a player with nothing measured starts, nor a rung of the video ladder.
    @Test func anAudioOnlyVariantIsNotChosen() throws {
        let text = """
        #EXTM3U
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="main",DEFAULT=YES,URI="a/index.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=1725900,RESOLUTION=640x360,CODECS="avc1.42c01e,mp4a.40.2",AUDIO="aud"
        v0/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=405900,RESOLUTION=320x180,CODECS="avc1.42c00d,mp4a.40.2",AUDIO="aud"
        v1/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=75900,CODECS="mp4a.40.2",AUDIO="aud"
        a/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=64000,AUDIO="aud"
        a/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=70000,CODECS="mp4a.40.2,ec-3"
        other-audio.m3u8

        """
        let master = try #require(HLSMasterPlaylist(Data(text.utf8)))
        #expect(master.videoVariants.map(\.uri) == ["v0/index.m3u8", "v1/index.m3u8"])
        #expect(master.sharedAudioRendition?.uri == "a/index.m3u8")
        let (chosen, choice) = VariantPolicy().choose(from: master, url: Self.url, base: Self.url, estimate: .unknown)
        #expect(chosen.uri == "v1/index.m3u8", "the lowest with a picture")
        #expect(choice.count == 2)
        // Sound alone: every variant is a choice.
        let audioOnly = try #require(HLSMasterPlaylist(Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=64000,CODECS=\"mp4a.40.2\"\nlo.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=128000,CODECS=\"mp4a.40.2\"\nhi.m3u8\n".utf8)))
        #expect(audioOnly.videoVariants.count == 2)
        #expect(audioOnly.sharedAudioRendition == nil)
    }

    @Test(arguments: [
        (nil, 600_000, VariantChoice.Reason.noEstimate),
        (500_000, 600_000, .noneFits),
        (3_500_000, 2_400_000, .fits),   // 0.7 × 3.5 M = 2.45 M
        (3_400_000, 600_000, .fits),     // 0.7 × 3.4 M = 2.38 M: the middle one no longer fits
        (9_000_000, 6_000_000, .fits),
    ] as [(Int64?, Int64, VariantChoice.Reason)])
    func choosesTheHighestThatFitsTheSafetyFraction(_ estimate: Int64?, _ expected: Int64, _ reason: VariantChoice.Reason) throws {
        let playlist = try #require(HLSMasterPlaylist(Data(Self.master.utf8)))
        let (variant, choice) = VariantPolicy().choose(from: playlist, url: Self.url, base: Self.url,
                                                       estimate: FixedBandwidth(bitsPerSecond: estimate).bandwidthEstimate)
        #expect(variant.bandwidth == expected)
        #expect(choice.reason == reason)
        #expect(choice.count == 3)
        #expect(!choice.why.isEmpty)
    }

    @Test func aLocalMasterStartsOnTheHighest() throws {
        let playlist = try #require(HLSMasterPlaylist(Data(Self.master.utf8)))
        let local = URL(fileURLWithPath: "/tmp/s/master.m3u8")
        let (variant, choice) = VariantPolicy().choose(from: playlist, url: local, base: local, estimate: .unknown)
        #expect(variant.bandwidth == 6_000_000)
        #expect(choice.reason == .local)
    }

    @Test func theRewrittenMasterNamesOnlyTheChosenVariantAndItsRenditionsAbsolutely() throws {
        let playlist = try #require(HLSMasterPlaylist(Data(Self.master.utf8)))
        let base = URL(string: "https://cdn2.example/moved/master.m3u8")!
        let low = playlist.variants[1]
        let text = String(decoding: playlist.keeping(low, base: base), as: UTF8.self)
        #expect(text.contains("https://cdn2.example/moved/low/index.m3u8"))
        #expect(text.contains("URI=\"https://cdn2.example/moved/audio/lo.m3u8\""))
        #expect(!text.contains("mid/") && !text.contains("high/") && !text.contains("audio/hi") && !text.contains("iframes"))
        let again = try #require(HLSMasterPlaylist(Data(text.utf8)))
        #expect(again.variants.count == 1)
        #expect(again.variants[0].bandwidth == 600_000)
    }

    @Test func theLoaderAnswersAMasterWithItsChoiceOnceAndPassesEverythingElse() async throws {
        let fake = FakeResourceLoader()
        fake.add(Data(Self.master.utf8), at: Self.url)
        let media = Self.url.deletingLastPathComponent().appendingPathComponent("low/index.m3u8")
        let mediaText = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nseg-0.ts\n#EXT-X-ENDLIST\n"
        fake.add(Data(mediaText.utf8), at: media)
        let segment = Self.url.deletingLastPathComponent().appendingPathComponent("low/seg-0.ts")
        fake.add(Data(count: 5000), at: segment)

        let loader = VariantSelectingLoader(upstream: fake, bandwidth: FixedBandwidth(bitsPerSecond: 1_000_000))
        let heard = Mutex<[VariantChoice]>([])
        loader.addObserver { choice in heard.withTrackedLock { $0.append(choice) } }
        let first = try await loader.data(Self.url)
        let text = String(decoding: first, as: UTF8.self)
        #expect(text.contains("https://origin.example/s/low/index.m3u8"))
        #expect(!text.contains("mid/index.m3u8"))
        // Later reads, whole or in part, see the same bytes without asking the origin again.
        #expect(try await loader.data(Self.url) == first)
        #expect(try await loader.data(Self.url, range: ByteRange(offset: 10, length: 20)) == first.subdata(in: 10..<30))
        #expect(try await loader.contentInformation(for: Self.url).length == Int64(first.count))
        #expect(fake.requests.filter { $0.url == Self.url }.count == 1)
        #expect(heard.withTrackedLock { $0.map(\.bandwidth) } == [600_000])
        #expect(loader.choice(for: Self.url)?.variantURL == media)

        // A media playlist and a segment pass through, each one request.
        #expect(try await loader.data(media) == Data(mediaText.utf8))
        #expect(try await loader.data(segment).count == 5000)
        #expect(fake.requests.filter { $0.url == media }.count == 1)
        #expect(heard.withTrackedLock { $0.count } == 1)
        // A missing playlist is the loader's notFound, as before.
        let missing = Self.url.deletingLastPathComponent().appendingPathComponent("gone.m3u8")
        await #expect(throws: ResourceLoaderError.notFound(url: missing)) { try await loader.data(missing) }
    }

    /// The player probes a master's headers, then the demuxer reads it; the preloader may read
    /// it meanwhile. All of them share one upstream request and one choice, however slowly the
    /// body comes (here 50 ms before the headers and the body at 2 kB/s: the probe's headers
    /// arrive long before the document is whole).
    @Test func overlappingReadsAndTheProbeShareOneRequest() async throws {
        let fake = FakeResourceLoader(script: .init(latency: MediaTime(value: 50, timescale: 1000), bytesPerSecond: 2_000, chunkSize: 64))
        fake.add(Data(Self.master.utf8), at: Self.url)
        let loader = VariantSelectingLoader(upstream: fake, bandwidth: FixedBandwidth(bitsPerSecond: 1_000_000))
        let heard = Mutex(0)
        loader.addObserver { _ in heard.withTrackedLock { $0 += 1 } }
        async let preloaded = loader.data(Self.url)
        let information = try await loader.contentInformation(for: Self.url)
        let read = try await loader.data(Self.url)
        #expect(information.length == Int64(read.count), "the probe tells the length of what is served")
        #expect(try await preloaded == read)
        #expect(String(decoding: read, as: UTF8.self).contains("low/index.m3u8"))
        #expect(fake.requests.filter { $0.url == Self.url }.count == 1, "\(fake.requests.map(\.url))")
        #expect(heard.withTrackedLock { $0 } == 1)
    }

    /// A reader that leaves ends the shared read only when it was the last one: the next
    /// read starts afresh and still gets the whole document.
    @Test func theLastReaderToLeaveEndsTheSharedRead() async throws {
        let fake = FakeResourceLoader(script: .init(latency: MediaTime(value: 20, timescale: 1000), fault: .stallAtOffset(100)))
        fake.add(Data(Self.master.utf8), at: Self.url)
        let loader = VariantSelectingLoader(upstream: fake, bandwidth: nil)
        let stream = loader.read(Self.url, range: .all)
        #expect(await eventually() { fake.activeRequestCount == 1 })
        stream.cancel()
        #expect(await eventually() { fake.activeRequestCount == 0 }, "the abandoned read is cancelled")
        fake.setDefaultScript(.init())
        let whole = try await loader.data(Self.url)
        #expect(String(decoding: whole, as: UTF8.self).contains("low/index.m3u8"))
        #expect(fake.requests.filter { $0.url == Self.url }.count == 2)
    }
}

@Suite("VariantSelectingLoader contract")
struct VariantSelectingLoaderContractTests {
    struct Subject: LoaderContractSubject {
        func makeFixture(serving resources: [String: Data]) async throws -> LoaderFixture {
            let fake = FakeResourceLoader()
            let base = URL(string: "https://fake.example/media/")!
            // Served under playlist names too, so the contract runs through the inspecting path.
            for (name, data) in resources {
                fake.add(data, at: base.appendingPathComponent(name))
                fake.add(data, at: base.appendingPathComponent(name + ".m3u8"))
            }
            let loader = VariantSelectingLoader(upstream: fake, bandwidth: nil)
            return LoaderFixture(
                loader: loader, url: { base.appendingPathComponent($0 + ".m3u8") },
                missingURL: base.appendingPathComponent("missing.m3u8"), reportsLength: true, tearDown: {})
        }
    }

    @Test(arguments: LoaderContract.checks)
    func keepsTheContract(_ check: LoaderContract.Check) async throws {
        try await check.run(against: Subject())
    }
}
