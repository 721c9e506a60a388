import ArgumentParser
import Foundation
import Logging
import ReelCore
import ReelFeed
import ReelMedia
import ReelSDL
import ReelTerminal
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Options of the terminal renderer, shared by `play` and `feed`.
struct TerminalOptions: ParsableArguments {
    enum Colors: String, ExpressibleByArgument, CaseIterable {
        case truecolor, c256 = "256"
    }
    enum Cells: String, ExpressibleByArgument, CaseIterable {
        case half, quadrant, sextant
    }

    @Flag(help: "Play in the terminal (the default when there is no display and stdout is a terminal).")
    var terminal = false

    @Option(help: "Terminal colours: truecolor or 256 (default from COLORTERM).")
    var colors: Colors?

    @Option(help: "Terminal glyphs: half (2 pixels a cell), quadrant (4) or sextant (6).")
    var cells: Cells = .half

    @Option(help: "Terminal output: auto (kitty graphics or sixel where the terminal answers for them, else cells), cells, sixel or kitty.")
    var graphics: TerminalGraphicsRequest = .auto

    @Option(name: .customLong("graphics-timeout"), help: "Seconds the terminal has to answer the graphics queries (auto) before cells are chosen; more for a terminal at the end of a slow link.")
    var graphicsTimeout: Double = TerminalApp.defaultGraphicsTimeout

    @Option(help: "Truecolor: how far (0-255 a channel) a cell's colour may drift before it is redrawn; 0 is exact, 2 is invisible and saves 15-35% of the bytes.")
    var tolerance: Int = 2

    @Flag(help: "Show the HUD: fps, dropped frames and bytes per frame in the terminal; fps, drops, the preload stage and the first-frame phases over the window (h toggles it there).")
    var hud = false

    @Option(name: .customLong("stats-out"), help: ArgumentHelp("Write the renderer's byte counts as JSON here on exit.", visibility: .hidden))
    var statsOut: String?

    func validate() throws {
        guard graphicsTimeout > 0, graphicsTimeout <= 60 else { throw ValidationError("--graphics-timeout must be seconds in (0, 60]") }
    }

    /// Whether the terminal renderer is the output when nothing else was asked for.
    static var isDefaultOutput: Bool {
        let env = ProcessInfo.processInfo.environment
        let hasDisplay = !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty
        return !hasDisplay && isatty(STDOUT_FILENO) == 1
    }

    var rendererConfiguration: TerminalRenderer.Configuration {
        let depth = TerminalColorDepth.detect(
            environment: ProcessInfo.processInfo.environment,
            override: colors.map { $0 == .truecolor ? .trueColor : .palette256 })
        let glyphs: TerminalGlyphMode = switch cells {
        case .half: .halfBlock
        case .quadrant: .quadrant
        case .sextant: .sextant
        }
        return TerminalRenderer.Configuration(
            encoder: .init(glyphs: glyphs, colors: depth, tolerance: tolerance), measureFullRedraw: statsOut != nil)
    }

    /// The app's configuration; the graphics chosen (and why) go to the log (`--verbose`)
    /// and, as a `graphics` event, to `trace`.
    func appConfiguration(trace: TraceWriter?) -> TerminalApp.Configuration {
        TerminalApp.Configuration(renderer: rendererConfiguration, hud: hud, statsOut: statsOut, graphics: graphics,
                                  graphicsTimeout: graphicsTimeout) { choice in
            Logger(label: "reel.terminal").info("terminal output: \(choice)")
            var event: [String: Any] = ["type": "graphics", "output": choice.output.rawValue, "why": choice.reason]
            if choice.output != .cells { event["cell"] = [choice.cellWidth, choice.cellHeight] }
            if choice.output == .kitty { event["transfer"] = choice.transfer.rawValue }
            trace?.write(event)
        }
    }
}

/// The process's audio: one SDL device shared by every player, or nothing (with a warning)
/// when no device opens.
/// Immutable after init (the device is thread-safe: `SDLAudioOutput` documents its own threads).
final class ProcessAudio: TerminalAudio {
    let output: SDLAudioOutput?

    init() {
        do {
            // ALSA prints its own diagnostics to stderr while SDL probes drivers; the one
            // line below says what matters.
            output = try Self.quietly { try SDLAudioOutput() }
        } catch {
            printError("reel: \(error); playing without sound")
            output = nil
        }
    }

    func makeSink() -> any AudioSink { output?.makeSink() ?? NullAudioSink() }
    var driverName: String? { output?.driverName }

    func setMuted(_ muted: Bool) -> Bool {
        guard let output else { return false }
        output.isMuted = muted
        return true
    }

    private static func quietly<T>(_ body: () throws -> T) rethrows -> T {
        let saved = dup(STDERR_FILENO)
        let null = open("/dev/null", O_WRONLY)
        if saved >= 0, null >= 0 { dup2(null, STDERR_FILENO) }
        defer {
            if saved >= 0 {
                dup2(saved, STDERR_FILENO)
                Glibc.close(saved)
            }
            if null >= 0 { Glibc.close(null) }
        }
        return try body()
    }
    func close() { output?.close() }
}

extension TerminalGraphicsRequest: ExpressibleByArgument {}
