import Foundation
import Logging
import ReelCore
import Synchronization

/// A `ResourceLoader` that reads through a `RangeCache`: cached spans come from
/// disk, holes from the upstream loader (usually an ``HTTPLoader``), written through
/// to the cache as they arrive.
///
/// - A read that crosses cached and uncached ranges is stitched: disk, then one range
///   request per hole, then disk again.
/// - A read starting beyond what is downloaded asks for its own range at once; a writer
///   that owns those bytes but is far behind gives them up (one writer per range).
/// - A read of bytes another read is writing waits for them when they are close, and
///   fetches them itself when that writer is a preload, far behind, or stalled.
/// - An MP4 whose `moov` follows its `mdat` gets its tail fetched beside its head, so the
///   index arrives about one round trip after the first byte; and the head keeps
///   downloading (up to ``Configuration/headAfterIndexSeek``) while the player reads the
///   index, so the first frames do not wait for a third round trip.
/// - A different entity at the origin (`ETag`, `Last-Modified` or length) invalidates the
///   cached resource; a read that already reported the old one fails with
///   `ResourceLoaderError/contentChanged(url:expected:found:)`.
///
/// When the cache is read-only or stopped storing (disk full), reads go on from the
/// network without storing.
public final class CachingLoader: StoringResourceLoader, Sendable {
    /// Tuning.
    public struct Configuration: Sendable {
        /// The largest chunk read from disk at once.
        public var chunkSize: Int
        /// Bytes a read may buffer ahead of its consumer.
        public var highWaterMark: Int
        /// How far ahead of a writer a read may be and still wait for it instead of fetching.
        public var waitWindow: Int64
        /// How long a waiting read lets a writer go without progress before fetching itself.
        public var writerStallTimeout: Duration
        /// Whether to fetch the tail of an MP4 whose index follows its media data with its head.
        public var prefetchesMP4Index: Bool
        /// The largest tail fetched that way.
        public var maxIndexPrefetch: Int64
        /// How much of the head keeps downloading after the player leaves to read the index.
        public var headAfterIndexSeek: Int64

        /// A configuration; each parameter sets the property of the same name. Defaults:
        /// 256 KiB disk chunks, 1 MiB buffered ahead, a 512 KiB wait window, 2 s before a
        /// writer counts as stalled, MP4 index tails of up to 8 MiB fetched with the head, and
        /// 1 MiB of head after an index seek. A `chunkSize` below 1 is taken as 1.
        public init(
            chunkSize: Int = 256 * 1024,
            highWaterMark: Int = 1 << 20,
            waitWindow: Int64 = 512 * 1024,
            writerStallTimeout: Duration = .seconds(2),
            prefetchesMP4Index: Bool = true,
            maxIndexPrefetch: Int64 = 8 << 20,
            headAfterIndexSeek: Int64 = 1 << 20
        ) {
            self.chunkSize = max(1, chunkSize)
            self.highWaterMark = highWaterMark
            self.waitWindow = waitWindow
            self.writerStallTimeout = writerStallTimeout
            self.prefetchesMP4Index = prefetchesMP4Index
            self.maxIndexPrefetch = maxIndexPrefetch
            self.headAfterIndexSeek = headAfterIndexSeek
        }
    }

    /// Where the bytes came from, for the benchmark and for tests.
    public struct Statistics: Sendable, Hashable {
        /// Reads started (``read(_:range:)`` calls).
        public var reads = 0
        /// Bytes delivered to readers from the cache.
        public var bytesFromCache: Int64 = 0
        /// Bytes received from the upstream loader (delivered, preloaded or prefetched).
        public var bytesFromNetwork: Int64 = 0
        /// Requests made to the upstream loader.
        public var networkRequests = 0
        /// MP4 index tails fetched beside a head.
        public var indexPrefetches = 0
        /// Reads that found the resource changed at the origin.
        public var entityChanges = 0
    }

    /// Where holes are fetched from.
    public let upstream: any ResourceLoader
    /// Where bytes are kept.
    public let cache: RangeCache
    /// The configuration given at init.
    public let configuration: Configuration
    let logger: Logger
    /// Counts, guarded by their mutex.
    private let counters = Mutex(Statistics())

