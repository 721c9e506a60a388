import Foundation
import ReelCore
internal import CFFmpeg

/// The custom `AVIOContext` through which libavformat reads: every byte comes from
/// a ``ResourceLoader``; FFmpeg never opens a URL itself.
///
/// Reads pull from one open ``ByteStream`` at the current position. A seek
/// closes it (or, for a short hop forward, reads through), and the next read opens
/// a new range at the new position. `AVSEEK_SIZE` answers from the content
/// information. ``interrupt()`` cancels the open stream and makes every callback
/// return `AVERROR_EXIT`, so closing and seeking never wait on a slow network.
final class AVIOBridge: @unchecked Sendable {
    let url: URL
    let loader: any ResourceLoader

    private let lock = NSLock()
    private var stream: ByteStream?
    private var position: Int64 = 0
    private var information: ContentInformation?
    private var interrupted = false
    private(set) var lastLoaderError: ResourceLoaderError?

    // Statistics, read by the player.
    private var bytesRead: Int64 = 0
    private var requests = 0

    /// Called once each: when the content information and the first byte arrive.
    var onContentInformation: (() -> Void)?
    var onFirstByte: (() -> Void)?
    private var sawInformation = false
    private var sawFirstByte = false

    /// Set by the pipeline so a blocked read counts as waiting for the loader.
    var activity: (PipelineActivity, PipelineActivity.Worker)?

    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    /// Reads forward instead of opening a new range when a seek skips at most this many bytes.
    static let readThroughLimit: Int64 = 64 * 1024
    static let bufferSize: Int32 = 64 * 1024

