import Foundation
import Testing
import ReelTerminal
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal: the session runs on its slave side; the test types into and reads
/// the screen bytes from the master side.
final class PseudoTerminal: @unchecked Sendable {
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

final class EventLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var events: [TerminalInputEvent] = []
    func append(_ event: TerminalInputEvent) { condition.withLock { events.append(event); condition.broadcast() } }
    func wait(count: Int, timeout: Double = 10) -> [TerminalInputEvent] {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while events.count < count, condition.wait(until: deadline) {}
        return events
    }
}

@Suite struct TerminalSessionTests {
    @Test func entersRawModeReadsInputAndRestoresEverything() throws {
        let pty = try #require(PseudoTerminal())
        let session = TerminalSession(input: pty.slave, output: pty.slave)
        #expect(session.size == TerminalSession.Size(columns: 80, rows: 24))
        let log = EventLog()
        session.onEvent = { log.append($0) }
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
        let events = log.wait(count: 3)
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

    @Test func aPipeIsNotATerminal() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let session = TerminalSession(input: fds[0], output: fds[1])
        #expect(throws: TerminalSessionError.self) { try session.enter() }
    }
}
