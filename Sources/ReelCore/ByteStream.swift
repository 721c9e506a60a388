import Foundation

/// The bytes of one read from a ``ResourceLoader``: first the resource's
/// ``ContentInformation``, then the data in order, then the end or an error.
///
/// A `ByteStream` is an `AsyncSequence` of `Data` chunks for Swift code, and it can
/// also be read from a plain thread with the blocking ``read(maxLength:)``, which is
/// how the FFmpeg bridge reads it without hopping through the concurrency runtime.
///
/// Producers either push (``makeStream(highWaterMark:)`` and its ``Continuation``)
/// or are pulled (``init(contentInformation:pull:)``, for sources such as files
/// whose reads are synchronous anyway).
///
/// Cancelling a stream (``cancel()``, or cancelling the task iterating it) stops
/// its producer promptly: pushed streams run their `onCancel` handlers, and later
/// reads throw `CancellationError`.
public final class ByteStream: AsyncSequence, @unchecked Sendable {
    public typealias Element = Data
    public typealias Failure = any Error

    // All state below is guarded by `condition`.
    private let condition = NSCondition()
    private var info: ContentInformation?
    private var chunks: [Data] = []
    private var headOffset = 0          // bytes of chunks[0] already consumed
    private var bufferedBytes = 0
    private var finished = false
    private var failure: (any Error)?
    private var cancelled = false
    private var producerIdle = false
    private var consumerProgress = 0
    private var cancelHandlers: [@Sendable () -> Void] = []
    private var consumerWaiter: CheckedContinuation<Void, Never>?
    private var producerWaiters: [CheckedContinuation<Void, Never>] = []
    private let highWaterMark: Int
    private let pull: (@Sendable (Int) throws -> Data?)?

    private init(highWaterMark: Int, info: ContentInformation?, pull: (@Sendable (Int) throws -> Data?)?) {
        self.highWaterMark = highWaterMark
        self.info = info
        self.pull = pull
    }

    // MARK: - Making streams

    /// A stream its producer pushes into through the returned continuation.
    ///
    /// `highWaterMark` bounds what ``Continuation/send(_:)`` buffers ahead of the
    /// consumer; ``Continuation/yield(_:)`` ignores it.
    public static func makeStream(highWaterMark: Int = 1 << 20) -> (stream: ByteStream, continuation: Continuation) {
        let stream = ByteStream(highWaterMark: highWaterMark, info: nil, pull: nil)
        return (stream, Continuation(stream: stream))
    }

    /// A stream whose bytes are pulled on demand by the reader: `pull(n)` returns
    /// up to `n` bytes, or `nil` at the end. It runs on the reader's thread.
    /// `onCancel` runs once if the reader cancels.
    public init(
        contentInformation: ContentInformation,
        pull: @escaping @Sendable (Int) throws -> Data?,
        onCancel: (@Sendable () -> Void)? = nil
    ) {
        self.highWaterMark = 0
        self.info = contentInformation
        self.pull = pull
        if let onCancel { cancelHandlers.append(onCancel) }
    }

    /// A stream that fails at once with `error` (after `contentInformation`, if given).
    public static func failed(_ error: any Error, contentInformation: ContentInformation? = nil) -> ByteStream {
        let (stream, continuation) = makeStream()
        if let contentInformation { continuation.respond(with: contentInformation) }
        continuation.finish(throwing: error)
        return stream
    }

    // MARK: - Producing

    /// The producer's side of a pushed ``ByteStream``.
    public struct Continuation: Sendable {
        fileprivate let stream: ByteStream

        /// Delivers the content information. Must come before any data, once.
        public func respond(with info: ContentInformation) { stream.producerRespond(info) }
        /// Appends bytes without waiting, however much is buffered.
        public func yield(_ data: Data) { stream.producerYield(data) }
        /// Appends bytes, then waits while more than the high-water mark is buffered.
        /// Throws `CancellationError` once the consumer has cancelled.
        public func send(_ data: Data) async throws { try await stream.producerSend(data) }
        /// Ends the stream normally: the consumer sees the end after the buffered bytes.
        public func finish() { stream.producerFinish(nil) }
        /// Ends the stream with `error`, after the buffered bytes.
        public func finish(throwing error: any Error) { stream.producerFinish(error) }
        /// Whether the consumer has cancelled.
        public var isCancelled: Bool { stream.isCancelled }
        /// Registers work to stop when the consumer cancels (runs at once if it already has).
        public func onCancel(_ handler: @escaping @Sendable () -> Void) { stream.addCancelHandler(handler) }
        /// Tells deterministic tests that the producer is waiting for something
        /// outside the system under test (a manual clock, a scripted stall), so a
        /// reader blocked on this stream is idle rather than busy.
        public func setIdle(_ idle: Bool) { stream.setProducerIdle(idle) }
    }

