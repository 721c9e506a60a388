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
/// - **One writer per range.** A range being written belongs to one ``SpanWriter``;
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
public final class RangeCache: @unchecked Sendable {
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
        /// (``CachingLoader/Configuration/writerStallTimeout``); a test's ``ManualClock``
        /// decides when a writer counts as stalled.
        public var clock: any EngineClock
        /// What to do when another process writes the directory.
        public var access: Access
        /// Failures to inject (tests only).
        public var faults: FileSystemFaults?
        /// Where the cache logs (one warning on a disk failure; details at debug level).
        public var logger: Logger

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
        /// Resources evicted (limits) or invalidated (changed at the origin) by this process.
        public var evictions = 0
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

    public let configuration: Configuration
    /// Whether this cache only reads (another process writes the directory, or it was asked to).
    public let isReadOnly: Bool
    /// Why the cache is read-only, when it is.
    public let readOnlyReason: String?

    let root: String
    let logger: Logger
    /// The cache's one lock. It guards the fields below, every ``CacheEntry``'s mutable
    /// fields and the fields of ``SpanWriter`` marked so; leases and writers take it
    /// through ``withLock(_:)``. Never held across an `await`; file operations on the
    /// index (rename, metadata) run inside it, the bytes of spans outside.
    private let lock = Mutex(())
    // Guarded by `lock`:
    private var processLock: ProcessLock?
    private var entries: [String: CacheEntry] = [:]
    private var storing = true
    private var counters = Statistics()
    private var purging = false
    private var purgeAgain = false

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
        var readOnlyReason: String?
        if configuration.access == .readOnly {
            readOnlyReason = "opened read-only"
        } else {
            let outcome: ProcessLock.Outcome
            do {
                outcome = try ProcessLock.acquire(at: root + "/" + CacheLayout.lockFile)
            } catch {
                throw .io(directory: root, reason: "\(error)")
            }
            switch outcome {
            case .acquired(let acquired):
                processLock = acquired
            case .held(let pid):
                if configuration.access == .exclusive { throw .locked(directory: root, pid: pid) }
                readOnlyReason = "in use by another process" + (pid.map { " (pid \($0))" } ?? "")
                configuration.logger.notice("cache \(root) is \(readOnlyReason!): reading it without writing")
            }
        }
        self.readOnlyReason = readOnlyReason
        self.isReadOnly = readOnlyReason != nil
        if !isReadOnly {
            recover()
            withLock { trimLocked() }
            purgeTrashInBackground()
        }
    }

    deinit { processLock?.release() }

    /// Gives up the directory lock; the cache must not be used afterwards.
    public func close() {
        withLock {
            storing = false
            processLock?.release()
            processLock = nil
        }
    }

    // MARK: - Looking at the cache

    /// Totals over the cache.
    public var statistics: Statistics {
        withLock {
            var result = counters
            result.tempBytes = 0
            result.mediaBytes = 0
            result.resources = 0
            result.completeResources = 0
            result.spans = 0
            for entry in entries.values where entry.metadata != nil || !entry.spans.isEmpty {
                result.resources += 1
                result.spans += entry.spans.count
                if entry.area == .temp { result.tempBytes += entry.bytes } else { result.mediaBytes += entry.bytes }
                if entry.isComplete { result.completeResources += 1 }
            }
            result.storingStopped = !storing
            return result
        }
    }

    /// Whether the cache still writes (not read-only, no disk failure).
    public var isStoring: Bool { withLock { isStoringLocked } }

    /// Every cached resource, most recently used first.
    public func resources() -> [ResourceSummary] {
        if isReadOnly { refreshAllFromDisk() }
        return withLock {
            entries.values.filter { $0.metadata != nil }.map(summaryLocked).sorted { $0.lastAccess > $1.lastAccess }
        }
    }

    /// What is cached of `url`, if anything.
    public func summary(for url: URL) -> ResourceSummary? {
        let name = CacheLayout.directoryName(forKey: configuration.cacheKey(url))
        if isReadOnly { refreshFromDisk(name: name, key: configuration.cacheKey(url)) }
        return withLock { entries[name].flatMap { $0.metadata == nil ? nil : summaryLocked($0) } }
    }

    /// The cached byte ranges of `url`, merged where they touch.
    public func cachedRanges(for url: URL) -> [Range<Int64>] {
        summary(for: url)?.ranges ?? []
    }

    /// The content information cached for `url`, if any.
    public func contentInformation(for url: URL) -> ContentInformation? {
        let name = CacheLayout.directoryName(forKey: configuration.cacheKey(url))
        if isReadOnly { refreshFromDisk(name: name, key: configuration.cacheKey(url)) }
        return withLock { entries[name]?.metadata?.information }
    }

    private func summaryLocked(_ entry: CacheEntry) -> ResourceSummary {
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
        withLock {
            if let entry = entries[name] { invalidateLocked(entry) }
        }
        purgeTrashInBackground()
    }

    /// Removes every resource.
    public func removeAll() {
        guard !isReadOnly else { return }
        withLock {
            for entry in Array(entries.values) { invalidateLocked(entry) }
        }
        purgeTrashInBackground()
    }

    /// Applies the area limits now: evicts what is too old, then the least recently used
    /// until each area fits. Resources in use stay. (Done after every committed span anyway.)
    public func trim() {
        guard !isReadOnly else { return }
        withLock { trimLocked() }
        purgeTrashInBackground()
    }

    /// Deletes what is in `trash/` now, on the calling thread.
    public func purgeTrash() {
        guard !isReadOnly else { return }
        let trash = root + "/" + CacheLayout.trash
        for name in POSIXFile.list(trash) { POSIXFile.removeTree(trash + "/" + name) }
    }

    // MARK: - Leases (used by CachingLoader)

    /// Registers a use of `url`'s entry: it is not evicted until the lease is released.
    func lease(_ url: URL) -> ResourceLease {
        let key = configuration.cacheKey(url)
        let name = CacheLayout.directoryName(forKey: key)
        if isReadOnly { refreshFromDisk(name: name, key: key) }
        let entry = withLock { () -> CacheEntry in
            let entry: CacheEntry
            if let existing = entries[name] {
                entry = existing
            } else {
                entry = CacheEntry(name: name, key: key, area: .temp, lastAccess: configuration.now())
                entries[name] = entry
            }
            entry.leases += 1
            entry.lastAccess = configuration.now()
            return entry
        }
        return ResourceLease(cache: self, entry: entry, url: url)
    }

    func release(_ entry: CacheEntry) {
        withLock {
            entry.leases -= 1
            entry.lastAccess = configuration.now()
            if entry.leases == 0, !entry.isInvalidated {
                if entry.metadata == nil, entry.spans.isEmpty, entry.writers.isEmpty {
                    if entries[entry.name] === entry { entries[entry.name] = nil }
                } else if !isReadOnly, entry.hasDirectory, var metadata = entry.metadata {
                    // Remember the use across restarts (best effort, not synced).
                    metadata.lastAccess = entry.lastAccess.timeIntervalSince1970
                    entry.metadata = metadata
                    persistMetadataLocked(entry, sync: false)
                }
            }
        }
    }

    // MARK: - Internals shared with leases and writers

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try lock.withTrackedLock { _ in try body() }
    }

    /// Must be called with the lock held.
    var isStoringLocked: Bool { storing && !isReadOnly }

    func directoryPath(for entry: CacheEntry) -> String {
        root + "/" + entry.area.rawValue + "/" + entry.name
    }

    /// Records metadata for an entry that has none; creates its directory. Lock held.
    func adoptMetadataLocked(_ entry: CacheEntry, _ metadata: CacheMetadata) {
        entry.metadata = metadata
        guard isStoringLocked, !entry.isInvalidated else { return }
        do {
            if !entry.hasDirectory {
                try POSIXFile.makeDirectory(directoryPath(for: entry))
            }
            try writeMetadataLocked(entry, sync: configuration.syncWrites)
            entry.hasDirectory = true
        } catch let error as POSIXError {
            stopStoringLocked(error)
        } catch {
            stopStoringLocked(POSIXError(call: "write", path: directoryPath(for: entry), code: EIO))
        }
    }

    /// Rewrites `meta.json` of an entry that has a directory. Lock held.
    func persistMetadataLocked(_ entry: CacheEntry, sync: Bool) {
        guard isStoringLocked, entry.hasDirectory, !entry.isInvalidated else { return }
        do {
            try writeMetadataLocked(entry, sync: sync)
        } catch let error as POSIXError {
            stopStoringLocked(error)
        } catch {
            stopStoringLocked(POSIXError(call: "write", path: directoryPath(for: entry), code: EIO))
        }
    }

    private func writeMetadataLocked(_ entry: CacheEntry, sync: Bool) throws {
        guard let metadata = entry.metadata else { return }
        let path = directoryPath(for: entry) + "/" + CacheLayout.metadataFile
        if let code = configuration.faults?.beforeMetadataWrite() {
            throw POSIXError(call: "write", path: path, code: code)
        }
        try POSIXFile.writeAtomically(try metadata.encoded(), to: path, sync: sync)
    }

    /// A writer's segment is complete: rename its partial file to the span name.
    func commit(_ span: CachedSpan, from writer: SpanWriter, failure: POSIXError?) {
        withLock {
            let directory = directoryPath(for: writer.entry)
            guard let partial = writer.partialName else { return }
            writer.partialName = nil
            writer.segmentStart = writer.writtenEnd
            let partialPath = directory + "/" + partial
            if let failure {
                POSIXFile.unlinkIfPresent(partialPath)
                stopStoringLocked(failure)
                return
            }
            guard !writer.entry.isInvalidated, isStoringLocked else {
                POSIXFile.unlinkIfPresent(partialPath)
                return
            }
            do {
                try POSIXFile.rename(partialPath, directory + "/" + span.name)
            } catch {
                POSIXFile.unlinkIfPresent(partialPath)
                stopStoringLocked(error as? POSIXError ?? POSIXError(call: "rename", path: partialPath, code: EIO))
                return
            }
            writer.entry.insert(span)
        }
    }

    /// A writer throws away its partial file (an error, or it stopped before committing).
    func discardPartial(of writer: SpanWriter, reason: (any Error)?) {
        withLock {
            if let partial = writer.partialName {
                POSIXFile.unlinkIfPresent(directoryPath(for: writer.entry) + "/" + partial)
                writer.partialName = nil
            }
            // The bytes of the discarded partial file are no longer readable.
            writer.writtenEnd = writer.segmentStart
            if let error = reason as? POSIXError {
                stopStoringLocked(error)
            } else if let reason {
                stopStoringLocked(POSIXError(call: "write", path: "\(reason)", code: EIO))
            }
        }
    }

    func writerFinished(_ writer: SpanWriter) {
        let waiters = withLock { () -> [CheckedContinuation<Void, Never>] in
            guard !writer.isFinished else { return [] }
            writer.isFinished = true
            writer.entry.writers.removeAll { $0 === writer }
            let waiters = writer.takeWaitersLocked()
            completeIfPossibleLocked(writer.entry)
            trimLocked()
            return waiters
        }
        waiters.forEach { $0.resume() }
        purgeTrashInBackground()
    }

    func noteStored(_ count: Int) {
        withLock { counters.bytesStored += Int64(count) }
    }

    /// Moves a complete resource from `temp/` to `media/`. Lock held.
    func completeIfPossibleLocked(_ entry: CacheEntry) {
        guard entry.area == .temp, entry.writers.isEmpty, entry.hasDirectory, !entry.isInvalidated,
              entry.isComplete, isStoringLocked else { return }
        let from = directoryPath(for: entry)
        let to = root + "/" + CacheLayout.media + "/" + entry.name
        if POSIXFile.isDirectory(to) {
            // A stale directory of the same name (should not happen): it goes first.
            moveToTrashLocked(to, name: entry.name)
        }
        do {
            try POSIXFile.rename(from, to)
            entry.area = .media
        } catch {
            logger.warning("cannot move \(entry.key) to media/: \(error)")
        }
    }

    /// Forgets an entry and moves its directory to the trash. Lock held.
    func invalidateLocked(_ entry: CacheEntry) {
        entry.isInvalidated = true
        if entries[entry.name] === entry { entries[entry.name] = nil }
        if entry.hasDirectory {
            moveToTrashLocked(directoryPath(for: entry), name: entry.name)
            entry.hasDirectory = false
        }
        let waiters = entry.writers.flatMap { $0.takeWaitersLocked() }
        waiters.forEach { $0.resume() }
    }

    func noteInvalidationLocked() { counters.invalidations += 1 }

    private func moveToTrashLocked(_ path: String, name: String) {
        let target = root + "/" + CacheLayout.trash + "/" + name + "-" + UUID().uuidString.lowercased()
        do {
            try POSIXFile.rename(path, target)
        } catch {
            // Renaming inside one directory tree only fails if the disk is broken; delete in place.
            POSIXFile.removeTree(path)
        }
    }

    /// Stops caching after a disk failure, with one log line. Lock held.
    func stopStoringLocked(_ error: POSIXError) {
        guard storing else { return }
        storing = false
        if error.isNoSpace {
            logger.warning("cache disk full (\(error)); caching stopped, playback continues from the network")
        } else {
            logger.warning("cache write failed (\(error)); caching stopped, playback continues from the network")
        }
    }

    /// Evicts what the limits say must go. Lock held.
    func trimLocked() {
        guard !isReadOnly else { return }
        let now = configuration.now()
        for area in Area.allCases {
            let limit = configuration.limit(for: area)
            var candidates = entries.values
                .filter { $0.area == area && $0.hasDirectory && !$0.isInUse }
                .sorted { $0.lastAccess < $1.lastAccess }
            for entry in candidates where now.timeIntervalSince(entry.lastAccess) > limit.maxAge {
                logger.debug("evicting \(entry.key): unused for \(Int(now.timeIntervalSince(entry.lastAccess)))s")
                invalidateLocked(entry)
                counters.evictions += 1
            }
            candidates.removeAll { $0.isInvalidated }
            var used = entries.values.filter { $0.area == area }.reduce(Int64(0)) { $0 + $1.bytes }
            while used > limit.maxBytes, !candidates.isEmpty {
                let entry = candidates.removeFirst()
                logger.debug("evicting \(entry.key): \(area.rawValue)/ holds \(used) bytes, limit \(limit.maxBytes)")
                used -= entry.bytes
                invalidateLocked(entry)
                counters.evictions += 1
            }
        }
    }

    /// Whether `temp/` has room for more writing (after eviction). Lock held.
    func tempHasRoomLocked() -> Bool {
        let used = entries.values.filter { $0.area == .temp }.reduce(Int64(0)) { $0 + $1.bytes }
        if used < configuration.tempLimit.maxBytes { return true }
        trimLocked()
        let after = entries.values.filter { $0.area == .temp }.reduce(Int64(0)) { $0 + $1.bytes }
        return after < configuration.tempLimit.maxBytes
    }

    func purgeTrashInBackground() {
        guard !isReadOnly else { return }
        let start = withLock { () -> Bool in
            if purging { purgeAgain = true; return false }
            purging = true
            return true
        }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            while true {
                purgeTrash()
                let again = withLock { () -> Bool in
                    if purgeAgain { purgeAgain = false; return true }
                    purging = false
                    return false
                }
                if !again { return }
            }
        }
    }

    // MARK: - Opening: rebuilding the index from disk

    /// Scans `temp/` and `media/`, keeps what can be trusted, discards what a crash left
    /// unfinished and drops (with a warning) what is damaged.
    private func recover() {
        var found: [String: CacheEntry] = [:]
        for area in [Area.media, Area.temp] {
            let areaPath = root + "/" + area.rawValue
            for name in POSIXFile.list(areaPath) {
                let path = areaPath + "/" + name
                guard CacheLayout.isDirectoryName(name), POSIXFile.isDirectory(path) else {
                    logger.warning("cache: removing stray \(area.rawValue)/\(name)")
                    withLock { moveToTrashLocked(path, name: "stray") }
                    continue
                }
                if found[name] != nil {
                    logger.warning("cache: \(name) is in temp/ and media/; keeping media/")
                    withLock { moveToTrashLocked(path, name: name) }
                    continue
                }
                let scan = DirectoryScan(path: path)
                for unfinished in scan.unfinished { POSIXFile.unlinkIfPresent(path + "/" + unfinished) }
                guard let metadata = scan.metadata else {
                    if !scan.spans.isEmpty || !scan.damaged.isEmpty || !scan.strays.isEmpty {
                        logger.warning("cache: \(area.rawValue)/\(name) has spans but no readable metadata; removing it")
                    }
                    withLock { moveToTrashLocked(path, name: name) }
                    continue
                }
                for file in scan.damaged + scan.strays {
                    logger.warning("cache: dropping \(area.rawValue)/\(name)/\(file)")
                    POSIXFile.unlinkIfPresent(path + "/" + file)
                }
                for span in scan.rejectedSpans {
                    logger.warning("cache: dropping \(area.rawValue)/\(name)/\(span.name) (overlaps or lies past the end)")
                    POSIXFile.unlinkIfPresent(path + "/" + span.name)
                }
                let entry = CacheEntry(
                    name: name, key: metadata.key, area: area,
                    lastAccess: Date(timeIntervalSince1970: metadata.lastAccess)
                )
                entry.metadata = metadata
                entry.spans = scan.spans
                entry.hasDirectory = true
                if area == .media, !entry.isComplete {
                    let target = root + "/" + CacheLayout.temp + "/" + name
                    if (try? POSIXFile.rename(path, target)) != nil { entry.area = .temp }
                }
                found[name] = entry
            }
        }
        withLock {
            entries = found
            for entry in found.values where entry.area == .temp { completeIfPossibleLocked(entry) }
        }
    }

    /// Re-reads one resource from disk (read-only caches see another process's writes).
    private func refreshFromDisk(name: String, key: String) {
        for area in [Area.media, Area.temp] {
            let path = root + "/" + area.rawValue + "/" + name
            guard POSIXFile.isDirectory(path) else { continue }
            let scan = DirectoryScan(path: path)
            guard let metadata = scan.metadata else { continue }
            withLock {
                let entry = entries[name] ?? CacheEntry(name: name, key: key, area: area, lastAccess: Date(timeIntervalSince1970: metadata.lastAccess))
                guard entry.leases == 0 else { return }
                entry.area = area
                entry.metadata = metadata
                entry.spans = scan.spans
                entry.hasDirectory = true
                entries[name] = entry
            }
            return
        }
        withLock {
            if let entry = entries[name], entry.leases == 0 { entries[name] = nil }
        }
    }

    private func refreshAllFromDisk() {
        var names: Set<String> = []
        for area in [Area.media, Area.temp] {
            for name in POSIXFile.list(root + "/" + area.rawValue) where CacheLayout.isDirectoryName(name) {
                names.insert(name)
            }
        }
        for name in names {
            refreshFromDisk(name: name, key: withLock { entries[name]?.key } ?? name)
        }
    }
}

