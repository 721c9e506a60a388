import ArgumentParser
import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelMediaTools
import ReelSDL
import ReelThreads

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
            Without FILE it encodes a 1080x1920 30 fps H.264 clip. The real-time runs play through an \
            SDL audio device (the dummy driver: a real device's callback thread, no sound) while busy \
            loops load every core, and report the audio callback's durations, underruns, the A/V \
            offset of presented frames, and how long a rate change takes to be heard. With a display \
            (DISPLAY set: a desktop, or xvfb-run), the HDR rows: one testsrc2 clip made by FFmpeg's \
            zscale as SDR, HLG and PQ (10-bit HEVC, BT.2020, 203-nit white) played into the window \
            with the GL and the software renderer, every frame drawn, CPU per frame against SDR's.
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

    @Option(name: .customLong("busy-loops"), help: "Busy-loop processes loading the CPUs during the real-time runs (default: one per core).")
    var busyLoops: Int?

    @Option(name: .customLong("audio-buffer"), help: "Frames per audio device callback in the real-time runs.")
    var audioBuffer: Int = 512

    @Option(name: .customLong("memory-runs"), help: "Peak-memory runs of Reel and of each reference player found (mpv, ffmpeg); 0 skips them.")
    var memoryRuns: Int = 3

    @Option(name: .customLong("clip-seconds"), help: "Length of the clip made when no FILE is given.")
    var clipSeconds: Double = 10

    @Option(name: .customLong("clip-size"), help: "WIDTHxHEIGHT of the clip made when no FILE is given.")
    var clipSize: String = "1080x1920"

    @Option(name: .customLong("hdr-runs"), help: "Runs of the HDR rows (SDR, HLG and PQ in the window, GL and software; a display is needed); 0 skips them.")
    var hdrRuns: Int = 3

    @Option(name: .customLong("hdr-clip"), help: "WIDTHxHEIGHT,SECONDS of the HDR rows' clip.")
    var hdrClip: String = "540x960,4"

    @Flag(help: "Print the results as JSON.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        guard memoryRuns >= 0 else { throw ValidationError("--memory-runs must not be negative") }
        if let busyLoops, busyLoops < 0 { throw ValidationError("--busy-loops must not be negative") }
        guard audioBuffer >= 64, audioBuffer <= 16384 else { throw ValidationError("--audio-buffer must be 64…16384 frames") }
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be positive") }
        let parts = clipSize.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts.allSatisfy({ $0 >= 16 && $0 % 2 == 0 }) else { throw ValidationError("--clip-size must look like 1080x1920") }
        guard hdrRuns >= 0 else { throw ValidationError("--hdr-runs must not be negative") }
        guard hdrClipShape != nil else { throw ValidationError("--hdr-clip must look like 540x960,4") }
    }

    /// `--hdr-clip` read: even sizes of 16 or more, 0.5…60 s.
    var hdrClipShape: (width: Int, height: Int, seconds: Double)? {
        let halves = hdrClip.lowercased().split(separator: ",")
        guard halves.count == 2, let seconds = Double(halves[1]), seconds >= 0.5, seconds <= 60 else { return nil }
        let size = halves[0].split(separator: "x").compactMap { Int($0) }
        guard size.count == 2, size.allSatisfy({ $0 >= 16 && $0 % 2 == 0 }) else { return nil }
        return (size[0], size[1], seconds)
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
            try await onOwnThread(named: "reel.encode") { try ClipEncoder.encode(spec, to: url) }
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
        var conditions: RealtimeConditions?
        if !noRealtime {
            let loops = busyLoops ?? ProcessInfo.processInfo.activeProcessorCount
            let audio = RealtimeAudio(bufferFrames: audioBuffer)
            conditions = RealtimeConditions(busyLoops: loops, audioDevice: audio.description)
            let load = BusyLoops(count: loops)
            defer { load.stop(); audio.close() }
            for rate in [1.0, 2.0] {
                if !json { printError("real time at \(rate)x with \(loops) busy loop\(loops == 1 ? "" : "s")…") }
                realtime.append(try await Self.realtime(url, rate: rate, cap: seconds, audio: audio))
            }
            if !json { printError("rate changes in real time…") }
            conditions?.rateChangeMs = try await Self.rateChanges(url, duration: info.duration ?? .indefinite, audio: audio)
        }
        var memory: [PeakMemory.Row] = []
        if memoryRuns > 0 {
            // The first half of the file: by then the pipeline's caps are full, so the whole
            // file's peak may not be higher (nothing grows past them).
            let frames = Int(Distribution(reel.map { Double($0.presented) }).p50)
            let half = frames >= 4 ? frames / 2 : nil
            memory = try await PeakMemory.measure(url, runs: memoryRuns, halfFrames: half) { if !json { printError($0) } }
        }
        let hdr = hdrRuns > 0 ? try await hdrSection() : nil
        let result = PlaybackBenchResult(file: url, info: info, reel: reel, ffmpeg: ffmpeg, realtime: realtime, conditions: conditions,
                                         memory: memory, hdr: hdr)
        print(json ? result.json() : result.text(), terminator: json ? "\n" : "")
    }

    /// The HDR rows: their clips made in a scratch directory, then measured (or why not).
    private func hdrSection() async throws -> HDRPlaybackSection {
        if let reason = HDRPlaybackBench.unavailableReason() { return HDRPlaybackSection(skipped: reason) }
        guard let shape = hdrClipShape else { return HDRPlaybackSection(skipped: "--hdr-clip unreadable") }
        let directory = try TemporaryDirectory("bench-hdr")
        defer { directory.remove() }
        let clip = "a \(shape.width)x\(shape.height) 30 fps \(shape.seconds) s testsrc2 clip"
        if !json { printError("encoding \(clip) as SDR, HLG and PQ…") }
        let clips = try await onOwnThread(named: "reel.encode") {
            try HDRPlaybackBench.makeClips(in: directory.url, width: shape.width, height: shape.height, seconds: shape.seconds)
        }
        let rows = try await HDRPlaybackBench.measure(clips, runs: hdrRuns, size: (shape.width, shape.height)) { if !json { printError($0) } }
        return HDRPlaybackSection(rows: rows, clip: clip)
    }

    private func decodeOnly(_ url: URL) async throws -> FFmpegBaseline.DecodeThroughput {
        do {
            return try await onOwnThread(named: "reel.baseline") { try FFmpegBaseline.decodeThroughput(file: url) }
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
        var avOffsetP95Ms: Double?
        var avOffsetMaxMs: Double?
        var underruns: Int
        var callbacks: AudioCallbackStatistics?
    }

    /// Delivered once when `player` reaches the end (nil) or fails (its message).
    static func endOrFailure(of player: Player) -> OneShot<String?> {
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

    /// Plays in real time (the host clock) at `rate` to the end or for `cap` seconds, through the
    /// audio device when there is one.
    static func realtime(_ url: URL, rate: Double, cap: Double?, audio: RealtimeAudio) async throws -> RealtimeResult {
        let player = Player(clock: HostClock.shared, videoSink: HeadlessVideoSink(), audioSink: audio.makeSink())
        let done = endOrFailure(of: player)
        audio.output?.resetCallbackStatistics()
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
        let callbacks = audio.output?.callbackStatistics
        await onOwnThread(named: "reel.bench-close") { player.replaceCurrentItem(with: nil) }
        if let message = outcome?.0 { throw CommandFailure.media(message) }
        return RealtimeResult(rate: rate, seconds: wall, presented: stats.presentedFrames, dropped: stats.droppedFrames,
                              cpuSeconds: cpu, avOffsetP95Ms: stats.avOffsetP95Ms, avOffsetMaxMs: stats.avOffsetMaxMs,
                              underruns: stats.audioUnderruns, callbacks: callbacks)
    }

    /// Plays in real time switching 1x → 2x → 1x (a second apart, or a quarter of the clip for
    /// clips under 4 s); how long after each change the device took the first sample at the new
    /// rate, plus its latency. The clip loops, so a change a starved machine makes late is still
    /// heard instead of landing after the end.
    static func rateChanges(_ url: URL, duration: MediaTime, audio: RealtimeAudio) async throws -> [Double] {
        guard audio.output != nil else { return [] }
        let player = Player(clock: HostClock.shared, videoSink: HeadlessVideoSink(), audioSink: audio.makeSink())
        player.actionAtItemEnd = .loop
        let ready = OneShot<Void>()
        player.addEventObserver { event in
            if case .timeControlStatusChanged(.playing) = event { ready.fulfil(()) }
        }
        player.replaceCurrentItem(with: PlayerItem(url: url, loader: FileLoader()))
        player.play()
        // Watchdogs, not bounds: a starved machine may take a while to start, and a change
        // made before the first sample is not a change anyone hears.
        guard await ready.wait(timeout: 120) != nil else {
            await onOwnThread(named: "reel.bench-close") { player.replaceCurrentItem(with: nil) }
            return []
        }
        let step = duration.isNumeric ? min(1, duration.seconds / 4) : 1
        for (index, rate) in [2.0, 1.0].enumerated() {
            try await Task.sleep(for: .seconds(step))
            player.rate = rate
            // Until the device has played the change (a watchdog of 60 s, not a bound): on a
            // starved machine the next change must not overtake this one.
            let deadline = ContinuousClock.now + .seconds(60)
            while player.statistics.rateChangeLatenciesMs.count <= index, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        let latencies = player.statistics.rateChangeLatenciesMs
        await onOwnThread(named: "reel.bench-close") { player.replaceCurrentItem(with: nil) }
        return latencies
    }
}

/// The audio device of the real-time runs: SDL's dummy driver (a device thread calling back in
/// real time, playing nothing), else a null sink.
final class RealtimeAudio: Sendable {
    let output: SDLAudioOutput?

    init(bufferFrames: Int) {
        output = try? SDLAudioOutput(bufferFrames: bufferFrames, driver: "dummy")
    }

    func makeSink() -> any AudioSink { output?.makeSink() ?? NullAudioSink() }

    var description: String {
        guard let output else { return "null audio (no SDL audio device)" }
        return "SDL \(output.driverName) audio device, \(output.bufferFrames) frames a callback"
    }

    func close() { output?.close() }
}

/// Processes that spin on every core while they run, as a busy desktop would.
final class BusyLoops: Sendable {
    private let processes: [Process]

    init(count: Int) {
        processes = (0..<count).compactMap { _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "while :; do :; done"]
            return (try? process.run()) != nil ? process : nil
        }
    }

    /// Kills them (SIGKILL: a child inherits an ignored SIGTERM from a process that handles
    /// signals itself) and reaps them. A second call finds them ended already.
    func stop() {
        for process in processes where process.end == nil { kill(process.processIdentifier, SIGKILL) }
        for process in processes { _ = process.waitForEndBlocking() }
    }
}

/// What the real-time runs ran under, and what they measured across runs.
struct RealtimeConditions {
    var busyLoops: Int
    var audioDevice: String
    var rateChangeMs: [Double] = []
}

/// The playback benchmark's figures.
struct PlaybackBenchResult {
    let file: URL
    let info: MediaInfo
    let reel: [BenchPlaybackCommand.ReelThroughput]
    let ffmpeg: [FFmpegBaseline.DecodeThroughput]
    let realtime: [BenchPlaybackCommand.RealtimeResult]
    let conditions: RealtimeConditions?
    let memory: [PeakMemory.Row]
    let hdr: HDRPlaybackSection?

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
        let mark = ratio >= 1.0 ? "✓" : "✗"
        out += String(format: "\nthroughput Reel/FFmpeg: %.3f×   ", ratio) + mark + " goal ≥ 1.00×\n"
        if let conditions, !realtime.isEmpty { out += realtimeText(conditions) }
        if !memory.isEmpty { out += memoryText() }
        if let hdr { out += hdr.text() }
        if out.contains("✗"), let note = benchConditions(ownLoad: (conditions?.busyLoops ?? 0) + 1) { out += "\n" + note }
        return out
    }

    /// Reel's peak over the whole file against its peak over the first half: what the
    /// pipeline's caps hold it to.
    var memoryHeldRatio: Double? {
        guard let whole = memory.first(where: { $0.name == PeakMemory.reelName }), !whole.peaks.isEmpty,
              let half = memory.first(where: { $0.name.hasPrefix(PeakMemory.halfPrefix) }), !half.peaks.isEmpty
        else { return nil }
        return whole.p50 / half.p50
    }

    private func memoryText() -> String {
        let runs = memory.map(\.peaks.count).max() ?? 0
        var out = "\npeak resident memory, whole process (its VmHWM), p50 of \(runs) run\(runs == 1 ? "" : "s") each, interleaved\n"
        let reelPeak = memory.first { $0.name == PeakMemory.reelName && !$0.peaks.isEmpty }?.p50
        for row in memory {
            out += "  " + row.name.rightPadded(to: 24)
            out += row.peaks.isEmpty ? "        –" : String(format: "%7.1f MB", row.p50 / 1_000_000)
            if row.failures > 0 { out += "  (\(row.failures) run\(row.failures == 1 ? "" : "s") failed)" }
            if !row.name.hasPrefix("Reel"), let reelPeak, !row.peaks.isEmpty {
                let name = row.name.split(separator: " ").first.map(String.init) ?? row.name
                out += String(format: "   Reel/%@ %.2f×", name, reelPeak / row.p50)
            }
            out += "\n"
        }
        if !memory.contains(where: { $0.name == "mpv" }) { out += "  (mpv not installed: no mpv comparison)\n" }
        if let ratio = memoryHeldRatio {
            let caps = PipelineConfiguration()
            out += String(format: "  %@ held by the pipeline's caps: the whole file's peak %.2f× its first half's (goal ≤ 1.10×)\n",
                          ratio <= 1.10 ? "✓" : "✗", ratio)
            out += String(format: "    the caps: %d decoded frames ready, %g s of packets read ahead of a file (at most %d MiB), "
                          + "%g s of decoded audio, the decoder's own frames\n",
                          caps.videoFrameCapacity, caps.localPacketQueueDuration.seconds, caps.packetQueueBytes >> 20,
                          caps.audioQueueDuration.seconds)
            out += "    the other players' peaks hold their own code (Reel's: the Swift runtime and Foundation): Reel/mpv is shown, not judged\n"
        }
        return out
    }

    private func realtimeText(_ conditions: RealtimeConditions) -> String {
        var out = "\nreal time: host clock, headless sink, \(conditions.audioDevice), \(conditions.busyLoops) busy loop\(conditions.busyLoops == 1 ? "" : "s")\n"
        out += "  rate   wall s   presented   dropped   CPU s   A/V p95 ms   max ms   callback p50/p99/max µs   underruns\n"
        for run in realtime {
            let p95 = run.avOffsetP95Ms.map { String(format: "%10.0f", $0) } ?? "         –"
            let max = run.avOffsetMaxMs.map { String(format: "%8.0f", $0) } ?? "       –"
            let callbacks = run.callbacks.map { String(format: "%6.0f/%4.0f/%5.0f", $0.p50Microseconds, $0.p99Microseconds, $0.maxMicroseconds) } ?? "      –/   –/    –"
            out += String(format: "  %3.0fx  %7.2f  %10d  %8d  %6.2f", run.rate, run.seconds, run.presented, run.dropped, run.cpuSeconds)
            out += "   \(p95) \(max)   \(callbacks.leftPadded(to: 23))   \(String(run.underruns).leftPadded(to: 9))\n"
        }
        let worstCallback = realtime.compactMap { $0.callbacks?.maxMicroseconds }.max()
        let underruns = realtime.reduce(0) { $0 + $1.underruns }
        let p95 = realtime.compactMap(\.avOffsetP95Ms).max()
        let maxOffset = realtime.compactMap(\.avOffsetMaxMs).max()
        func goal(_ met: Bool, _ text: String) -> String { "  \(met ? "✓" : "✗") \(text)\n" }
        out += "\n"
        if let worstCallback { out += goal(worstCallback < 1000, String(format: "audio callback max %.0f µs (goal < 1000 µs)", worstCallback)) }
        out += goal(underruns == 0, "\(underruns) underruns (goal 0)")
        if let p95, let maxOffset { out += goal(p95 <= 15 && maxOffset <= 40, String(format: "A/V offset p95 %.0f ms, max %.0f ms (goal ≤ 15, ≤ 40)", p95, maxOffset)) }
        if let dropped = realtime.first(where: { $0.rate == 1 })?.dropped { out += goal(dropped == 0, "\(dropped) frames dropped at 1x (goal 0)") }
        if !conditions.rateChangeMs.isEmpty {
            let text = conditions.rateChangeMs.map { String(format: "%.0f", $0) }.joined(separator: ", ")
            out += goal(conditions.rateChangeMs.allSatisfy { $0 <= 50 }, "rate changes heard after \(text) ms (goal ≤ 50 ms)")
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
        text += realtime.map { run in
            var item = "{\"rate\":\(jsonNumber(run.rate)),\"seconds\":\(jsonNumber(run.seconds)),\"presentedFrames\":\(run.presented),"
            item += "\"droppedFrames\":\(run.dropped),\"cpuSeconds\":\(jsonNumber(run.cpuSeconds)),\"audioUnderruns\":\(run.underruns)"
            if let p95 = run.avOffsetP95Ms, let max = run.avOffsetMaxMs {
                item += ",\"avOffsetMs\":{\"p95\":\(jsonNumber(p95)),\"max\":\(jsonNumber(max))}"
            }
            if let callbacks = run.callbacks {
                item += ",\"audioCallbackMicroseconds\":{\"count\":\(callbacks.callbacks),\"p50\":\(jsonNumber(callbacks.p50Microseconds)),"
                item += "\"p99\":\(jsonNumber(callbacks.p99Microseconds)),\"max\":\(jsonNumber(callbacks.maxMicroseconds))}"
            }
            return item + "}"
        }.joined(separator: ",")
        text += "]"
        if let conditions {
            text += ",\"busyLoops\":\(conditions.busyLoops),\"audioDevice\":\(jsonString(conditions.audioDevice)),"
            text += "\"rateChangeMs\":[\(conditions.rateChangeMs.map { jsonNumber($0) }.joined(separator: ","))]"
        }
        if !memory.isEmpty {
            text += ",\"peakMemoryBytes\":{" + memory.map { row in
                "\(jsonString(row.name)):{\"p50\":\(row.peaks.isEmpty ? "null" : jsonNumber(row.p50)),\"runs\":[\(row.peaks.map(String.init).joined(separator: ","))],\"failures\":\(row.failures)}"
            }.joined(separator: ",") + "}"
            if let ratio = memoryHeldRatio { text += ",\"peakMemoryWholeOverFirstHalf\":\(jsonNumber(ratio))" }
        }
        if let hdr { text += ",\"hdr\":\(hdr.json())" }
        return text + "}"
    }
}
