import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The lock that gives one process the right to write a cache directory: an exclusive
/// `flock` on `<cache>/lock`, which holds the owner's pid for error messages. The
/// kernel drops the lock when its holder dies, `kill -9` included, so a crashed process
/// never leaves the cache locked.
///
/// `@unchecked`: it wraps a kernel file descriptor; its one mutable field changes only in
/// `release()`, which the cache calls inside its lock (``RangeCache/State``), and in `deinit`.
final class ProcessLock: @unchecked Sendable {
    private var descriptor: Int32
    let path: String

    enum Outcome {
        case acquired(ProcessLock)
        /// Another process (or another cache object in this one) holds it.
        case held(byPID: Int32?)
    }

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { release() }

    /// Tries to take the lock at `path` without waiting.
    static func acquire(at path: String) throws(POSIXError) -> Outcome {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(call: "open", path: path, code: errno) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            defer { close(fd) }
            if code == EWOULDBLOCK || code == EAGAIN {
                return .held(byPID: readPID(fd))
            }
            throw POSIXError(call: "flock", path: path, code: code)
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        return .acquired(ProcessLock(descriptor: fd, path: path))
    }

    /// The pid recorded by the holder of the lock at `path`, if it is held.
    static func holder(at path: String) -> Int32?? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .none }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            _ = flock(fd, LOCK_UN)
            return .none
        }
        return .some(readPID(fd))
    }

    /// Whether a process with this pid exists (one owned by another user counts).
    static func isRunning(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [CChar](repeating: 0, count: 32)
        let n = pread(fd, &buffer, 31, 0)
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func release() {
        if descriptor >= 0 {
            _ = flock(descriptor, LOCK_UN)
            close(descriptor)
            descriptor = -1
        }
    }
}
