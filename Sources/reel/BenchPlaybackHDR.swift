import Foundation
import ReelCore
import ReelLoading
import ReelMedia
import ReelMediaTools
import ReelSDL
import ReelThreads

/// The HDR rows of `reel bench playback`: one clip made three ways — SDR BT.709, HLG and PQ
/// (BT.2020, SDR white at 203 nits, by FFmpeg's zscale from the same testsrc2 frames, as the
/// HDR tests make their bars) — each 10-bit HEVC at the same bit rate, played into Reel's
/// window with each renderer, every frame drawn. What a frame costs is the process's CPU time over
/// the run divided by the frames the window drew: decode, tone mapping and drawing together,
/// as `reel play --window` pays them. Each HDR row is judged against SDR in the same run.
enum HDRPlaybackBench {
    enum Kind: String, CaseIterable, Sendable {
        case sdr, hlg, pq

        /// The transfer as FFmpeg names it.
        var transfer: String {
            switch self {
            case .sdr: "bt709"
            case .hlg: "arib-std-b67"
            case .pq: "smpte2084"
            }
        }
    }

    struct Run: Sendable {
        var drawn: Int
        var skipped: Int
        var cpuSeconds: Double
        var wallSeconds: Double
        /// CPU time of the GL driver's rasteriser threads over the run (Mesa's llvmpipe: the
        /// shaders run on the CPU there, where a GPU would run them); 0 with a hardware driver.
        var rasteriserSeconds: Double = 0
        var cpuMsPerFrame: Double { cpuSeconds / Double(max(1, drawn)) * 1000 }
        var rasteriserMsPerFrame: Double { rasteriserSeconds / Double(max(1, drawn)) * 1000 }
        /// The process's CPU less the rasteriser threads': what the frame costs beside a GPU.
        var ownMsPerFrame: Double { cpuMsPerFrame - rasteriserMsPerFrame }
    }

    struct Row: Sendable {
        var kind: Kind
        var renderer: RendererKind
        var rendererName: String = ""
        var runs: [Run] = []
        var decodeMsPerFrame: [Double] = []
        var cpuMsPerFrame: Double { Distribution(runs.map(\.cpuMsPerFrame)).p50 }
        var ownMsPerFrame: Double { Distribution(runs.map(\.ownMsPerFrame)).p50 }
        var rasteriserMsPerFrame: Double { Distribution(runs.map(\.rasteriserMsPerFrame)).p50 }
    }

