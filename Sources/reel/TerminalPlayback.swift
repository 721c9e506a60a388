import ArgumentParser
import Foundation
import ReelCore
import ReelFeed
import ReelMedia
import ReelSDL
import ReelTerminal
import ReelThreads
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

    @Option(help: "Truecolor: how far (0-255 a channel) a cell's colour may drift before it is redrawn; 0 is exact, 2 is invisible and saves 15-35% of the bytes.")
    var tolerance: Int = 2

    @Flag(help: "Show the HUD: fps, dropped frames and bytes per frame in the terminal; fps, drops, the preload stage and the first-frame phases over the window (h toggles it there).")
    var hud = false

    @Option(name: .customLong("stats-out"), help: ArgumentHelp("Write the renderer's byte counts as JSON here on exit.", visibility: .hidden))
    var statsOut: String?

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
}

/// The process's audio: one SDL device shared by every player, or nothing (with a warning)
/// when no device opens.
/// Immutable after init (the device is thread-safe: `SDLAudioOutput` documents its own threads).
final class ProcessAudio: @unchecked Sendable {
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

/// What the terminal shows and controls: one item (`play`) or a feed (`feed`).
protocol TerminalContent: AnyObject, Sendable {
    /// The player of what is on screen (nil for an image post).
    var player: Player? { get }
    /// Category names, the selected one, and the item's position ("3/12").
    var chrome: (categories: [String], selected: Int, title: String, uploader: String?, position: String?) { get }
    /// Opens the content; frames go to `renderer`; `failed` ends the run.
    func start(renderer: TerminalRenderer, failed: @escaping @Sendable (String) -> Void) async throws
    /// Swipe: the next (`true`) or previous item.
    func swipe(forward: Bool)
    /// The next (+1) or previous (-1) category.
    func changeCategory(by offset: Int)
    /// Runs a search and shows its results as a feed.
    func search(_ text: String)
    /// Whether swipes, categories and search mean anything here.
    var isFeed: Bool { get }
    func close()
}

/// `reel play --terminal` and `reel feed --terminal`: the session, the renderer, the chrome
/// and the input, around a ``TerminalContent``.
///
/// Threads: `run` on the command's task; input events on the session's input thread;
/// resize, suspend and terminate on its signal thread; `tick` and notice expiry on
/// `timerQueue`; the chrome (`drawChrome`) on the renderer's thread; `framePresented` and
/// failures on the player's clock context. Every callback is set before the thread that
/// calls it starts, and they share the UI state only under `state`, never calling out
/// (the player, the renderer, the content) with it held.
final class TerminalApp: Sendable {
    // Immutable after init.
    private let options: TerminalOptions
    private let session = TerminalSession()
    let renderer: TerminalRenderer
    let audio: ProcessAudio
    /// `--frames` (play): counted by the content's sink, ends the run.
    let frameLimit: FrameLimit?
    private let outcome: OneShot<SessionOutcome>
    /// The tick timer's and the notices' queue (a timer, not a lock).
    private let timerQueue = DispatchQueue(label: "reel.terminal.tick")

    private struct UI {
        var content: (any TerminalContent)?
        /// Which chrome lines are on screen (only the render thread draws it).
        var chrome = TerminalChrome()
        var chromeVisible = true
        var hold = HoldToSpeedUp()
        var keyHold = KeyHoldDetector()
        var legacyToggled = false
        /// The legacy hold began while the video was paused: it does nothing.
        var legacyHoldIgnored = false
        var legacyPressWhilePaused = false
        var badge: String?
        var muted = false
        /// Typing a search.
        var query: String?
        var notice: String?
        var drag: (row: Int, column: Int)?
        var pausedForSuspend = false
    }

    /// Guarded by `state`: the UI's state, shared by the threads above.
    private let state = Mutex(UI())

    init(options: TerminalOptions, frameLimit: Int? = nil) {
        self.options = options
        let outcome = OneShot<SessionOutcome>()
        self.outcome = outcome
        self.frameLimit = frameLimit.map { FrameLimit($0) { outcome.fulfil(.finished) } }
        audio = ProcessAudio()
        let session = self.session
        renderer = TerminalRenderer(configuration: options.rendererConfiguration) { session.write($0) }
    }

