import Foundation
import ReelCore
import ReelFeed
import ReelMedia
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `reel play --terminal` and `reel feed --terminal`: the session, the renderer, the chrome
/// and the input, around a ``TerminalContent``.
///
/// Threads: `run` on the command's task; input events on the session's input thread;
/// resize, suspend and terminate on its signal thread; `tick` and notice expiry on
/// `timerQueue`; the chrome (`drawChrome`) on the renderer's thread; `framePresented` and
/// failures on the player's clock context. Every callback is set before the thread that
/// calls it starts, and they share the UI state only under `state`, never calling out
/// (the player, the renderer, the content) with it held.
public final class TerminalApp: Sendable {
    // Immutable after init.
    private let configuration: Configuration
    private let session = TerminalSession()
    public let renderer: TerminalRenderer
    /// The process's sound, shared by every player the content makes.
    public let audio: any TerminalAudio
    private let outcome: OneShot<SessionOutcome>
    /// The tick timer's and the notices' queue (a timer, not a lock).
    private let timerQueue = DispatchQueue(label: "reel.terminal.tick")

    private struct UI {
        var content: (any TerminalContent)?
        /// Which chrome lines are on screen (only the render thread draws it).
        var chrome = TerminalChrome()
        var chromeVisible = true
        /// A caption row is reserved under the video (captions on and the item has a track).
        var captionRow = false
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
        /// The progress bar is held: the player scrubs (exact frames under the thumb).
        var barHeld = false
        var pausedForSuspend = false
        /// Asking the terminal what it draws (replies go to it), during `run`'s start.
        var detection: GraphicsDetection?
    }

    /// Guarded by `state`: the UI's state, shared by the threads above.
    private let state = Mutex(UI())

    public init(configuration: Configuration, audio: any TerminalAudio) {
        self.configuration = configuration
        outcome = OneShot<SessionOutcome>()
        self.audio = audio
        let session = self.session
        renderer = TerminalRenderer(configuration: configuration.renderer) { session.write($0) }
    }

