import Foundation
import ReelCore
import ReelStreaming
import ReelLoading
import ReelMedia
import ReelTestSupport
import Synchronization
import Testing

/// The head start: once a playlist is read, what FFmpeg's HLS demuxer opens next one round
/// trip after another (a master's playlists; a media playlist's init segment and first
/// segment) is requested at once, side by side, behind the closed door, and handed whole to
/// the demuxer's open of the same URL. The fake loader runs on a manual clock that never
/// moves: its stalls, not time, show what was asked for before the demuxer could ask.
@Suite struct HLSHeadStartTests {
    static let base = URL(string: "https://origin.example/head-start/")!

    /// How many times each URL was requested.
    static func counts(_ fake: FakeResourceLoader) -> [URL: Int] {
        Dictionary(grouping: fake.requests, by: \.url).mapValues(\.count)
    }

    /// Plays `item` through `loader` (the fake itself unless given) with `initSegment` holding
    /// its body back: the demuxer is stuck reading it, so a request for `firstSegment`
    /// meanwhile can only be the head start. Whether that request came, and the frames played.
    static func playWithTheInitStalled(_ item: URL, initSegment: URL, firstSegment: URL, fake: FakeResourceLoader,
                                       loader: (any ResourceLoader)? = nil) async throws -> (sideBySide: Bool, played: [String]) {
        fake.setScript(.init(fault: .stallAtOffset(0)), for: initSegment)
        let playing = Task { try await decodedMD5s(item, loader: loader ?? fake) }
        let sideBySide = await eventually {
            fake.stalledURLs.contains(initSegment) && fake.requests.contains { $0.url == firstSegment }
        }
        fake.resumeStalls()
        return (sideBySide, try await playing.value)
    }