    private func producerRespond(_ newInfo: ContentInformation) {
        condition.lock()
        if info == nil { info = newInfo }
        condition.broadcast()
        let waiter = takeConsumerWaiter()
        condition.unlock()
        waiter?.resume()
    }

    private func producerYield(_ data: Data) {
        guard !data.isEmpty else { return }
        condition.lock()
        guard !finished, !cancelled else { condition.unlock(); return }
        chunks.append(data)
        bufferedBytes += data.count
        condition.broadcast()
        let waiter = takeConsumerWaiter()
        condition.unlock()
        waiter?.resume()
    }

    private func producerSend(_ data: Data) async throws {
        producerYield(data)
        while true {
            let mustWait: Bool = condition.withLock {
                !cancelled && bufferedBytes > highWaterMark
            }
            if isCancelled { throw CancellationError() }
            guard mustWait else { return }
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                condition.lock()
                if cancelled || bufferedBytes <= highWaterMark {
                    condition.unlock()
                    waiter.resume()
                } else {
                    producerWaiters.append(waiter)
                    condition.unlock()
                }
            }
        }
    }

    private func producerFinish(_ error: (any Error)?) {
        condition.lock()
        guard !finished else { condition.unlock(); return }
        finished = true
        failure = error
        producerIdle = false
        condition.broadcast()
        let waiter = takeConsumerWaiter()
        condition.unlock()
        waiter?.resume()
    }

    private func addCancelHandler(_ handler: @escaping @Sendable () -> Void) {
        condition.lock()
        if cancelled {
            condition.unlock()
            handler()
            return
        }
        cancelHandlers.append(handler)
        condition.unlock()
    }

    private func setProducerIdle(_ idle: Bool) {
        condition.withLock { producerIdle = idle }
    }

    private func takeConsumerWaiter() -> CheckedContinuation<Void, Never>? {
        defer { consumerWaiter = nil }
        return consumerWaiter
    }

    private func takeProducerWaiters() -> [CheckedContinuation<Void, Never>] {
        defer { producerWaiters = [] }
        return producerWaiters
    }

    // MARK: - Consuming

    /// Whether the stream was cancelled by its consumer.
    public var isCancelled: Bool { condition.withLock { cancelled } }

    /// Stops the stream: buffered bytes are dropped, the producer is told, and
    /// reads from now on throw `CancellationError`. Safe to call more than once.
    public func cancel() {
        condition.lock()
        guard !cancelled else { condition.unlock(); return }
        cancelled = true
        chunks = []
        bufferedBytes = 0
        headOffset = 0
        let handlers = cancelHandlers
        cancelHandlers = []
        let waiter = takeConsumerWaiter()
        let producers = takeProducerWaiters()
        condition.broadcast()
        condition.unlock()
        waiter?.resume()
        producers.forEach { $0.resume() }
        handlers.forEach { $0() }
    }

    /// Whether a reader of this stream would have to wait for something outside
    /// the system: nothing is buffered, the stream is not over, and the producer
    /// said it is idle. Pulled streams are never idle. Used to settle deterministic tests.
    public var isIdle: Bool {
        condition.withLock {
            pull == nil && !cancelled && !finished && chunks.isEmpty && producerIdle
                && (info != nil || producerIdle)
        }
    }

    /// The content information if it has arrived, without waiting.
    public var receivedContentInformation: ContentInformation? { condition.withLock { info } }

    /// Counts the blocking reads (and information waits) that have returned. A
    /// thread that noted it before a read and sees it unchanged has not been handed
    /// anything since — what deterministic tests use to tell a blocked reader from
    /// one that just got bytes and is busy with them.
    public var consumerProgressCount: Int { condition.withLock { consumerProgress } }

    /// Bytes buffered and not yet read.
    public var bufferedByteCount: Int { condition.withLock { bufferedBytes } }

    /// Waits for the content information (still available after the stream ends or
    /// is cancelled, once it arrived). Throws the stream's error if it fails first.
    public func contentInformation() async throws -> ContentInformation {
        while true {
            if let result = try pollInformation() { return result }
            try await waitForChange { self.info != nil }
        }
    }

    /// Blocks the calling thread until the content information arrives.
    public func waitForContentInformation() throws -> ContentInformation {
        condition.lock()
        defer {
            consumerProgress += 1
            condition.unlock()
        }
        while true {
            if let info { return info }
            if cancelled { throw CancellationError() }
            if finished { throw failure ?? CancellationError() }
            condition.wait()
        }
    }

    private func pollInformation() throws -> ContentInformation? {
        try condition.withLock {
            if let info { return info }
            if cancelled { throw CancellationError() }
            if finished { throw failure ?? CancellationError() }
            return nil
        }
    }

    /// Blocks the calling thread until bytes arrive, then returns up to `maxLength`
    /// of them; `nil` at the end of the stream. Throws the producer's error after the
    /// bytes before it, and `CancellationError` once cancelled.
    public func read(maxLength: Int) throws -> Data? {
        precondition(maxLength > 0)
        if let pull {
            if isCancelled { throw CancellationError() }
            return try pull(maxLength)
        }
        condition.lock()
        defer {
            consumerProgress += 1
            condition.unlock()
        }
        while true {
            if cancelled { throw CancellationError() }
            if !chunks.isEmpty { return takeLocked(maxLength) }
            if finished {
                if let failure { throw failure }
                return nil
            }
            condition.wait()
        }
    }

    /// The blocking read into caller memory, for the C bridge: returns the number
    /// of bytes copied, 0 at the end of the stream.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        if pull != nil {
            guard let data = try read(maxLength: buffer.count) else { return 0 }
            data.copyBytes(to: buffer.bindMemory(to: UInt8.self), count: data.count)
            return data.count
        }
        condition.lock()
        defer {
            consumerProgress += 1
            condition.unlock()
        }
        while true {
            if cancelled { throw CancellationError() }
            if !chunks.isEmpty {
                var copied = 0
                while copied < buffer.count, !chunks.isEmpty {
                    let head = chunks[0]
                    let available = head.count - headOffset
                    let n = Swift.min(available, buffer.count - copied)
                    head.withUnsafeBytes { raw in
                        let src = raw.baseAddress!.advanced(by: headOffset)
                        (buffer.baseAddress! + copied).copyMemory(from: src, byteCount: n)
                    }
                    copied += n
                    consumeLocked(n)
                }
                return copied
            }
            if finished {
                if let failure { throw failure }
                return 0
            }
            condition.wait()
        }
    }

    /// Takes up to `maxLength` buffered bytes, across chunks. Whole chunks are
    /// handed over without copying when they fit.
    private func takeLocked(_ maxLength: Int) -> Data {
        var result: Data?
        while !chunks.isEmpty, (result?.count ?? 0) < maxLength {
            let head = chunks[0]
            let available = head.count - headOffset
            let n = Swift.min(available, maxLength - (result?.count ?? 0))
            let start = head.startIndex + headOffset
            let piece = (headOffset == 0 && n == head.count) ? head : Data(head[start..<(start + n)])
            consumeLocked(n)
            if result == nil { result = piece } else { result!.append(piece) }
        }
        return result ?? Data()
    }

    private func consumeLocked(_ n: Int) {
        headOffset += n
        bufferedBytes -= n
        if headOffset == chunks[0].count {
            chunks.removeFirst()
            headOffset = 0
        }
        if bufferedBytes <= highWaterMark, !producerWaiters.isEmpty {
            let waiters = takeProducerWaiters()
            // Resuming a continuation under the lock is safe: it only enqueues the task.
            waiters.forEach { $0.resume() }
        }
    }

    private func pollChunk() throws -> Data?? {
        try condition.withLock {
            if cancelled { throw CancellationError() }
            if !chunks.isEmpty {
                let available = chunks[0].count - headOffset
                return .some(takeLocked(available))
            }
            if finished {
                if let failure { throw failure }
                return .some(nil)
            }
            return nil
        }
    }

    /// Suspends until `ready` holds (checked under the lock, then again on each
    /// change the producer makes), or the stream ends or is cancelled.
    private func waitForChange(until ready: @escaping () -> Bool) async throws {
        try await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                condition.lock()
                if cancelled || finished || ready() {
                    condition.unlock()
                    waiter.resume()
                    return
                }
                if let old = consumerWaiter { old.resume() }
                consumerWaiter = waiter
                condition.unlock()
            }
            if Task.isCancelled { throw CancellationError() }
        } onCancel: {
            self.cancel()
        }
    }

    private func nextChunk() async throws -> Data? {
        if Task.isCancelled {
            cancel()
            throw CancellationError()
        }
        if let pull {
            try Task.checkCancellation()
            if isCancelled { throw CancellationError() }
            return try pull(256 * 1024)
        }
        while true {
            if let result = try pollChunk() { return result }
            try await waitForChange { !self.chunks.isEmpty }
        }
    }

    // MARK: - AsyncSequence

    /// Iterates the chunks. When the last copy of an iterator goes away (the
    /// `for` loop ended, was broken out of, or its task was cancelled), the read is
    /// cancelled, so an abandoned read never keeps a connection or file open.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let token: IterationToken
        public mutating func next() async throws -> Data? {
            try await token.stream.nextChunk()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(token: IterationToken(stream: self)) }

    /// Cancels the stream when the iteration that owns it is abandoned.
    fileprivate final class IterationToken: Sendable {
        let stream: ByteStream
        init(stream: ByteStream) { self.stream = stream }
        deinit { stream.cancel() }
    }

    /// Reads everything left in the stream (for tests and small resources).
    public func collect(limit: Int = .max) async throws -> Data {
        var result = Data()
        for try await chunk in self {
            result.append(chunk)
            if result.count > limit { break }
        }
        return result
    }
}
