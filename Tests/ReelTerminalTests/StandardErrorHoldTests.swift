import Foundation
import Testing
import ReelTerminal
#if canImport(Glibc)
import Glibc
#endif

/// What the process writes to standard error while the session owns the screen (a log line,
/// FFmpeg's messages under `--verbose`) reaches the terminal only after it is restored: on
/// the screen it would land in the picture, and a line on the last row scrolls everything.
@Suite struct StandardErrorHoldTests {
    private static func write(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    @Test func linesWrittenDuringTheSessionComeAfterTheUsersScreenIsBack() throws {
        let pty = try #require(PseudoTerminal())
        // Standard error on the same terminal as the screen (as when reel runs in it).
        let errorOutput = dup(pty.slave)
        defer { close(errorOutput) }
        let session = TerminalSession(input: pty.slave, output: pty.slave, errorOutput: errorOutput)
        try session.enter()
        _ = pty.drain()
        Self.write(errorOutput, "[h264 @ 0x1] Reinit context\n")
        session.write(Array("FRAME".utf8))
        let during = pty.drain()
        #expect(during == "FRAME", "\(during.debugDescription)")
        session.restore()
        let after = pty.drain()
        let screenBack = try #require(after.range(of: "\u{1B}[?1049l"), "\(after.debugDescription)")
        let line = try #require(after.range(of: "[h264 @ 0x1] Reinit context"), "\(after.debugDescription)")
        #expect(screenBack.upperBound <= line.lowerBound)
        // Standard error is the terminal again.
        Self.write(errorOutput, "later\n")
        #expect(pty.drain().contains("later"))
    }

    @Test func anotherDestinationKeepsItsLinesAsTheyCome() throws {
        let pty = try #require(PseudoTerminal())
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let hold = StandardErrorHold(fd: fds[1], screen: pty.slave)
        #expect(!hold.hold())
        Self.write(fds[1], "warning\n")
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fds[0], &buffer, buffer.count)
        #expect(String(decoding: buffer[0..<max(0, n)], as: UTF8.self) == "warning\n")
        // Another terminal than the screen's is left alone too.
        let other = try #require(PseudoTerminal())
        #expect(!StandardErrorHold(fd: other.slave, screen: pty.slave).hold())
        #expect(StandardErrorHold.sameTerminal(dup(pty.slave), pty.slave))
    }

    @Test func theFileHoldsTheLinesUntilReleasedAndIsRemoved() throws {
        let pty = try #require(PseudoTerminal())
        let errorOutput = dup(pty.slave)
        defer { close(errorOutput) }
        let hold = StandardErrorHold(fd: errorOutput, screen: pty.slave)
        #expect(hold.hold())
        let path = try #require(hold.path)
        Self.write(errorOutput, "one\n")
        Self.write(errorOutput, "two\n")
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "one\ntwo\n")
        #expect(pty.drain().isEmpty)
        hold.release()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(pty.drain() == "one\r\ntwo\r\n")
        hold.release()  // idempotent
    }
}
