import Foundation
import ReelCore
import Synchronization

/// A ``ResourceLoader`` serving in-memory bytes, with a script per request:
/// latency, throughput, a failure at a given offset, a stall — timed on an
/// injected ``EngineClock``. On a ``ManualClock`` nothing arrives until the test
/// advances the clock, and then it arrives synchronously, in order.
///
/// It counts every request and byte it serves, so tests can assert what a player
/// or a cache asked for. It passes the same `LoaderContract` as the real loaders.
public final class FakeResourceLoader: ResourceLoader, Sendable {
    /// What can go wrong with a request, on purpose.
    public enum Fault: Sendable, Hashable {
        /// The request fails after its latency, before any information or byte.
        case failBeforeResponse
        /// The origin answers with this HTTP error status (401 and 403 are `unauthorized`).
        case status(Int)
        /// Bytes up to (not including) this absolute offset arrive, then a network error.
        case failAtOffset(Int64)
        /// Bytes up to this absolute offset arrive, then nothing until ``resumeStalls()``.
        case stallAtOffset(Int64)
    }

    /// How one request is served.
    public struct Script: Sendable, Hashable {
        /// Time from the request to its information and first byte.
        public var latency: MediaTime
        /// Delivery rate after the first byte; `nil` delivers everything at once.
        public var bytesPerSecond: Int64?
        /// The size of each delivered chunk.
        public var chunkSize: Int
        /// A failure or stall, if any.
        public var fault: Fault?

        public init(latency: MediaTime = .zero, bytesPerSecond: Int64? = nil, chunkSize: Int = 64 * 1024, fault: Fault? = nil) {
            precondition(chunkSize > 0)
            precondition(bytesPerSecond.map { $0 > 0 } ?? true)
            self.latency = latency
            self.bytesPerSecond = bytesPerSecond
            self.chunkSize = chunkSize
            self.fault = fault
        }

        /// Everything at once.
        public static let instant = Script()
    }

    /// One resource the fake serves.
    public struct Resource: Sendable {
        public var data: Data
        public var contentType: String?
        public var entityTag: String?
        /// When `false`, the information gives no length (like a chunked HTTP reply).
        public var reportsLength: Bool

        public init(data: Data, contentType: String? = nil, entityTag: String? = nil, reportsLength: Bool = true) {
            self.data = data
            self.contentType = contentType
            self.entityTag = entityTag
            self.reportsLength = reportsLength
        }
    }

    /// A request the fake received.
    public struct Request: Sendable, Hashable {
        public var url: URL
        public var range: ByteRange
        /// Clock time when the request was made.
        public var time: MediaTime
    }

    // Immutable.
    private let clock: any EngineClock

    /// Guarded by `state`: what is served, how, and what happened so far.
    private struct State {
        var resources: [URL: Resource] = [:]
        var defaultScript: Script
        var urlScripts: [URL: Script] = [:]
        var queuedScripts: [URL: [Script]] = [:]
        var log: [Request] = []
        var served: Int64 = 0
        var stalled: [Delivery] = []
        var active: [ObjectIdentifier: Delivery] = [:]
        var mostActive = 0
        var listener: (any TransferListener)?
    }

    private let state: Mutex<State>

    /// A fake timed on `clock`, serving `resources`, each request by `script` unless told otherwise.
    public init(clock: any EngineClock = HostClock.shared, resources: [URL: Data] = [:], script: Script = .instant) {
        // Deliveries on a timeline of the fake's own: a test's origin is not held up by the
        // players and fakes of every other test in the process.
        self.clock = clock.makeTimeline()
        var initial = State(defaultScript: script)
        for (url, data) in resources {
            initial.resources[url] = Resource(data: data, entityTag: Self.tag(for: data))
        }
        self.state = Mutex(initial)
    }

    // MARK: Setting up

    /// Serves `data` at `url` (replacing what was there, with a new entity tag unless given).
    public func add(_ data: Data, at url: URL, contentType: String? = nil, entityTag: String? = nil, reportsLength: Bool = true) {
        let resource = Resource(
            data: data, contentType: contentType,
            entityTag: entityTag ?? Self.tag(for: data), reportsLength: reportsLength
        )
        state.withTrackedLock { $0.resources[url] = resource }
    }

    /// Stops serving `url`: later requests fail with `notFound`.
    public func remove(_ url: URL) {
        state.withTrackedLock { _ = $0.resources.removeValue(forKey: url) }
    }