    /// Why the rows cannot run here, or nil when they can.
    static func unavailableReason() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if (environment["DISPLAY"] ?? "").isEmpty && (environment["WAYLAND_DISPLAY"] ?? "").isEmpty {
            return "no display (DISPLAY is not set: run the bench under a desktop or `xvfb-run -s '-screen 0 1280x1024x24'`)"
        }
        guard let ffmpeg = PeakMemory.executable("ffmpeg") else { return "the ffmpeg command is missing (it makes the clips)" }
        guard let filters = try? runTool([ffmpeg, "-hide_banner", "-filters"]), filters.contains(" zscale ") else {
            return "FFmpeg has no zscale filter (it makes the HLG and PQ clips)"
        }
        return nil
    }

    /// The three clips, `width`×`height` at 30 fps for `seconds`, in `directory`.
    static func makeClips(in directory: URL, width: Int, height: Int, seconds: Double) throws -> [Kind: URL] {
        guard let ffmpeg = PeakMemory.executable("ffmpeg") else { throw CommandFailure.media("the ffmpeg command is missing") }
        let toSDR = "format=gbrp,zscale=tin=bt709:pin=bt709:rin=full:m=bt709:t=bt709:p=bt709:r=limited"
        var clips: [Kind: URL] = [:]
        for kind in Kind.allCases {
            let url = directory.appendingPathComponent("hdr-bench-\(kind.rawValue).mp4")
            var filter = toSDR
            var tags = ["-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"]
            if kind != .sdr {
                filter += ",zscale=tin=bt709:min=bt709:pin=bt709:rin=limited:t=\(kind.transfer):p=bt2020:m=bt2020nc:r=limited:npl=203:agamma=0"
                tags = ["-color_primaries", "bt2020", "-color_trc", kind.transfer, "-colorspace", "bt2020nc"]
            }
            // The same bit rate for all three, so the decoder's work is alike.
            let rate = max(500, width * height * 3 / 1000)
            _ = try runTool([ffmpeg, "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=30",
                             "-t", String(seconds), "-vf", filter + ",format=yuv420p10le", "-c:v", "libx265", "-preset", "ultrafast",
                             "-x265-params", "log-level=error:bitrate=\(rate):vbv-maxrate=\(rate):vbv-bufsize=\(rate):keyint=60"]
                            + tags + ["-tag:v", "hvc1", url.path])
            clips[kind] = url
        }
        return clips
    }

    /// Every renderer × kind, `runs` times each, the order turned around at each run so none
    /// always comes first; the decode-only cost of each clip measured beside.
    static func measure(_ clips: [Kind: URL], runs: Int, size: (width: Int, height: Int),
                        progress: (String) -> Void) async throws -> [Row] {
        var rows: [Row] = []
        for renderer in RendererKind.allCases {
            for kind in Kind.allCases { rows.append(Row(kind: kind, renderer: renderer)) }
        }
        for run in 0..<runs {
            progress("HDR window run \(run + 1)/\(runs)")
            let order = run % 2 == 0 ? Array(rows.indices) : Array(rows.indices.reversed())
            for index in order {
                guard let url = clips[rows[index].kind] else { continue }
                let (name, result) = try await windowRun(url, renderer: rows[index].renderer, size: size)
                rows[index].rendererName = name
                rows[index].runs.append(result)
            }
            for kind in Kind.allCases {
                guard let url = clips[kind] else { continue }
                let decode = try await decodeMsPerFrame(url)
                for index in rows.indices where rows[index].kind == kind { rows[index].decodeMsPerFrame.append(decode) }
            }
        }
        return rows
    }

    /// `url` played once into a window of `size` drawn by `renderer` (no fallback), every frame
    /// drawn: the player runs on a simulated clock that this loop moves to its next deadline only
    /// once the window has drawn the frame last presented (so no frame is skipped, and a frame
    /// costs what decoding, mapping and drawing it cost, however loaded the machine is). The
    /// renderer's name and what the run cost; the window is open before the clock starts.
    static func windowRun(_ url: URL, renderer: RendererKind, size: (width: Int, height: Int)) async throws -> (String, Run) {
        try await onOwnThread(named: "reel.window") { () throws -> (String, Run) in
            let clock = ManualClock()
            let frames = FrameStore()
            let player = Player(clock: clock, videoSink: frames, audioSink: NullAudioSink(), measurementClock: HostClock.shared)
            player.actionAtItemEnd = .pause
            let done = BenchPlaybackCommand.endOrFailure(of: player)
            let window: PlaybackWindow
            do {
                window = try PlaybackWindow(player: player, frames: frames,
                                            options: .init(renderer: renderer, allowFallback: false, width: size.width,
                                                           height: size.height, title: "reel bench playback (HDR)"))
            } catch {
                throw CommandFailure.media("cannot open a \(renderer) window: \(error)")
            }
            let cpuStart = FFmpegBaseline.processCPUSeconds()
            let rasteriserStart = rasteriserThreadSeconds()
            let start = monotonicMs()
            player.replaceCurrentItem(with: PlayerItem(url: url, loader: FileLoader()))
            player.play()
            let stalled = stepEveryFrame(window, clock: clock, player: player) { done.isFulfilled }
            let cpu = FFmpegBaseline.processCPUSeconds() - cpuStart
            let wall = (monotonicMs() - start) / 1000
            let rasteriser = rasteriserThreadSeconds() - rasteriserStart
            let run = Run(drawn: window.framesDrawn, skipped: window.framesSkipped, cpuSeconds: cpu, wallSeconds: wall,
                          rasteriserSeconds: max(0, rasteriser))
            let name = window.rendererName
            player.replaceCurrentItem(with: nil)
            if let message = done.value ?? nil { throw CommandFailure.media(message) }
            if stalled { throw CommandFailure.media("playback made no progress for 30 s") }
            if !window.isRunning { throw CommandFailure.media("the window was closed during the bench") }
            return (name, run)
        }
    }

    /// Draws each newly presented frame, else moves the clock on, until `finished`; true when
    /// nothing moved for 30 s (a watchdog, not a bound).
    static func stepEveryFrame(_ window: PlaybackWindow, clock: ManualClock, player: Player, finished: () -> Bool) -> Bool {
        var drawnSequence = window.frames.current.sequence
        var idleSince: Date?
        while !finished(), window.isRunning {
            player.waitUntilSettled()
            let sequence = window.frames.current.sequence
            if sequence != drawnSequence {
                drawnSequence = sequence
                window.pump(waitMs: 0)
                idleSince = nil
            } else if clock.runNext() {
                idleSince = nil
            } else {
                let now = Date()
                if let since = idleSince, now.timeIntervalSince(since) > 30 { return true }
                if idleSince == nil { idleSince = now }
                Thread.sleep(forTimeInterval: 0.001)
            }
        }
        return false
    }

    /// CPU seconds so far of this process's threads that Mesa's llvmpipe rasterises on (named
    /// `llvmpipe-N`): they live as long as the GL context, so two readings while a window is open
    /// give what its drawing cost them.
    static func rasteriserThreadSeconds() -> Double {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return 0 }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  name.hasPrefix("llvmpipe"),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After the name: state is field 3, utime 14 and stime 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            total += (user + system) / ticks
        }
        return total
    }

    /// The clip decoded alone (FFmpeg's default threads, as the player's decoder): CPU per frame.
    static func decodeMsPerFrame(_ url: URL) async throws -> Double {
        let result = try await onOwnThread(named: "reel.baseline") { try FFmpegBaseline.decodeThroughput(file: url) }
        return result.cpuSeconds / Double(max(1, result.frames)) * 1000
    }

    /// Runs a tool to its end; its output (standard output and error), or a failure with it.
    static func runTool(_ command: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw CommandFailure.media("\(URL(fileURLWithPath: command[0]).lastPathComponent) failed: \(text.prefix(400))")
        }
        return text
    }
}

