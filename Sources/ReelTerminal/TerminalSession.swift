import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The terminal as Reel uses it while playing: raw mode, the alternate screen, a hidden
/// cursor, SGR mouse reporting and (where the terminal has it) the kitty keyboard protocol
/// with release events — all undone on ``restore()``, on SIGTERM/SIGINT/SIGHUP, and around
/// a suspend (SIGTSTP: restore, stop; SIGCONT: set up again and redraw).
///
/// Input is read on a thread of its own and parsed with ``TerminalInputParser``; events
/// arrive through ``onEvent``. A resize (SIGWINCH) calls ``onResize`` with the new size.
/// Output goes through ``write(_:)``: one `write()` loop per call, under the terminal's
/// mutex, so the renderer and the chrome never interleave half sequences.
///
/// Callbacks (``handlers``) are set before ``enter()`` and called with no lock held.
public final class TerminalSession: Sendable {
    /// Columns and rows of the terminal.
    public struct Size: Sendable, Hashable {
        public var columns: Int
        public var rows: Int
        public init(columns: Int, rows: Int) {
            self.columns = columns
            self.rows = rows
        }
    }

    /// What the session calls back. Kept under the session's mutex: set them before
    /// ``enter()`` (events that come earlier have nobody to go to); each is read under the
    /// mutex and called after it is released, on the thread named below.
    public struct Handlers: Sendable {
        /// An input event (key, mouse, focus, query reply), on the input thread.
        public var onEvent: (@Sendable (TerminalInputEvent) -> Void)?
        /// The terminal changed size, or came back from a suspend: redraw everything. On the
        /// signal thread.
        public var onResize: (@Sendable (Size) -> Void)?
        /// The process is about to stop (`true`, Ctrl-Z or SIGTSTP) or has continued (`false`):
        /// pause and resume playback around it. On the thread that called ``suspend()``, or
        /// the signal thread.
        public var onSuspend: (@Sendable (Bool) -> Void)?
        /// SIGTERM, SIGINT or SIGHUP arrived (the terminal is already restored): quit. On the
        /// signal thread.
        public var onTerminate: (@Sendable (Int32) -> Void)?

        public init(onEvent: (@Sendable (TerminalInputEvent) -> Void)? = nil, onResize: (@Sendable (Size) -> Void)? = nil,
                    onSuspend: (@Sendable (Bool) -> Void)? = nil, onTerminate: (@Sendable (Int32) -> Void)? = nil) {
            self.onEvent = onEvent
            self.onResize = onResize
            self.onSuspend = onSuspend
            self.onTerminate = onTerminate
        }
    }

    /// The callbacks (see ``Handlers``).
    public var handlers: Handlers {
        get { state.withTrackedLock { $0.handlers } }
        set { state.withTrackedLock { $0.handlers = newValue } }
    }

    /// An input event, on the input thread (``Handlers/onEvent``).
    public var onEvent: (@Sendable (TerminalInputEvent) -> Void)? {
        get { handlers.onEvent }
        set { state.withTrackedLock { $0.handlers.onEvent = newValue } }
    }
    /// A resize or a return from a suspend (``Handlers/onResize``).
    public var onResize: (@Sendable (Size) -> Void)? {
        get { handlers.onResize }
        set { state.withTrackedLock { $0.handlers.onResize = newValue } }
    }
    /// Around a suspend (``Handlers/onSuspend``).
    public var onSuspend: (@Sendable (Bool) -> Void)? {
        get { handlers.onSuspend }
        set { state.withTrackedLock { $0.handlers.onSuspend = newValue } }
    }
    /// SIGTERM, SIGINT or SIGHUP (``Handlers/onTerminate``).
    public var onTerminate: (@Sendable (Int32) -> Void)? {
        get { handlers.onTerminate }
        set { state.withTrackedLock { $0.handlers.onTerminate = newValue } }
    }

    /// Whether the terminal answered the kitty keyboard query (release events available).
    public var reportsKeyReleases: Bool { state.withTrackedLock { $0.kittyKeyboard } }

    // Threads: the caller's (enter, restore, write, suspend), the input thread (reads,
    // parses, calls onEvent), the signal thread (`signalQueue`: resize, suspend, resume,
    // terminate), and any thread that writes (the renderer's).

    // Immutable after init.
    private let input: Int32
    private let output: Int32
    /// Standard error, kept off the screen while the session owns it.
    private let errorHold: StandardErrorHold
    /// Runs the signal handlers (a serial queue: one signal at a time).
    private let signalQueue = DispatchQueue(label: "reel.terminal.signals")