    /// The script for requests with no other script.
    public func setDefaultScript(_ script: Script) { state.withTrackedLock { $0.defaultScript = script } }

    /// The script for every request of `url` (after any queued ones).
    public func setScript(_ script: Script?, for url: URL) { state.withTrackedLock { $0.urlScripts[url] = script } }

    /// Scripts for the next requests of `url`, one each, in order.
    public func enqueueScripts(_ scripts: [Script], for url: URL) {
        state.withTrackedLock { $0.queuedScripts[url, default: []].append(contentsOf: scripts) }
    }

    /// Reports every response body to `listener` (a bandwidth meter), as `HTTPLoader` does:
    /// a transfer from the information to the end, failure or cancellation of the bytes.
    public func setTransferListener(_ listener: (any TransferListener)?) {
        state.withTrackedLock { $0.listener = listener }
    }

    fileprivate var transferListener: (any TransferListener)? { state.withTrackedLock { $0.listener } }

    /// The URLs of the requests stalled now (by a `stallAtOffset` script), in order.
    public var stalledURLs: [URL] { state.withTrackedLock { $0.stalled.map(\.url) } }

    /// Lets every stalled request go on.
    public func resumeStalls() {
        let deliveries = state.withTrackedLock { state -> [Delivery] in
            defer { state.stalled = [] }
            return state.stalled
        }
        deliveries.forEach { $0.resume() }
    }

    // MARK: Counting

    /// Every request so far, in order.
    public var requests: [Request] { state.withTrackedLock { $0.log } }
    /// How many requests were made.
    public var requestCount: Int { state.withTrackedLock { $0.log.count } }
    /// Bytes delivered to readers so far.
    public var bytesServed: Int64 { state.withTrackedLock { $0.served } }
    /// Requests whose delivery has not ended.
    public var activeRequestCount: Int { state.withTrackedLock { $0.active.count } }
    /// The most requests whose deliveries overlapped, since creation or ``resetCounts()``.
    public var mostActiveRequests: Int { state.withTrackedLock { $0.mostActive } }
    /// Whether every request whose delivery has not ended has a reader waiting on its
    /// stream with nothing buffered (`true` when there is none): whoever reads from this
    /// fake can only move when the clock does (or a stall is resumed).
    public var readersAreWaiting: Bool {
        let deliveries = state.withTrackedLock { Array($0.active.values) }
        return deliveries.allSatisfy(\.isReaderWaiting)
    }
    /// Forgets the counts (not the resources or scripts).
    public func resetCounts() { state.withTrackedLock { $0.log = []; $0.served = 0; $0.mostActive = $0.active.count } }

    // MARK: ResourceLoader

    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream()
        let now = clock.now
        let (resource, script) = state.withTrackedLock { state -> (Resource?, Script) in
            state.log.append(Request(url: url, range: range, time: now))
            let script: Script
            if var queue = state.queuedScripts[url], !queue.isEmpty {
                script = queue.removeFirst()
                state.queuedScripts[url] = queue
            } else {
                script = state.urlScripts[url] ?? state.defaultScript
            }
            return (state.resources[url], script)
        }
        let delivery = Delivery(
            owner: self, url: url, range: range, resource: resource, script: script,
            continuation: continuation, manual: clock is ManualClock
        )
        state.withTrackedLock { state in
            state.active[ObjectIdentifier(delivery)] = delivery
            state.mostActive = max(state.mostActive, state.active.count)
        }
        // Weakly: the stream keeps its cancel handlers after the delivery finished, and the
        // delivery holds the stream's continuation, so a strong capture made a cycle that kept
        // both (and what the delivery held) alive after every finished read (LeakSanitizer).
        continuation.onCancel { [weak delivery] in delivery?.cancel() }
        delivery.start(at: now)
        return stream
    }

    public func contentInformation(for url: URL) async throws -> ContentInformation {
        let resource = state.withTrackedLock { $0.resources[url] }
        guard let resource else { throw ResourceLoaderError.notFound(url: url) }
        return Self.information(url: url, resource: resource)
    }

    // MARK: Internals

    fileprivate var engineClock: any EngineClock { clock }

    fileprivate func count(_ bytes: Int) { state.withTrackedLock { $0.served += Int64(bytes) } }

    fileprivate func parkStalled(_ delivery: Delivery) { state.withTrackedLock { $0.stalled.append(delivery) } }

    fileprivate func finished(_ delivery: Delivery) {
        state.withTrackedLock { state in
            state.active[ObjectIdentifier(delivery)] = nil
            state.stalled.removeAll { $0 === delivery }
        }
    }

    fileprivate static func information(url: URL, resource: Resource) -> ContentInformation {
        ContentInformation(
            length: resource.reportsLength ? Int64(resource.data.count) : nil,
            contentType: resource.contentType,
            isByteRangeAccessSupported: true,
            entityTag: resource.entityTag,
            finalURL: url
        )
    }

    private static func tag(for data: Data) -> String {
        // FNV-1a over the body, eight bytes at a time: a different body gets a different tag.
        // (Byte by byte through `Data`'s iterator took seconds per 6 MiB in a debug build, on
        // a concurrency thread: the tests' pool waited for it.)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                hash ^= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                hash = hash &* 0x100_0000_01b3
                offset += 8
            }
            while offset < raw.count {
                hash ^= UInt64(raw[offset])
                hash = hash &* 0x100_0000_01b3
                offset += 1
            }
        }
        return "\"\(String(hash, radix: 16))-\(data.count)\""
    }
}

