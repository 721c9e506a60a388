import Foundation
import Synchronization
import Logging
import ReelCore

/// Why a ``RangeCache`` could not be opened or changed.
public enum RangeCacheError: Error, Sendable, CustomStringConvertible {
    /// Another process writes the cache (it holds `<cache>/lock`).
    case locked(directory: String, pid: Int32?)
    /// The cache directory cannot be used.
    case io(directory: String, reason: String)

    /// One line naming the directory: `cache <dir> is in use by another process (pid N)` or
    /// `cache <dir>: <reason>`, as `reel` prints it.
    public var description: String {
        switch self {
        case .locked(let directory, let pid):
            "cache \(directory) is in use by another process" + (pid.map { " (pid \($0))" } ?? "")
        case .io(let directory, let reason):
            "cache \(directory): \(reason)"
        }
    }
}

/// A cache of byte ranges of remote resources, on disk, shared by every read and
/// preload in the process: media3's `SimpleCache` reworked for crash safety.
///
/// - **Sparse.** Any ranges of a resource can be cached, as *spans* (files named by
///   offset, length and MD5). The index is rebuilt from the file names on open.
/// - **Lifecycle.** A partial resource lives in `temp/`, moves to `media/` once every
///   byte is there, and is moved to `trash/` to be deleted in the background.
/// - **Limits.** Each area has a byte and an age limit (temp 100 MiB / 1 day, media
///   200 MiB / 2 days by default); the least recently used resources go first, and a
///   resource in use is never evicted.
/// - **One writer per range.** A range being written belongs to one `SpanWriter`;
///   readers of it wait for it or read the network without storing.
/// - **One process.** `<cache>/lock` is `flock`ed by the writing process; another
///   process gets read-only access (or ``RangeCacheError/locked(directory:pid:)``).
/// - **Crash safety.** A span gets its name by a rename after its bytes were written
///   and synced; `.partial` files are discarded on open and span files whose size
///   differs from their name are dropped, so `kill -9` never leaves a wrong byte.
/// - **Disk full.** The first failed write logs one line and stops caching; reads go on
///   from the network.
///
/// See ``CachingLoader`` for reading through it and ``Preloader`` for filling it ahead.
public final class RangeCache: Sendable {
    /// The two areas of the cache.
    public enum Area: String, Sendable, CaseIterable, Codable {
        /// Resources with bytes missing.
        case temp
        /// Complete resources.
        case media
    }

    /// How much an area may hold.
    public struct AreaLimit: Sendable, Hashable {
        /// Bytes in committed spans.
        public var maxBytes: Int64
        /// Time since a resource was last used after which it is evicted.
        public var maxAge: TimeInterval

        /// A limit of `maxBytes` bytes and `maxAge` seconds since last use.
        public init(maxBytes: Int64, maxAge: TimeInterval) {
            self.maxBytes = maxBytes
            self.maxAge = maxAge
        }
    }

    /// What to do when another process already writes the cache directory.
    public enum Access: Sendable {
        /// Write if the directory is free, read-only otherwise.
        case automatic
        /// Write, or throw ``RangeCacheError/locked(directory:pid:)``.
        case exclusive
        /// Never write, whoever holds the lock.
        case readOnly
    }

    /// Failures injected into the cache's file writes, for tests of a full disk.
    public struct FileSystemFaults: Sendable {
        /// Called before each write of span bytes with its size; an `errno` value it
        /// returns (`ENOSPC`) makes that write fail as the kernel would.
        public var beforeWrite: @Sendable (Int) -> Int32?
        /// Called before each metadata write; an `errno` value makes it fail.
        public var beforeMetadataWrite: @Sendable () -> Int32?

        /// Faults that fail the writes the closures choose; by default none fails. The
        /// closures are called on the writing thread, inside the write: keep them short.
        public init(
            beforeWrite: @escaping @Sendable (Int) -> Int32? = { _ in nil },
            beforeMetadataWrite: @escaping @Sendable () -> Int32? = { nil }
        ) {
            self.beforeWrite = beforeWrite
            self.beforeMetadataWrite = beforeMetadataWrite
        }
    }