    @Test func theInitAndFirstSegmentAreRequestedSideBySideAndEachOnlyOnce() async throws {
        let stream = try PackagedStream.make(.hlsFMP4)
        defer { stream.remove() }
        let reference = try referenceFrames(stream.clip).map(\.md5)
        let fake = FakeResourceLoader(clock: ManualClock())
        stream.serve(on: fake, at: Self.base)
        let item = Self.base.appendingPathComponent("index.m3u8")
        let (initSegment, firstSegment) = (Self.base.appendingPathComponent("init.mp4"), Self.base.appendingPathComponent("seg-0.m4s"))
        let (sideBySide, played) = try await Self.playWithTheInitStalled(item, initSegment: initSegment, firstSegment: firstSegment, fake: fake)
        #expect(sideBySide, "the first segment was requested while the init segment was still arriving: \(fake.requests.map(\.url.lastPathComponent))")
        #expect(played == reference, "bit-exact: \(played.count) frames vs \(reference.count)")
        // Handed over whole: nothing was asked for twice.
        let counts = Self.counts(fake)
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts.map { "\($0.key.lastPathComponent) ×\($0.value)" })")
        #expect(Set(counts.keys).isSuperset(of: [item, initSegment, firstSegment]))
        #expect(fake.activeRequestCount == 0, "no read is left behind")
    }

    /// A DASH item gets the same head start through the same reads ahead: once the manifest is
    /// translated, the video's init and first segment are requested side by side, each once, and
    /// the demuxer's opens take them.
    @Test func aDASHItemsInitAndFirstSegmentStartSideBySideThroughTheSameReadsAhead() async throws {
        let stream = try await offThePool { try PackagedStream.make(.dash) }
        defer { stream.remove() }
        let reference = try await offThePool { try ffmpegFrameMD5s(stream.manifest) }
        let fake = FakeResourceLoader(clock: ManualClock())
        stream.serve(on: fake, at: Self.base)
        let item = Self.base.appendingPathComponent("manifest.mpd")
        let (initSegment, firstSegment) = (Self.base.appendingPathComponent("init-0.m4s"),
                                           Self.base.appendingPathComponent("chunk-0-00001.m4s"))
        let (sideBySide, played) = try await Self.playWithTheInitStalled(item, initSegment: initSegment, firstSegment: firstSegment, fake: fake)
        #expect(sideBySide, "the first segment was requested while the init segment was still arriving: \(fake.requests.map(\.url.lastPathComponent))")
        #expect(played == reference, "bit-exact: \(played.count) frames vs \(reference.count)")
        let counts = Self.counts(fake)
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts.map { "\($0.key.lastPathComponent) ×\($0.value)" })")
        #expect(fake.activeRequestCount == 0, "no read is left behind")
    }

    /// Byte ranges of one file (`#EXT-X-MAP:…,BYTERANGE=` and `#EXT-X-BYTERANGE:`): the init
    /// section's range and the first segment's are started exactly as the demuxer asks for them
    /// (its `offset`/`end_offset`), so each range is requested once.
    @Test func byteRangePartsStartAtTheirExactRanges() async throws {
        let stream = try PackagedStream.make(.hlsFMP4)
        defer { stream.remove() }
        let reference = try referenceFrames(stream.clip).map(\.md5)
        let segments = stream.files.keys.filter { $0.hasSuffix(".m4s") }
            .sorted { Int($0.dropFirst(4).dropLast(4))! < Int($1.dropFirst(4).dropLast(4))! }
        #expect(segments.count >= 2)
        var whole = stream.files["init.mp4"]!
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:2", "#EXT-X-PLAYLIST-TYPE:VOD",
                     "#EXT-X-MAP:URI=\"all.mp4\",BYTERANGE=\"\(whole.count)@0\""]
        var ranges: [ByteRange] = [ByteRange(offset: 0, length: Int64(whole.count))]
        for name in segments {
            let data = stream.files[name]!
            ranges.append(ByteRange(offset: Int64(whole.count), length: Int64(data.count)))
            lines += ["#EXTINF:1.0,", "#EXT-X-BYTERANGE:\(data.count)@\(whole.count)", "all.mp4"]
            whole.append(data)
        }
        lines.append("#EXT-X-ENDLIST")
        let fake = FakeResourceLoader(clock: ManualClock())
        let item = Self.base.appendingPathComponent("ranges.m3u8")
        let file = Self.base.appendingPathComponent("all.mp4")
        fake.add(Data((lines.joined(separator: "\n") + "\n").utf8), at: item)
        fake.add(whole, at: file)
        // The first request of the file (the init section's range) holds its body back.
        fake.enqueueScripts([.init(fault: .stallAtOffset(0))], for: file)
        let playing = Task { try await decodedMD5s(item, loader: fake) }
        let sideBySide = await eventually {
            fake.stalledURLs == [file] && fake.requests.contains { $0.url == file && $0.range == ranges[1] }
        }
        fake.resumeStalls()
        #expect(sideBySide, "the first segment's range was requested while the init section's was arriving: \(fake.requests.map(\.range))")
        let played = try await playing.value
        #expect(played == reference)
        let fileReads = fake.requests.filter { $0.url == file }.map(\.range)
        #expect(Array(fileReads.prefix(2)) == Array(ranges.prefix(2)))
        #expect(Set(fileReads).count == fileReads.count, "a range asked for twice: \(fileReads)")
        #expect(fake.activeRequestCount == 0)
    }

    /// A master's playlists are read side by side (FFmpeg reads every one before anything else),
    /// and each one's init and first segment start as soon as it arrives.
    @Test func aMastersPlaylistsAreRequestedSideBySide() async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader()) }
        defer { ladder.remove() }
        let fake = FakeResourceLoader(clock: ManualClock())
        ladder.serve(on: fake, at: Self.base)
        let master = Self.base.appendingPathComponent("master.m3u8")
        let playlists = ladder.renditions.map { Self.base.appendingPathComponent("\($0.directory)/index.m3u8") }
        #expect(playlists.count == 3)
        fake.setScript(.init(fault: .stallAtOffset(0)), for: playlists[0])
        let playing = Task { try await decodedMD5s(master, loader: fake) }
        let sideBySide = await eventually {
            fake.stalledURLs.contains(playlists[0]) && playlists.allSatisfy { playlist in fake.requests.contains { $0.url == playlist } }
        }
        fake.resumeStalls()
        #expect(sideBySide, "every variant's playlist was requested while the first was still arriving")
        let played = try await playing.value
        #expect(!played.isEmpty)
        let counts = Self.counts(fake)
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts.map { "\($0.key.path) ×\($0.value)" })")
        #expect(fake.activeRequestCount == 0, "no read is left behind")
    }

    /// Through the variant chooser the master names one variant: its playlist, then its init
    /// and first segment side by side, each once.
    @Test func theChosenVariantsPartsStartSideBySide() async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader()) }
        defer { ladder.remove() }
        let fake = FakeResourceLoader(clock: ManualClock())
        ladder.serve(on: fake, at: Self.base)
        let estimate = Int64(Double(ladder.renditions[1].bandwidth) / 0.7 * 1.2)
        let variants = VariantSelectingLoader(upstream: fake, bandwidth: FixedBandwidth(bitsPerSecond: estimate))
        let master = Self.base.appendingPathComponent("master.m3u8")
        let chosen = ladder.renditions[1].directory
        let initSegment = Self.base.appendingPathComponent("\(chosen)/init.mp4")
        let firstSegment = Self.base.appendingPathComponent("\(chosen)/seg-0.m4s")
        let (sideBySide, played) = try await Self.playWithTheInitStalled(master, initSegment: initSegment, firstSegment: firstSegment,
                                                                          fake: fake, loader: variants)
        #expect(sideBySide)
        #expect(played == (try referenceFrames(ladder.clips[1]).map(\.md5)))
        let counts = Self.counts(fake)
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts.map { "\($0.key.path) ×\($0.value)" })")
        #expect(counts.keys.allSatisfy { $0 == master || $0.path.contains("/\(chosen)/") })
    }

    /// A playlist whose init section or first segment the closed door refuses: the item fails
    /// naming it, and nothing but the playlist was asked of the loader — not even the parts
    /// that would have been allowed.
    @Test(arguments: ["file:///etc/passwd", "data:video/mp4;base64,AAAA", "pipe:0", "ftp://origin.example/init.mp4",
                      "crypto+https://origin.example/head-start/init.mp4"])
    func aRefusedPartIsNeverRequestedAhead(_ entry: String) async throws {
        let fake = FakeResourceLoader(clock: ManualClock())
        let item = Self.base.appendingPathComponent("refused.m3u8")
        for (map, first) in [(entry, "seg-0.m4s"), ("init.mp4", entry)] {
            fake.resetCounts()
            fake.add(Data("""
                #EXTM3U
                #EXT-X-VERSION:7
                #EXT-X-TARGETDURATION:2
                #EXT-X-PLAYLIST-TYPE:VOD
                #EXT-X-MAP:URI="\(map)"
                #EXTINF:1.0,
                \(first)
                #EXTINF:1.0,
                seg-1.m4s
                #EXT-X-ENDLIST

                """.utf8), at: item)
            var failure: MediaError?
            do { _ = try await decodedMD5s(item, loader: fake) } catch { failure = error as? MediaError }
            guard case .refusedURL = failure else {
                Issue.record("\(entry): expected a refusal, got \(String(describing: failure))")
                continue
            }
            #expect(fake.requests.map(\.url) == [item], "\(entry): \(fake.requests.map(\.url))")
        }
    }

    /// Closing the item while the demuxer is still on the init segment cancels the first
    /// segment's read it started ahead and never took.
    @Test func closingTheItemCancelsTheReadsStartedAhead() async throws {
        let stream = try PackagedStream.make(.hlsFMP4)
        defer { stream.remove() }
        let clock = ManualClock()
        let fake = FakeResourceLoader(clock: clock)
        stream.serve(on: fake, at: Self.base)
        let item = Self.base.appendingPathComponent("index.m3u8")
        let (initSegment, firstSegment) = (Self.base.appendingPathComponent("init.mp4"), Self.base.appendingPathComponent("seg-0.m4s"))
        fake.setScript(.init(fault: .stallAtOffset(0)), for: initSegment)
        fake.setScript(.init(fault: .stallAtOffset(0)), for: firstSegment)
        let player = Player(clock: clock, videoSink: RecordingVideoSink(), audioSink: RecordingAudioSink())
        player.replaceCurrentItem(with: PlayerItem(url: item, loader: fake))
        player.play()
        let started = await eventually { Set(fake.stalledURLs) == [initSegment, firstSegment] }
        #expect(started, "both parts were requested: \(fake.requests.map(\.url.lastPathComponent))")
        #expect(fake.activeRequestCount == 2)
        // Releasing the item returns at once (the engine interrupts the stalled open) …
        await offThePool { player.replaceCurrentItem(with: nil) }
        // … and the read the demuxer never took is cancelled with it, not left on the network.
        let cancelled = await eventually { fake.activeRequestCount == 0 }
        #expect(cancelled, "reads still open after the close: \(fake.activeRequestCount)")
        #expect(Self.counts(fake)[firstSegment] == 1)
    }
}
