import Foundation
import ReelCore
import ReelStreaming
import Synchronization
internal import CFFmpeg

/// The custom `AVIOContext` through which libavformat reads: every byte comes from
/// a ``ResourceLoader``; FFmpeg never opens a URL itself.
///
/// Reads pull from one open ``ByteStream`` at the current position. A seek
/// closes it (or, for a short hop forward, reads through), and the next read opens
/// a new range at the new position. `AVSEEK_SIZE` answers from the content
/// information. ``interrupt()`` cancels the open stream and makes every callback
/// return `AVERROR_EXIT`, so closing and seeking never wait on a slow network.
///
/// Threads: FFmpeg calls the read and seek callbacks on the demux thread only; `interrupt()`,
/// `statistics` and the error come from any thread through `state`. The hooks and `context`
/// are fixed at init (the context is freed by `close()`, after the format context).
///
/// `@unchecked`: it wraps an `AVIOContext` and the demux thread's scanner state, which only
/// the demux thread touches; everything shared is in `state` (a `Mutex`).
final class AVIOBridge: @unchecked Sendable {
    /// What the pipeline wants to hear from the bridge, fixed before the first read.
    struct Hooks: Sendable {
        /// A blocked read counts as waiting for the loader (for settling).
        var io: IOActivity?
        /// Called once each: when the content information and the first byte arrive.
        var onContentInformation: (@Sendable () -> Void)?
        var onFirstByte: (@Sendable () -> Void)?

        init(io: IOActivity? = nil, onContentInformation: (@Sendable () -> Void)? = nil,
             onFirstByte: (@Sendable () -> Void)? = nil) {
            self.io = io
            self.onContentInformation = onContentInformation
            self.onFirstByte = onFirstByte
        }
    }

    private struct State {
        var stream: ByteStream?
        var position: Int64 = 0
        var information: ContentInformation?
        var interrupted = false
        var lastLoaderError: ResourceLoaderError?
        var bytesRead: Int64 = 0
        var requests = 0
        var sawFirstByte = false
        /// A read of this resource started ahead (``NestedIO``'s head start), taken by the first open.
        var handed: ByteStream?
    }

    let url: URL
    let loader: any ResourceLoader
    let hooks: Hooks
    private let state = Mutex(State())

    /// The item's nested opens (HLS/DASH), shared by the item's bridge and every bridge it
    /// opened for a playlist, segment or key; `nil` for a bridge that never opens anything.
    let nested: NestedIO?
    /// How deep in the item's documents this resource is (the item is 0).
    let depth: Int
    /// A bridge for a nested resource: it retries a network failure from where it stopped.
    let isNested: Bool
    /// Where a nested read of a byte range ends (the demuxer's `end_offset`), if it said.
    private let rangeEnd: Int64?
    /// Thread-only (the demux thread): what this resource names, when it is a playlist.
    private var scanner = DocumentScanner()
    private var countedDocument = false
    /// Thread-only: whether the playlist read to its end was handed to ``NestedIO/headStart(_:by:)``.
    private var offeredDocument = false

    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    /// Reads forward instead of opening a new range when a seek skips at most this many bytes.
    static let readThroughLimit: Int64 = 64 * 1024
    static let bufferSize: Int32 = 64 * 1024