/// The timed delivery of one request.
///
/// Its steps run where the clock runs actions (synchronously inside a `ManualClock`'s
/// `advance`, or on the `HostClock`'s queue), or on the thread that resumes a stall;
/// the progress they share is in one `Mutex`. Bytes are pushed with `yield`, so a step
/// never waits for the reader.
private final class Delivery: Sendable {
    // Immutable.
    private weak let owner: FakeResourceLoader?
    fileprivate let url: URL
    private let range: ByteRange
    private let resource: FakeResourceLoader.Resource?
    private let script: FakeResourceLoader.Script
    private let continuation: ByteStream.Continuation
    private let manual: Bool

    /// Guarded by `progress`.
    private struct Progress {
        var position: Int64 = 0
        var end: Int64 = 0
        /// The next scheduled step, cancelled by `cancel()`.
        var pending: ScheduledAction?
        /// Finished or cancelled: no step does anything any more.
        var done = false
        /// When the current run of bytes started (after the latency, or at a resume).
        var started: MediaTime = .zero
        var deliveredSinceStart: Int64 = 0
        var faultCleared = false
        /// The listener told of this body's start, until it is told of its end.
        var transfer: (any TransferListener)?
    }

    private let progress = Mutex(Progress())

    init(owner: FakeResourceLoader, url: URL, range: ByteRange, resource: FakeResourceLoader.Resource?,
         script: FakeResourceLoader.Script, continuation: ByteStream.Continuation, manual: Bool) {
        self.owner = owner
        self.url = url
        self.range = range
        self.resource = resource
        self.script = script
        self.continuation = continuation
        self.manual = manual
    }

    /// Whether a reader waits on this delivery's stream with nothing buffered.
    var isReaderWaiting: Bool { continuation.isReaderWaiting }

    func start(at now: MediaTime) {
        let started = now + script.latency
        progress.withTrackedLock { $0.started = started }
        if schedule(at: started, { $0.respond() }) { respond() }
    }

    private func respond() {
        guard let resource else {
            finish(throwing: ResourceLoaderError.notFound(url: url))
            return
        }
        if script.fault == .failBeforeResponse {
            finish(throwing: ResourceLoaderError.network(url: url, range: range, reason: "scripted failure before the response"))
            return
        }
        if case .status(let status) = script.fault {
            let error: ResourceLoaderError = status == 401 || status == 403
                ? .unauthorized(url: url, status: status)
                : .httpStatus(url: url, range: range, status: status)
            finish(throwing: error)
            return
        }
        let length = Int64(resource.data.count)
        let info = FakeResourceLoader.information(url: url, resource: resource)
        guard range.offset <= length else {
            continuation.respond(with: info)
            finish(throwing: ResourceLoaderError.rangeNotSatisfiable(url: url, range: range, length: length))
            return
        }
        continuation.respond(with: info)
        let range = self.range
        let listener = owner?.transferListener
        let started = progress.withTrackedLock { progress -> Bool in
            guard !progress.done else { return false }
            progress.position = range.offset
            progress.end = min(range.end ?? length, length)
            progress.transfer = listener
            return true
        }
        if started { listener?.transferStarted(url) }
        deliverNext()
    }