    /// Where the cache lives and how it behaves.
    public struct Configuration: Sendable {
        /// The cache directory (created if missing).
        public var directory: URL
        /// Limits of `temp/`: 100 MiB and one day by default.
        public var tempLimit: AreaLimit
        /// Limits of `media/`: 200 MiB and two days by default.
        public var mediaLimit: AreaLimit
        /// The cache key of a URL; by default the URL itself. Signed or tokenised URLs
        /// want a key without the signature, so every signature shares one entry.
        public var cacheKey: @Sendable (URL) -> String
        /// Bytes per committed span while writing (also the most a crash can lose per writer).
        public var segmentSize: Int
        /// Whether span and metadata files are synced to the disk before their rename.
        public var syncWrites: Bool
        /// The wall clock for ages and last-use times (injectable for tests).
        public var now: @Sendable () -> Date
        /// The clock a read waiting for another read's writer times out on
        /// (`CachingLoader/Configuration/writerStallTimeout`); a test's `ManualClock`
        /// decides when a writer counts as stalled.
        public var clock: any EngineClock
        /// What to do when another process writes the directory.
        public var access: Access
        /// Failures to inject (tests only).
        public var faults: FileSystemFaults?
        /// Where the cache logs (one warning on a disk failure; details at debug level).
        public var logger: Logger

        /// A configuration of `directory`; every other parameter sets the property of the
        /// same name, with the defaults given there (a `segmentSize` below 1 is taken as 1).
        public init(
            directory: URL,
            tempLimit: AreaLimit = AreaLimit(maxBytes: 100 << 20, maxAge: 24 * 3600),
            mediaLimit: AreaLimit = AreaLimit(maxBytes: 200 << 20, maxAge: 2 * 24 * 3600),
            cacheKey: @escaping @Sendable (URL) -> String = { $0.absoluteString },
            segmentSize: Int = 1 << 20,
            syncWrites: Bool = true,
            now: @escaping @Sendable () -> Date = { Date() },
            clock: any EngineClock = HostClock.shared,
            access: Access = .automatic,
            faults: FileSystemFaults? = nil,
            logger: Logger = Logger(label: "reel.cache")
        ) {
            self.directory = directory
            self.tempLimit = tempLimit
            self.mediaLimit = mediaLimit
            self.cacheKey = cacheKey
            self.segmentSize = max(1, segmentSize)
            self.syncWrites = syncWrites
            self.now = now
            self.clock = clock
            self.access = access
            self.faults = faults
            self.logger = logger
        }

        func limit(for area: Area) -> AreaLimit { area == .temp ? tempLimit : mediaLimit }
    }

    /// Totals over the cache.
    public struct Statistics: Sendable, Hashable {
        /// Bytes in committed spans of partial resources.
        public var tempBytes: Int64 = 0
        /// Bytes of complete resources.
        public var mediaBytes: Int64 = 0
        /// Resources with metadata.
        public var resources = 0
        /// Resources with every byte cached.
        public var completeResources = 0
        /// Committed span files.
        public var spans = 0
        /// Bytes written to spans by this process.
        public var bytesStored: Int64 = 0
        /// Resources evicted by this process to keep an area within its limits.
        public var evictions = 0
        /// Resources dropped by this process because they changed at the origin (another
        /// `ETag`, `Last-Modified` or length).
        public var invalidations = 0
        /// Whether caching stopped after a disk failure.
        public var storingStopped = false
    }

    /// One cached resource, for listings and tests.
    public struct ResourceSummary: Sendable, Hashable {
        /// The cache key (the URL unless a key function says otherwise).
        public var key: String
        /// The URL it was first cached from.
        public var url: String
        /// The area it is in: ``Area/temp`` while bytes are missing, ``Area/media`` once
        /// complete.
        public var area: Area
        /// The resource's length, when known.
        public var length: Int64?
        /// The version cached.
        public var entityTag: String?
        /// Bytes in committed spans.
        public var cachedBytes: Int64
        /// The cached ranges, merged where spans touch.
        public var ranges: [Range<Int64>]
        /// When a read or preload last used it.
        public var lastAccess: Date
        /// Whether a read, writer or preload holds it now.
        public var isInUse: Bool
    }

