import Foundation
import ReelCore

/// Where the byte at a position of a cached resource is, right now.
enum SpanLookup {
    /// In a committed span file: `available` bytes from `fileOffset` of `path`.
    case cached(path: String, fileOffset: Int64, available: Int64)
    /// Already written by a writer of this process, in its partial file.
    case written(path: String, fileOffset: Int64, available: Int64)
    /// A writer owns it and has not got there yet.
    case pending(WriterHandle)
    /// Nobody has it; the next known bytes start at `end` (`nil`: none before the end).
    case hole(end: Int64?)
}

/// What the cache made of the information an origin response carried.
typealias Reconciliation = CacheIndex.ReconcileOutcome

/// A use of one resource of a ``RangeCache``: while held, the resource is not evicted.
/// Every read, preload and prefetch holds one, and releases it when it ends.
///
/// A handle: the lease itself (which entry it pins) is a value in the cache's index,
/// keyed by ``id``; releasing it twice, or releasing it and then dropping it, is fine.
final class ResourceLease: Sendable {
    let cache: RangeCache
    let url: URL
    let id: CacheIndex.LeaseID

    init(cache: RangeCache, id: CacheIndex.LeaseID, url: URL) {
        self.cache = cache
        self.id = id
        self.url = url
    }

    deinit { cache.release(id) }

    func release() { cache.release(id) }

    var metadata: CacheMetadata? { cache.withState { $0.index.entry(of: id)?.metadata } }

    /// The metadata, and the lease released.
    func metadataAndRelease() -> CacheMetadata? {
        defer { release() }
        return metadata
    }

    /// Whether the resource was invalidated (changed at the origin, removed) since the lease began.
    var isInvalidated: Bool { cache.withState { $0.index.entry(of: id)?.isInvalidated ?? false } }

    /// Where the byte at `position` is.
    func lookup(_ position: Int64) -> SpanLookup {
        let (found, progress) = cache.withState { state -> (CacheIndex.Lookup, WriterProgress?) in
            let found = state.index.lookup(id, at: position)
            guard case .pending(let writer) = found else { return (found, nil) }
            return (found, state.index.progress(of: writer))
        }
        switch found {
        case .cached(let area, let name, let file, let fileOffset, let available):
            return .cached(path: cache.directoryPath(area: area, name: name) + "/" + file, fileOffset: fileOffset, available: available)
        case .written(let area, let name, let file, let fileOffset, let available):
            return .written(path: cache.directoryPath(area: area, name: name) + "/" + file, fileOffset: fileOffset, available: available)
        case .pending(let writer):
            return .pending(WriterHandle(cache: cache, id: writer, start: progress?.start ?? position,
                                         priority: progress?.priority ?? .playback))
        case .hole(let end):
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
        let now = cache.configuration.now()
        let claim = cache.change { index in
            index.claim(id, at: position, takeOver: takeOver, priority: priority, now: now)
        }
        let writer = claim.writer.map {
            SpanWriter(handle: WriterHandle(cache: cache, id: $0, start: position, priority: priority))
        }
        return Claim(writer: writer, holeEnd: claim.holeEnd, blocked: claim.blocked)
    }

    /// Checks what an origin response says about the resource against what is cached,
    /// recording it when nothing is. A different entity invalidates the cached resource
    /// (the lease still holds it: ``renew()`` moves it to a fresh entry).
    func reconcile(_ information: ContentInformation) -> Reconciliation {
        let now = cache.configuration.now()
        let sync = cache.configuration.syncWrites
        return cache.change { index in index.reconcile(id, information, url: url, now: now, sync: sync) }
    }

    /// Moves the lease to the entry now in the index for its URL (after an invalidation).
    func renew() {
        if cache.isReadOnly {
            // As a new lease would: a read-only cache first looks at what the writer left.
            cache.refreshFromDisk(name: CacheLayout.directoryName(forKey: cache.configuration.cacheKey(url)))
        }
        let now = cache.configuration.now()
        cache.change { index in ((), index.renew(id, now: now)) }
    }

    /// Records the length found at the end of a read of unknown length.
    func recordLength(_ length: Int64) {
        let sync = cache.configuration.syncWrites
        cache.change { index in ((), index.recordLength(id, length, sync: sync)) }
    }

    /// Records where the MP4 index starts when it follows the media data (`nil`: it does not).
    func recordLayout(indexOffset: Int64?) {
        cache.change { index in ((), index.recordLayout(id, indexOffset: indexOffset)) }
    }
}