    init(url: URL, loader: any ResourceLoader, hooks: Hooks = Hooks(), nested: NestedIO? = nil,
         depth: Int = 0, isNested: Bool = false, startOffset: Int64 = 0, rangeEnd: Int64? = nil,
         started: ByteStream? = nil) throws {
        self.url = url
        self.loader = loader
        self.hooks = hooks
        self.nested = nested
        self.depth = depth
        self.isNested = isNested
        self.rangeEnd = rangeEnd
        state.withTrackedLock { state in
            state.position = max(0, startOffset)
            state.handed = started
        }
        guard let buffer = av_malloc(Int(Self.bufferSize)) else {
            started?.cancel()
            throw MediaError.ffmpeg(operation: "av_malloc", code: -12, message: "out of memory", url: url)
        }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        guard let context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), Self.bufferSize, 0, opaque,
            avioRead, nil, avioSeek
        ) else {
            av_free(buffer)
            started?.cancel()
            throw MediaError.ffmpeg(operation: "avio_alloc_context", code: -12, message: "out of memory", url: url)
        }
        // The context counts positions in the resource, as the seek callback does: a part
        // opened at an offset starts there. Else an in-buffer seek lands `startOffset` bytes
        // off: FFmpeg 9's HLS demuxer reads consecutive byte-range parts of one file through
        // one open input, seeking it to each part's absolute offset, and played past the
        // first part on the wrong bytes (and ended there).
        context.pointee.pos = max(0, startOffset)
        self.context = context
    }

    deinit {
        close()
    }

    /// Frees the AVIOContext and stops any read. Call after the format context is closed.
    func close() {
        let (open, handed) = state.withTrackedLock { state -> (ByteStream?, ByteStream?) in
            defer { state.stream = nil; state.handed = nil }
            return (state.stream, state.handed)
        }
        open?.cancel()
        handed?.cancel()
        if !isNested { nested?.closeAll() }
        if let context {
            av_freep(&context.pointee.buffer)
            var pointer: UnsafeMutablePointer<AVIOContext>? = context
            avio_context_free(&pointer)
            self.context = nil
        }
    }

    /// Makes every callback fail fast with `AVERROR_EXIT` and cancels the open read.
    func interrupt() {
        let open = state.withTrackedLock { state -> ByteStream? in
            state.interrupted = true
            return state.stream
        }
        open?.cancel()
        if !isNested { nested?.interruptAll() }
    }

    /// Lets callbacks run again after ``interrupt()``. The read the interrupt
    /// cancelled is forgotten; the next read opens a fresh one where it left off.
    ///
    /// A refill the interrupt failed leaves the context's error (`AVERROR_EXIT`) and end-of-file
    /// flag set, and libavformat reads nothing more from it until a seek that moves: a read at
    /// the same position — after an interrupt that came late, once the demux thread had already
    /// taken the seek it was for — failed with `AVERROR_EXIT` again and again, and the demux
    /// thread spun without parking. They are cleared here, by the demux thread, the context's
    /// only user; an error or an end that was not the interrupt's stays.
    func resume() {
        state.withTrackedLock { state in
            state.interrupted = false
            if state.stream?.isCancelled == true { state.stream = nil }
        }
        if let context, context.pointee.error == AVERROR_EXIT_CODE {
            context.pointee.error = 0
            context.pointee.eof_reached = 0
        }
        if !isNested { nested?.resumeAll() }
    }

    var isInterrupted: Bool { state.withTrackedLock { $0.interrupted } }

    var contentInformation: ContentInformation? { state.withTrackedLock { $0.information } }

    /// The loader's error behind the last failed read, if any.
    var lastLoaderError: ResourceLoaderError? { state.withTrackedLock { $0.lastLoaderError } }

    /// Bytes read and requests made; the item's bridge counts its nested opens too (HLS).
    var statistics: (bytesRead: Int64, requests: Int) {
        let own = ownStatistics
        guard !isNested, let nested else { return own }
        let inner = nested.statistics
        return (own.bytesRead + inner.bytesRead, own.requests + inner.requests)
    }

    /// This resource's own bytes and requests.
    var ownStatistics: (bytesRead: Int64, requests: Int) { state.withTrackedLock { ($0.bytesRead, $0.requests) } }

    // MARK: Callbacks

    fileprivate func read(into buffer: UnsafeMutablePointer<UInt8>, size: Int32) -> Int32 {
        guard size > 0 else { return 0 }
        var retries = 0
        while true {
            do {
                return try readOnce(into: buffer, size: size)
            } catch let error as ResourceLoaderError {
                // A nested resource (a segment) resumes where the network dropped it.
                if isNested, case .network = error, retries < Self.nestedRetries, !isInterrupted {
                    retries += 1
                    let dropped = state.withTrackedLock { state -> ByteStream? in
                        defer { state.stream = nil }
                        return state.stream
                    }
                    dropped?.cancel()
                    continue
                }
                return failure(error)
            } catch {
                return failure(error)
            }
        }
    }

    /// How many times a nested read reopens after a network failure before it gives up.
    static let nestedRetries = 3

    private func readOnce(into buffer: UnsafeMutablePointer<UInt8>, size: Int32) throws -> Int32 {
        let stream = try openStreamIfNeeded()
        hooks.io?.begin(stream)
        defer { hooks.io?.end() }
        let n = try stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)))
        if n == 0 {
            if let nested {
                if let refusal = nested.scanned(scanner.finish(), by: self) { throw refusal }
                if scanner.isLive { nested.noteLive(url) }
                if !offeredDocument {
                    offeredDocument = true
                    // A playlist read whole: what the demuxer opens next can start now.
                    if let document = scanner.takeDocument() { nested.headStart(document, by: self) }
                }
            }
            return AVERROR_EOF_CODE
        }
        let (firstByte, offset) = state.withTrackedLock { state -> (Bool, Int64) in
            let offset = state.position
            state.position += Int64(n)
            state.bytesRead += Int64(n)
            defer { state.sawFirstByte = true }
            return (!state.sawFirstByte, offset)
        }
        if firstByte { hooks.onFirstByte?() }
        if let nested {
            let references = scanner.feed(UnsafeRawBufferPointer(start: buffer, count: n), at: offset)
            if let refusal = scanDocument(references, nested: nested) { throw refusal }
        }
        return Int32(n)
    }

    /// Checks a playlist's growth and what it names against the item's rules.
    private func scanDocument(_ references: [String], nested: NestedIO) -> MediaError? {
        switch scanner.kind {
        case .hls, .dash:
            let limits = nested.policy.limits
            if !countedDocument {
                countedDocument = true
                if let refusal = nested.countDocument(url) { return refusal }
            }
            if scanner.scanned > limits.maxDocumentBytes {
                return nested.fail(.streamLimit(what: "playlist size in bytes", limit: Int(limits.maxDocumentBytes), url: url))
            }
            if scanner.entries > limits.maxPlaylistEntries {
                return nested.fail(.streamLimit(what: "number of playlist entries", limit: limits.maxPlaylistEntries, url: url))
            }
            return references.isEmpty ? nil : nested.scanned(references, by: self)
        case .unknown, .media:
            return nil
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
            target = state.withTrackedLock { $0.position } + offset
        case SEEK_END:
            guard let length = (try? ensureInformation())?.length else { return Int64(reel_averror(ENOSYS)) }
            target = length + offset
        default:
            return Int64(reel_averror(EINVAL))
        }
        guard target >= 0 else { return Int64(reel_averror(EINVAL)) }
        let (current, open) = state.withTrackedLock { ($0.position, $0.stream) }
        if target == current { return target }
        if let open, target > current, target - current <= Self.readThroughLimit {
            // A short hop forward: read through the bytes rather than pay a new request.
            var remaining = Int(target - current)
            var scratch = [UInt8](repeating: 0, count: remaining)
            do {
                while remaining > 0 {
                    // Each read is its own wait: a read blocked on the loader after an earlier
                    // one returned bytes is waiting, not busy (else a manual clock never settles).
                    hooks.io?.begin(open)
                    defer { hooks.io?.end() }
                    let n = try scratch.withUnsafeMutableBytes { raw in
                        try open.read(into: UnsafeMutableRawBufferPointer(rebasing: raw.prefix(remaining)))
                    }
                    if n == 0 { break }
                    remaining -= n
                    state.withTrackedLock { state in
                        state.position += Int64(n)
                        state.bytesRead += Int64(n)
                    }
                }
                if remaining == 0 { return target }
            } catch {
                // Fall through to a fresh range request.
            }
        }
        let dropped = state.withTrackedLock { state -> ByteStream? in
            defer { state.stream = nil; state.position = target }
            return state.stream
        }
        dropped?.cancel()
        return target
    }

    private func openStreamIfNeeded() throws -> ByteStream {
        let (existing, offset, wasInterrupted) = state.withTrackedLock { ($0.stream, $0.position, $0.interrupted) }
        if wasInterrupted { throw CancellationError() }
        if let existing, !existing.isCancelled { return existing }
        if let length = contentInformation?.length, offset >= length {
            // Reading at the end: an empty stream, no request.
            let (empty, continuation) = ByteStream.makeStream()
            continuation.respond(with: contentInformation!)
            continuation.finish()
            return empty
        }
        let range: ByteRange
        if let rangeEnd, rangeEnd > offset {
            range = ByteRange(offset: offset, length: rangeEnd - offset)
        } else {
            range = ByteRange(offset: offset)
        }
        // The first open takes the read started ahead for it, if any (at the same range).
        let handed = state.withTrackedLock { state -> ByteStream? in
            defer { state.handed = nil }
            return state.handed
        }
        let fresh = handed ?? loader.read(url, range: range)
        let interruptedNow = state.withTrackedLock { state -> Bool in
            state.stream = fresh
            state.requests += 1
            return state.interrupted
        }
        if interruptedNow { fresh.cancel() }
        let info: ContentInformation
        hooks.io?.begin(fresh)
        do {
            info = try fresh.waitForContentInformation()
        } catch {
            hooks.io?.end()
            throw error
        }
        hooks.io?.end()
        let first = state.withTrackedLock { state -> Bool in
            guard state.information == nil else { return false }
            state.information = info
            return true
        }
        if first {
            hooks.onContentInformation?()
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
        state.withTrackedLock { state in
            if let loaderError = error as? ResourceLoaderError { state.lastLoaderError = loaderError }
            state.stream = nil
        }
        if let media = error as? MediaError {
            _ = nested?.fail(media)
            return reel_averror(EACCES)
        }
        if isNested, let loaderError = error as? ResourceLoaderError {
            // A nested resource that cannot be read fails the item (the demuxer would skip it).
            _ = nested?.fail(.loading(loaderError))
        }
        return reel_averror(EIO)
    }

    /// Opens the first range now, so a nested open fails at once when the resource is missing.
    func openNow() -> Int32 {
        do {
            _ = try openStreamIfNeeded()
            return 0
        } catch {
            return failure(error)
        }
    }

    /// Which path the resource takes (``StreamingFormat``): opens the first read, waits for
    /// its content information and as many first bytes as the decision needs, and consumes
    /// none of them. Demux thread; ``interrupt()`` stops the wait.
    func detectFormat() throws -> StreamingFormat {
        let stream = try openStreamIfNeeded()
        let information = contentInformation
        hooks.io?.begin(stream)
        defer { hooks.io?.end() }
        return try StreamingFormat.detect(contentType: information?.contentType, name: information?.finalURL ?? url) { atLeast in
            try stream.waitForPrefix(atLeast: atLeast, atMost: StreamingFormat.sniffLimit)
        }
    }

    /// The whole resource when it is at most `limit` bytes, else `nil` (a playlist offered to a
    /// scheduler; demux thread, after ``detectFormat()``, nothing consumed).
    func readDocument(limit: Int) throws -> Data? {
        let stream = try openStreamIfNeeded()
        hooks.io?.begin(stream)
        defer { hooks.io?.end() }
        let data = try stream.waitForPrefix(atLeast: limit + 1, atMost: limit + 1)
        return data.count > limit ? nil : data
    }

    /// Takes the open read out of the bridge (unconsumed after ``detectFormat()``), to hand it
    /// to whoever reads the resource next.
    func takeStream() -> ByteStream? {
        state.withTrackedLock { state in
            defer { state.stream = nil }
            return state.stream
        }
    }

    /// Whether the resource read so far is an HLS playlist or a DASH manifest (demux thread).
    var documentKind: DocumentScanner.Kind { scanner.kind }

    /// The URL the bytes really came from (after redirects).
    var finalURL: URL { contentInformation?.finalURL ?? url }
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