/// The HDR rows as the bench prints them: rows, or why there are none.
struct HDRPlaybackSection: Sendable {
    var rows: [HDRPlaybackBench.Row] = []
    var skipped: String?
    var clip = ""

    /// The software renderer's goal: HDR at most this many times SDR's CPU per frame.
    static let softwareGoal = 1.3

    func row(_ kind: HDRPlaybackBench.Kind, _ renderer: RendererKind) -> HDRPlaybackBench.Row? {
        rows.first { $0.kind == kind && $0.renderer == renderer }
    }

    /// `kind`'s CPU per frame over SDR's with the same renderer, less a software rasteriser's
    /// threads (the GPU's work, where there is one).
    func ratio(_ kind: HDRPlaybackBench.Kind, _ renderer: RendererKind) -> Double? {
        guard let hdr = row(kind, renderer), let sdr = row(.sdr, renderer), sdr.ownMsPerFrame > 0, !hdr.runs.isEmpty else { return nil }
        return hdr.ownMsPerFrame / sdr.ownMsPerFrame
    }

    /// The run-to-run noise of `renderer`'s SDR row: its runs' spread (largest less smallest)
    /// over their median. Two measurements of the same thing differ by this much here, so an
    /// HDR row within it of SDR's is not measurably dearer. Nil with fewer than two runs.
    func noise(_ renderer: RendererKind) -> Double? {
        guard let sdr = row(.sdr, renderer), sdr.runs.count >= 2 else { return nil }
        let values = sdr.runs.map(\.ownMsPerFrame)
        guard let low = values.min(), let high = values.max(), sdr.ownMsPerFrame > 0 else { return nil }
        return (high - low) / sdr.ownMsPerFrame
    }

    /// The GL goal: no more than SDR, plus the measured noise.
    var glLimit: Double { 1.0 + (noise(.gl) ?? 0) }

