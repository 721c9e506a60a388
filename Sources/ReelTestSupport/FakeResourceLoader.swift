import Foundation
import ReelCore

/// A ``ResourceLoader`` serving in-memory bytes, with a script per request:
/// latency, throughput, a failure at a given offset, a stall — timed on an
/// injected ``EngineClock``. On a ``ManualClock`` nothing arrives until the test
/// advances the clock, and then it arrives synchronously, in order.
///
/// It counts every request and byte it serves, so tests can assert what a player
/// or a cache asked for. It passes the same `LoaderContract` as the real loaders.
public final class FakeResourceLoader: ResourceLoader, @unchecked Sendable {
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

    private let lock = NSLock()
    private let clock: any EngineClock
    private var resources: [URL: Resource] = [:]
    private var defaultScript: Script
    private var urlScripts: [URL: Script] = [:]
    private var queuedScripts: [URL: [Script]] = [:]
    private var log: [Request] = []
    private var served: Int64 = 0
    private var stalled: [Delivery] = []
    private var active: [ObjectIdentifier: Delivery] = [:]

    /// A fake timed on `clock`, serving `resources`, each request by `script` unless told otherwise.
    public init(clock: any EngineClock = HostClock.shared, resources: [URL: Data] = [:], script: Script = .instant) {
        self.clock = clock
        self.defaultScript = script
        for (url, data) in resources {
            self.resources[url] = Resource(data: data, entityTag: Self.tag(for: data))
        }
    }

    // MARK: Setting up

    /// Serves `data` at `url` (replacing what was there, with a new entity tag unless given).
    public func add(_ data: Data, at url: URL, contentType: String? = nil, entityTag: String? = nil, reportsLength: Bool = true) {
        lock.withLock {
            resources[url] = Resource(
                data: data, contentType: contentType,
                entityTag: entityTag ?? Self.tag(for: data), reportsLength: reportsLength
            )
        }
    }

    /// Stops serving `url`: later requests fail with `notFound`.
    public func remove(_ url: URL) {
        lock.withLock { _ = resources.removeValue(forKey: url) }
    }

    /// The script for requests with no other script.
    public func setDefaultScript(_ script: Script) { lock.withLock { defaultScript = script } }

    /// The script for every request of `url` (after any queued ones).
    public func setScript(_ script: Script?, for url: URL) { lock.withLock { urlScripts[url] = script } }

    /// Scripts for the next requests of `url`, one each, in order.
    public func enqueueScripts(_ scripts: [Script], for url: URL) {
        lock.withLock { queuedScripts[url, default: []].append(contentsOf: scripts) }
    }

    /// Lets every stalled request go on.
    public func resumeStalls() {
        let deliveries = lock.withLock { () -> [Delivery] in
            defer { stalled = [] }
            return stalled
        }
        deliveries.forEach { $0.resume() }
    }

    // MARK: Counting

    /// Every request so far, in order.
    public var requests: [Request] { lock.withLock { log } }
    /// How many requests were made.
    public var requestCount: Int { lock.withLock { log.count } }
    /// Bytes delivered to readers so far.
    public var bytesServed: Int64 { lock.withLock { served } }
    /// Requests whose delivery has not ended.
    public var activeRequestCount: Int { lock.withLock { active.count } }
    /// Forgets the counts (not the resources or scripts).
    public func resetCounts() { lock.withLock { log = []; served = 0 } }

