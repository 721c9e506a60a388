import Foundation
import Logging
import ReelCore
import ReelStreaming
import Synchronization

/// One resource to preload: its URL and how much of its head.
public struct PreloadRequest: Sendable, Hashable {
    /// How much to preload.
    public enum Amount: Sendable, Hashable {
        /// This many bytes from the start.
        case bytes(Int64)
        /// Enough bytes for this many seconds of media from the start (converted by the
        /// preloader's estimator; its default byte count when the estimator cannot tell).
        case seconds(Double)
    }

    /// The resource.
    public var url: URL
    /// How much of its head.
    public var amount: Amount

    /// A request for `amount` of the head of `url` (by default
    /// ``Preloader/Configuration/defaultBytes``, 800 000 bytes).
    public init(url: URL, amount: Amount = .bytes(Preloader.Configuration.defaultBytes)) {
        self.url = url
        self.amount = amount
    }

    /// `count` bytes of `url`.
    public static func bytes(_ count: Int64, of url: URL) -> PreloadRequest { PreloadRequest(url: url, amount: .bytes(count)) }
    /// Enough of `url` for `seconds` of media.
    public static func seconds(_ seconds: Double, of url: URL) -> PreloadRequest { PreloadRequest(url: url, amount: .seconds(seconds)) }
}

/// Fills the cache with the heads of the videos a feed will show next, one at a time,
/// in queue order, and never in playback's way: the counterpart of ShortMediaCache's
/// `resetPreloadingWithMediaUrls:`.
///
/// - ``setPreloadQueue(_:)`` replaces the queue. The running preload goes on if its URL
///   is still wanted, and is cancelled if not.
/// - While any player is loading (a ``PlaybackLoad`` of the ``PlaybackLoadCoordinator``)
///   the preload pauses; a load that needs the connection cancels it. It resumes, from
///   what is cached, ``Configuration/resumeDelay`` after the last load ended. A pause
///   longer than ``Configuration/maxPause`` gives the connection up too.
/// - An MP4 whose index follows its media data gets its index tail preloaded with its
///   head, so the preloaded bytes are enough for a first frame.
/// - Every wait (resume delay, pause limit, retry delay) is on the injected clock.
public final class Preloader: Sendable {
    /// Timing and amounts.
    public struct Configuration: Sendable {
        /// Bytes preloaded when a request asks for seconds the estimator cannot convert.
        public static let defaultBytes: Int64 = 800_000

        /// Bytes for a seconds request the estimator cannot convert.
        public var fallbackBytes: Int64
        /// Time after the last playback load ended before preloading goes on.
        public var resumeDelay: MediaTime
        /// How long a paused preload keeps its connection before giving it up.
        public var maxPause: MediaTime
        /// Time before a failed preload is tried again.
        public var retryDelay: MediaTime
        /// Failures after which a request is dropped.
        public var maxFailures: Int

        /// A configuration; each parameter sets the property of the same name. Defaults:
        /// 800 000 fallback bytes, resuming 250 ms after the last playback load, a paused
        /// preload keeping its connection 5 s, 1 s before a retry, a request dropped after
        /// two failures (a value below 1 is taken as 1).
        public init(
            fallbackBytes: Int64 = Configuration.defaultBytes,
            resumeDelay: MediaTime = MediaTime(value: 250, timescale: 1000),
            maxPause: MediaTime = MediaTime(value: 5, timescale: 1),
            retryDelay: MediaTime = MediaTime(value: 1, timescale: 1),
            maxFailures: Int = 2
        ) {
            self.fallbackBytes = fallbackBytes
            self.resumeDelay = resumeDelay
            self.maxPause = maxPause
            self.retryDelay = retryDelay
            self.maxFailures = max(1, maxFailures)
        }
    }

    /// Turns seconds of media into bytes from the start of `URL` (with the container's
    /// index, once known); `nil` when it cannot tell.
    public typealias Estimator = @Sendable (URL, Double) async -> Int64?

    /// What the preloader has done.
    public struct Statistics: Sendable, Hashable {
        /// Requests whose bytes are all in the cache.
        public var completed: [URL] = []
        /// Bytes fetched from the network by preloads that completed.
        public var bytesFetched: Int64 = 0
        /// Preloads cancelled because playback needed the connection or paused too long.
        public var interruptions = 0
        /// Requests dropped after failing.
        public var failed: [URL] = []
    }

