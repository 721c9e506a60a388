import Foundation
import ReelCore

/// Where the byte at a position of a cached resource is, right now.
enum SpanLookup {
    /// In a committed span file: `available` bytes from `fileOffset` of `path`.
    case cached(path: String, fileOffset: Int64, available: Int64)
    /// Already written by a writer of this process, in its partial file.
    case written(path: String, fileOffset: Int64, available: Int64)
    /// A writer owns it and has not got there yet.
    case pending(SpanWriter)
    /// Nobody has it; the next known bytes start at `end` (`nil`: none before the end).
    case hole(end: Int64?)
}

/// What the cache made of the information an origin response carried.
enum Reconciliation {
    /// Same entity (or the first one seen): go on.
    case accepted
    /// A different entity than the one cached: the cached one was invalidated.
    case changed(previous: ContentInformation)
}

/// A use of one resource of a ``RangeCache``: while held, the resource is not evicted.
/// Every read, preload and prefetch holds one, and releases it when it ends.
///
/// Owned by the one task of its read: `entry` changes (``renew()``) under the cache's
/// lock and only on that task; `released` is that task's (and its deinit's, after it).
final class ResourceLease: @unchecked Sendable {
    let cache: RangeCache
    let url: URL
    private(set) var entry: CacheEntry
    private var released = false

    init(cache: RangeCache, entry: CacheEntry, url: URL) {
        self.cache = cache
        self.entry = entry
        self.url = url
    }

    deinit {
        if !released { cache.release(entry) }
    }

    func release() {
        guard !released else { return }
        released = true
        cache.release(entry)
    }

    var metadata: CacheMetadata? { cache.withLock { entry.metadata } }

    /// The metadata, and the lease released.
    func metadataAndRelease() -> CacheMetadata? {
        defer { release() }
        return metadata
    }

    /// Whether the resource was invalidated (changed at the origin, removed) since the lease began.
    var isInvalidated: Bool { cache.withLock { entry.isInvalidated } }

    /// Where the byte at `position` is.
    func lookup(_ position: Int64) -> SpanLookup {
        cache.withLock {
            if let span = entry.span(containing: position) {
                return .cached(
                    path: cache.directoryPath(for: entry) + "/" + span.name,
                    fileOffset: position - span.offset, available: span.end - position
                )
            }
            for writer in entry.writers where !writer.isFinished {
                if let partial = writer.partialName, writer.segmentStart <= position, position < writer.writtenEnd {
                    return .written(
                        path: cache.directoryPath(for: entry) + "/" + partial,
                        fileOffset: position - writer.segmentStart, available: writer.writtenEnd - position
                    )
                }
            }
            for writer in entry.writers where !writer.isFinished {
                if writer.start <= position, position < (writer.limit ?? Int64.max), writer.writtenEnd <= position {
                    return .pending(writer)
                }
            }
            var end = entry.nextKnownStart(after: position)
            if let length = entry.metadata?.length { end = min(end ?? length, length) }
            return .hole(end: end)
        }
    }

    /// The outcome of claiming a range for a fetch.
    struct Claim {
        /// The writer to store through; `nil` when not storing.
        var writer: SpanWriter?
        /// Where the hole at the position ends (the next known bytes, or the length).
        var holeEnd: Int64?
        /// Another writer owns the position (and `takeOver` was not asked for).
        var blocked: Bool
    }

    /// Claims the range from `position` for a fetch. With `takeOver`, a writer that owns
    /// `position` but has not reached it gives up everything from `position` on.
    func prepareFetch(at position: Int64, takeOver: Bool, priority: SpanWriter.Priority) -> Claim {
        cache.withLock {
            var blocked = false
            for writer in entry.writers where !writer.isFinished {
                if writer.start <= position, position < (writer.limit ?? Int64.max), writer.writtenEnd <= position {
                    if takeOver {
                        writer.limit = position
                    } else {
                        blocked = true
                    }
                }
            }
            var holeEnd = entry.nextKnownStart(after: position)
            if let length = entry.metadata?.length { holeEnd = min(holeEnd ?? length, length) }
            if blocked { return Claim(writer: nil, holeEnd: holeEnd, blocked: true) }
            guard cache.isStoringLocked, !entry.isInvalidated, entry.span(containing: position) == nil,
                  entry.area == .media || cache.tempHasRoomLocked() else {
                return Claim(writer: nil, holeEnd: holeEnd, blocked: false)
            }
            let writer = SpanWriter(cache: cache, entry: entry, start: position, limit: holeEnd, priority: priority)
            entry.writers.append(writer)
            return Claim(writer: writer, holeEnd: holeEnd, blocked: false)
        }
    }

    /// Checks what an origin response says about the resource against what is cached,
    /// recording it when nothing is. A different entity invalidates the cached resource,
    /// and the lease moves to a fresh, empty entry for the new one.
    func reconcile(_ information: ContentInformation) -> Reconciliation {
        cache.withLock { () -> Reconciliation in
            if let metadata = entry.metadata, !entry.isInvalidated {
                if metadata.isDifferentEntity(from: information) {
                    let previous = metadata.information
                    cache.invalidateLocked(entry)
                    cache.noteInvalidationLocked()
                    return .changed(previous: previous)
                }
                if metadata.length == nil, let length = information.length {
                    var updated = metadata
                    updated.length = length
                    entry.metadata = updated
                    cache.persistMetadataLocked(entry, sync: cache.configuration.syncWrites)
                }
                return .accepted
            }
            if entry.isInvalidated {
                return .changed(previous: entry.metadata?.information ?? information)
            }
            let metadata = CacheMetadata(key: entry.key, url: url, information: information, now: cache.configuration.now())
            cache.adoptMetadataLocked(entry, metadata)
            return .accepted
        }
    }

    /// Moves the lease to the entry now in the index for its URL (after an invalidation).
    func renew() {
        let next = cache.lease(url)
        let old = entry
        cache.withLock { entry = next.entry }
        // The new lease's count now belongs to this lease; the old entry's is given back.
        next.markTransferred()
        cache.release(old)
    }

    private func markTransferred() { released = true }

    /// Records the length found at the end of a read of unknown length.
    func recordLength(_ length: Int64) {
        cache.withLock {
            guard var metadata = entry.metadata, metadata.length == nil, !entry.isInvalidated else { return }
            metadata.length = length
            entry.metadata = metadata
            cache.persistMetadataLocked(entry, sync: cache.configuration.syncWrites)
            cache.completeIfPossibleLocked(entry)
        }
    }

    /// Records where the MP4 index starts when it follows the media data (`nil`: it does not).
    func recordLayout(indexOffset: Int64?) {
        cache.withLock {
            guard var metadata = entry.metadata, !metadata.layoutChecked, !entry.isInvalidated else { return }
            metadata.layoutChecked = true
            metadata.mp4IndexOffset = indexOffset
            entry.metadata = metadata
            cache.persistMetadataLocked(entry, sync: false)
        }
    }
}
