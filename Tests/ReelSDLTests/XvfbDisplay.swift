import Foundation

/// One Xvfb server for the whole test process, on a free display number, started on first
/// use and killed at exit; SDL is pointed at it (x11 driver). `nil` when Xvfb is missing.
enum XvfbDisplay {
    static let executable = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var isAvailable: Bool { executable != nil }

    nonisolated(unsafe) private static var process: Process?

    /// The display (":93"), started and exported in DISPLAY.
    static let display: String? = {
        guard let executable else { return nil }
        for number in 90..<140 {
            let socket = "/tmp/.X11-unix/X\(number)"
            let lock = "/tmp/.X\(number)-lock"
            if FileManager.default.fileExists(atPath: socket) || FileManager.default.fileExists(atPath: lock) { continue }
            let server = Process()
            server.executableURL = URL(fileURLWithPath: executable)
            server.arguments = [":\(number)", "-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-noreset"]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            server.standardInput = FileHandle.nullDevice
            do { try server.run() } catch { return nil }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, server.isRunning, !FileManager.default.fileExists(atPath: socket) {
                Thread.sleep(forTimeInterval: 0.02)
            }
            guard server.isRunning, FileManager.default.fileExists(atPath: socket) else {
                if server.isRunning { server.terminate() }
                continue
            }
            process = server
            atexit {
                if let server = XvfbDisplay.process, server.isRunning {
                    kill(server.processIdentifier, SIGTERM)
                }
            }
            setenv("DISPLAY", ":\(number)", 1)
            setenv("SDL_VIDEODRIVER", "x11", 1)
            setenv("SDL_AUDIODRIVER", "dummy", 1)
            return ":\(number)"
        }
        return nil
    }()
}
