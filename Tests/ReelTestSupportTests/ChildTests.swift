import Foundation
import ReelCore
import ReelTestSupport
import Testing

/// A child's end is seen when it ends, whoever else holds what it inherited.
@Suite("Child")
struct ChildTests {
    /// The child leaves a descendant behind that inherited every descriptor it had, Foundation's
    /// exit-watching socket among them (as a daemon, or a sibling spawned beside it, does):
    /// Foundation's `isRunning` stays true until that descendant ends. The child's end and
    /// status are still seen while the descendant lives on.
    @Test func anExitIsSeenWhileADescendantHoldsWhatTheChildInherited() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pidFile = directory.appendingPathComponent("descendant.pid").path
        // The descendant waits for a file that is written only after the check below (or
        // for this process to go away).
        let release = directory.appendingPathComponent("release").path
        let script = "(while [ ! -e '\(release)' ] && kill -0 \(getpid()) 2>/dev/null; do sleep 0.05; done) >/dev/null 2>&1 & "
            + "echo $! > '\(pidFile)'; exit 7"
        let child = try Child(URL(fileURLWithPath: "/bin/sh"), ["-c", script])
        let status = await child.exitStatus()
        let descendant = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        let descendantAlive = kill(descendant, 0) == 0
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        #expect(descendantAlive, "the descendant was to outlive the child")
        #expect(status == 7)
        #expect(child.end == ProcessEnd(status: 7, signalled: false))
        // Foundation reaps it once the descendant is gone; the answer stays the same.
        _ = await eventually { !child.process.isRunning }
        #expect(child.end == ProcessEnd(status: 7, signalled: false))
    }

    @Test func aSignalledEndSaysSo() async throws {
        let child = try Child(URL(fileURLWithPath: "/bin/sh"), ["-c", "kill -9 $$"])
        let status = await child.exitStatus()
        #expect(status == SIGKILL)
        #expect(child.end == ProcessEnd(status: SIGKILL, signalled: true))
    }
}
