import Foundation
import Testing
import ReelTerminal
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal: the session runs on its slave side; the test types into and reads
/// the screen bytes from the master side.
final class PseudoTerminal: Sendable {
    let master: Int32
    let slave: Int32

    init?() {
        var m: Int32 = -1, s: Int32 = -1
        var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
        guard openpty(&m, &s, nil, nil, &size) == 0 else { return nil }
        master = m
        slave = s
        let flags = fcntl(master, F_GETFL)
        _ = fcntl(master, F_SETFL, flags | O_NONBLOCK)
    }

    deinit {
        close(master)
        close(slave)
    }

    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// What the session wrote to the screen so far.
    func drain() -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(master, &buffer, buffer.count)
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }

    var isCanonical: Bool {
        var attributes = termios()
        tcgetattr(slave, &attributes)
        return attributes.c_lflag & tcflag_t(ICANON) != 0 && attributes.c_lflag & tcflag_t(ECHO) != 0
    }
}

@Suite struct TerminalSessionTests {
    @Test func entersRawModeReadsInputAndRestoresEverything() async throws {
        let pty = try #require(PseudoTerminal())
        let session = TerminalSession(input: pty.slave, output: pty.slave)
        #expect(session.size == TerminalSession.Size(columns: 80, rows: 24))
        let log = Observed<[TerminalInputEvent]>([])
        // Set before the input thread starts (enter); called on it with no lock held.
        session.handlers = TerminalSession.Handlers(onEvent: { event in log.update { $0.append(event) } })
        try session.enter()
        #expect(!pty.isCanonical)
        let setup = pty.drain()
        #expect(setup.contains("\u{1B}[?1049h"))  // alternate screen
        #expect(setup.contains("\u{1B}[?25l"))    // cursor hidden
        #expect(setup.contains("\u{1B}[?1006h"))  // SGR mouse
        #expect(setup.contains("\u{1B}[>3u"))     // kitty flags pushed
        #expect(!session.reportsKeyReleases)

        // Keys, a mouse click, and a kitty flags reply all arrive parsed.
        pty.type("q\u{1B}[<0;5;3M\u{1B}[?3u")
        let events = await log.wait { $0.count >= 3 } ?? log.value
        #expect(events.first == .key(TerminalKeyEvent(.character("q"))))
        #expect(events.contains(.mouse(TerminalMouseEvent(.press(.left), column: 4, row: 2))))
        #expect(session.reportsKeyReleases)

        session.write(Array("frame".utf8))
        #expect(pty.drain() == "frame")

        session.restore()
        #expect(pty.isCanonical)
        let reset = pty.drain()
        #expect(reset.contains("\u{1B}[?1049l"))  // the user's screen back
        #expect(reset.contains("\u{1B}[?25h"))
        #expect(reset.contains("\u{1B}[<1u"))     // kitty flags popped
        #expect(reset.contains("\u{1B}[?1002l"))
        // Nothing reaches the screen after the restore.
        session.write(Array("late".utf8))
        #expect(pty.drain().isEmpty)
        session.restore()  // idempotent
    }

    @Test func aHandlerMayCallBackIntoTheSession() async throws {
        let pty = try #require(PseudoTerminal())
        let session = TerminalSession(input: pty.slave, output: pty.slave)
        let handled = Observed<Int>(0)
        session.handlers = TerminalSession.Handlers(onEvent: { [weak session] event in
            guard let session, case .key = event else { return }
            // Called after the session's mutexes are released: writing, reading its state
            // and replacing handlers from here neither deadlocks nor traps.
            session.write(Array("echo".utf8))
            _ = session.reportsKeyReleases
            session.onResize = { _ in }
            handled.update { $0 += 1 }
        })
        try session.enter()
        _ = pty.drain()
        pty.type("a")
        #expect(await handled.wait { $0 >= 1 } == 1)
        #expect(pty.drain().contains("echo"))
        session.restore()
    }

    @Test func aPipeIsNotATerminal() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let session = TerminalSession(input: fds[0], output: fds[1])
        #expect(throws: TerminalSessionError.self) { try session.enter() }
    }
}
