import Foundation

/// A committed span of a cached resource: bytes `offset ..< offset + length`, in the
/// file `name` of the resource's directory.
struct CachedSpan: Sendable, Hashable {
    var offset: Int64
    var length: Int64
    var digest: String
    var end: Int64 { offset + length }
    var name: String { CacheLayout.spanName(offset: offset, length: length, digest: digest) }
}

/// One resource in the ``CacheIndex``: a plain value, changed only by the index's events.
struct CacheEntry: Sendable, Equatable {
    /// The directory name (MD5 of the key).
    let name: String
    let key: String
    var area: RangeCache.Area
    var metadata: CacheMetadata?
    /// Committed spans, sorted by offset, never overlapping.
    var spans: [CachedSpan] = []
    /// Writers storing bytes of it now, in the order they began.
    var writers: [CacheIndex.WriterID] = []
    /// Leases (reads, writes, preloads) held on it: it is not evicted while this is above 0.
    var leases = 0
    var lastAccess: Date
    /// Set when the resource changed at the origin (or was removed): its bytes must not be
    /// served any more, and its writers stop.
    var isInvalidated = false
    /// Whether its directory (with `meta.json`) exists on disk.
    var hasDirectory = false

    init(name: String, key: String, area: RangeCache.Area, lastAccess: Date) {
        self.name = name
        self.key = key
        self.area = area
        self.lastAccess = lastAccess
    }

    /// Bytes in committed spans.
    var bytes: Int64 { spans.reduce(0) { $0 + $1.length } }

    var isInUse: Bool { leases > 0 || !writers.isEmpty }

    /// Whether every byte of a resource of known length is in committed spans.
    var isComplete: Bool {
        guard let length = metadata?.length else { return false }
        var covered: Int64 = 0
        for span in spans {
            if span.offset > covered { return false }
            covered = max(covered, span.end)
        }
        return covered >= length
    }

    /// The committed span holding `position`, if any.
    func span(containing position: Int64) -> CachedSpan? {
        // Spans are few per resource (one per segment); a linear scan is plenty.
        spans.first { $0.offset <= position && position < $0.end }
    }

    mutating func insert(_ span: CachedSpan) {
        let index = spans.firstIndex { $0.offset > span.offset } ?? spans.endIndex
        spans.insert(span, at: index)
    }

    /// The ranges held, merged where spans touch.
    var cachedRanges: [Range<Int64>] {
        var result: [Range<Int64>] = []
        for span in spans {
            if let last = result.last, last.upperBound >= span.offset {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, span.end)
            } else {
                result.append(span.offset..<span.end)
            }
        }
        return result
    }
}

/// How far one writer has got: a plain value in the ``CacheIndex``, keyed by its ID.
struct WriterProgress: Sendable, Equatable {
    let entry: CacheIndex.EntryID
    let start: Int64
    let priority: SpanWriter.Priority
    /// One past the last byte written (to a span or the partial file).
    var writtenEnd: Int64
    /// Where the writer must stop storing; `nil` for the end of the resource. Another
    /// reader may move it down to where it wants to fetch itself (never below `writtenEnd`).
    var limit: Int64?
    /// Where the partial file's bytes start.
    var segmentStart: Int64
    /// The partial file's name, once created.
    var partialName: String?
    var isFinished = false
    /// Reads waiting for this writer to move, in the order they began to wait.
    var waiters: [CacheIndex.WaiterID] = []

    /// Whether the writer owns `position` and has not written it yet.
    func owns(_ position: Int64) -> Bool {
        !isFinished && start <= position && position < (limit ?? Int64.max) && writtenEnd <= position
    }
}
