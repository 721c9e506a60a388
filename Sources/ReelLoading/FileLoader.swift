import Foundation
import ReelCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Reads local files (`file://` URLs) through the `ResourceLoader` contract.
///
/// Reads are pulled on the reader's thread with `pread`, so a player reading a
/// local file pays no thread hop. The entity tag is made from the file's device,
/// inode, size and modification time, so a replaced or rewritten file is a new
/// version to any cache above this loader.
public struct FileLoader: ResourceLoader {
    /// The largest chunk a read returns at once.
    public var chunkSize: Int

    /// A loader returning at most `chunkSize` bytes per pull (256 KiB by default).
    public init(chunkSize: Int = 256 * 1024) {
        self.chunkSize = chunkSize
    }

    /// The bytes of `range` of the file at `url`: the file is opened and checked now, and
    /// each pull is one `pread` on the puller's thread (it blocks for the disk; pull from a
    /// thread of your own, not the concurrency pool). A range running past the end is cut
    /// at the file's length. The stream fails, on its first pull, with
    /// `ResourceLoaderError.notFound(url:)` for a missing file or a URL that is not a file
    /// URL, `.rangeNotSatisfiable` for an offset past the end, and `.io` for any other
    /// failure (a directory, a permission, a read error), naming the system's reason.
    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        guard url.isFileURL else {
            return .failed(ResourceLoaderError.notFound(url: url))
        }
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                return .failed(ResourceLoaderError.notFound(url: url))
            }
            return .failed(ResourceLoaderError.io(url: url, range: range, reason: String(cString: strerror(code))))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            return .failed(ResourceLoaderError.io(url: url, range: range, reason: reason))
        }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            close(descriptor)
            return .failed(ResourceLoaderError.io(url: url, range: range, reason: "is a directory"))
        }
        let info = Self.information(url: url, status: status)
        let length = Int64(status.st_size)
        guard range.offset <= length else {
            close(descriptor)
            return .failed(
                ResourceLoaderError.rangeNotSatisfiable(url: url, range: range, length: length),
                contentInformation: info
            )
        }
        let reader = FileReader(
            descriptor: descriptor, url: url, range: range,
            end: min(range.end ?? length, length)
        )
        let chunkSize = self.chunkSize
        return ByteStream(
            contentInformation: info,
            pull: { max in try reader.read(maxLength: Swift.min(max, chunkSize)) },
            onCancel: { reader.close() }
        )
    }

    /// The file's length and entity tag (device, inode, size and modification time), from
    /// one `stat`; no byte is read. Throws `ResourceLoaderError.notFound(url:)` for a missing
    /// file or a URL that is not a file URL, and `.io` for any other failure.
    public func contentInformation(for url: URL) async throws -> ContentInformation {
        guard url.isFileURL else { throw ResourceLoaderError.notFound(url: url) }
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw ResourceLoaderError.notFound(url: url) }
            throw ResourceLoaderError.io(url: url, range: .all, reason: String(cString: strerror(code)))
        }
        return Self.information(url: url, status: status)
    }

    private static func information(url: URL, status: stat) -> ContentInformation {
        let modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        let tag = "\"\(String(status.st_dev, radix: 16))-\(String(status.st_ino, radix: 16))-\(String(status.st_size, radix: 16))-\(String(modified, radix: 16))\""
        return ContentInformation(
            length: Int64(status.st_size),
            contentType: ContentInformation.contentType(forPathExtension: url.pathExtension),
            isByteRangeAccessSupported: true,
            entityTag: tag,
            lastModified: nil,
            finalURL: url
        )
    }
}

/// One open file being read from `position` to `end`; closed at the end, on
/// cancellation, or when released.
private final class FileReader: Sendable {
    /// Guarded by `state`: the descriptor (-1 once closed) and the read position. A
    /// `pread` runs inside the critical section, so a `close()` from a cancelling
    /// thread never closes a descriptor under a read (a local read is short).
    private struct State {
        var descriptor: Int32
        var position: Int64
    }

    private let state: Mutex<State>
    // Immutable.
    private let end: Int64
    private let url: URL
    private let range: ByteRange

    init(descriptor: Int32, url: URL, range: ByteRange, end: Int64) {
        self.state = Mutex(State(descriptor: descriptor, position: range.offset))
        self.end = end
        self.url = url
        self.range = range
    }

    deinit { close() }

    func read(maxLength: Int) throws -> Data? {
        let end = self.end
        let url = self.url
        let range = self.range
        return try state.withTrackedLock { state throws -> Data? in
            guard state.descriptor >= 0 else {
                if state.position >= end { return nil }
                throw CancellationError()
            }
            let wanted = Int(Swift.min(Int64(maxLength), end - state.position))
            if wanted <= 0 {
                Self.close(&state)
                return nil
            }
            var data = Data(count: wanted)
            let descriptor = state.descriptor
            let position = state.position
            let count = data.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress, wanted, off_t(position))
            }
            if count < 0 {
                let reason = String(cString: strerror(errno))
                Self.close(&state)
                throw ResourceLoaderError.io(url: url, range: range, reason: reason)
            }
            if count == 0 {
                // The file shrank under us: what we promised is not there.
                Self.close(&state)
                throw ResourceLoaderError.io(url: url, range: range, reason: "file ended at byte \(position), expected \(end)")
            }
            state.position += Int64(count)
            if count < wanted { data.removeSubrange(count..<wanted) }
            return data
        }
    }

    func close() {
        state.withTrackedLock { Self.close(&$0) }
    }

    private static func close(_ state: inout State) {
        if state.descriptor >= 0 {
            Glibc.close(state.descriptor)
            state.descriptor = -1
        }
    }
}
