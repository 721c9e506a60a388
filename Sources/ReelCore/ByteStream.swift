import Dispatch
import Foundation
import Synchronization
import ReelThreads
#if canImport(Glibc)
import Glibc
#endif

/// The bytes of one read from a ``ResourceLoader``: first the resource's
/// ``ContentInformation``, then the data in order, then the end or an error.
///
/// A `ByteStream` is an `AsyncSequence` of `Data` chunks for Swift code, and it can
/// also be read from a plain thread with the blocking ``read(maxLength:)``, which is
/// how the FFmpeg bridge reads it without hopping through the concurrency runtime.
///
/// Producers either push (``makeStream(highWaterMark:)`` and its ``Continuation``)
/// or are pulled (``init(contentInformation:pull:onCancel:)``, for sources such as files
/// whose reads are synchronous anyway).
///
/// Cancelling a stream (``cancel()``, or cancelling the task iterating it) stops
/// its producer promptly: pushed streams run their `onCancel` handlers, and later
/// reads throw `CancellationError`.
///
/// ## Waiting and waking
///
/// All mutable state is in one `Mutex` (``State``). Every wait checks its condition
/// and registers its waiter in the same critical section, and every change that can
/// satisfy a wait takes the waiters in the critical section that makes the change, so
/// no wake-up is lost between a check and a wait. Three kinds of waiters:
///
/// - async consumers (``contentInformation()``, iteration) park a continuation; they
///   are resumed by `respond`, `yield`, `finish` and `cancel`, and cancelling their
///   task cancels the stream;
/// - async producers (``Continuation/send(_:)``) park a continuation above the
///   high-water mark; they are resumed when a read brings the buffer down to it, on
///   `cancel`, or when their own task is cancelled;
/// - plain threads (the blocking reads) park on a ReelThreads `Parker`, one per wait,
///   registered under the stream's lock after the condition was found false there —
///   never a thread of the concurrency pool — woken by the same changes as async consumers.
///
/// Every continuation is taken out of the state before it is resumed, so each is
/// resumed exactly once.
// Over 500 lines on purpose: one lock's state, private to this file; split across files it
// would have to be visible to the whole module.
public final class ByteStream: AsyncSequence, Sendable {
    public typealias Element = Data
    public typealias Failure = any Error

    /// Everything that changes, guarded by `state`.
    private struct State {
        var info: ContentInformation?
        var chunks: [Data] = []
        /// Bytes of `chunks[0]` already consumed.
        var headOffset = 0
        var bufferedBytes = 0
        var finished = false
        var failure: (any Error)?
        var cancelled = false
        var producerIdle = false
        /// While a blocking ``waitForPrefix(atLeast:atMost:)`` waits: how many bytes it waits for.
        var peekMinimum = 0
        var consumerProgress = 0
        var cancelHandlers: [@Sendable () -> Void] = []
        var nextWaiterID: UInt64 = 0
        var consumerWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var producerWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var threadWaiters: [Parker] = []

        mutating func makeWaiterID() -> UInt64 {
            nextWaiterID &+= 1
            return nextWaiterID
        }

        /// Takes every consumer-side waiter (async and blocked threads): something they wait for changed.
        mutating func takeConsumerWakeUps() -> WakeUps {
            defer {
                consumerWaiters = [:]
                threadWaiters = []
            }
            return WakeUps(continuations: Array(consumerWaiters.values), parkers: threadWaiters)
        }
    }

    /// Waiters taken out of the state under the lock, woken after it is released.
    private struct WakeUps {
        var continuations: [CheckedContinuation<Void, Never>] = []
        var parkers: [Parker] = []

        func wake() {
            continuations.forEach { $0.resume() }
            parkers.forEach { $0.unpark() }
        }
    }

    private let state = Mutex(State())
    // Immutable after init.
    private let highWaterMark: Int
    private let pull: (@Sendable (Int) throws -> Data?)?

    private init(highWaterMark: Int, info: ContentInformation?, pull: (@Sendable (Int) throws -> Data?)?) {
        self.highWaterMark = highWaterMark
        self.pull = pull
        if let info { state.withTrackedLock { $0.info = info } }
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
        self.pull = pull
        state.withTrackedLock { state in
            state.info = contentInformation
            if let onCancel { state.cancelHandlers.append(onCancel) }
        }
    }

