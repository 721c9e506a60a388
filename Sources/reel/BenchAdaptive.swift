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

/// `reel bench adaptive`: Reel's segment scheduler switching variants of a packaged ladder in
/// real time, beside the top variant held fixed, each from an origin of its own in this process:
/// the time to the first switch up on an unshaped link, and the stall time on a scripted link
/// that falls and recovers.
struct BenchAdaptiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adaptive",
        abstract: "Adaptive switching in real time: time to the first switch up, stall time beside a fixed top variant.",
        discussion: """
            Encodes a ladder of three sizes (180×320, 360×640, 720×1280; about 0.3, 0.8 and 2 \
            Mbit/s) of --seconds, packages it as HLS with 2 s fMP4 segments, and plays it headless \
            in real time (no sound device) through Reel's segment scheduler, each run from its own \
            origin: once on an unshaped loopback link, stopping at the first switch up; then on \
            --link with the adaptive rule and, at the same time from another origin with the same \
            link, with the top variant held fixed. The goals: a first switch up within the first \
            seconds, and less stalling than the fixed top variant.
            """
    )

    @Option(help: "Seconds of the ladder.")
    var seconds: Double = 30

    @Option(help: "The scripted link: SECONDS:KBPS,… from each origin's start.")
    var link: String = "0:3000,5:500,15:8000"

    @Flag(help: "Print the results as JSON.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard seconds >= 4, seconds <= 120 else { throw ValidationError("--seconds must be in [4, 120]") }
        do { _ = try LinkSchedule(parsing: link) } catch { throw ValidationError("--link: \(error)") }
    }

    /// What one run saw.
    struct Run: Sendable {
        var seconds = 0.0
        var presented = 0
        var stalls = 0
        var stalledSeconds = 0.0
        /// Wall seconds from play to the first switch up, and the rank it went to.
        var firstUp: (seconds: Double, rank: Int)?
        var switches: [String] = []
        var failure: String?
        /// When the stall in progress began, while one is.
        var stalledSince: Double?
    }

    func run() async throws {
        global.apply()
        let schedule = try LinkSchedule(parsing: link)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bench-adaptive-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        if !json { printError("encoding a \(Self.formatSeconds(seconds)) s ladder…") }
        let seconds = self.seconds
        let renditions = try await onOwnThread(named: "reel.bench-encode") {
            try Self.ladder(seconds: seconds, into: directory)
        }
        if !json { printError("fast link…") }
        let fast = try await Self.play(directory, renditions: renditions, link: nil, fixedTop: false, stopAtFirstUp: true,
                                       limit: seconds + 30)
        if !json { printError("scripted link \(link), adaptive and fixed top side by side…") }
        async let adaptive = Self.play(directory, renditions: renditions, link: schedule, fixedTop: false, stopAtFirstUp: false,
                                       limit: seconds * 4 + 30)
        async let fixed = Self.play(directory, renditions: renditions, link: schedule, fixedTop: true, stopAtFirstUp: false,
                                    limit: seconds * 4 + 30)
        let (a, f) = try await (adaptive, fixed)
        print(json ? Self.json(fast: fast, adaptive: a, fixed: f, link: link, seconds: seconds)
                   : Self.text(fast: fast, adaptive: a, fixed: f, link: link), terminator: json ? "\n" : "")
    }

    /// The ladder, packaged: its renditions lowest first.
    static func ladder(seconds: Double, into directory: URL) throws -> [StreamPackager.Rendition] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let specs = [(180, 320, 250), (360, 640, 700), (720, 1280, 1800)].map { width, height, kbps in
            ClipSpec(width: width, height: height, frameRate: 30, duration: seconds, keyframeInterval: 60, bFrames: 0,
                     preset: "veryfast", bitRateKbps: kbps)
        }
        var clips: [URL] = []
        for (index, spec) in specs.enumerated() {
            let clip = directory.appendingPathComponent("clip\(index).mp4")
            try ClipEncoder.encode(spec, to: clip)
            clips.append(clip)
        }
        return try StreamPackager.packageVariants(clips, loader: FileLoader(), format: .hlsFMP4,
                                                  into: directory.appendingPathComponent("ladder"), segmentSeconds: 2).renditions
    }

    /// One run in real time from an origin of its own.
    static func play(_ directory: URL, renditions: [StreamPackager.Rendition], link: LinkSchedule?, fixedTop: Bool,
                     stopAtFirstUp: Bool, limit: Double) async throws -> Run {
        var configuration = OriginServer.Configuration(root: directory.appendingPathComponent("ladder"))
        configuration.link = link
        let server = OriginServer(configuration: configuration)
        _ = try await server.start()
        let meter = BandwidthMeter()
        let http = HTTPLoader(transferListener: meter)
        let live = LiveMediaLoader(upstream: http)
        let variants = renditions.map { LiveSegmentReader.Variant(playlist: server.url(for: $0.playlist), bandwidth: $0.bandwidth) }
        let start = HostClock.shared.now
        let elapsed = { @Sendable in (HostClock.shared.now - start).seconds }
        let state = Mutex(Run())
        let firstUp = OneShot<Void>()
        let switching: LiveSegmentReader.Switching = fixedTop ? .plan([0: variants.count - 1])
            : .adaptive(AdaptiveVariantRule(), estimate: meter)
        let url = live.register(variants: variants, startRank: 0, switching: switching) { event in
            guard case .switched(let change) = event else { return }
            let at = elapsed()
            state.withTrackedLock { run in
                run.switches.append(String(format: "%@ %d→%d before segment %lld at %.1f s", change.to > change.from ? "up" : "down",
                                           change.from, change.to, change.sequence, at))
                if change.to > change.from, run.firstUp == nil, !fixedTop { run.firstUp = (at, change.to) }
            }
            if change.to > change.from { firstUp.fulfil(()) }
        }
        let player = Player(clock: HostClock.shared, videoSink: HeadlessVideoSink(), audioSink: NullAudioSink())
        player.addEventObserver { event in
            guard case .stall(let stalled) = event else { return }
            let at = elapsed()
            state.withTrackedLock { run in
                if stalled {
                    run.stalls += 1
                    run.stalledSince = at
                } else if let since = run.stalledSince {
                    run.stalledSeconds += at - since
                    run.stalledSince = nil
                }
            }
        }
        let done = BenchPlaybackCommand.endOrFailure(of: player)
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: live))
        player.play()
        var failure: String?
        if stopAtFirstUp {
            // The first switch up, or the end (or a failure) if none comes.
            player.addEventObserver { event in
                switch event {
                case .ended, .failed: firstUp.fulfil(())
                default: break
                }
            }
            _ = await firstUp.wait(timeout: limit)
            if done.isFulfilled { failure = await done.wait(timeout: 0)?.0 ?? nil }
        } else {
            failure = await done.wait(timeout: limit)?.0 ?? nil
        }
        let presented = player.statistics.presentedFrames
        await onOwnThread(named: "reel.bench-close") { player.replaceCurrentItem(with: nil) }
        await http.shutdown()
        await server.stop()
        var run = state.withTrackedLock { $0 }
        run.seconds = elapsed()
        run.presented = presented
        if let failure { run.failure = failure }
        return run
    }

    static func text(fast: Run, adaptive: Run, fixed: Run, link: String) -> String {
        var out = "Reel's segment scheduler in real time, a 3-variant ladder of 2 s segments, each run from its own origin\n\n"
        if let up = fast.firstUp {
            out += String(format: "unshaped link: first switch up after %.2f s (to rank %d)", up.seconds, up.rank)
            out += up.seconds <= 5 ? "   ✓ goal within 5 s\n" : "   ✗ goal within 5 s\n"
        } else {
            out += "unshaped link: no switch up\(fast.failure.map { " (\($0))" } ?? "")   ✗ goal within 5 s\n"
        }
        out += "\nlink \(link)        adaptive    top variant fixed\n"
        out += "stall time (s)   " + String(format: "%19.2f %20.2f", adaptive.stalledSeconds, fixed.stalledSeconds)
        if fixed.stalledSeconds > 0 {
            out += String(format: "   ratio %.2f×", adaptive.stalledSeconds / fixed.stalledSeconds)
        }
        out += adaptive.stalledSeconds < fixed.stalledSeconds || (adaptive.stalledSeconds == 0 && fixed.stalledSeconds == 0)
            ? "   ✓ goal below fixed\n" : "   ✗ goal below fixed\n"
        out += "stalls           " + String(format: "%19d %20d\n", adaptive.stalls, fixed.stalls)
        out += "frames shown     " + String(format: "%19d %20d\n", adaptive.presented, fixed.presented)
        out += "wall seconds     " + String(format: "%19.1f %20.1f\n", adaptive.seconds, fixed.seconds)
        for failure in [adaptive.failure, fixed.failure].compactMap({ $0 }) { out += "failed: \(failure)\n" }
        out += "\nadaptive switches:\n" + adaptive.switches.map { "  " + $0 }.joined(separator: "\n") + "\n"
        return out
    }

    static func json(fast: Run, adaptive: Run, fixed: Run, link: String, seconds: Double) -> String {
        func run(_ r: Run) -> String {
            "{\"stalls\":\(r.stalls),\"stalledSeconds\":\(jsonNumber(r.stalledSeconds)),\"presented\":\(r.presented),"
                + "\"wallSeconds\":\(jsonNumber(r.seconds)),\"switches\":[\(r.switches.map(jsonString).joined(separator: ","))],"
                + "\"failure\":\(r.failure.map(jsonString) ?? "null")}"
        }
        return "{\"seconds\":\(jsonNumber(seconds)),\"link\":\(jsonString(link)),"
            + "\"firstSwitchUpSeconds\":\(jsonNumber(fast.firstUp?.seconds)),\"firstSwitchUpRank\":\(fast.firstUp.map { String($0.rank) } ?? "null"),"
            + "\"adaptive\":\(run(adaptive)),\"fixedTop\":\(run(fixed))}"
    }

    private static func formatSeconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