    /// The terminal's mode, and the output: every write to `output` happens with this
    /// mutex held, so writes never interleave and none follows the reset that
    /// ``restore()`` writes. Held during a write (a slow terminal blocks here).
    private struct Terminal {
        /// Raw mode and the alternate screen are on.
        var active = false
        /// The attributes to restore (read once, on the first set-up).
        var original: termios?
    }
    private let terminal = Mutex(Terminal())

    /// Everything else more than one thread touches. Never held during a write or a call out.
    private struct State {
        var handlers = Handlers()
        var kittyKeyboard = false
        var sources: [DispatchSourceSignal] = []
        /// The write end wakes the input thread to stop; -1 when it is not running.
        var stopPipe: [Int32] = [-1, -1]
        var stopping = false
    }
    private let state = Mutex(State())

    /// A session on `input` and `output` (standard input and output by default). Nothing
    /// changes until ``enter()``. While it owns the screen, what the process writes to
    /// `errorOutput` (standard error) is held back when that is the same terminal, and
    /// written out after ``restore()`` (``StandardErrorHold``): a log line would otherwise land
    /// in the picture, and one on the last row scroll the screen.
    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, errorOutput: Int32 = STDERR_FILENO) {
        self.input = input
        self.output = output
        errorHold = StandardErrorHold(fd: errorOutput, screen: output)
    }

    deinit { restore() }

    /// Whether `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// The terminal's size now (80×24 when it cannot be asked).
    public var size: Size {
        var ws = winsize()
        if ioctl(output, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 {
            return Size(columns: Int(ws.ws_col), rows: Int(ws.ws_row))
        }
        if ioctl(input, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 {
            return Size(columns: Int(ws.ws_col), rows: Int(ws.ws_row))
        }
        return Size(columns: 80, rows: 24)
    }

    /// The grid and, where the terminal fills them in, the window's pixels (`TIOCGWINSZ`).
    public var window: TerminalGraphicsDetector.Window {
        var ws = winsize()
        for fd in [output, input] where ioctl(fd, UInt(TIOCGWINSZ), &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0 {
            return .init(columns: Int(ws.ws_col), rows: Int(ws.ws_row), pixelWidth: Int(ws.ws_xpixel), pixelHeight: Int(ws.ws_ypixel))
        }
        return .init(columns: 80, rows: 24, pixelWidth: 0, pixelHeight: 0)
    }

    /// Raw mode, alternate screen, hidden cursor, mouse, keyboard enhancement; starts the
    /// input thread and the signal handlers.
    /// - Throws: ``TerminalSessionError`` when `input` is not a terminal.
    public func enter() throws {
        guard Self.isTerminal(input) else { throw TerminalSessionError.notATerminal }
        errorHold.hold()
        do { try setUp() } catch {
            errorHold.release()
            throw error
        }
        installSignalHandlers()
        startReader()
    }

    /// Puts the terminal back as it was: keyboard flags popped, mouse off, cursor shown,
    /// the user's screen back, cooked mode; then what came to standard error meanwhile.
    /// Idempotent; safe from any thread.
    public func restore() {
        tearDown()
        errorHold.release()
        let hadSources = state.withTrackedLock { state in
            state.stopping = true
            if state.stopPipe[1] >= 0 {
                var byte: UInt8 = 0
                _ = Glibc.write(state.stopPipe[1], &byte, 1)
            }
            defer { state.sources = [] }
            for source in state.sources { source.cancel() }
            return !state.sources.isEmpty
        }
        // Give the signals back their default handling (they were ignored so that the
        // dispatch sources, not the default actions, saw them).
        if hadSources {
            for signal in Self.handledSignals { Glibc.signal(signal, SIG_DFL) }
        }
    }

    private static let handledSignals = [SIGWINCH, SIGTERM, SIGINT, SIGHUP, SIGTSTP, SIGCONT]

    /// Writes all of `bytes` (retrying short writes and EINTR). Dropped while the session
    /// is suspended.
    public func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        terminal.withTrackedLock { terminal in
            // Checked under the mutex: once tearDown has written its reset, nothing more
            // reaches the user's screen.
            guard terminal.active else { return }
            Self.writeAll(output, bytes)
        }
    }

    // MARK: Set up / tear down

    private func setUp() throws {
        try terminal.withTrackedLock { terminal in
            guard !terminal.active else { return }
            var attributes = termios()
            guard tcgetattr(input, &attributes) == 0 else { throw TerminalSessionError.notATerminal }
            if terminal.original == nil { terminal.original = attributes }
            var raw = attributes
            cfmakeraw(&raw)
            raw.c_oflag |= tcflag_t(OPOST | ONLCR)  // keep \n → \r\n for anything printed by others
            // VMIN 1, VTIME 0: read blocks for at least one byte (the reader polls anyway).
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            tcsetattr(input, TCSAFLUSH, &raw)
            terminal.active = true
            var setup: [UInt8] = []
            setup += TerminalControl.enterAlternateScreen
            setup += TerminalControl.hideCursor
            setup += TerminalControl.clearScreen
            setup += TerminalControl.enableMouse
            // Kitty keyboard: push the flags (ignored by terminals that don't know them) and ask
            // which flags hold; only a terminal that speaks the protocol answers.
            setup += TerminalControl.pushKeyboardFlags()
            setup += TerminalControl.queryKeyboardFlags
            Self.writeAll(output, setup)
        }
    }

    private func tearDown() {
        terminal.withTrackedLock { terminal in
            guard terminal.active else { return }
            terminal.active = false
            var reset: [UInt8] = []
            reset += TerminalControl.endSynchronizedUpdate
            reset += TerminalControl.resetAttributes
            reset += TerminalControl.popKeyboardFlags
            reset += TerminalControl.disableMouse
            reset += TerminalControl.showCursor
            reset += TerminalControl.exitAlternateScreen
            Self.writeAll(output, reset)
            if var original = terminal.original { tcsetattr(input, TCSAFLUSH, &original) }
        }
    }

    // MARK: Signals

    private func installSignalHandlers() {
        state.withTrackedLock { state in
            guard state.sources.isEmpty else { return }
            for signal in Self.handledSignals {
                Glibc.signal(signal, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signal, queue: signalQueue)
                source.setEventHandler { [weak self] in self?.handle(signal) }
                source.resume()
                state.sources.append(source)
            }
        }
    }

    /// On the signal thread.
    private func handle(_ signal: Int32) {
        switch signal {
        case SIGWINCH:
            handlers.onResize?(size)
        case SIGTSTP:
            suspend()
        case SIGCONT:
            resume()
        default:
            tearDown()
            handlers.onTerminate?(signal)
        }
    }

    /// Ctrl-Z (or SIGTSTP): give the terminal back and stop; ``resume()`` runs on SIGCONT.
    public func suspend() {
        handlers.onSuspend?(true)
        tearDown()
        kill(getpid(), SIGSTOP)
    }

    private func resume() {
        guard !state.withTrackedLock({ $0.stopping }) else { return }
        try? setUp()
        let handlers = self.handlers
        handlers.onSuspend?(false)
        handlers.onResize?(size)
    }

    // MARK: Input

    private func startReader() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        state.withTrackedLock { $0.stopPipe = fds }
        let input = self.input
        let (wakeRead, wakeWrite) = (fds[0], fds[1])
        let thread = Thread { [weak self] in
            var parser = TerminalInputParser()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                var polls = [pollfd(fd: input, events: Int16(POLLIN), revents: 0),
                             pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
                // A lone ESC is resolved after 50 ms of silence.
                let timeout: Int32 = parser.hasPendingInput ? 50 : -1
                let ready = poll(&polls, 2, timeout)
                if ready < 0 {
                    if errno == EINTR { continue }
                    break
                }
                if polls[1].revents != 0 { break }
                guard let self else { break }
                if ready == 0 {
                    for event in parser.flush() { self.deliver(event) }
                    continue
                }
                if polls[0].revents & Int16(POLLIN) != 0 {
                    let n = read(input, &buffer, buffer.count)
                    if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    if n <= 0 { break }
                    for event in parser.feed(buffer[0..<n]) { self.deliver(event) }
                } else if polls[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                    break
                }
            }
            self?.state.withTrackedLock { $0.stopPipe = [-1, -1] }
            close(wakeRead)
            close(wakeWrite)
        }
        thread.name = "reel.terminal.input"
        thread.start()
    }

    /// On the input thread: the handler is read under the mutex and called after it.
    private func deliver(_ event: TerminalInputEvent) {
        let onEvent = state.withTrackedLock { state in
            if case .keyboardFlags = event { state.kittyKeyboard = true }
            return state.handlers.onEvent
        }
        onEvent?(event)
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    return
                }
                offset += n
            }
        }
    }
}

/// Why a terminal session could not start.
public enum TerminalSessionError: Error, CustomStringConvertible, Sendable {
    /// Standard input is not a terminal.
    case notATerminal

    public var description: String {
        switch self {
        case .notATerminal: "the terminal renderer needs a terminal on standard input and output"
        }
    }
}
