import Foundation
import ReelCore
@testable import ReelMedia
import ReelStreaming
import ReelLoading
import ReelTestSupport
import Synchronization
import Testing

/// A master whose variants carry video alone beside one audio rendition (as most packagers
/// write a ladder), and a DASH manifest (whose audio is an AdaptationSet of its own): Reel's scheduler joins the rendition's fragmented MP4 with
/// each variant's into one stream (`FragmentedMP4Merge`), and FFmpeg's mov demuxer reads it.
@Suite struct SeparateAudioTests {
    static let specs = [
        ClipSpec(width: 160, height: 120, frameRate: 30, duration: 4, keyframeInterval: 30, bFrames: 3, toneFrequency: 523),
        ClipSpec(width: 320, height: 240, frameRate: 30, duration: 4, keyframeInterval: 30, bFrames: 3, toneFrequency: 523),
    ]
    static let base = URL(string: "https://origin.example/ladder/")!

    /// The engine on the manual clock, reading a fake origin.
    struct Rig {
        let clock: ManualClock
        let loader: FakeResourceLoader
        let video = RecordingVideoSink()
        let audio = RecordingAudioSink()
        let player: Player
        let driver: ManualClockDriver

        init() {
            let clock = ManualClock()
            self.clock = clock
            loader = FakeResourceLoader(clock: clock)
            player = Player(clock: clock, videoSink: video, audioSink: audio)
            driver = ManualClockDriver(clock: clock, players: [player])
        }
    }

    /// FFmpeg's decode of a rendition's init section and segments one after another (written
    /// into `directory`).
    static func decodedFrames(of pieces: (initSection: Data, segments: [Data]), in directory: URL) async throws
        -> [(pts: MediaTime, md5: String)] {
        let file = directory.appendingPathComponent("whole-\(UUID().uuidString).mp4")
        try (pieces.initSection + pieces.segments.reduce(Data(), +)).write(to: file)
        return try await offThePool { try referenceFrames(file) }
    }

    /// A rendition's init section and segments, as its playlist lists them.
    static func pieces(_ ladder: StreamLadder, _ directory: String) throws -> (initSection: Data, segments: [Data]) {
        let playlist = try HLSMediaPlaylist.parse(ladder.files[directory + "/index.m3u8"]!)
        return (ladder.files[directory + "/" + playlist.initSection!.uri]!,
                playlist.segments.map { ladder.files[directory + "/" + $0.uri]! })
    }

    /// Every packet of `file`'s video and audio streams: (is video, pts, size, bytes).
    static func packets(_ file: URL) throws -> [(video: Bool, pts: Int64, size: Int, bytes: Data)] {
        let demuxer = try Demuxer(forTool: file, loader: FileLoaderForTests(), fastStart: false)
        defer { demuxer.close() }
        var packets: [(Bool, Int64, Int, Data)] = []
        while let packet = try demuxer.readPacket() {
            guard packet.streamIndex == demuxer.videoStreamIndex || packet.streamIndex == demuxer.audioStreamIndex else { continue }
            let bytes = Data(bytes: packet.pointer.pointee.data, count: packet.size)
            packets.append((packet.streamIndex == demuxer.videoStreamIndex, packet.pts, packet.size, bytes))
        }
        return packets
    }

