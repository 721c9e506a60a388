import Foundation
import NIOPosix
import ReelCore
import ReelOrigin

/// Writes a request body to a new file in the incoming directory, counting bytes and
/// refusing more than `limit`. On any failure the partial file is removed before the
/// error is thrown, so nothing half-written stays on disk. Writes run on NIO's thread pool.
enum UploadSink {
    /// Streams `body` to `incoming/<random>.part` and returns its URL and size.
    static func receive(_ body: OriginRequestBody, into incoming: URL, limit: Int64) async throws -> (url: URL, size: Int64) {
        let url = incoming.appendingPathComponent(AccountsService.randomIdentifier() + ".part")
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw APIFailure(status: 500, code: "storage", message: "cannot create an upload file: \(String(cString: strerror(errno)))")
        }
        let file = FileDescriptorBox(descriptor)
        var size: Int64 = 0
        do {
            for try await chunk in body {
                size += Int64(chunk.count)
                guard size <= limit else {
                    throw APIFailure(status: 413, code: "too_large", message: "the upload is larger than \(limit) bytes")
                }
                try await NIOThreadPool.singleton.runIfActive { try file.write(chunk) }
            }
            try await NIOThreadPool.singleton.runIfActive { try file.close() }
        } catch {
            try? file.close()
            unlink(url.path)
            if error is OriginRequestBody.Truncated {
                throw APIFailure.badRequest("truncated", "the upload ended before its declared length")
            }
            throw error
        }
        return (url, size)
    }
}

/// A file descriptor written from NIO's thread pool, one write at a time (the upload
/// loop awaits each write before the next), closed once.
///
/// `@unchecked`: it wraps a kernel file descriptor; that one-at-a-time order, not a lock, keeps
/// its writes and close apart.
final class FileDescriptorBox: @unchecked Sendable {
    private var descriptor: Int32

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    func write(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw APIFailure(status: 500, code: "storage", message: "cannot write the upload: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    func close() throws {
        guard descriptor >= 0 else { return }
        CrashPoints.reach(.fsync, "upload")
        let result = fsync(descriptor)
        Foundation.close(descriptor)
        descriptor = -1
        if result != 0 {
            throw APIFailure(status: 500, code: "storage", message: "cannot store the upload: \(String(cString: strerror(errno)))")
        }
    }
}