    // MARK: ResourceLoader

    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream()
        let now = clock.now
        let (resource, script) = lock.withLock { () -> (Resource?, Script) in
            log.append(Request(url: url, range: range, time: now))
            let script: Script
            if var queue = queuedScripts[url], !queue.isEmpty {
                script = queue.removeFirst()
                queuedScripts[url] = queue
            } else {
                script = urlScripts[url] ?? defaultScript
            }
            return (resources[url], script)
        }
        let delivery = Delivery(
            owner: self, url: url, range: range, resource: resource, script: script,
            continuation: continuation, manual: clock is ManualClock
        )
        lock.withLock { active[ObjectIdentifier(delivery)] = delivery }
        continuation.onCancel { delivery.cancel() }
        delivery.start(at: now)
        return stream
    }

    public func contentInformation(for url: URL) async throws -> ContentInformation {
        let resource = lock.withLock { resources[url] }
        guard let resource else { throw ResourceLoaderError.notFound(url: url) }
        return Self.information(url: url, resource: resource)
    }

    // MARK: Internals

    fileprivate var engineClock: any EngineClock { clock }

    fileprivate func count(_ bytes: Int) { lock.withLock { served += Int64(bytes) } }

    fileprivate func parkStalled(_ delivery: Delivery) { lock.withLock { stalled.append(delivery) } }

    fileprivate func finished(_ delivery: Delivery) {
        lock.withLock {
            active[ObjectIdentifier(delivery)] = nil
            stalled.removeAll { $0 === delivery }
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
        // FNV-1a over the bytes: a different body gets a different tag.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "\"\(String(hash, radix: 16))-\(data.count)\""
    }
}

/// The timed delivery of one request.
private final class Delivery: @unchecked Sendable {
    private let lock = NSLock()
    private weak var owner: FakeResourceLoader?
    private let url: URL
    private let range: ByteRange
    private let resource: FakeResourceLoader.Resource?
    private let script: FakeResourceLoader.Script
    private let continuation: ByteStream.Continuation
    private let manual: Bool
    private var position: Int64 = 0
    private var end: Int64 = 0
    private var pending: ScheduledAction?
    private var done = false
    private var started: MediaTime = .zero
    private var deliveredSinceStart: Int64 = 0
    private var faultCleared = false

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

    func start(at now: MediaTime) {
        started = now + script.latency
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
        lock.withLock {
            position = range.offset
            end = min(range.end ?? length, length)
        }
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
        let step = lock.withLock { () -> Step in
            guard !done else { return .nothing }
            var limit = end
            var fault: FakeResourceLoader.Fault?
            if !faultCleared {
                switch script.fault {
                case .failAtOffset(let offset) where offset < end,
                     .stallAtOffset(let offset) where offset < end:
                    limit = max(offset, range.offset)
                    fault = script.fault
                default:
                    break
                }
            }
            if position < limit {
                return .chunk(position..<min(limit, position + Int64(script.chunkSize)))
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
            let nextTime: MediaTime? = lock.withLock {
                position = chunk.upperBound
                deliveredSinceStart += Int64(bytes.count)
                guard let rate = script.bytesPerSecond else { return nil }
                let nanos = deliveredSinceStart.multipliedFullWidth(by: 1_000_000_000)
                let (quotient, _) = rate.dividingFullWidth(nanos)
                return started + MediaTime(value: quotient, timescale: 1_000_000_000)
            }
            owner.count(bytes.count)
            continuation.yield(bytes)
            guard let nextTime else { return true }
            return schedule(at: nextTime) { $0.deliverNext() }
        }
    }

    /// Goes on after a stall: the rest arrives at the scripted rate, timed from now.
    func resume() {
        continuation.setIdle(false)
        let now = owner?.engineClock.now ?? .zero
        lock.withLock {
            faultCleared = true
            started = now
            deliveredSinceStart = 0
        }
        deliverNext()
    }

    func cancel() {
        let action = lock.withLock { () -> ScheduledAction? in
            done = true
            return pending
        }
        action?.cancel()
        owner?.finished(self)
    }

    private func finish(throwing error: (any Error)?) {
        let alreadyDone = lock.withLock { () -> Bool in
            defer { done = true }
            return done
        }
        guard !alreadyDone else { return }
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
        if manual { continuation.setIdle(true) }
        let action = clock.schedule(at: time) { [self] in
            if manual { continuation.setIdle(false) }
            body(self)
        }
        lock.withLock { pending = action }
        return false
    }
}
