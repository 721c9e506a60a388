import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A shell command under a virtual X server of its own: how the end-to-end tests start a
/// real terminal (xterm, kitty) to run `reel` in. One `xvfb-run -a` per call (a free display
/// number each, so runs do not meet), bounded by `timeout(1)`.
///
/// The server keeps whatever descriptors it inherits open, and Foundation's `Process` would
/// wait for them: the line goes through `system(3)` with standard input, output and error
/// on /dev/null, on a thread of its own (``offThePool(_:)``), never on the concurrency pool
/// (on one core, its only thread would wait the whole run).
public enum VirtualScreen {
    /// The tools every run needs.
    public static let tools = ["/usr/bin/xvfb-run", "/usr/bin/timeout"]

    /// Whether `xvfb-run`, `timeout` and `more` (absolute paths) are installed.
    public static func isAvailable(with more: [String] = []) -> Bool {
        (tools + more).allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `text` as one word for `sh`.
    public static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// Runs `command` (a shell line) on a virtual screen of `width`×`height` pixels, 24 bits
    /// deep, killed after `timeout` seconds (a watchdog against a hang); its exit status as
    /// `system(3)` gives it (0 when the command succeeded).
    public static func run(_ command: String, width: Int, height: Int, timeout: Int) async -> Int32 {
        let line = "timeout \(timeout) xvfb-run -a -s '-screen 0 \(width)x\(height)x24' sh -c \(quoted(command))"
            + " </dev/null >/dev/null 2>&1"
        return await offThePool { system(line) }
    }

    /// The JSON objects of a JSON-lines file (a trace), none when it is missing; lines that
    /// are not objects are left out.
    public static func jsonLines(_ path: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n") ?? []).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// Runs `tool` with `arguments` and returns its standard output (standard error is
    /// dropped) and exit status, on a thread of its own.
    public static func output(_ tool: String, _ arguments: [String]) async throws -> (data: Data, status: Int32) {
        try await offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (data, process.terminationStatus)
        }
    }
}