    /// Shows `content` until the user quits or it fails; the terminal is restored and the
    /// audio closed however it ends. Throws ``TerminalAppError/notATerminal`` before touching
    /// the terminal when standard input or output is not one.
    public func run(_ content: any TerminalContent) async throws -> SessionOutcome {
        guard TerminalSession.isTerminal(STDIN_FILENO), TerminalSession.isTerminal(STDOUT_FILENO) else {
            audio.close()
            throw TerminalAppError.notATerminal
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
        let detection = GraphicsDetection(TerminalGraphicsDetector(
            request: configuration.graphics, environment: ProcessInfo.processInfo.environment, window: session.window))
        state.withTrackedLock { $0.detection = detection }
        let graphics = await detection.run(write: { session.write($0) }, timeout: configuration.graphicsTimeout, queue: timerQueue)
        renderer.graphics = graphics
        configuration.onGraphics?(graphics)
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
            result = .failed(String(describing: error))
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

    /// Ends the run (the first call counts).
    public func finish(_ result: SessionOutcome) { outcome.fulfil(result) }

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
        let (visible, captionRow) = state.withTrackedLock { ($0.chromeVisible, $0.captionRow) }
        let area = TerminalChrome.videoArea(columns: size.columns, rows: size.rows, chromeVisible: visible, captionRow: captionRow)
        renderer.layout(screenColumns: size.columns, screenRows: size.rows, area: area)
    }

    private func chromeState() -> TerminalChrome.State {
        let (content, badge, muted, query, notice, captionRow) = state.withTrackedLock {
            ($0.content, $0.badge, $0.muted, $0.query, $0.notice, $0.captionRow)
        }
        let info = content?.chrome ?? (categories: [], selected: 0, title: "", uploader: nil, position: nil)
        let player = content?.player
        let duration = player?.duration ?? .indefinite
        let elapsed = player?.currentTime ?? .zero
        var state = TerminalChrome.State(
            categories: info.categories, selectedCategory: info.selected, title: info.title, uploader: info.uploader,
            elapsed: elapsed.isNumeric ? elapsed.seconds : 0,
            duration: duration.isNumeric ? duration.seconds : nil,
            isPaused: (player?.rate ?? 0) == 0, isMuted: muted, badge: badge, position: info.position)
        state.isLive = player?.isLive ?? false
        state.liveWindow = player?.seekableRange.map { $0.start.seconds...$0.end.seconds }
        // Read with each write of the chrome, which goes out with each frame: the words on
        // screen are the ones of the frame drawn with them.
        if captionRow { state.caption = CaptionFrame(time: .zero, events: player?.shownCaptions ?? []).plainText }
        if let query {
            state.statusLine = "search: \(query)▏  (enter to search, esc to cancel)"
        } else if let notice {
            state.statusLine = notice
        } else if configuration.hud {
            let s = renderer.statistics
            state.statusLine = String(
                format: "%.0f fps  drop %d+%d  %.0f B/frame (avg %.0f)  %d×%d cells  %@",
                s.framesPerSecond, s.dropped, s.playerDropped, Double(s.lastFrameBytes), s.bytesPerFrame, s.columns, s.rows,
                audio.driverName.map { "audio \($0)" } ?? "no audio")
        } else if content?.isFeed == true {
            state.statusLine = "↑↓ swipe  space pause/hold 2x  ←→ 5s  tab category  / search  m mute  c captions  f full  q quit"
        } else {
            state.statusLine = "space pause (hold 2x)  ←/→ 5s  m mute  c captions  f fullscreen  q quit"
        }
        return state
    }

    /// On the render thread.
    private func drawChrome(full: Bool) -> [UInt8] {
        let chromeState = chromeState()
        let size = session.size
        return state.withTrackedLock {
            $0.chrome.render(chromeState, columns: size.columns, rows: size.rows, full: full, chromeVisible: $0.chromeVisible)
        }
    }

    /// Shows `text` on the status line for a while.
    public func show(notice text: String?) {
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
        state.withTrackedLock { $0.detection }?.receive(event)
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
        case .character("c"): toggleCaptions()
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

    /// `c`: off → the item's first caption track → its next … → off (mpv's cycling); the choice
    /// holds for the next items (a track's language becomes the preferred one).
    private func toggleCaptions() {
        guard let content else { return }
        let tracks = player?.captionTracks ?? []
        let selection = content.captionSelection.cycled(through: tracks)
        content.captionSelection = selection
        updateCaptionRow()
        if !selection.isEnabled {
            show(notice: "captions off")
        } else if let id = selection.choose(from: tracks), let index = tracks.firstIndex(where: { $0.id == id }) {
            show(notice: "captions: \(tracks[index].displayName)" + (tracks.count > 1 ? " (\(index + 1)/\(tracks.count))" : ""))
        } else {
            show(notice: "captions on (this video has none)")
        }
    }

    /// Reserves the caption row while captions are on and the item on screen has a track; lays
    /// the screen out again when that changes.
    private func updateCaptionRow() {
        let wanted = (content?.captionSelection.isEnabled ?? false) && !(player?.captionTracks.isEmpty ?? true)
        let changed = state.withTrackedLock { ui -> Bool in
            defer { ui.captionRow = wanted }
            return ui.captionRow != wanted
        }
        if changed { relayout() }
    }

    private func toggleMute() {
        let now = state.withTrackedLock { ui in
            ui.muted.toggle()
            return ui.muted
        }
        if !audio.setMuted(now) { player?.isMuted = now }
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
        updateCaptionRow()
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
               let span = chrome.liveWindow ?? chrome.duration.map({ 0...$0 }), let player {
                let target = span.lowerBound + fraction * (span.upperBound - span.lowerBound)
                state.withTrackedLock { $0.barHeld = true }
                player.beginScrubbing()
                player.scrub(to: MediaTime(seconds: target, preferredTimescale: 1000))
                renderer.setNeedsChrome()
                return
            }
            let actions = state.withTrackedLock { ui in
                ui.drag = (event.row, event.column)
                // Cells are about twice as tall as wide: rows count double for the slop.
                return ui.hold.pointerDown(x: Double(event.column), y: Double(event.row * 2), now: t)
            }
            perform(actions)
        case .drag(.left) where state.withTrackedLock({ $0.barHeld }):
            // Along the bar's row, whatever row the pointer is on.
            let chrome = chromeState()
            if let fraction = TerminalChrome.seekFraction(column: event.column, row: TerminalChrome.progressRow(rows: size.rows),
                                                          columns: size.columns, rows: size.rows, state: chrome),
               let span = chrome.liveWindow ?? chrome.duration.map({ 0...$0 }) {
                player?.scrub(to: MediaTime(seconds: span.lowerBound + fraction * (span.upperBound - span.lowerBound), preferredTimescale: 1000))
                renderer.setNeedsChrome()
            }
        case .release where state.withTrackedLock({ $0.barHeld }):
            state.withTrackedLock { $0.barHeld = false }
            player?.endScrubbing { [renderer] _ in renderer.setNeedsChrome() }
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
        guard let path = configuration.statsOut else { return }
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