    /// The configuration the cache was opened with.
    public let configuration: Configuration
    /// Whether this cache only reads (another process writes the directory, or it was asked to).
    public let isReadOnly: Bool
    /// Why the cache is read-only, when it is.
    public let readOnlyReason: String?

    let root: String
    let logger: Logger

    /// What the cache's one lock guards: the index, the continuations of the reads
    /// waiting for writers (keyed by the index's waiter IDs), the directory lock, and
    /// the trash purger's flags.
    struct State: Sendable {
        var index: CacheIndex
        var waiters: [CacheIndex.WaiterID: CheckedContinuation<Void, Never>] = [:]
        var processLock: ProcessLock?
        var purging = false
        var purgeAgain = false
    }

    /// The cache's one lock (``withState(_:)``): never held across an `await` or a write
    /// of bytes; see ``change(_:)`` for the renames that run inside it.
    let state: Mutex<State>
    /// Orders the index's changes that touch the disk (``change(_:)``): taken before
    /// `state`, held while metadata is written and partial files removed, so those reach
    /// the disk in the order the index made them. Lookups, writers' progress and leases
    /// never take it.
    let diskOrder = Mutex(())

    /// Opens (creating if needed) the cache in `configuration.directory`, recovering
    /// from whatever a crash left: unfinished writes are discarded, damaged spans dropped.
    public init(configuration: Configuration) throws(RangeCacheError) {
        self.configuration = configuration
        self.logger = configuration.logger
        let root = configuration.directory.standardizedFileURL.path
        self.root = root
        do {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            for area in [CacheLayout.temp, CacheLayout.media, CacheLayout.trash] {
                try POSIXFile.makeDirectory(root + "/" + area)
            }
        } catch {
            throw .io(directory: root, reason: "\(error)")
        }
        let (processLock, readOnlyReason) = try Self.takeDirectory(root, configuration: configuration)
        self.readOnlyReason = readOnlyReason
        self.isReadOnly = readOnlyReason != nil
        let index = CacheIndex(tempLimit: configuration.tempLimit, mediaLimit: configuration.mediaLimit,
                               isReadOnly: readOnlyReason != nil)
        self.state = Mutex(State(index: index, processLock: processLock))
        if !isReadOnly {
            recover()
            trim()
        }
    }

    private static func takeDirectory(_ root: String, configuration: Configuration) throws(RangeCacheError) -> (ProcessLock?, String?) {
        if configuration.access == .readOnly { return (nil, "opened read-only") }
        let outcome: ProcessLock.Outcome
        do {
            outcome = try ProcessLock.acquire(at: root + "/" + CacheLayout.lockFile)
        } catch {
            throw .io(directory: root, reason: "\(error)")
        }
        switch outcome {
        case .acquired(let acquired):
            return (acquired, nil)
        case .held(let pid):
            if configuration.access == .exclusive { throw .locked(directory: root, pid: pid) }
            let reason = "in use by another process" + (pid.map { " (pid \($0))" } ?? "")
            configuration.logger.notice("cache \(root) is \(reason): reading it without writing")
            return (nil, reason)
        }
    }

    deinit { state.withTrackedLock { $0.processLock?.release() } }

    /// Gives up the directory lock; the cache must not be used afterwards.
    public func close() {
        withState { state in
            _ = state.index.stopStoring()
            state.processLock?.release()
            state.processLock = nil
        }
    }

    // MARK: - Looking at the cache

    /// Totals over the cache.
    public var statistics: Statistics {
        withState { state in
            let index = state.index
            var result = Statistics()
            result.bytesStored = index.counters.bytesStored
            result.evictions = index.counters.evictions
            result.invalidations = index.counters.invalidations
            for entry in index.current.values.compactMap({ index.entries[$0] })
            where entry.metadata != nil || !entry.spans.isEmpty {
                result.resources += 1
                result.spans += entry.spans.count
                if entry.area == .temp { result.tempBytes += entry.bytes } else { result.mediaBytes += entry.bytes }
                if entry.isComplete { result.completeResources += 1 }
            }
            result.storingStopped = !index.storing
            return result
        }
    }

    /// Whether the cache still writes (not read-only, no disk failure).
    public var isStoring: Bool { withState { $0.index.storing } }

