import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia

/// `reel bench playback`: headless decode-and-present throughput against FFmpeg's
/// decode-only throughput of the same file in the same run, and dropped frames when
/// playing in real time at 1x and 2x.
struct BenchPlaybackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playback",
        abstract: "Playback throughput and dropped frames, against FFmpeg decode-only.",
        discussion: """
            Reel plays the file headless on a simulated clock that jumps to the next deadline as \
            soon as the pipeline is idle (as `reel play --clock fast`): every frame demuxed, decoded \
            (audio too), converted for presentation and presented. FFmpeg decodes the video stream \
            only, default threads. Then Reel plays in real time at 1x and 2x and counts late frames. \
            Without FILE it encodes a 1080x1920 30 fps H.264 clip.
            """
    )

    @Argument(help: "A local media file (default: a clip made for the run).")
    var file: String?

    @Option(help: "Throughput runs of each (the median is reported).")
    var runs: Int = 3

    @Option(help: "Cap each real-time run at this many seconds (default: the whole file).")
    var seconds: Double?

    @Flag(name: .customLong("no-realtime"), help: "Skip the real-time runs.")
    var noRealtime = false

    @Option(name: .customLong("clip-seconds"), help: "Length of the clip made when no FILE is given.")
    var clipSeconds: Double = 10

    @Option(name: .customLong("clip-size"), help: "WIDTHxHEIGHT of the clip made when no FILE is given.")
    var clipSize: String = "1080x1920"

    @Flag(help: "Print the results as JSON.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be positive") }
        let parts = clipSize.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts.allSatisfy({ $0 >= 16 && $0 % 2 == 0 }) else { throw ValidationError("--clip-size must look like 1080x1920") }
    }

    func run() async throws {
        global.apply()
        var scratch: TemporaryDirectory?
        defer { scratch?.remove() }
        let url: URL
        if let file {
            let source = try MediaSource(file)
            guard !source.isRemote else { throw CommandFailure.usage("give a local file (the throughput bench reads from disk)") }
            url = source.url
        } else {
            let directory = try TemporaryDirectory("bench-playback")
            scratch = directory
            let parts = clipSize.lowercased().split(separator: "x").compactMap { Int($0) }
            if !json { printError("encoding a \(parts[0])x\(parts[1]) 30 fps \(clipSeconds) s H.264 clip…") }
            let spec = ClipSpec(width: parts[0], height: parts[1], frameRate: 30, duration: clipSeconds,
                                keyframeInterval: 60, preset: "veryfast", bitRateKbps: 6000)
            url = directory.url.appendingPathComponent("playback.mp4")
            try await onThread(named: "reel.encode") { Result { try ClipEncoder.encode(spec, to: url) } }.get()
        }
        let info: MediaInfo
        do { info = try await MediaProbe.probe(url, loader: FileLoader()) } catch { throw CommandFailure.media(describe(error)) }

        var ffmpeg: [FFmpegBaseline.DecodeThroughput] = []
        var reel: [ReelThroughput] = []
        for run in 0..<runs {
            if !json { printError("throughput run \(run + 1)/\(runs)") }
            // Alternate the order so neither always runs on a warmer page cache.
            if run % 2 == 0 {
                ffmpeg.append(try await decodeOnly(url))
                reel.append(try await Self.reelThroughput(url))
            } else {
                reel.append(try await Self.reelThroughput(url))
                ffmpeg.append(try await decodeOnly(url))
            }
        }
        var realtime: [RealtimeResult] = []
        if !noRealtime {
            for rate in [1.0, 2.0] {
                if !json { printError("real time at \(rate)x…") }
                realtime.append(try await Self.realtime(url, rate: rate, cap: seconds))
            }
        }
        let result = PlaybackBenchResult(file: url, info: info, reel: reel, ffmpeg: ffmpeg, realtime: realtime)
        print(json ? result.json() : result.text(), terminator: json ? "\n" : "")
    }

    private func decodeOnly(_ url: URL) async throws -> FFmpegBaseline.DecodeThroughput {
        do {
            return try await onThread(named: "reel.baseline") { Result { try FFmpegBaseline.decodeThroughput(file: url) } }.get()
        } catch {
            throw CommandFailure.media("FFmpeg decode: \(describe(error))")
        }
    }

    struct ReelThroughput {
        var presented: Int
        var dropped: Int
        var wallSeconds: Double
        var cpuSeconds: Double
        var fps: Double { wallSeconds > 0 ? Double(presented) / wallSeconds : 0 }
    }

    struct RealtimeResult {
        var rate: Double
        var seconds: Double
        var presented: Int
        var dropped: Int
        var cpuSeconds: Double
    }

    /// Delivered once when `player` reaches the end (nil) or fails (its message).
    private static func endOrFailure(of player: Player) -> OneShot<String?> {
        let done = OneShot<String?>()
        player.addEventObserver { event in
            switch event {
            case .ended: done.fulfil(nil)
            case .failed(let error): done.fulfil(error.description)
            default: break
            }
        }
        return done
    }

    /// Plays the whole file on a simulated clock that jumps to the next deadline as soon as
    /// the pipeline is idle: decode-and-present as fast as the machine allows.
    static func reelThroughput(_ url: URL) async throws -> ReelThroughput {
        let clock = ManualClock()
        let sink = HeadlessVideoSink()
        let player = Player(clock: clock, videoSink: sink, audioSink: NullAudioSink(), measurementClock: HostClock.shared)
        let done = endOrFailure(of: player)
        let cpuStart = FFmpegBaseline.processCPUSeconds()
        let start = monotonicMs()
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: FileLoader()))
        player.play()
        let failure = await driveSimulatedClock(clock, player: player) { done.isFulfilled }
        let wall = (monotonicMs() - start) / 1000
        let cpu = FFmpegBaseline.processCPUSeconds() - cpuStart
        let ended = await done.wait(timeout: 1)
        let stats = player.statistics
        player.replaceCurrentItem(with: nil)
        if let failure { throw CommandFailure.media(failure) }
        if let message = ended?.0 { throw CommandFailure.media(message) }
        return ReelThroughput(presented: stats.presentedFrames, dropped: stats.droppedFrames, wallSeconds: wall, cpuSeconds: cpu)
    }

    /// Plays in real time (the host clock) at `rate` to the end or for `cap` seconds.
    static func realtime(_ url: URL, rate: Double, cap: Double?) async throws -> RealtimeResult {
        let player = Player(clock: HostClock.shared, videoSink: HeadlessVideoSink(), audioSink: NullAudioSink())
        let done = endOrFailure(of: player)
        let cpuStart = FFmpegBaseline.processCPUSeconds()
        let start = monotonicMs()
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: FileLoader()))
        player.defaultRate = rate
        player.play()
        let limit = cap ?? 600
        let outcome = await done.wait(timeout: limit)
        let stats = player.statistics
        let wall = (monotonicMs() - start) / 1000
        let cpu = FFmpegBaseline.processCPUSeconds() - cpuStart
        player.pause()
        player.replaceCurrentItem(with: nil)
        if let message = outcome?.0 { throw CommandFailure.media(message) }
        return RealtimeResult(rate: rate, seconds: wall, presented: stats.presentedFrames, dropped: stats.droppedFrames, cpuSeconds: cpu)
    }
}

