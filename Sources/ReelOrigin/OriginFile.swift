import Foundation
import NIOCore
import ReelThreads
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One file opened for a response: its descriptor, size and validators. Reads are
/// blocking `pread`s, run on a thread pool by the handler, never on the event loop.
final class OriginFile: Sendable {
    /// The descriptor, -1 once closed; guarded by its mutex. A read `pread`s inside the
    /// critical section, so a close can never hand the number to another file mid-read
    /// (reads run on NIO's thread pool, one at a time per response).
    private let descriptor: Mutex<Int32>
    // Immutable.
    let length: Int64
    /// A strong entity tag from inode, size and modification time (quoted).
    let entityTag: String
    /// The modification time as an HTTP date.
    let lastModified: String

    enum OpenError: Error {
        case notFound
        case notARegularFile
        case failed(String)
    }

    /// Opens the regular file at `path`.
    init(path: String) throws(OpenError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .notFound }
            throw .failed(String(cString: strerror(code)))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw .failed(reason)
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw .notARegularFile
        }
        self.descriptor = Mutex(descriptor)
        self.length = Int64(status.st_size)
        let nanos = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        self.entityTag = "\"\(String(status.st_ino, radix: 16))-\(String(status.st_size, radix: 16))-\(String(nanos, radix: 16))\""
        self.lastModified = HTTPDate.format(secondsSince1970: Int(status.st_mtim.tv_sec))
    }

    deinit { closeFile() }

    /// Reads `count` bytes at `offset` into a new buffer (fewer only at the end of the file).
    func read(at offset: Int64, count: Int, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        try descriptor.withTrackedLock { fd throws(OpenError) -> ByteBuffer in
            guard fd >= 0 else { throw OpenError.failed("closed") }
            var buffer = allocator.buffer(capacity: count)
            var done = 0
            while done < count {
                let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { raw in
                    let got = pread(fd, raw.baseAddress, count - done, off_t(offset + Int64(done)))
                    return got > 0 ? got : 0
                }
                if n <= 0 { break }
                done += n
            }
            return buffer
        }
    }

    func closeFile() {
        descriptor.withTrackedLock { descriptor in
            if descriptor >= 0 {
                close(descriptor)
                descriptor = -1
            }
        }
    }
}

/// HTTP dates (`Sun, 06 Nov 1994 08:49:37 GMT`), formatted without a shared formatter.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(secondsSince1970: Int) -> String {
        var time = time_t(secondsSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