    private enum Step {
        case chunk(Range<Int64>)
        case fail(Int64)
        case stall
        case end
        case nothing
    }

    private func deliverNext() {
        while deliverOne() {}
    }

    /// Delivers one step; returns `true` when the next step is due at once.
    private func deliverOne() -> Bool {
        guard let owner, let resource else { return false }
        let script = self.script
        let range = self.range
        let step = progress.withTrackedLock { progress -> Step in
            guard !progress.done else { return .nothing }
            var limit = progress.end
            var fault: FakeResourceLoader.Fault?
            if !progress.faultCleared {
                switch script.fault {
                case .failAtOffset(let offset) where offset < progress.end,
                     .stallAtOffset(let offset) where offset < progress.end:
                    limit = max(offset, range.offset)
                    fault = script.fault
                default:
                    break
                }
            }
            if progress.position < limit {
                return .chunk(progress.position..<min(limit, progress.position + Int64(script.chunkSize)))
            }
            switch fault {
            case .failAtOffset(let offset): return .fail(offset)
            case .stallAtOffset: return .stall
            default: return .end
            }
        }
        switch step {
        case .nothing:
            return false
        case .end:
            finish(throwing: nil)
            return false
        case .fail(let offset):
            finish(throwing: ResourceLoaderError.network(url: url, range: range, reason: "scripted failure at byte \(offset)"))
            return false
        case .stall:
            continuation.setIdle(true)
            owner.parkStalled(self)
            return false
        case .chunk(let chunk):
            let bytes = resource.data.subdata(in: Int(chunk.lowerBound)..<Int(chunk.upperBound))
            let nextTime: MediaTime? = progress.withTrackedLock { progress in
                progress.position = chunk.upperBound
                progress.deliveredSinceStart += Int64(bytes.count)
                guard let rate = script.bytesPerSecond else { return nil }
                let nanos = progress.deliveredSinceStart.multipliedFullWidth(by: 1_000_000_000)
                let (quotient, _) = rate.dividingFullWidth(nanos)
                return progress.started + MediaTime(value: quotient, timescale: 1_000_000_000)
            }
            owner.count(bytes.count)
            progress.withTrackedLock { $0.transfer }?.bytesTransferred(bytes.count, url: url)
            continuation.yield(bytes)
            guard let nextTime else { return true }
            return schedule(at: nextTime) { $0.deliverNext() }
        }
    }

    /// Goes on after a stall: the rest arrives at the scripted rate, timed from now.
    func resume() {
        continuation.setIdle(false)
        let now = owner?.engineClock.now ?? .zero
        progress.withTrackedLock { progress in
            progress.faultCleared = true
            progress.started = now
            progress.deliveredSinceStart = 0
        }
        deliverNext()
    }

    func cancel() {
        let (action, transfer) = progress.withTrackedLock { progress -> (ScheduledAction?, (any TransferListener)?) in
            progress.done = true
            defer { progress.transfer = nil }
            return (progress.pending, progress.transfer)
        }
        action?.cancel()
        transfer?.transferEnded(url)
        owner?.finished(self)
    }

    private func finish(throwing error: (any Error)?) {
        let (alreadyDone, transfer) = progress.withTrackedLock { progress -> (Bool, (any TransferListener)?) in
            defer { progress.done = true; progress.transfer = nil }
            return (progress.done, progress.transfer)
        }
        guard !alreadyDone else { return }
        transfer?.transferEnded(url)
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        owner?.finished(self)
    }

    /// Runs `body` at `time`; returns `true` instead when it is due at once on a
    /// manual clock, so the caller runs it in its own loop.
    @discardableResult
    private func schedule(at time: MediaTime, _ body: @escaping @Sendable (Delivery) -> Void) -> Bool {
        guard let clock = owner?.engineClock else { return false }
        if manual, time <= clock.now {
            return true
        }
        let manual = self.manual
        let continuation = self.continuation
        let action = clock.schedule(at: time) { [self] in
            if manual { continuation.setIdle(false) }
            body(self)
        }
        // Kept for `cancel()`; a delivery cancelled meanwhile forgets the step at once.
        let cancelNow = progress.withTrackedLock { progress -> Bool in
            progress.pending = action
            return progress.done
        }
        if cancelNow { action.cancel() }
        // Idle only once the wake-up is on the clock: a driver that sees the stream idle
        // (settled) and runs the clock's next action must find this one there.
        if manual { continuation.setIdle(true) }
        return false
    }
}
