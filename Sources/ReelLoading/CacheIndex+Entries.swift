import Foundation
import ReelCore

/// A resource's events: what an origin said about it, its completion, its invalidation
/// and eviction, and what recovery found on disk.
extension CacheIndex {
    /// What the cache made of the information an origin response carried.
    enum ReconcileOutcome: Sendable, Equatable {
        /// Same entity (or the first one seen): go on.
        case accepted
        /// A different entity than the one cached: the cached one was invalidated.
        case changed(previous: ContentInformation)
    }

    /// Checks what an origin response says about the lease's resource against what is
    /// cached, recording it when nothing is. A different entity invalidates the entry.
    mutating func reconcile(_ lease: LeaseID, _ information: ContentInformation, url: URL,
                            now: Date, sync: Bool) -> (ReconcileOutcome, Effects) {
        guard let id = leases[lease], let entry = entries[id] else { return (.accepted, .none) }
        if let metadata = entry.metadata, !entry.isInvalidated {
            if metadata.isDifferentEntity(from: information) {
                counters.invalidations += 1
                return (.changed(previous: metadata.information), invalidate(id))
            }
            if metadata.length == nil, let length = information.length {
                entries[id]!.metadata!.length = length
                return (.accepted, persist(id, sync: sync))
            }
            return (.accepted, .none)
        }
        if entry.isInvalidated {
            return (.changed(previous: entry.metadata?.information ?? information), .none)
        }
        entries[id]!.metadata = CacheMetadata(key: entry.key, url: url, information: information, now: now)
        guard storing else { return (.accepted, .none) }
        if entry.hasDirectory { return (.accepted, persist(id, sync: sync)) }
        return (.accepted, Effects(disk: [.createDirectory(id)]))
    }

    /// Records the length found at the end of a read of unknown length.
    mutating func recordLength(_ lease: LeaseID, _ length: Int64, sync: Bool) -> Effects {
        guard let id = leases[lease], let entry = entries[id], entry.metadata != nil,
              entry.metadata?.length == nil, !entry.isInvalidated else { return .none }
        entries[id]!.metadata!.length = length
        var effects = persist(id, sync: sync)
        effects.add(completeIfPossible(id))
        return effects
    }

    /// Records where the MP4 index starts when it follows the media data (`nil`: it does not).
    mutating func recordLayout(_ lease: LeaseID, indexOffset: Int64?) -> Effects {
        guard let id = leases[lease], let entry = entries[id], let metadata = entry.metadata,
              !metadata.layoutChecked, !entry.isInvalidated else { return .none }
        entries[id]!.metadata!.layoutChecked = true
        entries[id]!.metadata!.mp4IndexOffset = indexOffset
        return persist(id, sync: false)
    }

    private func persist(_ id: EntryID, sync: Bool) -> Effects {
        guard storing, let entry = entries[id], entry.hasDirectory, !entry.isInvalidated else { return .none }
        return Effects(disk: [.writeMetadata(id, sync: sync)])
    }

    /// What to write as the entry's `meta.json` now, if anything (it may have gone since
    /// the write was asked for).
    func metadataToWrite(_ id: EntryID, creating: Bool) -> (area: RangeCache.Area, name: String, metadata: CacheMetadata)? {
        guard storing, let entry = entries[id], !entry.isInvalidated, entry.hasDirectory != creating,
              let metadata = entry.metadata else { return nil }
        return (entry.area, entry.name, metadata)
    }

    /// The entry's directory and metadata were written.
    mutating func directoryCreated(_ id: EntryID) {
        entries[id]?.hasDirectory = true
    }

    /// Stops storing after a disk failure; `true` the first time (to say so once).
    mutating func stopStoring() -> Bool {
        guard storing else { return false }
        storing = false
        return true
    }

    // MARK: - Completion, invalidation, eviction

    /// Moves a complete resource with no writer from `temp/` to `media/`.
    mutating func completeIfPossible(_ id: EntryID) -> Effects {
        guard let entry = entries[id], entry.area == .temp, entry.writers.isEmpty, entry.hasDirectory,
              !entry.isInvalidated, entry.isComplete, storing else { return .none }
        entries[id]!.area = .media
        return Effects(disk: [.promote(id, name: entry.name)])
    }

    /// The move to `media/` failed: the directory is still in `temp/`.
    mutating func promotionFailed(_ id: EntryID) {
        entries[id]?.area = .temp
    }

