import Foundation
import ReelCore
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: the call, the path and `errno`'s text. Every file operation
/// of the cache goes through the helpers below, which turn `errno` into this; every commit
/// step among them (fsync, rename, unlink) passes a crash point first (``CrashPoints``).
struct POSIXError: Error, CustomStringConvertible {
    var call: String
    var path: String
    var code: Int32

    var description: String { "\(call) \(path): \(String(cString: strerror(code)))" }

    /// The disk (or the quota) is full: caching must stop, playback must not.
    var isNoSpace: Bool { code == ENOSPC || code == EDQUOT }
    var isMissing: Bool { code == ENOENT || code == ENOTDIR }
}

enum POSIXFile {
    static func openForReading(_ path: String) throws(POSIXError) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(call: "open", path: path, code: errno) }
        return fd
    }

    /// Creates a new file that must not exist yet.
    static func createExclusive(_ path: String) throws(POSIXError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(call: "create", path: path, code: errno) }
        return fd
    }

    /// Reads up to `count` bytes at `offset` (fewer only at the end of the file).
    static func read(_ fd: Int32, at offset: Int64, count: Int, path: String) throws(POSIXError) -> Data {
        var data = Data(count: count)
        var done = 0
        var failure: Int32 = 0
        data.withUnsafeMutableBytes { raw in
            while done < count {
                let n = pread(fd, raw.baseAddress! + done, count - done, off_t(offset + Int64(done)))
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { return }
                done += n
            }
        }
        if failure != 0 { throw POSIXError(call: "read", path: path, code: failure) }
        if done < count { data.removeSubrange(done..<count) }
        return data
    }

    /// Writes all of `data` at the file's current position.
    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(POSIXError) {
        var failure: Int32 = 0
        data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                done += n
            }
        }
        if failure != 0 { throw POSIXError(call: "write", path: path, code: failure) }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    static func sync(_ fd: Int32, path: String) throws(POSIXError) {
        CrashPoints.reach(.fsync, path)
        guard fdatasync(fd) == 0 else { throw POSIXError(call: "fdatasync", path: path, code: errno) }
    }

    static func rename(_ from: String, _ to: String) throws(POSIXError) {
        CrashPoints.reach(.rename, to)
        guard Glibc.rename(from, to) == 0 else { throw POSIXError(call: "rename", path: from, code: errno) }
    }

    static func makeDirectory(_ path: String) throws(POSIXError) {
        if mkdir(path, 0o755) != 0, errno != EEXIST {
            throw POSIXError(call: "mkdir", path: path, code: errno)
        }
    }

    static func unlinkIfPresent(_ path: String) {
        CrashPoints.reach(.unlink, path)
        _ = unlink(path)
    }

    /// The size of the file at `path`, or `nil` if it is missing or not a regular file.
    static func size(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The names in a directory (not `.` and `..`); empty if it cannot be read.
    static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Writes `data` to `path` atomically: a temporary file beside it, synced, then renamed over it.
    static func writeAtomically(_ data: Data, to path: String, sync: Bool) throws(POSIXError) {
        let temporary = path + ".tmp"
        unlinkIfPresent(temporary)
        let fd = try createExclusive(temporary)
        do {
            try writeAll(fd, data, path: temporary)
            if sync { try POSIXFile.sync(fd, path: temporary) }
            close(fd)
        } catch {
            close(fd)
            unlinkIfPresent(temporary)
            throw error
        }
        do {
            try rename(temporary, path)
        } catch {
            unlinkIfPresent(temporary)
            throw error
        }
    }

    /// Removes a file or a directory tree; missing is fine.
    static func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            for name in list(path) { removeTree(path + "/" + name) }
            _ = rmdir(path)
        } else {
            unlinkIfPresent(path)
        }
    }
}