    // Immutable after init.
    /// The configuration given at init.
    public let configuration: Configuration
    private let loader: CachingLoader
    private let coordinator: PlaybackLoadCoordinator
    private let clock: any EngineClock
    private let estimator: Estimator?
    private let logger: Logger
    /// Chooses HLS variants as the players will (the feed's one): an HLS item is warmed as
    /// its master, the chosen variant's playlist, its init segment and first segment.
    private let variants: VariantSelectingLoader?

    /// Guarded by `state`. The worker task exists exactly while `worker` is set; it
    /// clears `worker` and takes `idleWaiters` in one critical section (``workerEnded()``),
    /// on every way out, so a waiter registered while it runs is always resumed.
    private struct State {
        var queue: [PreloadRequest] = []
        var running: (request: PreloadRequest, task: Task<Outcome, Never>)?
        var failures: [URL: Int] = [:]
        var stats = Statistics()
        var worker: Task<Void, Never>?
        var idleWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        var cancelHandlerID: UUID?
        var interrupted = false

        var isIdle: Bool { queue.isEmpty && running == nil && worker == nil }

        mutating func takeIdleWaiters() -> [CheckedContinuation<Void, Never>] {
            defer { idleWaiters = [:] }
            return Array(idleWaiters.values)
        }
    }

    private let state = Mutex(State())

    private enum Outcome { case done, interrupted, replaced, failed(any Error) }
    private struct PausedTooLong: Error {}