/// The playback benchmark's figures.
struct PlaybackBenchResult {
    let file: URL
    let info: MediaInfo
    let reel: [BenchPlaybackCommand.ReelThroughput]
    let ffmpeg: [FFmpegBaseline.DecodeThroughput]
    let realtime: [BenchPlaybackCommand.RealtimeResult]

    var reelFPS: Double { Distribution(reel.map(\.fps)).p50 }
    var ffmpegFPS: Double { Distribution(ffmpeg.map(\.framesPerSecond)).p50 }
    var ratio: Double { reelFPS / ffmpegFPS }
    var reelCPUPerFrameMs: Double { Distribution(reel.map { $0.cpuSeconds / Double(max(1, $0.presented)) * 1000 }).p50 }
    var ffmpegCPUPerFrameMs: Double { Distribution(ffmpeg.map { $0.cpuSeconds / Double(max(1, $0.frames)) * 1000 }).p50 }

    var streamDescription: String {
        guard let video = info.videoStream else { return "no video stream" }
        var text = "\(video.codec) \(video.width ?? 0)x\(video.height ?? 0)"
        if let fps = video.frameRate, fps.isNumeric { text += String(format: " %.3g fps", fps.seconds) }
        if info.audioStream != nil { text += " + audio" }
        return text
    }

