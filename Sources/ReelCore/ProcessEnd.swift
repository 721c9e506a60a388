import Foundation
import Glibc

/// How a child process ended: its exit status, or the signal that ended it.
public struct ProcessEnd: Sendable, Equatable, CustomStringConvertible {
    /// The exit status, or the signal number when ``signalled`` (as `Process.terminationStatus`).
    public let status: Int32
    /// Ended by a signal rather than by exiting.
    public let signalled: Bool

    public init(status: Int32, signalled: Bool) {
        self.status = status
        self.signalled = signalled
    }

    public var description: String { signalled ? "signal \(status)" : "exit \(status)" }
}

extension Process {
    /// How the child ended, asked of the kernel; `nil` while it runs (or before it ran).
    ///
    /// Foundation on Linux learns of a child's end only when a socket the child inherited
    /// closes. Whatever else holds that socket keeps `isRunning` true, and
    /// `waitUntilExit()` blocked, until it ends too: a descendant of the child (a daemon it
    /// started), or a sibling spawned from another thread at the same moment, which can
    /// inherit the socket before Foundation closes the parent's copy. In a test run that
    /// spawns dozens of children at once, a `reel` child that had printed its error and exited
    /// stayed "running" until a terminal test's child ended two minutes later.
    /// `waitid(WNOWAIT)` sees the end at once and leaves the child for Foundation to reap.
    public var end: ProcessEnd? {
        let pid = processIdentifier
        guard pid > 0 else { return nil }
        if !isRunning {
            return ProcessEnd(status: terminationStatus, signalled: terminationReason == .uncaughtSignal)
        }
        var info = siginfo_t()
        // ECHILD: Foundation reaped it in between; `isRunning` turns false next time.
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0,
              info._sifields._sigchld.si_pid == pid else { return nil }
        let code = info.si_code
        return ProcessEnd(status: info._sifields._sigchld.si_status, signalled: code == CLD_KILLED || code == CLD_DUMPED)
    }

    /// Blocks the calling thread until the child ended. Never on a Swift concurrency thread.
    ///
    /// Then, once Foundation has seen the end too (at most a second later), it ends
    /// Foundation's bookkeeping with `waitUntilExit()`, which returns at once by then: until
    /// that call, a run-loop source and this object keep each other alive (LeakSanitizer
    /// reported every child waited for without it). A child whose socket another process
    /// still holds is left to Foundation.
    public func waitForEndBlocking() -> ProcessEnd {
        var ended = end
        while ended == nil {
            usleep(2_000)
            ended = end
        }
        for _ in 0..<500 where isRunning { usleep(2_000) }
        if !isRunning { waitUntilExit() }
        return ended!
    }
}
