import Foundation
import ReelCore
import Synchronization

/// One Xvfb server for the whole test process, on a free display number, started on first
/// use (on the window thread: it waits for the socket) and killed at exit; SDL is pointed at
/// it (x11 driver). `nil` when Xvfb is missing.
enum XvfbDisplay {
    static let executable = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var isAvailable: Bool { executable != nil }

    /// Guarded: the watchdog shell, kept for the life of the process.
    private static let process = Mutex<Process?>(nil)

    /// The display (":93"), started and exported in DISPLAY.
    static let display: String? = {
        guard let executable else { return nil }
        for number in 90..<140 {
            let socket = "/tmp/.X11-unix/X\(number)"
            let lock = "/tmp/.X\(number)-lock"
            // A lock whose server is gone (killed with -9, it cleans up nothing) is stale, as
            // Xvfb itself judges it: its files are removed and the number used. After many
            // killed runs every number held such a lock, and no display could start.
            if let text = try? String(contentsOfFile: lock, encoding: .utf8),
               let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
               kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(atPath: lock)
                try? FileManager.default.removeItem(atPath: socket)
            }
            if FileManager.default.fileExists(atPath: socket) || FileManager.default.fileExists(atPath: lock) { continue }
            // A watchdog shell owns the server and ends it as soon as this process is gone,
            // however the test runner exits (atexit handlers do not always run).
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/bin/sh")
            let script = "\(executable) :\(number) -screen 0 1280x1024x24 -nolisten tcp -noreset & x=$!; "
                + "trap 'kill $x 2>/dev/null; sleep 0.5; kill -9 $x 2>/dev/null' EXIT; while kill -0 \(getpid()) 2>/dev/null && kill -0 $x 2>/dev/null; do sleep 0.3; done"
            server.arguments = ["-c", script]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            server.standardInput = FileHandle.nullDevice
            do { try server.run() } catch { return nil }
            // A watchdog: on a loaded machine the server can take a while to listen.
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, server.end == nil, !FileManager.default.fileExists(atPath: socket) {
                Thread.sleep(forTimeInterval: 0.02)
            }
            guard server.end == nil, FileManager.default.fileExists(atPath: socket) else {
                if server.end == nil { server.terminate() }
                continue
            }
            process.withTrackedLock { $0 = server }
            setenv("DISPLAY", ":\(number)", 1)
            setenv("SDL_VIDEODRIVER", "x11", 1)
            setenv("SDL_AUDIODRIVER", "dummy", 1)
            return ":\(number)"
        }
        return nil
    }()
}