    /// The joined stream (audio segments before the video segment they overlap) holds every
    /// packet of the variant and of the audio rendition, as each alone holds them.
    @Test func aJoinedStreamHoldsEveryPacketOfBothRenditions() async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), specs: Self.specs, segmentSeconds: 1, separateAudio: true) }
        defer { ladder.remove() }
        let video = try Self.pieces(ladder, "v0")
        let audio = try Self.pieces(ladder, "a0")
        #expect(audio.segments.count >= 3 && video.segments.count >= 3)
        let merge = try FragmentedMP4Merge(video: video.initSection, audio: audio.initSection)
        var joined = merge.initSection
        for index in 0..<max(video.segments.count, audio.segments.count) {
            if index < audio.segments.count { joined += try merge.audioSegment(audio.segments[index]) }
            if index < video.segments.count { joined += video.segments[index] }
        }
        let files = ["joined": joined, "video": video.initSection + video.segments.reduce(Data(), +),
                     "audio": audio.initSection + audio.segments.reduce(Data(), +)].mapValues { data -> URL in
            let file = ladder.directory.appendingPathComponent("\(UUID().uuidString).mp4")
            try? data.write(to: file)
            return file
        }
        let both = try await offThePool { try Self.packets(files["joined"]!) }
        let videoAlone = try await offThePool { try Self.packets(files["video"]!) }
        let audioAlone = try await offThePool { try Self.packets(files["audio"]!) }
        #expect(!videoAlone.isEmpty && !audioAlone.isEmpty)
        let key = { (packet: (video: Bool, pts: Int64, size: Int, bytes: Data)) in "\(packet.pts) \(packet.bytes.hashValue)" }
        #expect(both.filter(\.video).map(key) == videoAlone.filter(\.video).map(key))
        #expect(both.filter { !$0.video }.map(key) == audioAlone.filter { !$0.video }.map(key))
        let frames = try await offThePool { try referenceFrames(files["joined"]!) }
        let reference = try await offThePool { try referenceFrames(files["video"]!) }
        #expect(frames.map(\.md5) == reference.map(\.md5))
    }

    /// A CMAF ladder's renditions another packager wrote (Eyevinn/mp4ff's combine-segs test data,
    /// MIT; corpus/renditions/mp4ff): joined, every packet of each is there as it is alone; and
    /// served as an HLS master naming the video beside the audio rendition, the engine plays it
    /// through the scheduler, every frame and every sample FFmpeg's decode of the rendition alone.
    @Test func anotherPackagersRenditionsAreJoinedAndPlayed() async throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../corpus/renditions/mp4ff").standardizedFileURL
        let files = try ["A48/init.mp4", "A48/1.m4s", "V300/init.mp4", "V300/1.m4s"].reduce(into: [String: Data]()) {
            $0[$1] = try Data(contentsOf: directory.appendingPathComponent($1))
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-mp4ff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let merge = try FragmentedMP4Merge(video: files["V300/init.mp4"]!, audio: files["A48/init.mp4"]!)
        let joined = merge.initSection + (try merge.audioSegment(files["A48/1.m4s"]!)) + files["V300/1.m4s"]!
        let paths = ["joined": joined, "video": files["V300/init.mp4"]! + files["V300/1.m4s"]!,
                     "audio": files["A48/init.mp4"]! + files["A48/1.m4s"]!].mapValues { data -> URL in
            let file = scratch.appendingPathComponent("\(UUID().uuidString).mp4")
            try? data.write(to: file)
            return file
        }
        let both = try await offThePool { try Self.packets(paths["joined"]!) }
        let key = { (packet: (video: Bool, pts: Int64, size: Int, bytes: Data)) in "\(packet.pts) \(packet.bytes.hashValue)" }
        let videoAlone = try await offThePool { try Self.packets(paths["video"]!) }.filter(\.video).map(key)
        let audioAlone = try await offThePool { try Self.packets(paths["audio"]!) }.filter { !$0.video }.map(key)
        #expect(videoAlone.count == 60 && audioAlone.count > 90)
        #expect(both.filter(\.video).map(key) == videoAlone)
        #expect(both.filter { !$0.video }.map(key) == audioAlone)

        // As a master over HTTP, through the engine.
        let rig = Rig()
        let (loader, video, audio, player, driver) = (rig.loader, rig.video, rig.audio, rig.player, rig.driver)
        let base = URL(string: "https://cdn.example/mp4ff/")!
        for (path, data) in files { loader.add(data, at: base.appendingPathComponent(path)) }
        func playlist(_ directory: String) -> Data {
            Data("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:2.0,\n1.m4s\n#EXT-X-ENDLIST\n".utf8)
        }
        loader.add(playlist("V300"), at: base.appendingPathComponent("V300/index.m3u8"))
        loader.add(playlist("A48"), at: base.appendingPathComponent("A48/index.m3u8"))
        loader.add(Data(("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",DEFAULT=YES,URI=\"A48/index.m3u8\"\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=350000,CODECS=\"avc1.64001e,mp4a.40.2\",AUDIO=\"a\"\nV300/index.m3u8\n").utf8),
                   at: base.appendingPathComponent("master.m3u8"))
        let scheduling = HLSSchedulingLoader(upstream: loader)
        let master = base.appendingPathComponent("master.m3u8")
        player.replaceCurrentItem(with: PlayerItem(url: master, loader: scheduling))
        player.play()
        #expect(await driver.run(upTo: seconds(10)) { video.frames.count >= 60 && player.timeControlStatus == .paused })
        #expect(scheduling.isSectioned(master), "the scheduler took the master")
        let frames = try await offThePool { try referenceFrames(paths["video"]!) }
        #expect(video.frames.map(\.md5) == frames.map(\.md5))
        // The sound is FFmpeg's decode of the audio alone.
        try await Self.expectSoundIsFFmpegs(audio.written, of: paths["audio"]!, in: scratch)
        player.replaceCurrentItem(with: nil)
    }

    /// `written` (what the engine played, 48 kHz stereo, as the device is) from its first sound
    /// to its last is FFmpeg's decode of `file`: the same number of samples, each within 1e-4
    /// (a gap, a repeat or a skip at a seam would shift or cut it).
    static func expectSoundIsFFmpegs(_ written: [Float], of file: URL, in scratch: URL) async throws {
        let name = "\(UUID().uuidString).f32"
        try await StartTimeTests.ffmpeg(["-i", file.path, "-f", "f32le", "-ac", "2", "-ar", "48000", name], in: scratch)
        let reference = try Data(contentsOf: scratch.appendingPathComponent(name)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        func sounding(_ samples: [Float]) -> ArraySlice<Float> {
            guard let first = samples.firstIndex(where: { abs($0) > 1e-3 }), let last = samples.lastIndex(where: { abs($0) > 1e-3 }) else { return [] }
            return samples[(first - first % 2)...(last | 1)]
        }
        let heard = sounding(written), expected = sounding(reference)
        #expect(expected.count > 90_000)
        #expect(heard.count == expected.count, "\(heard.count / 2) frames of sound, FFmpeg's \(expected.count / 2)")
        #expect(zip(heard, expected).allSatisfy { abs($0 - $1) < 1e-4 }, "every sample as FFmpeg decodes it")
    }

    /// Pieces that cannot be joined fail with a sentence, never a crash.
    @Test func piecesThatCannotBeJoinedAreRefused() async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), specs: [Self.specs[0]], segmentSeconds: 1, separateAudio: true) }
        defer { ladder.remove() }
        let video = try Self.pieces(ladder, "v0")
        let audio = try Self.pieces(ladder, "a0")
        #expect(throws: FragmentedMP4Merge.Failure.self) { try FragmentedMP4Merge(video: Data("not mp4".utf8), audio: audio.initSection) }
        #expect(throws: FragmentedMP4Merge.Failure.self) { try FragmentedMP4Merge(video: video.initSection, audio: video.segments[0]) }
        let merge = try FragmentedMP4Merge(video: video.initSection, audio: audio.initSection)
        #expect(merge.audioTrackIDs.values.allSatisfy { $0 >= 2 })
        var cut = audio.segments[0]
        cut.count -= 100
        #expect(throws: FragmentedMP4Merge.Failure.self) { try merge.audioSegment(cut) }
        // Every truncation of the init sections either joins or is refused.
        for length in stride(from: 0, to: audio.initSection.count, by: 7) {
            _ = try? FragmentedMP4Merge(video: video.initSection, audio: audio.initSection.prefix(length))
            _ = try? FragmentedMP4Merge(video: video.initSection.prefix(length), audio: audio.initSection)
        }
    }

    /// An audio rendition whose playlist promises fragmented MP4 but whose init section or a
    /// segment is not: the item fails with a sentence naming the audio, and nothing crashes.
    @Test(arguments: ["init", "segment"])
    func anAudioRenditionThatLiesFailsTheItemClearly(_ broken: String) async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), specs: [Self.specs[0]], segmentSeconds: 1, separateAudio: true) }
        defer { ladder.remove() }
        let rig = Rig()
        let (loader, player, driver) = (rig.loader, rig.player, rig.driver)
        ladder.serve(on: loader, at: Self.base)
        let playlist = try HLSMediaPlaylist.parse(ladder.files["a0/index.m3u8"]!)
        let name = broken == "init" ? playlist.initSection!.uri : playlist.segments[1].uri
        loader.add(Data(repeating: 0x47, count: 4096), at: Self.base.appendingPathComponent("a0/" + name))
        let scheduling = HLSSchedulingLoader(upstream: loader)
        player.replaceCurrentItem(with: PlayerItem(url: Self.base.appendingPathComponent("master.m3u8"), loader: scheduling))
        player.play()
        let failed = await driver.run(upTo: seconds(10)) { if case .failed = player.status { true } else { false } }
        #expect(failed, "\(player.status)")
        if case .failed(let error) = player.status {
            #expect("\(error)".contains("audio rendition"), "\(error)")
        }
        player.replaceCurrentItem(with: nil)
    }

    /// Through the engine, on the manual clock: the master is the item; the scheduler takes it,
    /// plays the variants on a plan (a switch up and back down) with the one audio rendition
    /// joined in, every frame once from its variant, and the sound whole across both seams,
    /// every audio segment fetched once.
    /// A DASH ladder's video Representations (lowest bandwidth first) and its audio one, each as
    /// its initialization segment and segments, and the segments' paths under the ladder.
    static func dashPieces(_ ladder: StreamLadder) throws
        -> (videos: [(initSection: Data, segments: [Data])], audio: (initSection: Data, segments: [Data]), audioPaths: [String]) {
        let manifest = try DASHManifest(ladder.files["manifest.mpd"]!, url: base.appendingPathComponent("manifest.mpd"))
        func path(_ url: URL) -> String { String(url.absoluteString.dropFirst(base.absoluteString.count)) }
        let videos = manifest.videos.sorted { $0.bandwidth < $1.bandwidth }.map { video in
            (ladder.files[path(video.initialization!.url)]!, video.segments.map { ladder.files[path($0.url)]! })
        }
        let audio = try #require(manifest.preferredAudio)
        return (videos, (ladder.files[path(audio.initialization!.url)]!, audio.segments.map { ladder.files[path($0.url)]! }),
                audio.segments.map { "/ladder/" + path($0.url) })
    }

    @Test(arguments: ["hls", "dash"])
    func theEnginePlaysAMasterWithASeparateAudioRenditionThroughTheScheduler(_ format: String) async throws {
        let ladder = try await offThePool {
            try StreamLadder.make(loader: FileLoader(), format: format == "dash" ? .dash : .hlsFMP4, specs: Self.specs,
                                  segmentSeconds: 1, separateAudio: format == "hls")
        }
        defer { ladder.remove() }
        var references: [[String]] = []
        let videoPieces: [(initSection: Data, segments: [Data])]
        let audioSegments: [String]
        let audioPieces: (initSection: Data, segments: [Data])
        if format == "dash" {
            (videoPieces, audioPieces, audioSegments) = try Self.dashPieces(ladder)
        } else {
            videoPieces = try ladder.renditions.map { try Self.pieces(ladder, $0.directory) }
            audioPieces = try Self.pieces(ladder, "a0")
            audioSegments = try HLSMediaPlaylist.parse(ladder.files["a0/index.m3u8"]!).segments.map { "/ladder/a0/" + $0.uri }
        }
        let audioFile = ladder.directory.appendingPathComponent("whole-audio.mp4")
        try (audioPieces.initSection + audioPieces.segments.reduce(Data(), +)).write(to: audioFile)
        #expect(videoPieces.count == 2)
        for pieces in videoPieces {
            references.append(try await Self.decodedFrames(of: pieces, in: ladder.directory).map(\.md5))
        }
        let rig = Rig()
        let (loader, video, audio, player, driver) = (rig.loader, rig.video, rig.audio, rig.player, rig.driver)
        ladder.serve(on: loader, at: Self.base)
        let variants = VariantSelectingLoader(upstream: loader, bandwidth: nil)
        let switches = Mutex<[LiveSegmentReader.Switch]>([])
        let scheduling = HLSSchedulingLoader(upstream: variants, variants: variants, configuration: .init(plan: [1: 1, 3: 0]) { event in
            if case .switched(let change) = event { switches.withTrackedLock { $0.append(change) } }
        })
        let master = Self.base.appendingPathComponent(format == "dash" ? "manifest.mpd" : "master.m3u8")
        player.replaceCurrentItem(with: PlayerItem(url: master, loader: scheduling))
        #expect(await driver.run(upTo: seconds(2)) { player.status == .readyToPlay })
        #expect(scheduling.isSectioned(master), "the scheduler took the master")
        #expect(abs(player.duration.seconds - 4) < 0.1, "the duration is the playlist's: \(player.duration.seconds)")
        player.play()
        #expect(await driver.run(upTo: seconds(10)) { video.frames.count >= 120 && player.timeControlStatus == .paused })
        let shown = video.frames
        #expect(shown.count == 120)
        let expected = Array(repeating: 0, count: 30) + Array(repeating: 1, count: 60) + Array(repeating: 0, count: 30)
        let got = shown.enumerated().map { offset, frame in references.indices.first { references[$0][offset] == frame.md5 } ?? -1 }
        #expect(got == expected)

        // The sound: about 4 s of a tone, with no silence inside it.
        // The sound: FFmpeg's decode of the audio rendition alone, across both seams.
        try await Self.expectSoundIsFFmpegs(audio.written, of: audioFile, in: ladder.directory)

        // A DASH switch names the Representation it goes to.
        #expect(switches.withTrackedLock { $0.map(\.representation) } == (format == "dash" ? ["v1", "v0"] : [nil, nil]))
        let requests = loader.requests.map(\.url.path)
        #expect(!audioSegments.isEmpty)
        #expect(audioSegments.allSatisfy { segment in requests.filter { $0 == segment }.count == 1 }, "\(requests)")
        player.replaceCurrentItem(with: nil)
    }

    /// An exact seek in a master with a separate audio rendition starts both again at the
    /// segments holding the target: the frames from there on are the variant's, the sound goes
    /// on, and only the video and audio segments from the target's on are fetched again.
    @Test(arguments: [1.5, 2.5])
    func anExactSeekStartsTheAudioAgainAtItsSegmentToo(_ target: Double) async throws {
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), specs: [Self.specs[0]], segmentSeconds: 1, separateAudio: true) }
        defer { ladder.remove() }
        let reference = try await Self.decodedFrames(of: Self.pieces(ladder, "v0"), in: ladder.directory)
        let rig = Rig()
        let (loader, video, audio, player, driver) = (rig.loader, rig.video, rig.audio, rig.player, rig.driver)
        ladder.serve(on: loader, at: Self.base)
        player.replaceCurrentItem(with: PlayerItem(url: Self.base.appendingPathComponent("master.m3u8"), loader: HLSSchedulingLoader(upstream: loader)))
        player.play()
        #expect(await driver.run(upTo: seconds(10)) { video.frames.count >= 20 })
        player.pause()
        let requestsBefore = loader.requests.count
        video.reset()
        let result = ResultBox<Bool>()
        player.seek(to: seconds(target), toleranceBefore: .zero, toleranceAfter: .zero) { result.set($0) }
        await driver.run(upTo: seconds(10)) { result.value != nil }
        #expect(result.value == true)
        let soundBefore = audio.written.count
        player.play()
        let first = try #require(reference.lastIndex { $0.pts <= seconds(target) })
        _ = await driver.run(upTo: seconds(20)) { video.frames.count >= reference.count - first && player.timeControlStatus == .paused }
        #expect(video.frames.map(\.md5) == reference[first...].map(\.md5), "every frame from the target's on, FFmpeg's")
        let again = loader.requests.dropFirst(requestsBefore).map(\.url.path).filter { $0.hasSuffix(".m4s") }
        // The audio rendition's segments need not line up with the video's (AAC runs a little longer).
        func fromHolding(_ playlist: String) throws -> Int {
            let durations = try HLSMediaPlaylist.parse(ladder.files[playlist]!).segments.map(\.duration)
            var start = 0.0
            for (index, duration) in durations.enumerated() {
                if target < start + duration { return durations.count - index }
                start += duration
            }
            return 1
        }
        #expect(again.filter { $0.hasPrefix("/ladder/a0/") }.count == (try fromHolding("a0/index.m3u8")), "\(again)")
        #expect(again.filter { $0.hasPrefix("/ladder/v0/") }.count == (try fromHolding("v0/index.m3u8")), "\(again)")
        // Sound after the seek: about the rest of the clip.
        let after = audio.written.dropFirst(soundBefore)
        let heard = stride(from: after.startIndex, to: after.endIndex, by: 2).filter { abs(after[$0]) > 1e-3 }.count
        #expect(abs(Double(heard) / 48_000 - (4 - target)) < 0.2, "\(Double(heard) / 48_000) s of sound after a seek to \(target)")
        player.replaceCurrentItem(with: nil)
    }

    /// A live master with a separate audio rendition (both playlists without an end, their
    /// sequence numbers in line, as a live packager writes them) is followed by the scheduler:
    /// joined three target durations back, each video segment with the audio segment of the
    /// same number before it, every frame the variant's and the sound from the join on.
    @Test func aLiveMasterWithASeparateAudioRenditionIsFollowedSegmentBySegment() async throws {
        var six = Self.specs[0]
        six.duration = 6
        let spec = six
        let ladder = try await offThePool { try StreamLadder.make(loader: FileLoader(), specs: [spec], segmentSeconds: 1, separateAudio: true) }
        defer { ladder.remove() }
        let reference = try await Self.decodedFrames(of: Self.pieces(ladder, "v0"), in: ladder.directory)
        let rig = Rig()
        let (loader, video, audio, player, driver) = (rig.loader, rig.video, rig.audio, rig.player, rig.driver)
        ladder.serve(on: loader, at: Self.base)
        for directory in ["v0", "a0"] {
            let text = String(decoding: ladder.files[directory + "/index.m3u8"]!, as: UTF8.self)
                .replacingOccurrences(of: "#EXT-X-ENDLIST", with: "").replacingOccurrences(of: "#EXT-X-PLAYLIST-TYPE:VOD", with: "")
            loader.add(Data(text.utf8), at: Self.base.appendingPathComponent(directory + "/live.m3u8"))
        }
        let master = String(decoding: ladder.files["master.m3u8"]!, as: UTF8.self).replacingOccurrences(of: "index.m3u8", with: "live.m3u8")
        let url = Self.base.appendingPathComponent("live-master.m3u8")
        loader.add(Data(master.utf8), at: url)
        // The playlists never change: called stale only after a very long time.
        let scheduling = HLSSchedulingLoader(upstream: loader, tracker: LivePlaylistTracker(staleAfter: 1_000_000))
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: scheduling))
        #expect(await driver.run(upTo: seconds(2)) { player.status == .readyToPlay })
        #expect(scheduling.isSectioned(url), "the scheduler took the live master")
        #expect(player.isLive)
        player.play()
        _ = await driver.run(upTo: seconds(10)) { video.frames.count >= 90 }
        let shown = video.frames
        // Joined at segment 3: its frames on (the last few stay in the decoder of a live stream).
        #expect((84...90).contains(shown.count), "\(shown.count) frames")
        #expect(shown.map(\.md5) == reference[90..<(90 + shown.count)].map(\.md5))
        let heard = stride(from: 0, to: audio.written.count, by: 2).filter { abs(audio.written[$0]) > 1e-3 }.count
        #expect(Double(heard) / 48_000 > 2.5, "\(Double(heard) / 48_000) s of sound")
        let segments = loader.requests.map(\.url.path).filter { $0.hasSuffix(".m4s") }
        #expect(segments.filter { $0.hasPrefix("/ladder/a0/") } == ["/ladder/a0/seg-3.m4s", "/ladder/a0/seg-4.m4s", "/ladder/a0/seg-5.m4s"],
                "\(segments)")
        #expect(segments.filter { $0.hasPrefix("/ladder/v0/") } == ["/ladder/v0/seg-3.m4s", "/ladder/v0/seg-4.m4s", "/ladder/v0/seg-5.m4s"])
        player.replaceCurrentItem(with: nil)
    }
}
