import ArgumentParser
import Foundation
import ReelCore
import ReelFeed
import ReelMedia
import ReelSDL
import ReelTerminal
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

    @Flag(help: "Show a stats line: fps, dropped frames, bytes per frame.")
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
            encoder: .init(glyphs: glyphs, colors: depth), measureFullRedraw: statsOut != nil)
    }
}

/// The process's audio: one SDL device shared by every player, or nothing (with a warning)
/// when no device opens.
final class TerminalAudio: @unchecked Sendable {
    let output: SDLAudioOutput?

    init() {
        do {
            output = try SDLAudioOutput()
        } catch {
            printError("reel: \(error); playing without sound")
            output = nil
        }
    }

    func makeSink() -> any AudioSink { output?.makeSink() ?? NullAudioSink() }
    func close() { output?.close() }
}

/// `reel play --terminal`: one item in the terminal, with chrome, keys and mouse.
final class TerminalPlayback: @unchecked Sendable {
    enum Outcome: Sendable { case finished, failed(String) }

    private let options: TerminalOptions
    private let session = TerminalSession()
    private let renderer: TerminalRenderer
    private let audio: TerminalAudio
    private let player: Player
    private let item: PlayerItem
    private let title: String
    private let frameLimit: Int?

    private let lock = NSLock()
    private var chrome = TerminalChrome()
    private var chromeVisible = true
    private var hold = HoldToSpeedUp()
    private var keyHold = KeyHoldDetector()
    private var legacyToggled = false
    private var badge: String?
    private var drag: (row: Int, column: Int, onVideo: Bool)?
    private var outcome: Outcome?
    private var waiter: CheckedContinuation<Outcome, Never>?
    private var timer: DispatchSourceTimer?
    private let timerQueue = DispatchQueue(label: "reel.terminal.tick")

    init(source: MediaSource, loader: any ResourceLoader, options: TerminalOptions, start: Double?, rate: Double,
         loop: Bool, frames: Int?) {
        self.options = options
        self.frameLimit = frames
        audio = TerminalAudio()
        let session = self.session
        renderer = TerminalRenderer(configuration: options.rendererConfiguration) { session.write($0) }
        player = Player(clock: HostClock.shared, videoSink: renderer, audioSink: audio.makeSink(),
                        measurementClock: HostClock.shared)
        player.actionAtItemEnd = loop ? .loop : .pause
        player.defaultRate = rate
        item = PlayerItem(url: source.url, loader: loader,
                          startTime: start.map { MediaTime(seconds: $0, preferredTimescale: 1_000_000) })
        title = (source.displayName as NSString).lastPathComponent
    }