    /// Every cached resource, most recently used first.
    public func resources() -> [ResourceSummary] {
        if isReadOnly { refreshAllFromDisk() }
        return withState { state in
            state.index.current.values.compactMap { state.index.entries[$0] }
                .filter { $0.metadata != nil }.map(Self.summary).sorted { $0.lastAccess > $1.lastAccess }
        }
    }

    /// What is cached of `url`, if anything.
    public func summary(for url: URL) -> ResourceSummary? {
        let name = CacheLayout.directoryName(forKey: configuration.cacheKey(url))
        if isReadOnly { refreshFromDisk(name: name) }
        return withState { state in state.index.entry(named: name).flatMap { $0.metadata == nil ? nil : Self.summary($0) } }
    }

    /// The cached byte ranges of `url`, merged where they touch.
    public func cachedRanges(for url: URL) -> [Range<Int64>] {
        summary(for: url)?.ranges ?? []
    }

    /// The content information cached for `url`, if any.
    public func contentInformation(for url: URL) -> ContentInformation? {
        let name = CacheLayout.directoryName(forKey: configuration.cacheKey(url))
        if isReadOnly { refreshFromDisk(name: name) }
        return withState { $0.index.entry(named: name)?.metadata?.information }
    }

    private static func summary(_ entry: CacheEntry) -> ResourceSummary {
        ResourceSummary(
            key: entry.key, url: entry.metadata?.url ?? entry.key, area: entry.area,
            length: entry.metadata?.length, entityTag: entry.metadata?.entityTag,
            cachedBytes: entry.bytes, ranges: entry.cachedRanges,
            lastAccess: entry.lastAccess, isInUse: entry.isInUse
        )
    }

    // MARK: - Removing

    /// Removes `url` from the cache (moved to `trash/` now, deleted in the background).
    /// Reads already under way fail with `contentChanged` at their next cached byte.
    public func remove(_ url: URL) {
        guard !isReadOnly else { return }
        let name = CacheLayout.directoryName(forKey: configuration.cacheKey(url))
        change { index in ((), index.remove(name: name)) }
        purgeTrashInBackground()
    }

    /// Removes every resource.
    public func removeAll() {
        guard !isReadOnly else { return }
        change { index in ((), index.removeAll()) }
        purgeTrashInBackground()
    }

    /// Applies the area limits now: evicts what is too old, then the least recently used
    /// until each area fits. Resources in use stay. (Done after every finished writer anyway.)
    public func trim() {
        guard !isReadOnly else { return }
        let now = configuration.now()
        change { index in ((), index.trim(now: now)) }
        purgeTrashInBackground()
    }

    /// Deletes what is in `trash/` now, on the calling thread.
    public func purgeTrash() {
        guard !isReadOnly else { return }
        let trash = root + "/" + CacheLayout.trash
        for name in POSIXFile.list(trash) { POSIXFile.removeTree(trash + "/" + name) }
    }

    func purgeTrashInBackground() {
        guard !isReadOnly else { return }
        let start = withState { state -> Bool in
            if state.purging { state.purgeAgain = true; return false }
            state.purging = true
            return true
        }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            while true {
                purgeTrash()
                let again = withState { state -> Bool in
                    if state.purgeAgain { state.purgeAgain = false; return true }
                    state.purging = false
                    return false
                }
                if !again { return }
            }
        }
    }

    func withState<T>(_ body: (inout State) throws -> T) rethrows -> T {
        try state.withTrackedLock { state in try body(&state) }
    }
}

extension RangeCache {
    /// The folder beside the cache's own areas where `reel demo` keeps the feed it makes
    /// (`CacheLayout`): part of the layout, not the cache's to check or to clean — the
    /// demo's manifest, written last, is its commit point.
    public static let demoFeedFolder = "demo-feed"

    /// Where Reel keeps its cache unless told otherwise: `$XDG_CACHE_HOME/reel`, or
    /// `~/.cache/reel` when `XDG_CACHE_HOME` is unset or not absolute.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("reel", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".cache", isDirectory: true)
            .appendingPathComponent("reel", isDirectory: true)
    }
}
