import ArgumentParser
import Foundation

/// Where `play`, `feed` and `demo` show their video: a window, the terminal, or
/// nowhere. Nothing asked for means the window when there is a display, else the
/// terminal when standard output is one.
enum OutputChoice: Equatable {
    case window, terminal, headless

    static func choose(headless: Bool, window: Bool, terminal: Bool) throws -> OutputChoice {
        let asked = [headless ? OutputChoice.headless : nil, window ? .window : nil, terminal ? .terminal : nil].compactMap { $0 }
        if asked.count > 1 { throw ValidationError("choose one of --window, --terminal and --headless") }
        if let only = asked.first { return only }
        if hasDisplay { return .window }
        if isatty(STDOUT_FILENO) == 1 { return .terminal }
        throw ValidationError("choose an output: --window, --terminal or --headless (no display, and standard output is not a terminal)")
    }

    static var hasDisplay: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }
}

/// The output options `play`, `feed` and `demo` share.
struct OutputOptions: ParsableArguments {
    @Flag(help: "No window or terminal: play and report (play: --trace; feed, demo: one JSON line per swipe).")
    var headless = false

    @Flag(help: "Show it in an SDL window (portrait 540×960, resizable; the default when there is a display).")
    var window = false

    @Option(help: "The window's renderer: gl (OpenGL 3.3 with Reel's shaders) or software (SDL_Renderer).")
    var renderer: WindowRendererOption = .gl

    @OptionGroup var terminal: TerminalOptions

    /// Whether an output was named.
    var isExplicit: Bool { headless || window || terminal.terminal }

    /// The output asked for, or the default one.
    func choose() throws -> OutputChoice {
        try OutputChoice.choose(headless: headless, window: window, terminal: terminal.terminal)
    }
}