/// What one resource directory holds, sorted into what can be trusted and what cannot.
/// Used by recovery on open, by read-only refreshes, and by ``RangeCache/verify(directory:)``.
struct DirectoryScan {
    var metadata: CacheMetadata?
    /// Whether a `meta.json` exists (readable or not).
    var hasMetadataFile = false
    /// Trusted spans: name parsed, size matches, inside the length, no overlap.
    var spans: [CachedSpan] = []
    /// Spans with a good name and size that overlap others or lie past the end.
    var rejectedSpans: [CachedSpan] = []
    /// Span files whose size differs from their name.
    var damaged: [String] = []
    /// Files left by writes a crash interrupted (`.partial`, `meta.json.tmp`).
    var unfinished: [String] = []
    /// Anything else.
    var strays: [String] = []

    init(path: String) {
        var candidates: [CachedSpan] = []
        for file in POSIXFile.list(path) {
            if file == CacheLayout.metadataFile {
                hasMetadataFile = true
                if let data = FileManager.default.contents(atPath: path + "/" + file) {
                    metadata = CacheMetadata.decode(data)
                }
            } else if file.hasSuffix(CacheLayout.partialExtension) || file == CacheLayout.metadataFile + ".tmp" {
                unfinished.append(file)
            } else if let parsed = CacheLayout.parseSpanName(file) {
                if POSIXFile.size(path + "/" + file) == parsed.length {
                    candidates.append(CachedSpan(offset: parsed.offset, length: parsed.length, digest: parsed.digest))
                } else {
                    damaged.append(file)
                }
            } else {
                strays.append(file)
            }
        }
        candidates.sort { ($0.offset, -$0.length) < ($1.offset, -$1.length) }
        var coveredUpTo: Int64 = 0
        for span in candidates {
            if span.offset < coveredUpTo {
                rejectedSpans.append(span)
            } else if let length = metadata?.length, span.end > length {
                rejectedSpans.append(span)
            } else {
                spans.append(span)
                coveredUpTo = span.end
            }
        }
    }
}

extension RangeCache {
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