    /// Reads `upstream` through `cache`.
    public init(
        upstream: any ResourceLoader,
        cache: RangeCache,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "reel.cache")
    ) {
        self.upstream = upstream
        self.cache = cache
        self.configuration = configuration
        self.logger = logger
    }

    /// The upstream loader: a live playlist is refetched through it at every reload.
    public var unstored: any ResourceLoader { upstream }

    /// Counts since creation (or ``resetStatistics()``).
    public var statistics: Statistics { counters.withTrackedLock { $0 } }

    /// Sets every count back to zero.
    public func resetStatistics() { counters.withTrackedLock { $0 = Statistics() } }

    /// Starts a read through the cache (see the type's documentation for what it does).
    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        counters.withTrackedLock { $0.reads += 1 }
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: configuration.highWaterMark)
        let control = ReadControl()
        let read = CachedRead(loader: self, url: url, range: range, mode: .deliver(continuation), priority: .playback, control: control)
        let task = Task { await read.runDelivering() }
        control.setTask(task)
        continuation.onCancel { control.consumerCancelled() }
        return stream
    }

    /// The cached information when there is some, without touching the network;
    /// otherwise a one-byte read through the cache.
    public func contentInformation(for url: URL) async throws -> ContentInformation {
        if let cached = cache.contentInformation(for: url) { return cached }
        let stream = read(url, range: ByteRange(offset: 0, length: 1))
        defer { stream.cancel() }
        return try await stream.contentInformation()
    }

    // MARK: - Filling (preloads and prefetches)

    /// What a fill did.
    struct FillResult: Sendable {
        var information: ContentInformation?
        var bytesFetched: Int64
    }

    /// Fetches the holes of `range` into the cache without delivering anything: cached
    /// bytes are skipped, bytes another writer owns are left to it. `gate` runs before
    /// each network chunk is taken (a paused preload waits in it).
    func fill(
        _ url: URL, range: ByteRange, priority: SpanWriter.Priority,
        gate: (@Sendable () async throws -> Void)? = nil
    ) async throws -> FillResult {
        let read = CachedRead(loader: self, url: url, range: range, mode: .fill(gate: gate), priority: priority, control: nil)
        return try await read.runFilling()
    }

    /// Fetches an MP4's index tail in the background (once per read that finds it missing).
    func prefetchIndex(_ url: URL, from offset: Int64, length: Int64) {
        guard configuration.prefetchesMP4Index, length > offset, length - offset <= configuration.maxIndexPrefetch else { return }
        counters.withTrackedLock { $0.indexPrefetches += 1 }
        logger.debug("prefetching the MP4 index of \(url) from byte \(offset)")
        Task.detached { [self] in
            _ = try? await fill(url, range: ByteRange(offset: offset, length: length - offset), priority: .playback)
        }
    }

    func count(fromCache: Int) { counters.withTrackedLock { $0.bytesFromCache += Int64(fromCache) } }
    func count(fromNetwork: Int) { counters.withTrackedLock { $0.bytesFromNetwork += Int64(fromNetwork) } }
    func countRequest() { counters.withTrackedLock { $0.networkRequests += 1 } }
    func countEntityChange() { counters.withTrackedLock { $0.entityChanges += 1 } }
}

/// Connects a delivering read's task to its stream: a consumer that cancels cancels
/// the task, unless the read is finishing an MP4 head in the background.
final class ReadControl: Sendable {
    /// Guarded by `state`.
    private struct State {
        var task: Task<Void, Never>?
        var keepsGoing = false
        var cancelled = false
    }

    private let state = Mutex(State())

    func setTask(_ task: Task<Void, Never>) {
        let cancelNow = state.withTrackedLock { state -> Bool in
            state.task = task
            return state.cancelled && !state.keepsGoing
        }
        if cancelNow { task.cancel() }
    }

    /// From now on a cancelled consumer leaves the read running (it stops storing at its own limit).
    func keepGoingWhenCancelled() -> Bool {
        state.withTrackedLock { state in
            guard !state.cancelled else { return false }
            state.keepsGoing = true
            return true
        }
    }

    func consumerCancelled() {
        let task = state.withTrackedLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.keepsGoing ? nil : state.task
        }
        task?.cancel()
    }
}
