import Foundation
import ReelCore

/// What a ``RangeCache`` knows, as one value: its resources (``CacheEntry``) with their
/// spans, the progress of every writer, every lease, whether it still stores, its
/// counters. The cache keeps it inside its one `Mutex`; nothing in it is a reference,
/// a lock, a file or a clock, so the tests run its events one after another on a plain
/// variable (`CacheIndexTests`).
///
/// As swift-nio's state machines do, each `mutating` event changes the value and returns
/// what the caller must do about it (``Effects``): directories to rename or create,
/// metadata to write, waiting reads to wake. The cache carries them out (see
/// ``RangeCache`` for which ones run under its lock).
struct CacheIndex: Sendable {
    struct EntryID: Hashable, Sendable, Comparable {
        let raw: UInt64
        static func < (a: Self, b: Self) -> Bool { a.raw < b.raw }
    }
    struct WriterID: Hashable, Sendable { let raw: UInt64 }
    struct LeaseID: Hashable, Sendable { let raw: UInt64 }
    struct WaiterID: Hashable, Sendable { let raw: UInt64 }

    /// A change to the disk an event asks for.
    enum DiskChange: Sendable, Equatable {
        /// Move a resource's directory to the trash (the index already forgot it).
        case moveToTrash(area: RangeCache.Area, name: String)
        /// Move a complete resource's directory from `temp/` to `media/` (the index
        /// already says `media`; ``CacheIndex/promotionFailed(_:)`` takes it back).
        case promote(EntryID, name: String)
        /// Create the entry's directory and write its metadata, synced (then
        /// ``CacheIndex/directoryCreated(_:)``).
        case createDirectory(EntryID)
        /// Rewrite the entry's `meta.json` from the index's metadata.
        case writeMetadata(EntryID, sync: Bool)
    }

    /// What the caller of an event must do once it returns.
    struct Effects: Sendable, Equatable {
        var disk: [DiskChange] = []
        /// Waiting reads to resume (each one is taken out of the index already).
        var wake: [WaiterID] = []

        static let none = Effects()

        mutating func add(_ other: Effects) {
            disk += other.disk
            wake += other.wake
        }
    }

    /// Where the byte at a position of a resource is, in the index's terms.
    enum Lookup: Sendable, Equatable {
        /// In a committed span: `available` bytes from `fileOffset` of the span file.
        case cached(area: RangeCache.Area, name: String, file: String, fileOffset: Int64, available: Int64)
        /// Written by a writer into its partial file.
        case written(area: RangeCache.Area, name: String, file: String, fileOffset: Int64, available: Int64)
        /// A writer owns it and has not got there yet.
        case pending(WriterID)
        /// Nobody has it; the next known bytes start at `end` (`nil`: none before the end).
        case hole(end: Int64?)
    }

    /// The outcome of claiming a range for a fetch.
    struct Claim: Sendable, Equatable {
        /// The new writer to store through; `nil` when not storing.
        var writer: WriterID?
        /// Where the hole at the position ends (the next known bytes, or the length).
        var holeEnd: Int64?
        /// Another writer owns the position (and `takeOver` was not asked for).
        var blocked: Bool
    }

    /// Counts kept across the index's life.
    struct Counters: Sendable, Equatable {
        var bytesStored: Int64 = 0
        var evictions = 0
        var invalidations = 0
    }

    let tempLimit: RangeCache.AreaLimit
    let mediaLimit: RangeCache.AreaLimit
    let isReadOnly: Bool
    // The fields are changed only by the events of CacheIndex*.swift (extensions in other
    // files cannot reach a `private(set)` setter); everyone else reads them.
    /// Every entry something refers to: the current one of each name, and invalidated
    /// ones still held by a lease or a writer.
    var entries: [EntryID: CacheEntry] = [:]
    /// The current entry of each directory name.
    var current: [String: EntryID] = [:]
    var writers: [WriterID: WriterProgress] = [:]
    /// Handles (``WriterHandle``) alive per writer: a finished writer's progress stays
    /// readable until the last one goes.
    var writerHandles: [WriterID: Int] = [:]
    /// The entry each lease holds.
    var leases: [LeaseID: EntryID] = [:]
    /// Whether spans and metadata are written (false once read-only or after a disk failure).
    var storing: Bool
    var counters = Counters()
    var lastID: UInt64 = 0

    init(tempLimit: RangeCache.AreaLimit, mediaLimit: RangeCache.AreaLimit, isReadOnly: Bool) {
        self.tempLimit = tempLimit
        self.mediaLimit = mediaLimit
        self.isReadOnly = isReadOnly
        self.storing = !isReadOnly
    }