    func run(_ content: any TerminalContent) async throws -> SessionOutcome {
        guard TerminalSession.isTerminal(STDIN_FILENO), TerminalSession.isTerminal(STDOUT_FILENO) else {
            audio.close()
            throw CommandFailure.usage("--terminal needs a terminal on standard input and output")
        }
        state.withTrackedLock { $0.content = content }
        // Callbacks first, then the threads that call them.
        session.handlers = TerminalSession.Handlers(
            onEvent: { [weak self] event in self?.handle(event) },
            onResize: { [weak self] _ in self?.relayout() },
            onSuspend: { [weak self] stopping in self?.suspended(stopping) },
            onTerminate: { [weak self] _ in self?.finish(.finished) })
        renderer.overlay = { [weak self] full in self?.drawChrome(full: full) ?? [] }
        try session.enter()
        relayout()
        renderer.start()
        let timer = DispatchSource.makeTimerSource(queue: timerQueue)
        timer.schedule(deadline: .now() + .milliseconds(50), repeating: .milliseconds(50))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()

        let result: SessionOutcome
        do {
            try await content.start(renderer: renderer) { [weak self] message in self?.finish(.failed(message)) }
            result = await outcome.wait()
        } catch {
            result = .failed(describe(error))
        }
        timer.cancel()
        // The render thread first (it reads the content for the chrome), then the content:
        // closing it joins its players' threads, so not on the concurrency pool.
        renderer.stop()
        await renderer.finished()
        await onOwnThread(named: "reel.close") { content.close() }
        session.restore()
        audio.close()
        writeStatistics()
        return result
    }

    func finish(_ result: SessionOutcome) { outcome.fulfil(result) }

    private var content: (any TerminalContent)? { state.withTrackedLock { $0.content } }
    private var player: Player? { content?.player }

    /// Stopped with Ctrl-Z: playback pauses, and resumes on `fg` if it was playing.
    private func suspended(_ stopping: Bool) {
        guard let player else { return }
        if stopping {
            let playing = player.rate != 0
            state.withTrackedLock { $0.pausedForSuspend = playing }
            if playing { player.pause() }
        } else {
            let wasPlaying = state.withTrackedLock { ui in
                defer { ui.pausedForSuspend = false }
                return ui.pausedForSuspend
            }
            if wasPlaying { player.play() }
        }
    }

    // MARK: Layout and chrome

    private func relayout() {
        let size = session.size
        let visible = state.withTrackedLock { $0.chromeVisible }
        let area = TerminalChrome.videoArea(columns: size.columns, rows: size.rows, chromeVisible: visible)
        renderer.layout(screenColumns: size.columns, screenRows: size.rows, area: area)
    }

    private func chromeState() -> TerminalChrome.State {
        let (content, badge, muted, query, notice) = state.withTrackedLock { ($0.content, $0.badge, $0.muted, $0.query, $0.notice) }
        let info = content?.chrome ?? (categories: [], selected: 0, title: "", uploader: nil, position: nil)
        let player = content?.player
        let duration = player?.duration ?? .indefinite
        let elapsed = player?.currentTime ?? .zero
        var state = TerminalChrome.State(
            categories: info.categories, selectedCategory: info.selected, title: info.title, uploader: info.uploader,
            elapsed: elapsed.isNumeric ? elapsed.seconds : 0,
            duration: duration.isNumeric ? duration.seconds : nil,
            isPaused: (player?.rate ?? 0) == 0, isMuted: muted, badge: badge, position: info.position)
        if let query {
            state.statusLine = "search: \(query)▏  (enter to search, esc to cancel)"
        } else if let notice {
            state.statusLine = notice
        } else if options.hud {
            let s = renderer.statistics
            state.statusLine = String(
                format: "%.0f fps  drop %d+%d  %.0f B/frame (avg %.0f)  %d×%d cells  %@",
                s.framesPerSecond, s.dropped, s.playerDropped, Double(s.lastFrameBytes), s.bytesPerFrame, s.columns, s.rows,
                audio.output.map { "audio \($0.driverName)" } ?? "no audio")
        } else if content?.isFeed == true {
            state.statusLine = "↑↓ swipe  space pause/hold 2x  ←→ 5s  tab category  / search  m mute  f full  q quit"
        } else {
            state.statusLine = "space pause (hold 2x)  ←/→ 5s  m mute  f fullscreen  q quit"
        }
        return state
    }