    /// A preloader filling `loader`'s cache, yielding to the players of `coordinator`.
    public init(
        loader: CachingLoader,
        coordinator: PlaybackLoadCoordinator,
        clock: any EngineClock = HostClock.shared,
        estimator: Estimator? = nil,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "reel.preload"),
        variants: VariantSelectingLoader? = nil
    ) {
        self.variants = variants
        self.loader = loader
        self.coordinator = coordinator
        self.clock = clock
        self.estimator = estimator
        self.configuration = configuration
        self.logger = logger
        let id = coordinator.addCancelHandler { [weak self] in self?.interruptRunning() }
        state.withTrackedLock { $0.cancelHandlerID = id }
    }

    deinit {
        let (id, worker, running) = state.withTrackedLock { ($0.cancelHandlerID, $0.worker, $0.running?.task) }
        if let id { coordinator.removeCancelHandler(id) }
        worker?.cancel()
        running?.cancel()
    }

    /// Replaces what is waiting to be preloaded. The running preload goes on if its URL
    /// is in `requests` (and is not preloaded again), and is cancelled if not.
    public func setPreloadQueue(_ requests: [PreloadRequest]) {
        var seen: Set<URL> = []
        let unique = requests.filter { seen.insert($0.url).inserted }
        let toCancel = state.withTrackedLock { state -> Task<Outcome, Never>? in
            var cancel: Task<Outcome, Never>?
            if let running = state.running, !unique.contains(where: { $0.url == running.request.url }) {
                cancel = running.task
            }
            let runningURL = state.running?.request.url
            state.queue = unique.filter { $0.url != runningURL || cancel != nil }
            if state.worker == nil, !state.queue.isEmpty {
                state.worker = Task { await self.work() }
            }
            return cancel
        }
        toCancel?.cancel()
    }

    /// The requests waiting (not the running one).
    public var pendingRequests: [PreloadRequest] { state.withTrackedLock { $0.queue } }

    /// The request being preloaded now, if any.
    public var currentRequest: PreloadRequest? { state.withTrackedLock { $0.running?.request } }

    /// Counts so far.
    public var statistics: Statistics { state.withTrackedLock { $0.stats } }

    /// Whether the worker task exists (for deterministic tests: without it nothing runs).
    var hasWorker: Bool { state.withTrackedLock { $0.worker != nil } }

    /// Cancels the running preload and forgets the queue.
    public func stop() {
        setPreloadQueue([])
    }

    /// Suspends until nothing is running or queued (for tests and tools), or until the
    /// calling task is cancelled.
    public func waitUntilIdle() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked and registered in one critical section; `workerEnded()` takes
                // the waiters in the one that makes the preloader idle.
                let idle = state.withTrackedLock { state -> Bool in
                    if state.isIdle || Task.isCancelled { return true }
                    state.idleWaiters[id] = continuation
                    return false
                }
                if idle { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withTrackedLock { $0.idleWaiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    // MARK: - The worker

    /// Runs the queue until it is empty, then ends (``setPreloadQueue(_:)`` starts it again),
    /// so a preloader nobody uses holds no task.
    private func work() async {
        while !Task.isCancelled {
            // Playback first: wait until no player is loading, then a little longer.
            while await coordinator.waitUntilIdle() {
                try? await clock.sleep(for: configuration.resumeDelay)
                if Task.isCancelled { break }
            }
            if Task.isCancelled { break }
            // The queue is looked at and the worker retired in one critical section, so a
            // request queued meanwhile either is seen here or starts a new worker.
            guard let request = nextRequestOrRetire() else { return }
            let task = Task { await self.preload(request) }
            let stillWanted = state.withTrackedLock { state -> Bool in
                guard state.queue.first?.url == request.url else { return false }
                state.queue.removeFirst()
                state.running = (request, task)
                state.interrupted = false
                return true
            }
            if !stillWanted {
                task.cancel()
                _ = await task.value
                continue
            }
            let outcome = await task.value
            state.withTrackedLock { state in
                state.running = nil
                switch outcome {
                case .done:
                    state.failures[request.url] = nil
                    state.stats.completed.append(request.url)
                case .interrupted:
                    // Playback took the connection: try again later, first in line.
                    state.stats.interruptions += 1
                    if !state.queue.contains(where: { $0.url == request.url }) { state.queue.insert(request, at: 0) }
                case .replaced:
                    break
                case .failed(let error):
                    let count = (state.failures[request.url] ?? 0) + 1
                    state.failures[request.url] = count
                    if count < configuration.maxFailures {
                        logger.debug("preload of \(request.url) failed (\(error)); will retry")
                        if !state.queue.contains(where: { $0.url == request.url }) { state.queue.append(request) }
                    } else {
                        logger.info("preload of \(request.url) failed: \(error)")
                        state.stats.failed.append(request.url)
                    }
                }
            }
            if case .failed = outcome {
                try? await clock.sleep(for: configuration.retryDelay)
            }
        }
        // Cancelled (the preloader went away): retire, and let waiters go.
        workerEnded()
    }

    /// The next request, or `nil` after retiring the worker (the queue is empty).
    private func nextRequestOrRetire() -> PreloadRequest? {
        let (next, waiters) = state.withTrackedLock { state -> (PreloadRequest?, [CheckedContinuation<Void, Never>]) in
            if let first = state.queue.first { return (first, []) }
            state.worker = nil
            return (nil, state.isIdle ? state.takeIdleWaiters() : [])
        }
        waiters.forEach { $0.resume() }
        return next
    }

    /// Retires the worker whatever the queue holds.
    private func workerEnded() {
        let waiters = state.withTrackedLock { state -> [CheckedContinuation<Void, Never>] in
            state.worker = nil
            return state.isIdle ? state.takeIdleWaiters() : []
        }
        waiters.forEach { $0.resume() }
    }

    /// Cancels the running preload because playback needs the connection.
    private func interruptRunning() {
        let task = state.withTrackedLock { state -> Task<Outcome, Never>? in
            guard let running = state.running else { return nil }
            state.interrupted = true
            return running.task
        }
        task?.cancel()
    }

    // MARK: - One preload

    private func preload(_ request: PreloadRequest) async -> Outcome {
        do {
            let gate: @Sendable () async throws -> Void = { [coordinator, clock, configuration] in
                try Task.checkCancellation()
                guard coordinator.isPlaybackLoading else { return }
                // Paused: keep the connection a while, then give it up.
                let deadline = clock.now + configuration.maxPause
                let idle = await coordinator.waitUntilIdle(until: deadline, on: clock)
                // Cancelled while paused (replaced, or playback took the connection) is not
                // a pause that ran too long: the outcome must say which it was.
                try Task.checkCancellation()
                if !idle { throw PausedTooLong() }
            }
            if let variants, VariantSelectingLoader.mayBePlaylist(request.url) {
                let fetched = try await preloadStream(request.url, variants: variants, gate: gate)
                state.withTrackedLock { $0.stats.bytesFetched += fetched }
                try Task.checkCancellation()
                return .done
            }
            let bytes = await byteCount(for: request)
            let head = try await loader.fill(request.url, range: ByteRange(offset: 0, length: bytes), priority: .preload, gate: gate)
            var fetched = head.bytesFetched
            if let metadata = loader.cache.lease(request.url).metadataAndRelease(),
               let offset = metadata.mp4IndexOffset, let length = metadata.length, offset < length,
               length - offset <= loader.configuration.maxIndexPrefetch {
                let tail = try await loader.fill(request.url, range: ByteRange(offset: offset, length: length - offset), priority: .preload, gate: gate)
                fetched += tail.bytesFetched
            }
            state.withTrackedLock { $0.stats.bytesFetched += fetched }
            try Task.checkCancellation()
            return .done
        } catch is PausedTooLong {
            state.withTrackedLock { $0.interrupted = true }
            return .interrupted
        } catch {
            if state.withTrackedLock({ $0.interrupted }) { return .interrupted }
            if Task.isCancelled || error is CancellationError { return .replaced }
            return .failed(error)
        }
    }

    /// Warms what an HLS or DASH item's first frame reads: the master (whose variant is chosen as the
    /// player will choose it), then its chosen variant's playlist and rendition playlists side
    /// by side, then each one's init segment and first segment side by side. A live playlist's
    /// segments are left alone (the player starts near its live edge, not at its first segment).
    /// Returns the bytes fetched from the network.
    private func preloadStream(_ url: URL, variants: VariantSelectingLoader,
                               gate: @escaping @Sendable () async throws -> Void) async throws -> Int64 {
        let loader = self.loader
        let whole = ByteRange(offset: 0)
        var fetched = try await loader.fill(url, range: whole, priority: .preload, gate: gate).bytesFetched
        // Read from the cache now; the variant chooser keeps its choice for the player.
        let document = try await variants.data(url)
        if url.pathExtension.lowercased() == "mpd" {
            return fetched + (try await preloadDASH(document, url: url, gate: gate))
        }
        var playlists: [(url: URL, text: Data?)] = []
        if let master = HLSMasterPlaylist(document) {
            for uri in master.variants.map(\.uri) + master.renditions {
                if let target = URL(string: uri, relativeTo: url)?.absoluteURL { playlists.append((target, nil)) }
            }
        } else {
            playlists.append((url, document))
        }
        // The playlists, side by side.
        let read = try await withThrowingTaskGroup(of: (URL, Data, Int64).self) { group in
            for (playlist, text) in playlists {
                group.addTask {
                    if let text { return (playlist, text, 0) }
                    let filled = try await loader.fill(playlist, range: whole, priority: .preload, gate: gate)
                    return (playlist, try await loader.data(playlist), filled.bytesFetched)
                }
            }
            var results: [(URL, Data, Int64)] = []
            for try await result in group { results.append(result) }
            return results
        }
        // Each one's init segment and first segment, side by side.
        var parts: [(URL, ByteRange)] = []
        for (playlist, text, bytes) in read {
            fetched += bytes
            guard let media = HLSMediaPlaylist(text), media.isFinal else { continue }
            for part in [media.initSection, media.segments.first?.resource].compactMap({ $0 }) {
                guard let target = URL(string: part.uri, relativeTo: playlist)?.absoluteURL,
                      ["http", "https", playlist.scheme ?? ""].contains(target.scheme?.lowercased() ?? "") else { continue }
                parts.append((target, part.range ?? whole))
            }
        }
        fetched += try await withThrowingTaskGroup(of: Int64.self) { group in
            for (target, range) in parts {
                group.addTask { try await loader.fill(target, range: range, priority: .preload, gate: gate).bytesFetched }
            }
            var total: Int64 = 0
            for try await bytes in group { total += bytes }
            return total
        }
        return fetched
    }

    /// A DASH manifest (as the variant chooser rewrote it: one video Representation and the
    /// preferred audio one): each kept Representation's initialization and first segment, all
    /// side by side. A manifest Reel would not play is left at that.
    private func preloadDASH(_ document: Data, url: URL, gate: @escaping @Sendable () async throws -> Void) async throws -> Int64 {
        let loader = self.loader
        guard let manifest = try? DASHManifest(document, url: url) else { return 0 }
        var parts: [(URL, ByteRange)] = []
        for representation in [manifest.videos.first, manifest.preferredAudio].compactMap({ $0 }) {
            for part in [representation.initialization, representation.segments.first].compactMap({ $0 }) {
                // Only what the player's closed door would let it read.
                guard ["http", "https", url.scheme?.lowercased() ?? ""].contains(part.url.scheme?.lowercased() ?? "") else { continue }
                parts.append((part.url, part.range ?? ByteRange(offset: 0)))
            }
        }
        return try await withThrowingTaskGroup(of: Int64.self) { group in
            for (target, range) in parts {
                group.addTask { try await loader.fill(target, range: range, priority: .preload, gate: gate).bytesFetched }
            }
            var total: Int64 = 0
            for try await bytes in group { total += bytes }
            return total
        }
    }

    private func byteCount(for request: PreloadRequest) async -> Int64 {
        switch request.amount {
        case .bytes(let count):
            return max(0, count)
        case .seconds(let seconds):
            if let estimator, let estimate = await estimator(request.url, seconds), estimate > 0 {
                return estimate
            }
            return configuration.fallbackBytes
        }
    }
}