    mutating func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }

    func limit(for area: RangeCache.Area) -> RangeCache.AreaLimit { area == .temp ? tempLimit : mediaLimit }

    /// The current entry of `name`.
    func entry(named name: String) -> CacheEntry? { current[name].flatMap { entries[$0] } }

    /// The entry a lease holds.
    func entry(of lease: LeaseID) -> CacheEntry? { leases[lease].flatMap { entries[$0] } }

    func progress(of writer: WriterID) -> WriterProgress? { writers[writer] }

    // MARK: - Leases

    /// A use of the resource `name` begins (its entry is made if there is none).
    mutating func lease(name: String, key: String, now: Date) -> LeaseID {
        let id: EntryID
        if let existing = current[name] {
            id = existing
        } else {
            id = EntryID(raw: nextID())
            entries[id] = CacheEntry(name: name, key: key, area: .temp, lastAccess: now)
            current[name] = id
        }
        entries[id]!.leases += 1
        entries[id]!.lastAccess = now
        let lease = LeaseID(raw: nextID())
        leases[lease] = id
        return lease
    }

    /// A use ends (a second release of the same lease does nothing). The last use of an
    /// entry records its last access in its metadata; an entry with nothing in it goes.
    mutating func release(_ lease: LeaseID, now: Date) -> Effects {
        guard let id = leases.removeValue(forKey: lease) else { return .none }
        return unpin(id, now: now)
    }

    private mutating func unpin(_ id: EntryID, now: Date) -> Effects {
        guard var entry = entries[id] else { return .none }
        entry.leases -= 1
        entry.lastAccess = now
        var effects = Effects()
        if entry.leases == 0, !entry.isInvalidated {
            if entry.metadata == nil, entry.spans.isEmpty, entry.writers.isEmpty {
                entries[id] = nil
                if current[entry.name] == id { current[entry.name] = nil }
                return effects
            } else if !isReadOnly, entry.hasDirectory, var metadata = entry.metadata {
                // Remember the use across restarts (best effort, not synced).
                metadata.lastAccess = now.timeIntervalSince1970
                entry.metadata = metadata
                effects.disk.append(.writeMetadata(id, sync: false))
            }
        }
        entries[id] = entry
        dropIfUnreferenced(id)
        return effects
    }

    /// Moves a lease to the current entry of its resource (after an invalidation).
    mutating func renew(_ lease: LeaseID, now: Date) -> Effects {
        guard let old = leases[lease], let entry = entries[old] else { return .none }
        let fresh = self.lease(name: entry.name, key: entry.key, now: now)
        leases[lease] = leases.removeValue(forKey: fresh)
        return unpin(old, now: now)
    }

    /// Forgets an invalidated entry that nothing refers to any more.
    mutating func dropIfUnreferenced(_ id: EntryID) {
        guard let entry = entries[id], entry.isInvalidated, !entry.isInUse else { return }
        entries[id] = nil
    }

    // MARK: - Where bytes are

    /// Where the byte at `position` of the lease's resource is. A `pending` answer
    /// counts as a new handle on that writer (``retainWriter(_:)``) when `retain`.
    mutating func lookup(_ lease: LeaseID, at position: Int64, retain: Bool = true) -> Lookup {
        guard let entry = entry(of: lease) else { return .hole(end: nil) }
        if let span = entry.span(containing: position) {
            return .cached(area: entry.area, name: entry.name, file: span.name,
                           fileOffset: position - span.offset, available: span.end - position)
        }
        let active = entry.writers.compactMap { id in writers[id].map { (id, $0) } }.filter { !$0.1.isFinished }
        for (_, writer) in active {
            if let partial = writer.partialName, writer.segmentStart <= position, position < writer.writtenEnd {
                return .written(area: entry.area, name: entry.name, file: partial,
                                fileOffset: position - writer.segmentStart, available: writer.writtenEnd - position)
            }
        }
        if let (id, _) = active.first(where: { $0.1.owns(position) }) {
            if retain { retainWriter(id) }
            return .pending(id)
        }
        return .hole(end: holeEnd(of: entry, after: position))
    }

    /// Where the next known bytes after `position` start (a span or a writer, capped by
    /// the length), if anywhere.
    func holeEnd(of entry: CacheEntry, after position: Int64) -> Int64? {
        var next = entry.spans.first { $0.offset > position }?.offset
        for id in entry.writers {
            guard let writer = writers[id], writer.start > position else { continue }
            next = min(next ?? writer.start, writer.start)
        }
        if let length = entry.metadata?.length { next = min(next ?? length, length) }
        return next
    }

    /// Claims the range from `position` of the lease's resource for a fetch. With
    /// `takeOver`, a writer that owns `position` but has not reached it gives up
    /// everything from `position` on. Making room in `temp/` may evict.
    mutating func claim(_ lease: LeaseID, at position: Int64, takeOver: Bool,
                        priority: SpanWriter.Priority, now: Date) -> (Claim, Effects) {
        guard let id = leases[lease], let entry = entries[id] else {
            return (Claim(writer: nil, holeEnd: nil, blocked: false), .none)
        }
        var blocked = false
        for writerID in entry.writers where writers[writerID]?.owns(position) == true {
            if takeOver { writers[writerID]!.limit = position } else { blocked = true }
        }
        let holeEnd = holeEnd(of: entry, after: position)
        if blocked { return (Claim(writer: nil, holeEnd: holeEnd, blocked: true), .none) }
        guard storing, !entry.isInvalidated, entry.span(containing: position) == nil else {
            return (Claim(writer: nil, holeEnd: holeEnd, blocked: false), .none)
        }
        var effects = Effects()
        if entry.area == .temp {
            let (room, trimmed) = tempHasRoom(now: now)
            effects.add(trimmed)
            guard room else { return (Claim(writer: nil, holeEnd: holeEnd, blocked: false), effects) }
        }
        let writer = WriterID(raw: nextID())
        writers[writer] = WriterProgress(entry: id, start: position, priority: priority,
                                         writtenEnd: position, limit: holeEnd, segmentStart: position)
        writerHandles[writer] = 1
        entries[id]!.writers.append(writer)
        return (Claim(writer: writer, holeEnd: holeEnd, blocked: false), effects)
    }
}