    init(url: URL, loader: any ResourceLoader) throws {
        self.url = url
        self.loader = loader
        guard let buffer = av_malloc(Int(Self.bufferSize)) else {
            throw MediaError.ffmpeg(operation: "av_malloc", code: -12, message: "out of memory", url: url)
        }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        guard let context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), Self.bufferSize, 0, opaque,
            avioRead, nil, avioSeek
        ) else {
            av_free(buffer)
            throw MediaError.ffmpeg(operation: "avio_alloc_context", code: -12, message: "out of memory", url: url)
        }
        self.context = context
    }

    deinit {
        close()
    }

    /// Frees the AVIOContext and stops any read. Call after the format context is closed.
    func close() {
        lock.withLock {
            stream?.cancel()
            stream = nil
        }
        if let context {
            av_freep(&context.pointee.buffer)
            var pointer: UnsafeMutablePointer<AVIOContext>? = context
            avio_context_free(&pointer)
            self.context = nil
        }
    }

    /// Makes every callback fail fast with `AVERROR_EXIT` and cancels the open read.
    func interrupt() {
        let open = lock.withLock { () -> ByteStream? in
            interrupted = true
            return stream
        }
        open?.cancel()
    }

    /// Lets callbacks run again after ``interrupt()``. The read the interrupt
    /// cancelled is forgotten; the next read opens a fresh one where it left off.
    func resume() {
        lock.withLock {
            interrupted = false
            if stream?.isCancelled == true { stream = nil }
        }
    }

    var isInterrupted: Bool { lock.withLock { interrupted } }

    var contentInformation: ContentInformation? { lock.withLock { information } }

    var statistics: (bytesRead: Int64, requests: Int) { lock.withLock { (bytesRead, requests) } }

    // MARK: Callbacks

    fileprivate func read(into buffer: UnsafeMutablePointer<UInt8>, size: Int32) -> Int32 {
        guard size > 0 else { return 0 }
        do {
            let stream = try openStreamIfNeeded()
            if let (activity, worker) = activity { activity.enterIO(worker, stream: stream) }
            defer { if let (activity, worker) = activity { activity.leaveIO(worker) } }
            let n = try stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)))
            if n == 0 {
                return AVERROR_EOF_CODE
            }
            var firstByte = false
            lock.withLock {
                position += Int64(n)
                bytesRead += Int64(n)
                if !sawFirstByte { sawFirstByte = true; firstByte = true }
            }
            if firstByte { onFirstByte?() }
            return Int32(n)
        } catch {
            return failure(error)
        }
    }

    fileprivate func seek(offset: Int64, whence: Int32) -> Int64 {
        if whence & reel_avseek_size() != 0 {
            do {
                let info = try ensureInformation()
                return info.length ?? -1
            } catch {
                return Int64(failure(error))
            }
        }
        let mode = whence & ~reel_avseek_force()
        let target: Int64
        switch mode {
        case SEEK_SET:
            target = offset
        case SEEK_CUR:
            target = lock.withLock { position } + offset
        case SEEK_END:
            guard let length = (try? ensureInformation())?.length else { return Int64(reel_averror(ENOSYS)) }
            target = length + offset
        default:
            return Int64(reel_averror(EINVAL))
        }
        guard target >= 0 else { return Int64(reel_averror(EINVAL)) }
        let (current, open) = lock.withLock { (position, stream) }
        if target == current { return target }
        if let open, target > current, target - current <= Self.readThroughLimit {
            // A short hop forward: read through the bytes rather than pay a new request.
            var remaining = Int(target - current)
            var scratch = [UInt8](repeating: 0, count: remaining)
            do {
                if let (activity, worker) = activity { activity.enterIO(worker, stream: open) }
                defer { if let (activity, worker) = activity { activity.leaveIO(worker) } }
                while remaining > 0 {
                    let n = try scratch.withUnsafeMutableBytes { raw in
                        try open.read(into: UnsafeMutableRawBufferPointer(rebasing: raw.prefix(remaining)))
                    }
                    if n == 0 { break }
                    remaining -= n
                    lock.withLock {
                        position += Int64(n)
                        bytesRead += Int64(n)
                    }
                }
                if remaining == 0 { return target }
            } catch {
                // Fall through to a fresh range request.
            }
        }
        lock.withLock {
            stream?.cancel()
            stream = nil
            position = target
        }
        return target
    }

    private func openStreamIfNeeded() throws -> ByteStream {
        let (existing, offset, wasInterrupted) = lock.withLock { (stream, position, interrupted) }
        if wasInterrupted { throw CancellationError() }
        if let existing, !existing.isCancelled { return existing }
        if let length = contentInformation?.length, offset >= length {
            // Reading at the end: an empty stream, no request.
            let (empty, continuation) = ByteStream.makeStream()
            continuation.respond(with: contentInformation!)
            continuation.finish()
            return empty
        }
        let fresh = loader.read(url, range: ByteRange(offset: offset))
        lock.withLock {
            stream = fresh
            requests += 1
        }
        if lock.withLock({ interrupted }) { fresh.cancel() }
        let info: ContentInformation
        if let (activity, worker) = activity { activity.enterIO(worker, stream: fresh) }
        do {
            info = try fresh.waitForContentInformation()
        } catch {
            if let (activity, worker) = activity { activity.leaveIO(worker) }
            throw error
        }
        if let (activity, worker) = activity { activity.leaveIO(worker) }
        var first = false
        lock.withLock {
            if information == nil { information = info; first = true }
        }
        if first {
            sawInformation = true
            onContentInformation?()
            if !info.isByteRangeAccessSupported, let context { context.pointee.seekable = 0 }
        }
        return fresh
    }

    private func ensureInformation() throws -> ContentInformation {
        if let info = contentInformation { return info }
        _ = try openStreamIfNeeded()
        guard let info = contentInformation else { throw CancellationError() }
        return info
    }

    private func failure(_ error: any Error) -> Int32 {
        if isInterrupted || error is CancellationError { return AVERROR_EXIT_CODE }
        lock.withLock {
            if let loaderError = error as? ResourceLoaderError { lastLoaderError = loaderError }
            stream = nil
        }
        return reel_averror(EIO)
    }
}

private func avioRead(_ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ size: Int32) -> Int32 {
    guard let opaque, let buffer else { return reel_averror(EINVAL) }
    let bridge = Unmanaged<AVIOBridge>.fromOpaque(opaque).takeUnretainedValue()
    return bridge.read(into: buffer, size: size)
}

private func avioSeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return Int64(reel_averror(EINVAL)) }
    let bridge = Unmanaged<AVIOBridge>.fromOpaque(opaque).takeUnretainedValue()
    return bridge.seek(offset: offset, whence: whence)
}

/// The interrupt callback installed on the format context: non-zero stops FFmpeg.
func avioInterrupt(_ opaque: UnsafeMutableRawPointer?) -> Int32 {
    guard let opaque else { return 0 }
    let bridge = Unmanaged<AVIOBridge>.fromOpaque(opaque).takeUnretainedValue()
    return bridge.isInterrupted ? 1 : 0
}
