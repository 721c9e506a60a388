extension TerminalApp {
    /// How long the terminal has to answer the graphics queries by default: half a second
    /// (a local terminal answers in milliseconds).
    public static let defaultGraphicsTimeout = 0.5

    /// What `--colors`, `--cells`, `--tolerance`, `--hud`, `--graphics`, `--graphics-timeout`
    /// and `--stats-out` chose.
    public struct Configuration: Sendable {
        public var renderer: TerminalRenderer.Configuration
        /// The status line shows fps, drops and bytes per frame.
        public var hud: Bool
        /// Where the renderer's byte counts go as JSON on exit.
        public var statsOut: String?
        /// `--graphics`: cells, sixel or kitty, or what the terminal answers (auto).
        public var graphics: TerminalGraphicsRequest
        /// `--graphics-timeout`: seconds to wait for the terminal's answers to the graphics
        /// queries before choosing cells.
        public var graphicsTimeout: Double
        /// Told the output chosen and why, before the first frame (for `--verbose`, the trace).
        public var onGraphics: (@Sendable (TerminalGraphics) -> Void)?

        public init(renderer: TerminalRenderer.Configuration, hud: Bool = false, statsOut: String? = nil,
                    graphics: TerminalGraphicsRequest = .auto, graphicsTimeout: Double = TerminalApp.defaultGraphicsTimeout,
                    onGraphics: (@Sendable (TerminalGraphics) -> Void)? = nil) {
            self.renderer = renderer
            self.hud = hud
            self.statsOut = statsOut
            self.graphics = graphics
            self.graphicsTimeout = graphicsTimeout
            self.onGraphics = onGraphics
        }
    }
}