    /// On the render thread.
    private func drawChrome(full: Bool) -> [UInt8] {
        guard state.withTrackedLock({ $0.chromeVisible }) else { return [] }
        let chromeState = chromeState()
        let size = session.size
        return state.withTrackedLock { $0.chrome.render(chromeState, columns: size.columns, rows: size.rows, full: full) }
    }

    /// Shows `text` on the status line for a while.
    func show(notice text: String?) {
        state.withTrackedLock { $0.notice = text }
        renderer.setNeedsChrome()
        guard let text else { return }
        timerQueue.asyncAfter(deadline: .now() + 3) { [weak self] in
            guard let self else { return }
            let same = self.state.withTrackedLock { $0.notice == text }
            if same { self.show(notice: nil) }
        }
    }

    // MARK: Input

    private func now() -> MediaTime { HostClock.shared.now }

    /// On the input thread.
    private func handle(_ event: TerminalInputEvent) {
        switch event {
        case .key(let key): handleKey(key)
        case .mouse(let mouse): handleMouse(mouse)
        case .keyboardFlags: state.withTrackedLock { $0.keyHold.expectsReleaseEvents = true }
        default: break
        }
    }

    private func handleKey(_ event: TerminalKeyEvent) {
        if event.key == .character("c") && event.modifiers.contains(.control) {
            finish(.finished)
            return
        }
        if state.withTrackedLock({ $0.query != nil }) {
            typeSearch(event)
            return
        }
        if event.key == .character(" ") && event.modifiers.isEmpty {
            holdKey(event)
            return
        }
        guard event.kind != .release else { return }
        let content = self.content
        switch event.key {
        case .character("z") where event.modifiers.contains(.control): session.suspend()
        case .character("q"), .character("Q"): finish(.finished)
        case .left: seek(by: -5)
        case .right: seek(by: 5)
        case .up, .character("k"): content?.swipe(forward: false); renderer.setNeedsChrome()
        case .down, .character("j"): content?.swipe(forward: true); renderer.setNeedsChrome()
        case .tab where event.modifiers.contains(.shift): content?.changeCategory(by: -1); renderer.setNeedsChrome()
        case .tab, .character("l"): content?.changeCategory(by: 1); renderer.setNeedsChrome()
        case .character("h"): content?.changeCategory(by: -1); renderer.setNeedsChrome()
        case .character("/"):
            guard content?.isFeed == true else { return }
            state.withTrackedLock { $0.query = "" }
            renderer.setNeedsChrome()
        case .character("m"): toggleMute()
        case .character("f"):
            state.withTrackedLock { $0.chromeVisible.toggle() }
            relayout()
        default: break
        }
    }

    private func typeSearch(_ event: TerminalKeyEvent) {
        guard event.kind != .release else { return }
        let run: String? = state.withTrackedLock { ui in
            switch event.key {
            case .escape: ui.query = nil
            case .enter:
                defer { ui.query = nil }
                return ui.query
            case .backspace: if ui.query?.isEmpty == false { ui.query?.removeLast() }
            case .character(let c) where event.modifiers.subtracting(.shift).isEmpty:
                ui.query?.append(c)
            default: break
            }
            return nil
        }
        if let run, !run.trimmingCharacters(in: .whitespaces).isEmpty {
            content?.search(run)
        }
        renderer.setNeedsChrome()
    }

    private func toggleMute() {
        let now = state.withTrackedLock { ui in
            ui.muted.toggle()
            return ui.muted
        }
        if let output = audio.output { output.isMuted = now } else { player?.isMuted = now }
        renderer.setNeedsChrome()
    }

