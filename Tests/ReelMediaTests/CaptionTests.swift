import Foundation
import ReelCore
import ReelMedia
import ReelStreaming
import ReelTestSupport
import Synchronization
import Testing

/// Captions compared with FFmpeg's decode of the same track: every cue's start and end (from
/// `ffprobe -show_entries subtitle`, the packet's time plus the decoder's display offsets) and
/// its text in ASS form (from `ffmpeg -copyts … -f ass -`), and every screen the player showed
/// against the reference cues on at that frame's time.
@Suite struct CaptionTests {
    /// A Reel-authored SubRip file: Latin, CJK, italics, overlapping cues, a line break.
    static let subRip = """
        1
        00:00:00,500 --> 00:00:01,750
        Hello, <i>world</i>

        2
        00:00:02,000 --> 00:00:03,250
        第二行字幕
        second line

        3
        00:00:03,000 --> 00:00:04,000
        overlapping, {braces} kept

        4
        00:00:04,200 --> 00:00:04,900
        <b>last</b> one

        """

    /// One reference cue.
    struct Cue: Equatable, CustomStringConvertible {
        var start: MediaTime
        var end: MediaTime
        var text: String
        var description: String { "\(start.stringValue)–\(end.stringValue) \(text)" }
    }

    /// A directory of its own with `subs.srt` and `name`, made by `ffmpeg` from a 5 s clip
    /// (25 fps H.264, AAC) with the SubRip file muxed as `codec`.
    static func clip(_ name: String, codec: String) async throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-captions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(subRip.utf8).write(to: directory.appendingPathComponent("subs.srt"))
        try await StartTimeTests.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=5", "-f", "lavfi", "-i", "sine=duration=5",
            "-i", "subs.srt", "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-g", "25", "-c:a", "aac",
            "-c:s", codec, "-metadata:s:s:0", "language=eng", name,
        ], in: directory)
        return directory.appendingPathComponent(name)
    }

    /// FFmpeg's cues of the first subtitle stream of `file`.
    static func reference(_ file: URL) async throws -> [Cue] {
        try await offThePool {
            let probe = try commandOutput(["ffprobe", "-v", "error", "-select_streams", "s:0", "-show_entries",
                                           "subtitle=pts,start_display_time,end_display_time", "-of", "csv=p=0", file.path])
            let times = probe.split(separator: "\n").map { line -> (MediaTime, MediaTime) in
                let fields = line.split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
                let pts = MediaTime(value: fields[0], timescale: 1_000_000)
                return (pts + MediaTime(value: fields[1], timescale: 1000), pts + MediaTime(value: fields[2], timescale: 1000))
            }
            let ass = try commandOutput(["ffmpeg", "-nostdin", "-v", "error", "-copyts", "-i", file.path, "-map", "0:s:0", "-f", "ass", "-"])
            // ASS lines end in CRLF.
            let texts = ass.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("Dialogue:") }.map { line in
                String(line.split(separator: ",", maxSplits: 9, omittingEmptySubsequences: false)[9])
            }
            #expect(times.count == texts.count)
            return zip(times, texts).map { Cue(start: $0.0, end: $0.1, text: $1) }
        }
    }

    /// A player on a manual clock over `data`, recording frames and captions.
    final class Harness: Sendable {
        let clock = ManualClock()
        let loader: FakeResourceLoader
        let video = RecordingVideoSink(hashes: false)
        let captions = RecordingCaptionSink()
        let player: Player
        let driver: ManualClockDriver
        let url: URL
        private let log = Mutex<[PlayerEvent]>([])
        /// The scheduler the latest `playToEnd(_:scheduled: true)` played through.
        let scheduler: HLSSchedulingLoader

        init(data: Data, name: String) {
            loader = FakeResourceLoader(clock: clock)
            scheduler = HLSSchedulingLoader(upstream: loader)
            url = URL(string: "https://fake.example/\(name)")!
            loader.add(data, at: url)
            player = Player(clock: clock, videoSink: video, captionSink: captions)
            driver = ManualClockDriver(clock: clock, players: [player])
            player.addEventObserver { [weak self] event in
                if case .framePresented = event { return }
                self?.log.withTrackedLock { $0.append(event) }
            }
        }

        var events: [PlayerEvent] { log.withTrackedLock { $0 } }
        var ended: Bool { events.contains { if case .ended = $0 { true } else { false } } }
        var failures: [CaptionSourceFailure] {
            events.compactMap { if case .captionSourceFailed(let failure) = $0 { failure } else { nil } }
        }

        func play(captions: [CaptionSource] = [], startTime: MediaTime? = nil) async {
            player.replaceCurrentItem(with: PlayerItem(url: url, loader: loader, startTime: startTime, captions: captions))
            player.play()
            await driver.run(upTo: seconds(20)) { self.ended }
        }

        /// Plays `item` (added to the loader by the test) to its end.
        /// Plays `item` to its end; `scheduled`: through Reel's segment scheduler (an HLS stream's
        /// segments are then Reel's to fetch, not FFmpeg's HLS demuxer's).
        func playToEnd(_ item: URL, scheduled: Bool = false) async {
            player.replaceCurrentItem(with: PlayerItem(url: item, loader: scheduled ? scheduler : loader))
            player.play()
            await driver.run(upTo: seconds(20)) { self.ended }
        }

        /// Serves the files of `directory` whose names pass `include` under `base`.
        func serve(_ directory: URL, at base: URL, include: (String) -> Bool) throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where include(name) {
                loader.add(try Data(contentsOf: directory.appendingPathComponent(name)), at: base.appendingPathComponent(name))
            }
        }

        func seek(to time: MediaTime) async {
            let done = Mutex<Bool?>(nil)
            player.seek(to: time, toleranceBefore: .zero, toleranceAfter: .zero) { finished in done.withLock { $0 = finished } }
            await driver.run(upTo: seconds(10)) { done.withLock { $0 } != nil }
        }
    }

    static func cues(_ events: [CaptionEvent]) -> [Cue] {
        events.map { event in
            guard case .text(let dialogue) = event.content else { return Cue(start: event.start, end: event.end, text: "<bitmap>") }
            return Cue(start: event.start, end: event.end, text: dialogue.text)
        }
    }

    /// Every screen shown holds exactly the reference cues on at its time, and its time is the
    /// time of a frame that was presented.
    static func expectScreensFollowFrames(_ harness: Harness, reference: [Cue]) {
        let presented = Set(harness.video.frames.map(\.pts))
        let screens = harness.captions.frames
        #expect(!screens.isEmpty)
        for screen in screens {
            #expect(presented.contains(screen.time), "a screen at \(screen.time) with no frame presented then")
            let expected = reference.filter { $0.start <= screen.time && screen.time < $0.end }.map(\.text)
            #expect(cues(screen.events).map(\.text) == expected, "at \(screen.time.stringValue)")
        }
        // Every cue long enough to span a frame was shown.
        let shown = screens.flatMap { cues($0.events) }
        for cue in reference { #expect(shown.contains(cue), "never shown: \(cue)") }
    }

    @Test(arguments: [("a.mkv", "srt"), ("a.mkv", "ass"), ("a.mkv", "webvtt"), ("a.mp4", "mov_text")])
    func inBandCuesEqualFFmpegsDecode(name: String, codec: String) async throws {
        let file = try await Self.clip(name, codec: codec)
        let reference = try await Self.reference(file)
        #expect(reference.count >= 3)
        let harness = Harness(data: try Data(contentsOf: file), name: name)
        await harness.play()
        #expect(harness.ended)
        let tracks = harness.player.captionTracks
        #expect(tracks.map(\.id) == [.stream(2)])
        #expect(tracks.first?.language == "eng")
        #expect(Self.cues(harness.player.captionEvents(of: .stream(2))) == reference)
        Self.expectScreensFollowFrames(harness, reference: reference)
    }

    @Test(arguments: ["srt", "vtt"])
    func aSideloadedFileIsReadOnceThroughTheLoaderAndEqualsFFmpegsDecode(format: String) async throws {
        let clip = try await Self.clip("plain.mp4", codec: "mov_text")
        let directory = clip.deletingLastPathComponent()
        let plain = directory.appendingPathComponent("video.mp4")
        try await StartTimeTests.ffmpeg(["-i", "plain.mp4", "-map", "0:v", "-map", "0:a", "-c", "copy", "video.mp4"], in: directory)
        if format == "vtt" { try await StartTimeTests.ffmpeg(["-i", "subs.srt", "subs.vtt"], in: directory) }
        let sidecar = directory.appendingPathComponent("subs.\(format)")
        let reference = try await Self.reference(sidecar)
        let harness = Harness(data: try Data(contentsOf: plain), name: "video.mp4")
        let url = URL(string: "https://fake.example/subs.\(format)")!
        harness.loader.add(try Data(contentsOf: sidecar), at: url)
        await harness.play(captions: [CaptionSource(url: url, language: "en", label: "English")])
        #expect(harness.ended)
        #expect(harness.loader.requests.filter { $0.url == url }.count == 1)
        let track = try #require(harness.player.captionTracks.first)
        #expect(track.id == .sideloaded(0))
        #expect(track.label == "English")
        #expect(Self.cues(harness.player.captionEvents(of: .sideloaded(0))) == reference)
        Self.expectScreensFollowFrames(harness, reference: reference)
    }

    @Test(arguments: [("a.mkv", "srt"), ("a.mp4", "mov_text")])
    func aSeekIntoTheMiddleOfACueShowsItWithTheFirstFrame(name: String, codec: String) async throws {
        let file = try await Self.clip(name, codec: codec)
        let harness = Harness(data: try Data(contentsOf: file), name: name)
        // Straight into the second cue, never having read the first ones.
        harness.player.replaceCurrentItem(with: PlayerItem(url: harness.url, loader: harness.loader, startTime: seconds(2.5)))
        await harness.driver.run(upTo: seconds(5)) { !harness.video.frames.isEmpty && !harness.captions.frames.isEmpty }
        let first = try #require(harness.video.frames.first)
        let screen = try #require(harness.captions.frames.first)
        #expect(screen.time == first.pts)
        #expect(screen.plainText == "第二行字幕\nsecond line")
        // Back to before every cue, then into the first one: stale text never stays.
        await harness.seek(to: seconds(0.1))
        #expect(harness.captions.currentText == "")
        await harness.seek(to: seconds(1.0))
        #expect(harness.captions.currentText == "Hello, world")
    }

    @Test func aLoopShowsTheFirstCueAgain() async throws {
        let file = try await Self.clip("a.mkv", codec: "srt")
        let harness = Harness(data: try Data(contentsOf: file), name: "a.mkv")
        harness.player.actionAtItemEnd = .loop
        harness.player.replaceCurrentItem(with: PlayerItem(url: harness.url, loader: harness.loader))
        harness.player.play()
        let loops = { harness.events.filter { if case .ended(looping: true) = $0 { true } else { false } }.count }
        await harness.driver.run(upTo: seconds(8)) { loops() >= 1 && harness.captions.currentText == "Hello, world" }
        #expect(loops() >= 1)
        let hellos = harness.captions.frames.filter { $0.plainText == "Hello, world" }
        #expect(hellos.count == 2)
    }

    @Test func atTwiceTheRateCuesFollowTheFramesShown() async throws {
        let file = try await Self.clip("a.mkv", codec: "srt")
        let reference = try await Self.reference(file)
        let harness = Harness(data: try Data(contentsOf: file), name: "a.mkv")
        harness.player.defaultRate = 2
        await harness.play()
        #expect(harness.ended)
        Self.expectScreensFollowFrames(harness, reference: reference)
        // On the clock, the second cue comes half its media time after the first frame.
        let frames = harness.video.frames
        let second = try #require(harness.captions.frames.first { $0.plainText.hasPrefix("第二行") })
        let first = try #require(frames.first)
        let shownWith = try #require(frames.first { $0.pts == second.time })
        let clockTime = (shownWith.presentedAt - first.presentedAt).seconds
        let mediaTime = (second.time - first.pts).seconds
        #expect(abs(clockTime - mediaTime / 2) <= 0.021, "clock \(clockTime) s for \(mediaTime) s of media")
    }

    @Test func choosingCaptionsWhilePausedShowsThemAtOnce() async throws {
        let file = try await Self.clip("a.mkv", codec: "srt")
        let harness = Harness(data: try Data(contentsOf: file), name: "a.mkv")
        harness.player.captionSelection = .off
        harness.player.replaceCurrentItem(with: PlayerItem(url: harness.url, loader: harness.loader, startTime: seconds(1)))
        await harness.driver.run(upTo: seconds(2)) { !harness.video.frames.isEmpty && !harness.player.captionTracks.isEmpty }
        #expect(harness.captions.currentText == "")
        let framesBefore = harness.video.frames.count
        harness.player.captionSelection = CaptionSelection()
        await harness.driver.settled()
        await harness.driver.run(upTo: seconds(0.5)) { harness.captions.currentText == "Hello, world" }
        #expect(harness.captions.currentText == "Hello, world")
        #expect(harness.video.frames.count == framesBefore)
        harness.player.captionSelection = .off
        await harness.driver.run(upTo: seconds(0.5)) { harness.captions.currentText.isEmpty }
        #expect(harness.captions.currentText == "")
    }

    static let ttml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <tt xmlns="http://www.w3.org/ns/ttml" xmlns:tts="http://www.w3.org/ns/ttml#styling"
            xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:tickRate="10000000" xml:lang="ja">
          <body><div>
            <p begin="5000000t" end="17500000t">こんにちは<br/>world</p>
            <p begin="00:00:02.000" dur="1s"><span tts:fontStyle="italic">slanted</span></p>
          </div></body>
        </tt>
        """

    @Test func aSideloadedTTMLIsReadByReelAndAnEntityLadenOneIsRefused() async throws {
        let file = try await Self.clip("a.mp4", codec: "mov_text")
        let harness = Harness(data: try Data(contentsOf: file), name: "a.mp4")
        let good = URL(string: "https://fake.example/subs.ttml")!
        let hostile = URL(string: "https://fake.example/bomb.xml")!
        harness.loader.add(Data(Self.ttml.utf8), at: good)
        let bomb = #"<?xml version="1.0"?><!DOCTYPE tt [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><tt xmlns="http://www.w3.org/ns/ttml"><body><div><p begin="1s" end="2s">&b;</p></div></body></tt>"#
        harness.loader.add(Data(bomb.utf8), at: hostile, contentType: "application/ttml+xml")
        await harness.play(captions: [CaptionSource(url: good), CaptionSource(url: hostile)])
        #expect(harness.ended)
        let track = try #require(harness.player.captionTracks.first { $0.id == .sideloaded(0) })
        #expect(track.format == .ttml)
        #expect(track.language == "ja")
        let cues = harness.player.captionEvents(of: .sideloaded(0))
        #expect(cues.map(\.start) == [seconds(0.5), seconds(2)])
        #expect(cues.map(\.end) == [seconds(1.75), seconds(3)])
        #expect(cues.map(\.plainText) == ["こんにちは\nworld", "slanted"])
        #expect(harness.failures.map(\.url) == [hostile])
        #expect(harness.player.captionTracks.count == 2, "the in-band track and the TTML one")
    }

    /// The 5 s clip packaged as a VOD HLS media playlist `v.m3u8` of 2 s TS segments, served at `base`.
    static func serveHLSVideo(_ harness: Harness, at base: URL) async throws {
        let clip = try await Self.clip("a.mkv", codec: "srt")
        let directory = clip.deletingLastPathComponent()
        try await StartTimeTests.ffmpeg(["-i", "a.mkv", "-map", "0:v", "-map", "0:a", "-c", "copy", "-f", "hls", "-hls_time", "2",
                                         "-hls_playlist_type", "vod", "-hls_segment_filename", "v%d.ts", "v.m3u8"], in: directory)
        try harness.serve(directory, at: base) { $0.hasSuffix(".ts") || $0 == "v.m3u8" }
    }

    /// Through FFmpeg's HLS demuxer and through Reel's segment scheduler alike.
    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func anHLSSubtitleRenditionIsReadOnceAndTimedByItsTimestampMap(missingSegment: Bool, scheduled: Bool) async throws {
        let harness = Harness(data: Data(), name: "unused")
        let base = URL(string: "https://fake.example/hls/")!
        try await Self.serveHLSVideo(harness, at: base)
        // 126000 ticks of 90 kHz: cue time 0 is media time 1.4 s. Either attribute order; a cue
        // repeated in the next segment is one cue.
        let first = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:126000,LOCAL:00:00:00.000\n\n00:00:00.500 --> 00:00:01.750\nHello, <i>world</i>\n\n00:00:02.000 --> 00:00:03.250\n第二行字幕\n"
        let second = "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:01.000,MPEGTS:216000\n\n00:00:02.000 --> 00:00:03.250\n第二行字幕\n\n00:00:03.000 --> 00:00:04.000\nthird\n"
        harness.loader.add(Data(first.utf8), at: base.appendingPathComponent("s0.vtt"))
        if !missingSegment { harness.loader.add(Data(second.utf8), at: base.appendingPathComponent("s1.vtt")) }
        let subs = "#EXTM3U\n#EXT-X-TARGETDURATION:3\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:3,\ns0.vtt\n#EXTINF:3,\ns1.vtt\n#EXT-X-ENDLIST\n"
        harness.loader.add(Data(subs.utf8), at: base.appendingPathComponent("subs.m3u8"))
        let master = "#EXTM3U\n#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"s\",NAME=\"English\",LANGUAGE=\"en\",DEFAULT=YES,URI=\"subs.m3u8\"\n#EXT-X-STREAM-INF:BANDWIDTH=800000,SUBTITLES=\"s\"\nv.m3u8\n"
        let masterURL = base.appendingPathComponent("master.m3u8")
        harness.loader.add(Data(master.utf8), at: masterURL)
        await harness.playToEnd(masterURL, scheduled: scheduled)
        #expect(harness.ended)
        #expect(harness.scheduler.isSectioned(masterURL) == scheduled, "the segments were Reel's to fetch")
        let track = try #require(harness.player.captionTracks.first)
        #expect(track.label == "English" && track.language == "en" && track.isDefault)
        let cues = harness.player.captionEvents(of: track.id)
        var expected = [(seconds(1.9), seconds(3.15), "Hello, world"), (seconds(3.4), seconds(4.65), "第二行字幕")]
        if !missingSegment { expected.append((seconds(4.4), seconds(5.4), "third")) }
        #expect(cues.map(\.start) == expected.map(\.0))
        #expect(cues.map(\.end) == expected.map(\.1))
        #expect(cues.map(\.plainText) == expected.map(\.2))
        let requests = harness.loader.requests.map(\.url.lastPathComponent)
        for name in ["subs.m3u8", "s0.vtt"] { #expect(requests.filter { $0 == name }.count == 1, "\(name): \(requests)") }
        #expect(harness.captions.frames.contains { $0.plainText == "Hello, world" })
    }

    /// shaka-player's fragmented MP4 text segments (corpus/captions/shaka, Apache-2.0).
    static let fragmentedText = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../corpus/captions/shaka").standardizedFileURL

    /// The cues shaka-player's tests expect of `vtt-segment-no-duration.mp4` then `vtt-segment.mp4`.
    static let fragmentedWebVTTCues: [(Double, Double, String)] = (10..<20).map { (Double($0), Double($0 + 1), "cue \($0)") } + [
        (111.8, 115.8, "It has shed much innocent blood."),
        (118, 120, "You're a fool for traveling alone,\nso completely unprepared."),
    ]

    @Test func aDASHTextAdaptationSetIsReadAsTheManifestsCaptionFileOrSegments() async throws {
        let clip = try await Self.clip("a.mkv", codec: "srt")
        let directory = clip.deletingLastPathComponent()
        try await StartTimeTests.ffmpeg(["-i", "a.mkv", "-map", "0:v", "-map", "0:a", "-c", "copy", "-f", "dash", "-seg_duration", "2",
                                         "-use_template", "1", "-use_timeline", "0", "m.mpd"], in: directory)
        try await StartTimeTests.ffmpeg(["-i", "subs.srt", "subs.vtt"], in: directory)
        let reference = try await Self.reference(directory.appendingPathComponent("subs.vtt"))
        let harness = Harness(data: Data(), name: "unused")
        let base = URL(string: "https://fake.example/dash/")!
        try harness.serve(directory, at: base) { $0.hasSuffix(".m4s") || $0 == "subs.vtt" }
        try harness.serve(Self.fragmentedText, at: base) { $0.hasSuffix(".mp4") }
        var manifest = try String(contentsOf: directory.appendingPathComponent("m.mpd"), encoding: .utf8)
        manifest = manifest.replacingOccurrences(of: "</Period>", with: """
            <AdaptationSet contentType="text" mimeType="text/vtt" lang="en"><Label>English</Label>
            <Representation id="en" bandwidth="256"><BaseURL>subs.vtt</BaseURL></Representation></AdaptationSet>
            <AdaptationSet mimeType="application/mp4" codecs="wvtt" lang="fr">
            <Representation id="fr" bandwidth="256"><SegmentList duration="10"><Initialization sourceURL="vtt-init.mp4"/>
            <SegmentURL media="vtt-segment-no-duration.mp4"/><SegmentURL media="missing.mp4"/><SegmentURL media="vtt-segment.mp4"/>
            </SegmentList></Representation></AdaptationSet>
            <AdaptationSet mimeType="application/mp4" codecs="stpp" lang="de">
            <Representation id="de" bandwidth="256"><SegmentList duration="60"><Initialization sourceURL="ttml-init.mp4"/>
            <SegmentURL media="ttml-segment-multiple-sample.mp4"/></SegmentList></Representation></AdaptationSet>
            <AdaptationSet mimeType="application/mp4" codecs="wvtt" lang="it">
            <Representation id="it" bandwidth="256"><SegmentList duration="10"><Initialization sourceURL="ttml-segment.mp4"/>
            <SegmentURL media="vtt-segment.mp4"/></SegmentList></Representation></AdaptationSet>
            </Period>
            """)
        let manifestURL = base.appendingPathComponent("m.mpd")
        harness.loader.add(Data(manifest.utf8), at: manifestURL)
        await harness.playToEnd(manifestURL)
        #expect(harness.ended)
        #expect(harness.player.captionTracks.map(\.id) == [CaptionTrackID("dash:en"), CaptionTrackID("dash:fr"), CaptionTrackID("dash:de")])
        #expect(harness.player.captionTracks.first?.label == "English")
        #expect(Self.cues(harness.player.captionEvents(of: CaptionTrackID("dash:en"))) == reference)
        let french = harness.player.captionEvents(of: CaptionTrackID("dash:fr"))
        #expect(french.map(\.start) == Self.fragmentedWebVTTCues.map { seconds($0.0) })
        #expect(french.map(\.end) == Self.fragmentedWebVTTCues.map { seconds($0.1) })
        #expect(french.map(\.plainText) == Self.fragmentedWebVTTCues.map(\.2))
        #expect(french.allSatisfy { $0.language == "fr" })
        let german = harness.player.captionEvents(of: CaptionTrackID("dash:de"))
        #expect(german.count == 10)
        #expect(german.first.map { ($0.start, $0.plainText) } ?? (.zero, "") == (seconds(23), "You're a jerk, Thom."))
        #expect(harness.player.captionTracks.first { $0.id == CaptionTrackID("dash:de") }?.format == .ttml)
        // An initialization segment that is not text fails its track, with one event.
        #expect(harness.failures.map(\.url.lastPathComponent) == ["ttml-segment.mp4"])
        let requests = harness.loader.requests.map(\.url.lastPathComponent)
        for name in ["subs.vtt", "vtt-init.mp4", "vtt-segment.mp4", "ttml-init.mp4"] {
            #expect(requests.filter { $0 == name }.count == 1, "\(name): \(requests)")
        }
    }

    @Test func anHLSSubtitleRenditionInFragmentedMP4IsRead() async throws {
        let harness = Harness(data: Data(), name: "unused")
        let base = URL(string: "https://fake.example/hls/")!
        try await Self.serveHLSVideo(harness, at: base)
        try harness.serve(Self.fragmentedText, at: base.appendingPathComponent("subs")) { $0.hasPrefix("vtt-") }
        let subs = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-MAP:URI=\"vtt-init.mp4\"\n#EXTINF:10,\nvtt-segment-no-duration.mp4\n#EXTINF:10,\nvtt-segment.mp4\n#EXT-X-ENDLIST\n"
        harness.loader.add(Data(subs.utf8), at: base.appendingPathComponent("subs/index.m3u8"))
        let master = "#EXTM3U\n#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"s\",NAME=\"Français\",LANGUAGE=\"fr\",URI=\"subs/index.m3u8\"\n#EXT-X-STREAM-INF:BANDWIDTH=800000,SUBTITLES=\"s\"\nv.m3u8\n"
        let masterURL = base.appendingPathComponent("master.m3u8")
        harness.loader.add(Data(master.utf8), at: masterURL)
        await harness.playToEnd(masterURL)
        #expect(harness.ended)
        let track = try #require(harness.player.captionTracks.first)
        #expect(track.label == "Français" && track.format == .webvtt)
        let cues = harness.player.captionEvents(of: track.id)
        #expect(cues.map(\.start) == Self.fragmentedWebVTTCues.map { seconds($0.0) })
        #expect(cues.map(\.plainText) == Self.fragmentedWebVTTCues.map(\.2))
        #expect(harness.failures.isEmpty)
    }

    @Test func aStreamsTitleAndForcedFlagNameItsTrack() async throws {
        let clip = try await Self.clip("a.mkv", codec: "srt")
        let directory = clip.deletingLastPathComponent()
        try await StartTimeTests.ffmpeg(["-i", "a.mkv", "-map", "0", "-c", "copy", "-metadata:s:s:0", "title=English SDH",
                                         "-disposition:s:0", "forced", "t.mkv"], in: directory)
        let harness = Harness(data: try Data(contentsOf: directory.appendingPathComponent("t.mkv")), name: "t.mkv")
        harness.player.replaceCurrentItem(with: PlayerItem(url: harness.url, loader: harness.loader))
        await harness.driver.run(upTo: seconds(2)) { !harness.player.captionTracks.isEmpty && harness.player.mediaInfo != nil }
        let track = try #require(harness.player.captionTracks.first)
        #expect(track.label == "English SDH")
        #expect(track.isForced)
        #expect(track.displayName == "English SDH")
        let stream = try #require(harness.player.mediaInfo?.streams.first { $0.kind == .subtitle })
        #expect(stream.title == "English SDH" && stream.isForced)
    }

    @Test func aCaptionNamedByADocumentIsReadOnlyBehindTheClosedDoor() async throws {
        let file = try await Self.clip("a.mp4", codec: "mov_text")
        let harness = Harness(data: try Data(contentsOf: file), name: "a.mp4")
        let outside = URL(fileURLWithPath: "/etc/passwd")
        let allowed = URL(string: "https://fake.example/ok.srt")!
        harness.loader.add(Data(CaptionTests.subRip.utf8), at: allowed)
        await harness.play(captions: [CaptionSource(url: outside, isNamedByDocument: true),
                                      CaptionSource(url: allowed, isNamedByDocument: true)])
        #expect(harness.ended)
        #expect(harness.failures.map(\.url) == [outside])
        #expect(harness.failures.first?.reason.contains("refused") == true)
        #expect(harness.player.captionTracks.map(\.id).contains(.sideloaded(1)))
        #expect(!harness.loader.requests.contains { $0.url == outside })
    }

    @Test(arguments: [
        ("large", Fixtures.garbage(count: 6 << 20, seed: 7)),
        ("truncated", Data("WEBVTT\n\n00:00:01.000 --> 00:0".utf8)),
        ("binary", Fixtures.garbage(count: 300_000)),
    ])
    func aBrokenCaptionFileLeavesTheVideoPlaying(kind: String, bytes: Data) async throws {
        let file = try await Self.clip("a.mp4", codec: "mov_text")
        let harness = Harness(data: try Data(contentsOf: file), name: "a.mp4")
        let url = URL(string: "https://fake.example/\(kind).srt")!
        harness.loader.add(bytes, at: url)
        let missing = URL(string: "https://fake.example/missing.vtt")!
        await harness.play(captions: [CaptionSource(url: url), CaptionSource(url: missing)])
        #expect(harness.ended)
        #expect(harness.video.frames.count == 125)
        let failed: Set<URL> = Set(harness.failures.map(\.url))
        #expect(failed == [url, missing])
        #expect(harness.failures.count == 2)
        // The item's own track still shows.
        #expect(harness.player.captionTracks.map(\.id) == [.stream(2)])
    }
}