    func text() -> String {
        var out = "Reel playback vs FFmpeg decode-only — \(file.lastPathComponent) (\(streamDescription)), \(reel.count) run\(reel.count == 1 ? "" : "s") each, interleaved\n\n"
        out += "                          frames    wall s   frames/s   CPU s   CPU ms/frame\n"
        for (label, frames, wall, fps, cpu, perFrame) in [
            ("Reel decode+present", Distribution(reel.map { Double($0.presented) }).p50, Distribution(reel.map(\.wallSeconds)).p50,
             reelFPS, Distribution(reel.map(\.cpuSeconds)).p50, reelCPUPerFrameMs),
            ("FFmpeg decode only", Distribution(ffmpeg.map { Double($0.frames) }).p50, Distribution(ffmpeg.map(\.wallSeconds)).p50,
             ffmpegFPS, Distribution(ffmpeg.map(\.cpuSeconds)).p50, ffmpegCPUPerFrameMs),
        ] {
            out += label.rightPadded(to: 24) + String(format: "%8.0f  %8.2f  %9.1f  %6.2f  %13.2f\n", frames, wall, fps, cpu, perFrame)
        }
        let mark = ratio >= 0.9 ? "✓" : "✗"
        out += String(format: "\nthroughput Reel/FFmpeg: %.3f×   ", ratio) + mark + " goal ≥ 0.90×\n"
        if !realtime.isEmpty {
            out += "\nreal time (host clock, null audio, headless sink)\n"
            out += "  rate   wall s   presented   dropped   CPU s\n"
            for run in realtime {
                out += String(format: "  %3.0fx  %7.2f  %10d  %8d  %6.2f", run.rate, run.seconds, run.presented, run.dropped, run.cpuSeconds)
                if run.rate == 1 { out += run.dropped == 0 ? "   ✓ goal: no drops at 1x" : "   ✗ goal: no drops at 1x" }
                out += "\n"
            }
        }
        return out
    }

    func json() -> String {
        var text = "{\"file\":\(jsonString(file.path)),\"stream\":\(jsonString(streamDescription)),"
        text += "\"reel\":{\"frames\":\(jsonNumber(Distribution(reel.map { Double($0.presented) }).p50)),\"framesPerSecond\":\(jsonNumber(reelFPS)),"
        text += "\"cpuSeconds\":\(jsonNumber(Distribution(reel.map(\.cpuSeconds)).p50)),\"cpuMsPerFrame\":\(jsonNumber(reelCPUPerFrameMs))},"
        text += "\"ffmpeg\":{\"frames\":\(jsonNumber(Distribution(ffmpeg.map { Double($0.frames) }).p50)),\"framesPerSecond\":\(jsonNumber(ffmpegFPS)),"
        text += "\"cpuSeconds\":\(jsonNumber(Distribution(ffmpeg.map(\.cpuSeconds)).p50)),\"cpuMsPerFrame\":\(jsonNumber(ffmpegCPUPerFrameMs))},"
        text += "\"ratio\":\(jsonNumber(ratio)),\"runs\":\(reel.count),\"realtime\":["
        text += realtime.map {
            "{\"rate\":\(jsonNumber($0.rate)),\"seconds\":\(jsonNumber($0.seconds)),\"presentedFrames\":\($0.presented),\"droppedFrames\":\($0.dropped),\"cpuSeconds\":\(jsonNumber($0.cpuSeconds))}"
        }.joined(separator: ",")
        return text + "]}"
    }
}