    /// Space: a tap pauses, a hold plays at 2x until let go. With kitty release events this
    /// is exact (HoldToSpeedUp); elsewhere the first press toggles pause at once and an
    /// auto-repeat run (KeyHoldDetector) turns into a hold, undoing that toggle.
    private func holdKey(_ event: TerminalKeyEvent) {
        let t = now()
        // A hold while paused does nothing (as in the seed app's player).
        let paused = (player?.rate ?? 0) == 0
        let (actions, togglePause) = state.withTrackedLock { ui -> ([HoldToSpeedUp.Action], Bool) in
            var actions: [HoldToSpeedUp.Action] = []
            var togglePause = false
            ui.hold.isPaused = paused
            if ui.keyHold.expectsReleaseEvents || event.kind != .press {
                switch event.kind {
                case .press: actions = ui.hold.keyDown(now: t)
                case .repeat: actions = ui.hold.tick(now: t)
                case .release: actions = ui.hold.keyUp(now: t)
                }
                if event.kind != .press { ui.keyHold.expectsReleaseEvents = true }
            } else {
                switch ui.keyHold.press(at: t) {
                case .began:
                    if ui.legacyToggled { togglePause = true; ui.legacyToggled = false }
                    if ui.legacyPressWhilePaused {
                        ui.legacyHoldIgnored = true
                    } else {
                        actions = [.setRate(ui.hold.fastRate), .showBadge(HoldToSpeedUp.badgeText(ui.hold.fastRate))]
                    }
                default:
                    if !ui.keyHold.isHeld {
                        togglePause = true
                        ui.legacyToggled = true
                        ui.legacyPressWhilePaused = paused
                    }
                }
            }
            return (actions, togglePause)
        }
        if togglePause { self.togglePause() }
        perform(actions)
    }

    /// On `timerQueue`, every 50 ms.
    private func tick() {
        let t = now()
        let paused = (player?.rate ?? 0) == 0
        let actions = state.withTrackedLock { ui -> [HoldToSpeedUp.Action] in
            ui.hold.isPaused = paused
            var actions = ui.hold.tick(now: t)
            if ui.keyHold.advance(to: t) == .ended {
                ui.legacyToggled = false
                if ui.legacyHoldIgnored {
                    ui.legacyHoldIgnored = false
                } else {
                    actions += [.setRate(1), .hideBadge]
                }
            }
            return actions
        }
        perform(actions)
    }

    private func perform(_ actions: [HoldToSpeedUp.Action]) {
        for action in actions {
            switch action {
            case .setRate(let rate):
                if let player { player.rate = rate == 1 ? player.defaultRate : rate }
            case .showBadge(let text): state.withTrackedLock { $0.badge = text }
            case .hideBadge: state.withTrackedLock { $0.badge = nil }
            case .togglePause, .keyTapped: togglePause()
            }
        }
        if !actions.isEmpty { renderer.setNeedsChrome() }
    }

    private func togglePause() {
        guard let player else { return }
        if player.rate == 0 { player.play() } else { player.pause() }
        renderer.setNeedsChrome()
    }

    private func seek(by seconds: Double) {
        guard let player else { return }
        let target = max(0, player.currentTime.seconds + seconds)
        // Exact (decoded from the keyframe before): short videos have few keyframes.
        player.seek(to: MediaTime(seconds: target, preferredTimescale: 1000), toleranceBefore: .zero, toleranceAfter: .zero) { [renderer] _ in renderer.setNeedsChrome() }
        renderer.setNeedsChrome()
    }

    private func handleMouse(_ event: TerminalMouseEvent) {
        let size = session.size
        let t = now()
        switch event.kind {
        case .press(.left):
            let chrome = chromeState()
            if state.withTrackedLock({ $0.chromeVisible }),
               let fraction = TerminalChrome.seekFraction(column: event.column, row: event.row, columns: size.columns,
                                                          rows: size.rows, state: chrome),
               let duration = chrome.duration, let player {
                player.seek(to: MediaTime(seconds: fraction * duration, preferredTimescale: 1000),
                            toleranceBefore: .zero, toleranceAfter: .zero) { [renderer] _ in
                    renderer.setNeedsChrome()
                }
                renderer.setNeedsChrome()
                return
            }
            let actions = state.withTrackedLock { ui in
                ui.drag = (event.row, event.column)
                // Cells are about twice as tall as wide: rows count double for the slop.
                return ui.hold.pointerDown(x: Double(event.column), y: Double(event.row * 2), now: t)
            }
            perform(actions)
        case .drag(.left):
            let actions = state.withTrackedLock { $0.hold.pointerMove(x: Double(event.column), y: Double(event.row * 2), now: t) }
            perform(actions)
        case .release:
            let (actions, start) = state.withTrackedLock { ui -> ([HoldToSpeedUp.Action], (row: Int, column: Int)?) in
                defer { ui.drag = nil }
                return (ui.hold.pointerUp(now: t), ui.drag)
            }
            perform(actions)
            // A vertical drag of a few rows is a swipe: up shows the next item.
            if let start, abs(event.row - start.row) >= 3, abs(event.row - start.row) * 2 > abs(event.column - start.column) {
                content?.swipe(forward: event.row < start.row)
                renderer.setNeedsChrome()
            }
        case .wheelDown: content?.swipe(forward: true)
        case .wheelUp: content?.swipe(forward: false)
        default: break
        }
    }

