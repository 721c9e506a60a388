import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps what the process writes to standard error off the screen while the terminal UI
/// owns it, and gives it back afterwards.
///
/// Text written to a terminal's standard error lands at the cursor, in the middle of the
/// picture, and a line that ends on the last row scrolls the whole screen up by one: the
/// category row gone, the title row showing the progress line, a stripe of the picture left
/// at the top (the renderer redraws only what changed, so nothing repairs it). Log lines
/// (warnings always, everything with `--verbose`), FFmpeg's own messages under `--verbose`
/// and a library's diagnostics all come that way, from any thread, at any time.
///
/// ``hold()`` points descriptor `fd` at a file of its own, but only when `fd` is the very
/// terminal the screen is drawn on (a pipe, a file or another terminal keeps its lines as
/// they come); ``release()`` points it back and copies what was written meanwhile, in order,
/// once the screen is the user's again. A crash while held leaves the file (``path``), with
/// the crash's message in it.
public final class StandardErrorHold: Sendable {
    private struct Held {
        /// A duplicate of what `fd` was.
        var saved: Int32
        /// The file `fd` points at meanwhile.
        var file: Int32
        var path: String
    }

    private let fd: Int32
    private let screen: Int32
    /// Guarded: the hold, while it lasts.
    private let held = Mutex<Held?>(nil)

    /// - Parameters:
    ///   - fd: the descriptor to hold (standard error).
    ///   - screen: the terminal the picture is drawn on; `fd` is held only when it is the same
    ///     terminal.
    public init(fd: Int32 = STDERR_FILENO, screen: Int32 = STDOUT_FILENO) {
        self.fd = fd
        self.screen = screen
    }

    deinit { release() }

    /// Whether `fd` and `screen` are one and the same terminal device.
    public static func sameTerminal(_ a: Int32, _ b: Int32) -> Bool {
        guard isatty(a) == 1, isatty(b) == 1 else { return false }
        var sa = stat(), sb = stat()
        guard fstat(a, &sa) == 0, fstat(b, &sb) == 0 else { return false }
        return sa.st_rdev == sb.st_rdev
    }

    /// The file that takes the lines while held.
    public var path: String? { held.withTrackedLock { $0?.path } }

    /// Starts holding, when `fd` writes to the screen's terminal; returns whether it holds.
    @discardableResult
    public func hold() -> Bool {
        held.withTrackedLock { held in
            if held != nil { return true }
            guard Self.sameTerminal(fd, screen) else { return false }
            let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            var template = Array("\(directory)/reel-stderr-XXXXXX".utf8CString)
            let file = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard file >= 0 else { return false }
            _ = fcntl(file, F_SETFD, FD_CLOEXEC)
            let path = String(cString: template)
            let saved = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            guard saved >= 0, dup2(file, fd) >= 0 else {
                if saved >= 0 { close(saved) }
                close(file)
                unlink(path)
                return false
            }
            held = Held(saved: saved, file: file, path: path)
            return true
        }
    }

    /// Points `fd` back where it was and writes there what came meanwhile; the file is
    /// removed. Idempotent.
    public func release() {
        held.withTrackedLock { held in
            guard let hold = held else { return }
            held = nil
            dup2(hold.saved, fd)
            close(hold.saved)
            var buffer = [UInt8](repeating: 0, count: 65536)
            var offset: off_t = 0
            while true {
                let n = pread(hold.file, &buffer, buffer.count, offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                TerminalSession.writeAll(fd, Array(buffer[0..<n]))
                offset += off_t(n)
            }
            close(hold.file)
            unlink(hold.path)
        }
    }
}