    func run() async throws -> Outcome {
        guard TerminalSession.isTerminal(STDIN_FILENO), TerminalSession.isTerminal(STDOUT_FILENO) else {
            audio.close()
            throw CommandFailure.usage("--terminal needs a terminal on standard input and output")
        }
        try session.enter()
        session.onEvent = { [weak self] event in self?.handle(event) }
        session.onResize = { [weak self] _ in self?.relayout() }
        session.onTerminate = { [weak self] _ in self?.finish(.finished) }
        renderer.overlay = { [weak self] full in self?.drawChrome(full: full) ?? [] }
        relayout()
        renderer.start()
        player.addEventObserver { [weak self] event in
            guard let self else { return }
            switch event {
            case .failed(let error): self.finish(.failed(error.description))
            case .framePresented:
                if let limit = self.frameLimit, self.renderer.statistics.presented >= limit { self.finish(.finished) }
            case .rateChanged, .ended, .seekCompleted: self.renderer.setNeedsChrome()
            default: break
            }
        }
        let timer = DispatchSource.makeTimerSource(queue: timerQueue)
        timer.schedule(deadline: .now() + .milliseconds(50), repeating: .milliseconds(50))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        lock.withLock { self.timer = timer }

        player.replaceCurrentItem(with: item)
        player.play()
        let result = await withCheckedContinuation { continuation in
            lock.lock()
            if let outcome {
                lock.unlock()
                continuation.resume(returning: outcome)
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
        timer.cancel()
        renderer.stop()
        player.pause()
        player.replaceCurrentItem(with: nil)
        session.restore()
        audio.close()
        writeStatistics()
        return result
    }

    private func finish(_ result: Outcome) {
        let waiter: CheckedContinuation<Outcome, Never>? = lock.withLock {
            guard outcome == nil else { return nil }
            outcome = result
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: result)
    }

    // MARK: Layout and chrome

    private func relayout() {
        let size = session.size
        let visible = lock.withLock { chromeVisible }
        let area = TerminalChrome.videoArea(columns: size.columns, rows: size.rows, chromeVisible: visible)
        renderer.layout(screenColumns: size.columns, screenRows: size.rows, area: area)
    }

    private func chromeState() -> TerminalChrome.State {
        let duration = player.duration
        let elapsed = player.currentTime
        var state = TerminalChrome.State(
            categories: ["Now playing"], selectedCategory: 0, title: title, uploader: nil,
            elapsed: elapsed.isNumeric ? elapsed.seconds : 0,
            duration: duration.isNumeric ? duration.seconds : nil,
            isPaused: player.rate == 0, isMuted: player.isMuted, badge: lock.withLock { badge })
        if options.hud {
            let s = renderer.statistics
            state.statusLine = String(
                format: "%.0f fps  drop %d+%d  %.0f B/frame  %d×%d cells  %@",
                s.framesPerSecond, s.dropped, s.playerDropped, Double(s.lastFrameBytes), s.columns, s.rows,
                audio.output == nil ? "no audio" : "audio \(audio.output!.driverName)")
        } else {
            state.statusLine = "space pause (hold 2x)  ←/→ 5s  m mute  f fullscreen  q quit"
        }
        return state
    }

    private func drawChrome(full: Bool) -> [UInt8] {
        let visible = lock.withLock { chromeVisible }
        guard visible else { return [] }
        let state = chromeState()
        let size = session.size
        return lock.withLock { chrome.render(state, columns: size.columns, rows: size.rows, full: full) }
    }

    // MARK: Input

    private func now() -> MediaTime { HostClock.shared.now }

    private func handle(_ event: TerminalInputEvent) {
        switch event {
        case .key(let key): handleKey(key)
        case .mouse(let mouse): handleMouse(mouse)
        case .keyboardFlags: lock.withLock { keyHold.expectsReleaseEvents = true }
        default: break
        }
    }

    private func handleKey(_ event: TerminalKeyEvent) {
        if event.key == .character(" ") && event.modifiers.isEmpty {
            holdKey(event)
            return
        }
        guard event.kind != .release else { return }
        switch event.key {
        case .character("c") where event.modifiers.contains(.control): finish(.finished)
        case .character("z") where event.modifiers.contains(.control): session.suspend()
        case .character("q"), .character("Q"): finish(.finished)
        case .left: seek(by: -5)
        case .right: seek(by: 5)
        case .character("m"):
            player.isMuted.toggle()
            renderer.setNeedsChrome()
        case .character("f"):
            lock.withLock { chromeVisible.toggle() }
            relayout()
        default: break
        }
    }

    /// Space: a tap pauses, a hold plays at 2x until let go. With kitty release events this
    /// is exact (HoldToSpeedUp); elsewhere the first press toggles pause at once and an
    /// auto-repeat run (KeyHoldDetector) turns into a hold, undoing that toggle.
    private func holdKey(_ event: TerminalKeyEvent) {
        let t = now()
        var actions: [HoldToSpeedUp.Action] = []
        var togglePause = false
        lock.lock()
        if keyHold.expectsReleaseEvents || event.kind != .press {
            switch event.kind {
            case .press: actions = hold.keyDown(now: t)
            case .repeat: actions = hold.tick(now: t)
            case .release: actions = hold.keyUp(now: t)
            }
            if event.kind != .press { keyHold.expectsReleaseEvents = true }
        } else {
            switch keyHold.press(at: t) {
            case .began:
                if legacyToggled { togglePause = true; legacyToggled = false }
                actions = [.setRate(hold.fastRate), .showBadge(HoldToSpeedUp.badgeText(hold.fastRate))]
            default:
                if !keyHold.isHeld {
                    togglePause = true
                    legacyToggled = true
                }
            }
        }
        lock.unlock()
        if togglePause { self.togglePause() }
        perform(actions)
    }

    private func tick() {
        let t = now()
        var actions: [HoldToSpeedUp.Action] = []
        lock.lock()
        actions += hold.tick(now: t)
        if keyHold.advance(to: t) == .ended {
            legacyToggled = false
            actions += [.setRate(1), .hideBadge]
        }
        if let deadline = keyHold.nextDeadline, deadline < t - MediaTime(value: 1, timescale: 1) { legacyToggled = false }
        lock.unlock()
        perform(actions)
    }

    private func perform(_ actions: [HoldToSpeedUp.Action]) {
        for action in actions {
            switch action {
            case .setRate(let rate):
                player.rate = rate == 1 ? player.defaultRate : rate
            case .showBadge(let text): lock.withLock { badge = text }
            case .hideBadge: lock.withLock { badge = nil }
            case .togglePause, .keyTapped: togglePause()
            }
        }
        if !actions.isEmpty { renderer.setNeedsChrome() }
    }

    private func togglePause() {
        if player.rate == 0 { player.play() } else { player.pause() }
        renderer.setNeedsChrome()
    }

    private func seek(by seconds: Double) {
        let target = max(0, player.currentTime.seconds + seconds)
        player.seek(to: MediaTime(seconds: target, preferredTimescale: 1000)) { [renderer] _ in renderer.setNeedsChrome() }
        renderer.setNeedsChrome()
    }

    private func handleMouse(_ event: TerminalMouseEvent) {
        let size = session.size
        let t = now()
        switch event.kind {
        case .press(.left):
            let state = chromeState()
            if lock.withLock({ chromeVisible }),
               let fraction = TerminalChrome.seekFraction(column: event.column, row: event.row, columns: size.columns,
                                                          rows: size.rows, state: state),
               let duration = state.duration {
                player.seek(to: MediaTime(seconds: fraction * duration, preferredTimescale: 1000)) { [renderer] _ in
                    renderer.setNeedsChrome()
                }
                renderer.setNeedsChrome()
                return
            }
            let actions: [HoldToSpeedUp.Action] = lock.withLock {
                drag = (event.row, event.column, true)
                return hold.pointerDown(x: Double(event.column), y: Double(event.row * 2), now: t)
            }
            perform(actions)
        case .drag(.left):
            let actions = lock.withLock { hold.pointerMove(x: Double(event.column), y: Double(event.row * 2), now: t) }
            perform(actions)
        case .release:
            let (actions, start) = lock.withLock { (hold.pointerUp(now: t), drag) }
            lock.withLock { drag = nil }
            perform(actions)
            if let start, abs(event.row - start.row) >= 3 { swiped(up: event.row < start.row) }
        case .wheelUp: swiped(up: false)
        case .wheelDown: swiped(up: true)
        default: break
        }
    }

    /// One item: there is nothing to swipe to; a swipe restarts it (up) or does nothing.
    private func swiped(up: Bool) {}

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