    /// A stream that fails at once with `error` (after `contentInformation`, if given).
    public static func failed(_ error: any Error, contentInformation: ContentInformation? = nil) -> ByteStream {
        let (stream, continuation) = makeStream()
        if let contentInformation { continuation.respond(with: contentInformation) }
        continuation.finish(throwing: error)
        return stream
    }

    /// A stream of `range` of `data` (the resource at `url`), delivered at once; a range that
    /// starts past the end fails as HTTP's 416 does. What a resource held in memory is served as.
    public static func serving(_ data: Data, url: URL, range: ByteRange, contentType: String?) -> ByteStream {
        let (stream, continuation) = makeStream(highWaterMark: Swift.max(1 << 20, data.count))
        continuation.deliver(data, url: url, range: range, contentType: contentType)
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
        /// Throws `CancellationError` once the consumer has cancelled, or when the
        /// producing task is cancelled while it waits.
        public func send(_ data: Data) async throws { try await stream.producerSend(data) }
        /// Ends the stream normally: the consumer sees the end after the buffered bytes.
        public func finish() { stream.producerFinish(nil) }
        /// Ends the stream with `error`, after the buffered bytes.
        public func finish(throwing error: any Error) { stream.producerFinish(error) }

        /// Delivers `range` of `data` (the resource at `url`) whole and finishes: what
        /// ``ByteStream/serving(_:url:range:contentType:)`` does, into a stream made before the
        /// data was known.
        public func deliver(_ data: Data, url: URL, range: ByteRange, contentType: String?) {
            let length = Int64(data.count)
            respond(with: ContentInformation(length: length, contentType: contentType))
            guard range.offset <= length else {
                finish(throwing: ResourceLoaderError.rangeNotSatisfiable(url: url, range: range, length: length))
                return
            }
            let end = Swift.min(range.end ?? length, length)
            if end > range.offset { yield(data.subdata(in: Int(range.offset)..<Int(end))) }
            finish()
        }
        /// Whether the consumer has cancelled.
        public var isCancelled: Bool { stream.isCancelled }
        /// Whether a reader waits on the stream with nothing buffered (see ``ByteStream/isReaderWaiting``).
        public var isReaderWaiting: Bool { stream.isReaderWaiting }
        /// Registers work to stop when the consumer cancels (runs at once if it already has).
        public func onCancel(_ handler: @escaping @Sendable () -> Void) { stream.addCancelHandler(handler) }
        /// Tells deterministic tests that the producer is waiting for something
        /// outside the system under test (a manual clock, a scripted stall), so a
        /// reader blocked on this stream is idle rather than busy.
        public func setIdle(_ idle: Bool) { stream.setProducerIdle(idle) }
    }

    private func producerRespond(_ newInfo: ContentInformation) {
        let wakeUps = state.withTrackedLock { state -> WakeUps in
            if state.info == nil { state.info = newInfo }
            return state.takeConsumerWakeUps()
        }
        wakeUps.wake()
    }

    private func producerYield(_ data: Data) {
        guard !data.isEmpty else { return }
        let wakeUps = state.withTrackedLock { state -> WakeUps in
            guard !state.finished, !state.cancelled else { return WakeUps() }
            state.chunks.append(data)
            state.bufferedBytes += data.count
            return state.takeConsumerWakeUps()
        }
        wakeUps.wake()
    }

