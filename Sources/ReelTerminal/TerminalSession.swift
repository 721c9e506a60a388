import Dispatch
import Foundation
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
/// Output goes through ``write(_:)``: one `write()` loop per call, under a lock, so the
/// renderer and the chrome never interleave half sequences.
public final class TerminalSession: @unchecked Sendable {
    /// Columns and rows of the terminal.
    public struct Size: Sendable, Hashable {
        public var columns: Int
        public var rows: Int
        public init(columns: Int, rows: Int) {
            self.columns = columns
            self.rows = rows
        }
    }

    /// An input event (key, mouse, focus, query reply), on the input thread.
    public var onEvent: (@Sendable (TerminalInputEvent) -> Void)?
    /// The terminal changed size, or came back from a suspend: redraw everything.
    public var onResize: (@Sendable (Size) -> Void)?
    /// The process is about to stop (`true`, Ctrl-Z or SIGTSTP) or has continued (`false`):
    /// pause and resume playback around it.
    public var onSuspend: (@Sendable (Bool) -> Void)?
    /// SIGTERM, SIGINT or SIGHUP arrived (the terminal is already restored): quit.
    public var onTerminate: (@Sendable (Int32) -> Void)?

    /// Whether the terminal answered the kitty keyboard query (release events available).
    public var reportsKeyReleases: Bool { lock.withLock { kittyKeyboard } }

    private let input: Int32
    private let output: Int32
    private let lock = NSLock()
    private let writeLock = NSLock()
    private var original: termios?
    private var active = false
    private var kittyKeyboard = false
    private var sources: [DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "reel.terminal.signals")
    private var reader: Thread?
    private var stopPipe: [Int32] = [-1, -1]
    private var stopping = false

    /// A session on `input` and `output` (standard input and output by default). Nothing
    /// changes until ``enter()``.
    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
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

    /// Raw mode, alternate screen, hidden cursor, mouse, keyboard enhancement; starts the
    /// input thread and the signal handlers.
    /// - Throws: ``TerminalSessionError`` when `input` is not a terminal.
    public func enter() throws {
        guard Self.isTerminal(input) else { throw TerminalSessionError.notATerminal }
        try setUp()
        installSignalHandlers()
        startReader()
    }

    /// Puts the terminal back as it was: keyboard flags popped, mouse off, cursor shown,
    /// the user's screen back, cooked mode. Idempotent; safe from any thread.
    public func restore() {
        tearDown()
        lock.lock()
        let sources = self.sources
        self.sources = []
        stopping = true
        let pipe = stopPipe
        if pipe[1] >= 0 {
            var byte: UInt8 = 0
            _ = Glibc.write(pipe[1], &byte, 1)
        }
        lock.unlock()
        for source in sources { source.cancel() }
        // Give the signals back their default handling (they were ignored so that the
        // dispatch sources, not the default actions, saw them).
        if !sources.isEmpty {
            for signal in Self.handledSignals { Glibc.signal(signal, SIG_DFL) }
        }
    }

    private static let handledSignals = [SIGWINCH, SIGTERM, SIGINT, SIGHUP, SIGTSTP, SIGCONT]

    /// Writes all of `bytes` (retrying short writes and EINTR). Dropped while the session
    /// is suspended.
    public func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        writeLock.lock()
        defer { writeLock.unlock() }
        // Checked under the write lock: once tearDown has written its reset, nothing more
        // reaches the user's screen.
        guard lock.withLock({ active }) else { return }
        Self.writeAll(output, bytes)
    }

    // MARK: Set up / tear down

    private func setUp() throws {
        // Lock order: writeLock, then lock (as in write()).
        writeLock.lock()
        defer { writeLock.unlock() }
        lock.lock()
        defer { lock.unlock() }
        guard !active else { return }
        var attributes = termios()
        guard tcgetattr(input, &attributes) == 0 else { throw TerminalSessionError.notATerminal }
        if original == nil { original = attributes }
        var raw = attributes
        cfmakeraw(&raw)
        raw.c_oflag |= tcflag_t(OPOST | ONLCR)  // keep \n → \r\n for anything printed by others
        // VMIN 1, VTIME 0: read blocks for at least one byte (the reader polls anyway).
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(input, TCSAFLUSH, &raw)
        active = true
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

    private func tearDown() {
        writeLock.lock()
        defer { writeLock.unlock() }
        lock.lock()
        defer { lock.unlock() }
        guard active else { return }
        active = false
        var reset: [UInt8] = []
        reset += TerminalControl.endSynchronizedUpdate
        reset += TerminalControl.resetAttributes
        reset += TerminalControl.popKeyboardFlags
        reset += TerminalControl.disableMouse
        reset += TerminalControl.showCursor
        reset += TerminalControl.exitAlternateScreen
        Self.writeAll(output, reset)
        if var original { tcsetattr(input, TCSAFLUSH, &original) }
    }

    // MARK: Signals

    private func installSignalHandlers() {
        lock.lock()
        defer { lock.unlock() }
        guard sources.isEmpty else { return }
        for signal in Self.handledSignals {
            Glibc.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
            source.setEventHandler { [weak self] in self?.handle(signal) }
            source.resume()
            sources.append(source)
        }
    }

    private func handle(_ signal: Int32) {
        switch signal {
        case SIGWINCH:
            onResize?(size)
        case SIGTSTP:
            suspend()
        case SIGCONT:
            resume()
        default:
            tearDown()
            onTerminate?(signal)
        }
    }

    /// Ctrl-Z (or SIGTSTP): give the terminal back and stop; ``resume()`` runs on SIGCONT.
    public func suspend() {
        onSuspend?(true)
        tearDown()
        kill(getpid(), SIGSTOP)
    }

    private func resume() {
        let wasStopping = lock.withLock { stopping }
        guard !wasStopping else { return }
        try? setUp()
        onSuspend?(false)
        onResize?(size)
    }

    // MARK: Input

    private func startReader() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        lock.withLock { stopPipe = fds }
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
            self?.lock.withLock { self?.stopPipe = [-1, -1] }
            close(wakeRead)
            close(wakeWrite)
        }
        thread.name = "reel.terminal.input"
        reader = thread
        thread.start()
    }

    private func deliver(_ event: TerminalInputEvent) {
        if case .keyboardFlags = event { lock.withLock { kittyKeyboard = true } }
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