    // MARK: Statistics

    private func writeStatistics() {
        guard let path = options.statsOut else { return }
        let s = renderer.statistics
        let object: [String: Any] = [
            "presented": s.presented, "rendered": s.rendered, "dropped": s.dropped, "playerDropped": s.playerDropped,
            "columns": s.columns, "rows": s.rows, "videoBytes": s.videoBytes, "chromeBytes": s.chromeBytes,
            "fullFrames": s.fullFrames, "bytesPerFrame": s.bytesPerFrame,
            "fullRedrawBytes": s.fullRedrawBytes,
            "fullRedrawBytesPerFrame": s.rendered == 0 ? 0 : Double(s.fullRedrawBytes) / Double(s.rendered),
            "ratio": s.videoBytes == 0 ? 0 : Double(s.fullRedrawBytes) / Double(s.videoBytes),
        ]
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
            _ = FileManager.default.createFile(atPath: path, contents: data + Data("\n".utf8))
        }
    }
}

/// One media item (`reel play --terminal`).
///
/// Threads: `start` and `close` from the app's task; the player's observer on its clock
/// context; `player` from any of the app's threads (under `current`).
final class SingleItemContent: TerminalContent, Sendable {
    // Immutable after init.
    private let app: TerminalApp
    private let item: PlayerItem
    private let title: String
    private let loop: Bool
    private let rate: Double
    private let trace: TraceWriter

    /// Guarded: the player, once started.
    private let current = Mutex<Player?>(nil)

    init(app: TerminalApp, source: MediaSource, loader: any ResourceLoader, start: Double?, rate: Double, loop: Bool,
         trace: TraceWriter) {
        self.app = app
        self.loop = loop
        self.rate = rate
        self.trace = trace
        item = PlayerItem(url: source.url, loader: loader,
                          startTime: start.map { MediaTime(seconds: $0, preferredTimescale: 1_000_000) })
        title = (source.displayName as NSString).lastPathComponent
    }

    var player: Player? { current.withTrackedLock { $0 } }
    var isFeed: Bool { false }
    var chrome: (categories: [String], selected: Int, title: String, uploader: String?, position: String?) {
        (["Now playing"], 0, title, nil, nil)
    }

    func start(renderer: TerminalRenderer, failed: @escaping @Sendable (String) -> Void) async throws {
        let trace = PlaybackTrace(writer: self.trace, clock: HostClock.shared)
        let limit = app.frameLimit
        let sink: any VideoSink = trace.isEnabled || limit != nil ? trace.videoSink(forwardingTo: renderer, limit: limit) : renderer
        let player = Player(clock: HostClock.shared, videoSink: sink, audioSink: app.audio.makeSink(),
                            measurementClock: HostClock.shared)
        player.actionAtItemEnd = loop ? .loop : .pause
        player.defaultRate = rate
        // Fixed before the item opens; the player holds the observer, which holds it weakly.
        _ = player.addEventObserver { [weak player] event in
            if let player { trace.record(event, player: player) }
            switch event {
            case .failed(let error): failed(error.description)
            case .firstFrame: limit?.firstFrameDelivered()
            case .rateChanged, .ended, .seekCompleted: renderer.setNeedsChrome()
            default: break
            }
        }
        current.withTrackedLock { $0 = player }
        player.replaceCurrentItem(with: item)
        player.play()
    }

    func swipe(forward: Bool) { app.show(notice: "one video: nothing to swipe to (reel feed swipes)") }
    func changeCategory(by offset: Int) {}
    func search(_ text: String) {}

    /// Stops the player (blocks until its threads are gone: call it off the pool).
    func close() {
        guard let player else { return }
        player.pause()
        player.replaceCurrentItem(with: nil)
    }
}