    private func producerSend(_ data: Data) async throws {
        producerYield(data)
        let highWaterMark = self.highWaterMark
        while true {
            let mustWait = state.withTrackedLock { state -> Bool in
                !state.cancelled && state.bufferedBytes > highWaterMark
            }
            if isCancelled { throw CancellationError() }
            guard mustWait else { return }
            try Task.checkCancellation()
            let id = state.withTrackedLock { $0.makeWaiterID() }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    // The check and the registration are one critical section; the
                    // cancellation handler takes the same lock, and `Task.isCancelled`
                    // is set before it runs, so it cannot slip in between unnoticed.
                    let resumeNow = state.withTrackedLock { state -> Bool in
                        if state.cancelled || state.bufferedBytes <= highWaterMark || Task.isCancelled { return true }
                        state.producerWaiters[id] = waiter
                        return false
                    }
                    if resumeNow { waiter.resume() }
                }
            } onCancel: {
                let waiter = self.state.withTrackedLock { $0.producerWaiters.removeValue(forKey: id) }
                waiter?.resume()
            }
        }
    }

    private func producerFinish(_ error: (any Error)?) {
        let wakeUps = state.withTrackedLock { state -> WakeUps in
            guard !state.finished else { return WakeUps() }
            state.finished = true
            state.failure = error
            state.producerIdle = false
            return state.takeConsumerWakeUps()
        }
        wakeUps.wake()
    }

    private func addCancelHandler(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withTrackedLock { state -> Bool in
            if state.cancelled { return true }
            state.cancelHandlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    private func setProducerIdle(_ idle: Bool) {
        state.withTrackedLock { $0.producerIdle = idle }
    }

    // MARK: - Consuming

    /// Whether the stream was cancelled by its consumer.
    public var isCancelled: Bool { state.withTrackedLock { $0.cancelled } }

    /// Stops the stream: buffered bytes are dropped, the producer is told, and
    /// reads from now on throw `CancellationError`. Safe to call more than once.
    public func cancel() {
        let taken = state.withTrackedLock { state -> (WakeUps, [CheckedContinuation<Void, Never>], [@Sendable () -> Void])? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            state.chunks = []
            state.bufferedBytes = 0
            state.headOffset = 0
            let handlers = state.cancelHandlers
            state.cancelHandlers = []
            let producers = Array(state.producerWaiters.values)
            state.producerWaiters = [:]
            return (state.takeConsumerWakeUps(), producers, handlers)
        }
        guard let (wakeUps, producers, handlers) = taken else { return }
        wakeUps.wake()
        producers.forEach { $0.resume() }
        handlers.forEach { $0() }
    }

    /// Whether a reader of this stream would have to wait for something outside
    /// the system: nothing is buffered, the stream is not over, and the producer
    /// said it is idle. Pulled streams are never idle. Used to settle deterministic tests.
    public var isIdle: Bool {
        let pulled = pull != nil
        return state.withTrackedLock { state in
            !pulled && !state.cancelled && !state.finished && state.bufferedBytes < Swift.max(1, state.peekMinimum)
                && state.producerIdle
        }
    }

    /// The stream's state in a few words, for a log line that says why a reader still waits.
    public var diagnosticDescription: String {
        let pulled = pull != nil
        return state.withTrackedLock { state in
            var words = ["\(state.bufferedBytes) bytes buffered"]
            if state.info == nil { words.append("no response yet") }
            if state.finished { words.append("finished") }
            if state.cancelled { words.append("cancelled") }
            if pulled { words.append("pulled") }
            words.append(state.producerIdle ? "producer idle" : "producer busy")
            words.append("\(state.threadWaiters.count + state.consumerWaiters.count) readers waiting")
            return words.joined(separator: ", ")
        }
    }

    /// Whether a reader (a task or a blocked thread) is waiting on this stream right now
    /// with nothing buffered for it: only the producer can move it. Waiters leave in the
    /// critical section that wakes them, so this never reports a reader that was handed
    /// something. For deterministic tests that settle on "everyone waits".
    public var isReaderWaiting: Bool {
        state.withTrackedLock { state in
            state.chunks.isEmpty && !(state.consumerWaiters.isEmpty && state.threadWaiters.isEmpty)
        }
    }

    /// The content information if it has arrived, without waiting.
    public var receivedContentInformation: ContentInformation? { state.withTrackedLock { $0.info } }

    /// Counts the blocking reads (and information waits) that have returned. A
    /// thread that noted it before a read and sees it unchanged has not been handed
    /// anything since — what deterministic tests use to tell a blocked reader from
    /// one that just got bytes and is busy with them.
    public var consumerProgressCount: Int { state.withTrackedLock { $0.consumerProgress } }

    /// Bytes buffered and not yet read.
    public var bufferedByteCount: Int { state.withTrackedLock { $0.bufferedBytes } }

    /// Waits for the content information (still available after the stream ends or
    /// is cancelled, once it arrived). Throws the stream's error if it fails first.
    public func contentInformation() async throws -> ContentInformation {
        while true {
            if let result = try pollInformation() { return result }
            try await waitForChange { $0.info != nil }
        }
    }

    /// A value or the stream's error, carried out of the lock.
    private enum Outcome<Value: Sendable>: Sendable {
        case value(Value)
        case failure(any Error)

        func get() throws -> Value {
            switch self {
            case .value(let value): return value
            case .failure(let error): throw error
            }
        }
    }

    /// What a blocking wait found under the lock.
    private enum BlockingStep<Value: Sendable>: Sendable {
        case done(Value)
        case failed(any Error)
        case wait(Parker)
    }

    /// Runs `attempt` under the lock until it has an answer, parking the calling
    /// thread between attempts. `attempt` returns `nil` to wait; the waiter is
    /// registered in the same critical section, so a change cannot be missed.
    private func blockingWait<Value: Sendable>(_ attempt: (inout State) throws -> Value?) throws -> Value {
        while true {
            let step = state.withTrackedLock { state -> BlockingStep<Value> in
                do {
                    if let value = try attempt(&state) {
                        state.consumerProgress += 1
                        return .done(value)
                    }
                } catch {
                    state.consumerProgress += 1
                    return .failed(error)
                }
                let parker = Parker()
                state.threadWaiters.append(parker)
                return .wait(parker)
            }
            switch step {
            case .done(let value): return value
            case .failed(let error): throw error
            case .wait(let parker): parker.park()
            }
        }
    }

    /// Blocks the calling thread until the content information arrives. Call it only
    /// from a thread of your own, never from a task.
    public func waitForContentInformation() throws -> ContentInformation {
        try blockingWait { state in
            if let info = state.info { return info }
            if state.cancelled { throw CancellationError() }
            if state.finished { throw state.failure ?? CancellationError() }
            return nil
        }
    }

    private func pollInformation() throws -> ContentInformation? {
        let outcome = state.withTrackedLock { state -> Outcome<ContentInformation?> in
            if let info = state.info { return .value(info) }
            if state.cancelled { return .failure(CancellationError()) }
            if state.finished { return .failure(state.failure ?? CancellationError()) }
            return .value(nil)
        }
        return try outcome.get()
    }

    /// Blocks the calling thread until bytes arrive, then returns up to `maxLength`
    /// of them; `nil` at the end of the stream. Throws the producer's error after the
    /// bytes before it, and `CancellationError` once cancelled. Call it only from a
    /// thread of your own (FFmpeg's I/O thread), never from a task.
    public func read(maxLength: Int) throws -> Data? {
        precondition(maxLength > 0)
        if let pull {
            if let peeked = try takePeeked(maxLength) { return peeked }
            return try pull(maxLength)
        }
        let highWaterMark = self.highWaterMark
        let (data, producers) = try blockingWait { state -> (Data?, [CheckedContinuation<Void, Never>])? in
            if state.cancelled { throw CancellationError() }
            if !state.chunks.isEmpty {
                let data = Self.take(&state, maxLength, highWaterMark: highWaterMark)
                return (data.data, data.producers)
            }
            if state.finished {
                if let failure = state.failure { throw failure }
                return (nil, [])
            }
            return nil
        }
        producers.forEach { $0.resume() }
        return data
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
        let highWaterMark = self.highWaterMark
        let target = buffer
        let (copied, producers) = try blockingWait { state -> (Int, [CheckedContinuation<Void, Never>])? in
            if state.cancelled { throw CancellationError() }
            if !state.chunks.isEmpty {
                var copied = 0
                var producers: [CheckedContinuation<Void, Never>] = []
                while copied < target.count, !state.chunks.isEmpty {
                    let head = state.chunks[0]
                    let offset = state.headOffset
                    let n = Swift.min(head.count - offset, target.count - copied)
                    head.withUnsafeBytes { raw in
                        let source = raw.baseAddress!.advanced(by: offset)
                        (target.baseAddress! + copied).copyMemory(from: source, byteCount: n)
                    }
                    copied += n
                    producers += Self.consume(&state, n, highWaterMark: highWaterMark)
                }
                return (copied, producers)
            }
            if state.finished {
                if let failure = state.failure { throw failure }
                return (0, [])
            }
            return nil
        }
        producers.forEach { $0.resume() }
        return copied
    }

    /// Takes up to `maxLength` buffered bytes, across chunks. Whole chunks are
    /// handed over without copying when they fit. Returns the producers to wake.
    private static func take(_ state: inout State, _ maxLength: Int, highWaterMark: Int) -> (data: Data, producers: [CheckedContinuation<Void, Never>]) {
        var result: Data?
        var producers: [CheckedContinuation<Void, Never>] = []
        while !state.chunks.isEmpty, (result?.count ?? 0) < maxLength {
            let head = state.chunks[0]
            let available = head.count - state.headOffset
            let n = Swift.min(available, maxLength - (result?.count ?? 0))
            let start = head.startIndex + state.headOffset
            let piece = (state.headOffset == 0 && n == head.count) ? head : Data(head[start..<(start + n)])
            producers += consume(&state, n, highWaterMark: highWaterMark)
            if result == nil { result = piece } else { result!.append(piece) }
        }
        return (result ?? Data(), producers)
    }

    /// Marks `n` bytes of the head chunk consumed; once the buffer is back at the
    /// high-water mark, takes the producers waiting for that (to resume after unlocking).
    private static func consume(_ state: inout State, _ n: Int, highWaterMark: Int) -> [CheckedContinuation<Void, Never>] {
        state.headOffset += n
        state.bufferedBytes -= n
        if state.headOffset == state.chunks[0].count {
            state.chunks.removeFirst()
            state.headOffset = 0
        }
        guard state.bufferedBytes <= highWaterMark, !state.producerWaiters.isEmpty else { return [] }
        defer { state.producerWaiters = [:] }
        return Array(state.producerWaiters.values)
    }

    /// One poll of the next chunk: `.some(data)`, `.some(nil)` at the end, `nil` to wait.
    private func pollChunk() throws -> Data?? {
        let highWaterMark = self.highWaterMark
        let (outcome, producers) = state.withTrackedLock { state -> (Outcome<Data??>, [CheckedContinuation<Void, Never>]) in
            if state.cancelled { return (.failure(CancellationError()), []) }
            if !state.chunks.isEmpty {
                let available = state.chunks[0].count - state.headOffset
                let taken = Self.take(&state, available, highWaterMark: highWaterMark)
                return (.value(.some(taken.data)), taken.producers)
            }
            if state.finished {
                if let failure = state.failure { return (.failure(failure), []) }
                return (.value(.some(nil)), [])
            }
            return (.value(nil), [])
        }
        producers.forEach { $0.resume() }
        return try outcome.get()
    }

    /// Suspends until `ready` holds (checked under the lock, then again on each
    /// change the producer makes), or the stream ends or is cancelled. Cancelling the
    /// waiting task cancels the stream, which resumes every waiter.
    private func waitForChange(until ready: @escaping @Sendable (State) -> Bool) async throws {
        let id = state.withTrackedLock { $0.makeWaiterID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withTrackedLock { state -> Bool in
                    if state.cancelled || state.finished || ready(state) { return true }
                    state.consumerWaiters[id] = waiter
                    return false
                }
                if resumeNow { waiter.resume() }
            }
        } onCancel: {
            self.cancel()
        }
        if Task.isCancelled { throw CancellationError() }
    }

    private func nextChunk() async throws -> Data? {
        if Task.isCancelled {
            cancel()
            throw CancellationError()
        }
        if let pull {
            try Task.checkCancellation()
            if let peeked = try takePeeked(256 * 1024) { return peeked }
            return try pull(256 * 1024)
        }
        while true {
            if let result = try pollChunk() { return result }
            try await waitForChange { !$0.chunks.isEmpty }
        }
    }

    // MARK: - Looking ahead

    /// The first bytes not read yet, left unread: waits until at least `minimum` are buffered,
    /// the stream has ended (or failed), or the producer waits for the reader (more than the
    /// high-water mark is buffered), and returns at most `maximum`. Throws `CancellationError`
    /// once cancelled, and the stream's error when it failed with nothing buffered. Blocks the
    /// calling thread: call it only from a thread of your own, never from a task. A pulled
    /// stream pulls what it needs and keeps it for the reads.
    ///
    /// What sniffing a resource's format needs (``StreamingFormat``): the bytes stay for the
    /// reader the stream is handed to.
    public func waitForPrefix(atLeast minimum: Int, atMost maximum: Int) throws -> Data {
        if pull != nil { return try pullPrefix(atLeast: minimum, atMost: maximum) }
        let highWaterMark = self.highWaterMark
        defer { state.withTrackedLock { $0.peekMinimum = 0 } }
        return try blockingWait { state -> Data? in
            if let ready = try Self.prefixIfReady(&state, minimum, maximum, highWaterMark: highWaterMark) { return ready }
            state.peekMinimum = minimum
            return nil
        }
    }

    /// The same for tasks.
    public func prefix(atLeast minimum: Int, atMost maximum: Int) async throws -> Data {
        if pull != nil { return try pullPrefix(atLeast: minimum, atMost: maximum) }
        let highWaterMark = self.highWaterMark
        while true {
            let outcome = state.withTrackedLock { state -> Outcome<Data?> in
                do {
                    return .value(try Self.prefixIfReady(&state, minimum, maximum, highWaterMark: highWaterMark))
                } catch {
                    return .failure(error)
                }
            }
            if let ready = try outcome.get() { return ready }
            try await waitForChange { $0.bufferedBytes >= minimum || $0.bufferedBytes > highWaterMark }
        }
    }

    /// The buffered prefix when a peek need not wait, `nil` when it must.
    private static func prefixIfReady(_ state: inout State, _ minimum: Int, _ maximum: Int, highWaterMark: Int) throws -> Data? {
        if state.cancelled { throw CancellationError() }
        let ended = state.finished
        guard state.bufferedBytes >= minimum || ended || state.bufferedBytes > highWaterMark else { return nil }
        if ended, state.bufferedBytes == 0, let failure = state.failure { throw failure }
        return bufferedPrefix(state, maximum)
    }

    private static func bufferedPrefix(_ state: State, _ maximum: Int) -> Data {
        var result = Data()
        var offset = state.headOffset
        for chunk in state.chunks {
            guard result.count < maximum else { break }
            let start = chunk.startIndex + offset
            let n = Swift.min(chunk.count - offset, maximum - result.count)
            result.append(chunk[start..<(start + n)])
            offset = 0
        }
        return result
    }

    /// A pulled stream's peek: pulls into the buffer (on the calling thread) until it holds
    /// `minimum` bytes or the source ends; the reads take those bytes first.
    private func pullPrefix(atLeast minimum: Int, atMost maximum: Int) throws -> Data {
        guard let pull else { return Data() }
        while true {
            let (ready, wanted) = try state.withTrackedLock { state -> (Data?, Int) in
                if state.cancelled { throw CancellationError() }
                if state.bufferedBytes >= minimum || state.finished { return (Self.bufferedPrefix(state, maximum), 0) }
                return (nil, Swift.max(1, maximum - state.bufferedBytes))
            }
            if let ready { return ready }
            let data = try pull(wanted)
            state.withTrackedLock { state in
                if let data, !data.isEmpty {
                    state.chunks.append(data)
                    state.bufferedBytes += data.count
                } else if data == nil {
                    state.finished = true
                }
            }
        }
    }

    /// For a pulled stream: bytes a peek pulled that nobody read yet (`.some(nil)`: the peek
    /// found the end), or `nil` when there are none and the reader pulls.
    private func takePeeked(_ maxLength: Int) throws -> Data?? {
        try state.withTrackedLock { state -> Data?? in
            if state.cancelled { throw CancellationError() }
            if !state.chunks.isEmpty { return .some(Self.take(&state, maxLength, highWaterMark: .max).data) }
            if state.finished { return .some(nil) }
            return nil
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