    func text() -> String {
        if let skipped { return "\nHDR rows skipped: \(skipped)\n" }
        let runs = rows.map(\.runs.count).max() ?? 0
        var out = "\nHDR on an SDR screen — \(clip) as SDR BT.709, HLG and PQ (BT.2020, 203-nit white, FFmpeg's zscale), "
        out += "10-bit HEVC at one bit rate, every frame decoded, mapped and drawn in the window (a simulated clock stepped per drawn frame), \(runs) run\(runs == 1 ? "" : "s") each, interleaved\n"
        out += "  renderer   clip   drawn  skipped   wall s   CPU ms/frame   in llvmpipe   the rest   decode alone   ×SDR (the rest)\n"
        for row in rows {
            let drawn = Distribution(row.runs.map { Double($0.drawn) }).p50
            let skipped = Distribution(row.runs.map { Double($0.skipped) }).p50
            let wall = Distribution(row.runs.map(\.wallSeconds)).p50
            let decode = Distribution(row.decodeMsPerFrame).p50
            out += "  " + row.renderer.rawValue.rightPadded(to: 9) + "  " + row.kind.rawValue.rightPadded(to: 4)
            out += String(format: "  %6.0f  %7.0f  %7.2f  %13.2f  %12.2f  %9.2f  %13.2f", drawn, skipped, wall, row.cpuMsPerFrame,
                          row.rasteriserMsPerFrame, row.ownMsPerFrame, decode)
            out += ratio(row.kind, row.renderer).map { String(format: "  %5.2f×", $0) } ?? "      –"
            out += "\n"
        }
        out += "\n"
        for renderer in RendererKind.allCases {
            let ratios = [HDRPlaybackBench.Kind.hlg, .pq].compactMap { kind in ratio(kind, renderer).map { (kind, $0) } }
            guard ratios.count == 2 else { continue }
            let limit = renderer == .gl ? glLimit : Self.softwareGoal
            let figures = ratios.map { String(format: "%@ %.2f×", $0.0.rawValue.uppercased(), $0.1) }.joined(separator: ", ")
            let goal: String
            if renderer == .gl {
                goal = noise(.gl).map { String(format: "goal ≤ 1.00× + %.2f, the SDR runs' own spread", $0) } ?? "goal ≤ 1.00× (one run: no noise measured)"
            } else {
                goal = String(format: "goal ≤ %.2f×", Self.softwareGoal)
            }
            out += "  \(ratios.allSatisfy { $0.1 <= limit } ? "✓" : "✗") \(renderer.rawValue): \(figures) SDR's CPU per frame (\(goal))\n"
        }
        out += "  (CPU ms/frame is the whole process's; 'in llvmpipe' is the share of Mesa's software rasteriser threads, which run the\n"
        out += "   shaders where a GPU would (under Xvfb), 'the rest' the remainder, which the ratios and goals compare)\n"
        return out
    }

    func json() -> String {
        if let skipped { return "{\"skipped\":\(jsonString(skipped))}" }
        var text = "{\"clip\":\(jsonString(clip)),\"rows\":["
        text += rows.map { row in
            var item = "{\"renderer\":\(jsonString(row.renderer.rawValue)),\"rendererName\":\(jsonString(row.rendererName)),"
            item += "\"clip\":\(jsonString(row.kind.rawValue)),\"cpuMsPerFrame\":\(jsonNumber(row.cpuMsPerFrame)),"
            item += "\"rasteriserMsPerFrame\":\(jsonNumber(row.rasteriserMsPerFrame)),\"ownMsPerFrame\":\(jsonNumber(row.ownMsPerFrame)),"
            item += "\"decodeMsPerFrame\":\(jsonNumber(Distribution(row.decodeMsPerFrame).p50)),"
            item += "\"ratioToSDR\":\(ratio(row.kind, row.renderer).map { jsonNumber($0) } ?? "null"),\"runs\":["
            item += row.runs.map { run in
                "{\"drawn\":\(run.drawn),\"skipped\":\(run.skipped),\"cpuSeconds\":\(jsonNumber(run.cpuSeconds)),"
                    + "\"rasteriserSeconds\":\(jsonNumber(run.rasteriserSeconds)),\"wallSeconds\":\(jsonNumber(run.wallSeconds))}"
            }.joined(separator: ",")
            return item + "]}"
        }.joined(separator: ",")
        text += "],\"glLimit\":\(jsonNumber(glLimit)),\"softwareLimit\":\(jsonNumber(Self.softwareGoal))}"
        return text
    }
}
