import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelMediaTools
import ReelOrigin
import ReelStreaming
import ReelThreads
import Synchronization

/// `reel bench live`: how far behind the live edge a live HLS stream plays, Reel's segment
/// scheduler beside FFmpeg's HLS demuxer, the same stream published by two origins in this
/// process on one clock, both players joining at the same moment.
struct BenchLiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Live latency behind the edge: Reel's segment scheduler beside FFmpeg's HLS demuxer, same stream, same run.",
        discussion: """
            Encodes --seconds of 320×240 video with a keyframe every 0.5 s, packages it as CMAF: \
            2 s fMP4 segments of four 0.5 s fragments, and publishes it as a live HLS stream \
            (parts, preload hints, blocking reloads, a 6-segment window) from two origins in this \
            process that start together. After --join seconds one player follows each in real \
            time (no sound device) for --play seconds: Reel's segment scheduler (which reads the \
            parts) and FFmpeg's HLS demuxer through Reel's loader (which reads whole segments). \
            The latency of a frame is when it was shown less when its media was published (its \
            timestamp past the stream's start). With --no-parts the stream has segments only. \
            The goals: Reel at or below FFmpeg, and below 2 s with parts.
            """
    )

    @Option(help: "Seconds of the stream (it ends after them).")
    var seconds: Double = 60

    @Option(help: "Seconds after the stream starts when the players join.")
    var join: Double = 9

    @Option(help: "Seconds each player plays.")
    var play: Double = 30

    @Flag(inversion: .prefixedNo, help: "Publish the fragments as LL-HLS parts (--no-parts: whole segments only).")
    var parts = true

    @Flag(help: "Print the results as JSON.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard seconds >= 8, seconds <= 600 else { throw ValidationError("--seconds must be in [8, 600]") }
        guard join >= 0, play >= 2, join + play <= seconds else {
            throw ValidationError("--join and --play must fit in --seconds (--play at least 2)")
        }
    }

    /// What one player saw.
    struct Run: Sendable {
        /// Per shown frame: seconds behind the edge.
        var latencies: [Double] = []
        /// Seconds from joining to the first frame.
        var firstFrame: Double?
        var stalls = 0
        /// Segment and part requests for a resource (and range) asked for before.
        var refetched = 0
        var requests = 0
        var failure: String?

        func percentile(_ p: Double) -> Double? {
            guard !latencies.isEmpty else { return nil }
            let sorted = latencies.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
        }
    }

    func run() async throws {
        global.apply()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bench-live-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        if !json { printError("encoding \(Int(seconds)) s of CMAF chunks…") }
        let seconds = self.seconds, parts = self.parts
        let stream = try await onOwnThread(named: "reel.bench-encode") {
            try Self.stream(seconds: seconds, parts: parts, into: directory)
        }
        // Two origins publishing the same stream on one clock: each player's requests are its own.
        let start = ContinuousClock.now
        var servers: [OriginServer] = []
        for _ in 0..<2 {
            let server = OriginServer(configuration: .init(root: directory, routes: [.liveHLS("/live.m3u8", stream: stream, start: start)]))
            _ = try await server.start()
            servers.append(server)
        }
        if !json { printError("joining after \(Self.format(join)) s, playing \(Self.format(play)) s, Reel and FFmpeg side by side…") }
        try await Task.sleep(for: .seconds(join))
        async let reel = Self.follow(servers[0], scheduled: true, start: start, seconds: play)
        async let ffmpeg = Self.follow(servers[1], scheduled: false, start: start, seconds: play)
        let (r, f) = await (reel, ffmpeg)
        for server in servers { await server.stop() }
        print(json ? Self.json(reel: r, ffmpeg: f, parts: parts) : Self.text(reel: r, ffmpeg: f, parts: parts),
              terminator: json ? "\n" : "")
    }

    /// The stream: CMAF chunks packaged by FFmpeg's DASH muxer (its HLS playlist names the
    /// segments), published with each segment's fragments as parts.
    static func stream(seconds: Double, parts: Bool, into directory: URL) throws -> LiveHLSStream {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let clip = directory.appendingPathComponent("clip.mp4")
        try ClipEncoder.encode(ClipSpec(width: 320, height: 240, frameRate: 30, duration: seconds, keyframeInterval: 15, bFrames: 0,
                                        audioCodec: nil, preset: "veryfast"), to: clip)
        try StreamPackager.package(clip, loader: FileLoader(), format: .dash, into: directory, segmentSeconds: 2, fragmentSeconds: 0.5)
        let playlist = try HLSMediaPlaylist.parse(try Data(contentsOf: directory.appendingPathComponent("media_0.m3u8")))
        let segments = try playlist.segments.map { segment -> LiveHLSStream.Segment in
            let bytes = try Data(contentsOf: directory.appendingPathComponent(segment.uri))
            return .init(uri: "/" + segment.uri, duration: segment.duration,
                         parts: parts ? LiveHLSStream.fragmentParts([UInt8](bytes), duration: segment.duration) : [])
        }
        var stream = try LiveHLSStream(segments: segments, initSection: playlist.initSection.map { "/" + $0.uri }, window: 6)
        stream.canSkipUntil = 6 * Double(stream.targetDuration)
        return stream
    }

    /// One player following `server`'s stream for `seconds`: through Reel's segment scheduler,
    /// or (`scheduled` false) FFmpeg's HLS demuxer through Reel's loader.
    static func follow(_ server: OriginServer, scheduled: Bool, start: ContinuousClock.Instant, seconds: Double) async -> Run {
        let http = HTTPLoader()
        let loader: any ResourceLoader = scheduled ? HLSSchedulingLoader(upstream: http) : http
        let joined = ContinuousClock.now
        let run = Mutex(Run())
        let sink = LatencySink { pts in
            let now = ContinuousClock.now
            run.withTrackedLock { run in
                run.latencies.append((now - start).inSeconds - pts)
                if run.firstFrame == nil { run.firstFrame = (now - joined).inSeconds }
            }
        }
        let player = Player(clock: HostClock.shared, videoSink: sink, audioSink: NullAudioSink())
        player.addEventObserver { event in
            if case .stall(true) = event { run.withTrackedLock { $0.stalls += 1 } }
        }
        // Reel's player holds the stream's target offset as `reel play` does.
        let latency = scheduled ? LiveLatencyDriver(player: player) : nil
        defer { latency?.stop() }
        let done = BenchPlaybackCommand.endOrFailure(of: player)
        player.replaceCurrentItem(with: PlayerItem(url: server.url(for: "live.m3u8"), loader: loader))
        player.play()
        let failure = await done.wait(timeout: seconds)?.0 ?? nil
        await onOwnThread(named: "reel.bench-close") { player.replaceCurrentItem(with: nil) }
        await http.shutdown()
        // What was asked for more than once, playlists aside (a reload is not a refetch).
        let media = server.statistics.requests.filter { !$0.path.hasSuffix(".m3u8") }
        let keys = media.map { "\($0.path) \($0.range ?? "")" }
        return run.withTrackedLock { run in
            run.failure = failure
            run.requests = keys.count
            run.refetched = keys.count - Set(keys).count
            return run
        }
    }

    static func text(reel: Run, ffmpeg: Run, parts: Bool) -> String {
        var out = "Live HLS, 2 s segments" + (parts ? " of 0.5 s parts" : "") + ", both players joining together, each from its own origin\n\n"
        out += "                          Reel's scheduler   FFmpeg's HLS demuxer\n"
        func row(_ name: String, _ value: (Run) -> String) {
            out += name.padding(toLength: 26, withPad: " ", startingAt: 0)
                + value(reel).leftPadded(16) + value(ffmpeg).leftPadded(23) + "\n"
        }
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.2f s", $0) } ?? "—" }
        row("latency, median") { seconds($0.percentile(0.5)) }
        row("latency, p95") { seconds($0.percentile(0.95)) }
        row("latency, min") { seconds($0.latencies.min()) }
        row("first frame after joining") { seconds($0.firstFrame) }
        row("frames shown") { String($0.latencies.count) }
        row("stalls") { String($0.stalls) }
        row("media requests") { String($0.requests) }
        row("asked for twice") { String($0.refetched) }
        if let r = reel.percentile(0.5), let f = ffmpeg.percentile(0.5), f > 0 {
            out += String(format: "\nmedian latency ratio Reel/FFmpeg: %.2f×", r / f)
            out += r <= f ? "   ✓ goal at or below FFmpeg\n" : "   ✗ goal at or below FFmpeg\n"
        }
        if parts, let r = reel.percentile(0.5) {
            out += String(format: "Reel's median with parts: %.2f s", r) + (r < 2 ? "   ✓ goal below 2 s\n" : "   ✗ goal below 2 s\n")
        }
        for (name, run) in [("Reel", reel), ("FFmpeg", ffmpeg)] { if let failure = run.failure { out += "\(name) failed: \(failure)\n" } }
        return out
    }

    static func json(reel: Run, ffmpeg: Run, parts: Bool) -> String {
        func run(_ r: Run) -> String {
            "{\"latencyMedianSeconds\":\(jsonNumber(r.percentile(0.5))),\"latencyP95Seconds\":\(jsonNumber(r.percentile(0.95))),"
                + "\"latencyMinSeconds\":\(jsonNumber(r.latencies.min())),\"firstFrameSeconds\":\(jsonNumber(r.firstFrame)),"
                + "\"frames\":\(r.latencies.count),\"stalls\":\(r.stalls),\"mediaRequests\":\(r.requests),\"refetched\":\(r.refetched),"
                + "\"failure\":\(r.failure.map(jsonString) ?? "null")}"
        }
        return "{\"parts\":\(parts),\"reel\":\(run(reel)),\"ffmpeg\":\(run(ffmpeg))}"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// A video sink that only notes each shown frame's timestamp (seconds).
private final class LatencySink: VideoSink, Sendable {
    let shown: @Sendable (Double) -> Void
    init(_ shown: @escaping @Sendable (Double) -> Void) { self.shown = shown }
    func present(_ frame: VideoFrame, presentation: Presentation) {
        if frame.pts.isNumeric { shown(frame.pts.seconds) }
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