    /// Forgets an entry: its bytes are not served any more, its writers stop, the reads
    /// waiting for them wake, and its directory goes to the trash.
    mutating func invalidate(_ id: EntryID) -> Effects {
        guard var entry = entries[id] else { return .none }
        var effects = Effects()
        entry.isInvalidated = true
        if current[entry.name] == id { current[entry.name] = nil }
        if entry.hasDirectory {
            effects.disk.append(.moveToTrash(area: entry.area, name: entry.name))
            entry.hasDirectory = false
        }
        entries[id] = entry
        for writer in entry.writers { effects.wake += takeWaiters(of: writer) }
        dropIfUnreferenced(id)
        return effects
    }

    /// Removes the resource `name` (``RangeCache/remove(_:)``).
    mutating func remove(name: String) -> Effects {
        current[name].map { invalidate($0) } ?? .none
    }

    mutating func removeAll() -> Effects {
        var effects = Effects()
        for id in current.values.sorted() { effects.add(invalidate(id)) }
        return effects
    }

    private func bytes(in area: RangeCache.Area) -> Int64 {
        entries.values.filter { $0.area == area && !$0.isInvalidated }.reduce(Int64(0)) { $0 + $1.bytes }
    }

    /// Evicts what the limits say must go: in each area what is older than its age limit,
    /// then the least recently used until the area fits. Entries in use stay.
    mutating func trim(now: Date) -> Effects {
        guard !isReadOnly else { return .none }
        var effects = Effects()
        for area in RangeCache.Area.allCases {
            let limit = limit(for: area)
            var candidates = current.values.compactMap { id in entries[id].map { (id, $0) } }
                .filter { $0.1.area == area && $0.1.hasDirectory && !$0.1.isInUse }
                .sorted { ($0.1.lastAccess, $0.0) < ($1.1.lastAccess, $1.0) }
            for (id, entry) in candidates where now.timeIntervalSince(entry.lastAccess) > limit.maxAge {
                effects.add(invalidate(id))
                counters.evictions += 1
            }
            candidates.removeAll { now.timeIntervalSince($0.1.lastAccess) > limit.maxAge }
            var used = bytes(in: area)
            while used > limit.maxBytes, !candidates.isEmpty {
                let (id, entry) = candidates.removeFirst()
                used -= entry.bytes
                effects.add(invalidate(id))
                counters.evictions += 1
            }
        }
        return effects
    }

    /// Whether `temp/` has room for more writing, after evicting what must go.
    mutating func tempHasRoom(now: Date) -> (Bool, Effects) {
        if bytes(in: .temp) < tempLimit.maxBytes { return (true, .none) }
        let effects = trim(now: now)
        return (bytes(in: .temp) < tempLimit.maxBytes, effects)
    }

    // MARK: - What the disk holds

    /// A resource directory found on disk.
    struct Found: Sendable {
        var name: String
        var area: RangeCache.Area
        var metadata: CacheMetadata
        var spans: [CachedSpan]
    }

    /// Replaces the index with what recovery found; complete resources in `temp/` move on.
    mutating func load(_ found: [Found]) -> Effects {
        entries = [:]
        current = [:]
        var effects = Effects()
        for resource in found {
            let id = EntryID(raw: nextID())
            entries[id] = Self.entry(for: resource)
            current[resource.name] = id
        }
        for id in current.values.sorted() where entries[id]?.area == .temp { effects.add(completeIfPossible(id)) }
        return effects
    }

    /// Another process's view of one resource (a read-only cache): replaces the entry
    /// unless a lease holds it; `nil` forgets an unused one.
    mutating func refresh(name: String, with resource: Found?) {
        if let id = current[name], let entry = entries[id], entry.leases > 0 || !entry.writers.isEmpty { return }
        if let id = current.removeValue(forKey: name) { entries[id] = nil }
        guard let resource else { return }
        let id = EntryID(raw: nextID())
        entries[id] = Self.entry(for: resource)
        current[name] = id
    }

    private static func entry(for resource: Found) -> CacheEntry {
        var entry = CacheEntry(name: resource.name, key: resource.metadata.key, area: resource.area,
                               lastAccess: Date(timeIntervalSince1970: resource.metadata.lastAccess))
        entry.metadata = resource.metadata
        entry.spans = resource.spans
        entry.hasDirectory = true
        return entry
    }
}
