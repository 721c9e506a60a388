import Foundation
import Synchronization
import Testing
import ReelThreads
@testable import ReelTerminal
#if canImport(Glibc)
import Glibc
#endif

/// `reel bench terminal --through-terminal`'s clock: the time runs until the terminal answers
/// DA1 written after the frames, which it does only once it has read them all.
@Suite struct TerminalIntakeTests {
    /// A terminal on the master side: reads everything, answers DA1 after what came before it.
    private final class FakeTerminal: Sendable {
        let received = Mutex<[UInt8]>([])
        /// What had arrived when each DA1 was answered.
        let answeredAfter = Mutex<[Int]>([])
        private let stopped = Mutex(false)
        private let exit = ExitSignal()

        init(master: Int32, answers: Bool) {
            let thread = Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 65536)
                var queries = 0
                while !stopped.withLock({ $0 }) {
                    var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                    guard poll(&poller, 1, 20) > 0 else { continue }
                    let n = read(master, &buffer, buffer.count)
                    guard n > 0 else { continue }
                    let (total, tail) = received.withLock { all in
                        let from = max(0, all.count - 2)
                        all += buffer[0..<n]
                        return (all.count, Array(all[from...]))
                    }
                    queries += Self.count(TerminalGraphicsQueries.primaryDeviceAttributes, in: tail)
                    while answers, answeredAfter.withLock({ $0.count }) < queries {
                        answeredAfter.withLock { $0.append(total) }
                        let reply = Array("\u{1B}[?62;4c".utf8)
                        _ = reply.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
                    }
                }
                exit.fire()
            }
            thread.start()
        }

        static func count(_ needle: [UInt8], in haystack: [UInt8]) -> Int {
            guard haystack.count >= needle.count else { return 0 }
            return (0...(haystack.count - needle.count)).filter { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }.count
        }

        func stop() async {
            stopped.withLock { $0 = true }
            await exit.wait()
        }
    }

    @Test func timesUntilTheTerminalHasReadEveryFrame() async throws {
        let pty = try #require(PseudoTerminal())
        let session = TerminalSession(input: pty.slave, output: pty.slave)
        let intake = TerminalIntake(session: session)
        try session.enter()
        let terminal = FakeTerminal(master: pty.master, answers: true)
        // Frames larger than the pseudo-terminal holds: the writes wait for the reader.
        let frames = (0..<4).map { [UInt8](repeating: UInt8(ascii: "a") + UInt8($0), count: 100_000) }
        let seconds = await onOwnThread(named: "test.intake") { intake.time(frames, timeout: 300) }
        #expect(seconds != nil && seconds! > 0)
        // The answer came after all 400 kB (and the set-up before them) had been read.
        let after = terminal.answeredAfter.withLock { $0 }
        #expect(after.count == 1 && after[0] >= 400_000)
        // A second run is timed on its own answer.
        #expect(await onOwnThread(named: "test.intake") { intake.time([[UInt8](repeating: 0x41, count: 10)], timeout: 300) } != nil)
        #expect(terminal.answeredAfter.withLock { $0.count } == 2)
        await terminal.stop()
        session.restore()
    }

    @Test func aTerminalThatNeverAnswersGivesNoFigure() async throws {
        let pty = try #require(PseudoTerminal())
        let session = TerminalSession(input: pty.slave, output: pty.slave)
        let intake = TerminalIntake(session: session)
        try session.enter()
        let terminal = FakeTerminal(master: pty.master, answers: false)
        let seconds = await onOwnThread(named: "test.intake") { intake.time([Array("frame".utf8)], timeout: 0.2) }
        #expect(seconds == nil)
        await terminal.stop()
        session.restore()
    }
}
