import Foundation
import ReelCore
internal import ReelDigest
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A handle on one writer's progress in the cache's index: what a read that found the
/// writer owning its next byte looks at and waits on. The progress itself (written end,
/// limit, waiters) is a value in the ``CacheIndex``; the handle holds only its ID, and
/// the index keeps a finished writer's progress until its last handle goes.
final class WriterHandle: Sendable {
    let cache: RangeCache
    let id: CacheIndex.WriterID
    let start: Int64
    let priority: SpanWriter.Priority

    /// Takes over one handle count the index already holds for it (``CacheIndex/claim``
    /// or ``CacheIndex/lookup(_:at:retain:)``).
    init(cache: RangeCache, id: CacheIndex.WriterID, start: Int64, priority: SpanWriter.Priority) {
        self.cache = cache
        self.id = id
        self.start = start
        self.priority = priority
    }

    deinit { cache.withState { $0.index.releaseWriterHandle(id) } }

    func limitSnapshot() -> Int64? { cache.withState { $0.index.progress(of: id)?.limit } }
    func writtenEndSnapshot() -> Int64 { cache.withState { $0.index.progress(of: id)?.writtenEnd } ?? start }

    /// Waits until bytes past `position` are written, the writer finishes, or `timeout`
    /// passes on the cache's clock (``RangeCache/Configuration/clock``). Returns whether
    /// the writer moved (wrote or finished) or already had bytes past `position`.
    ///
    /// The condition is checked and the waiter registered under the cache's lock, which
    /// `append`, `finish` and invalidation take to move the writer and take its waiters;
    /// the waiter then leaves the index once — taken by one of those, by the clock's
    /// wake-up, or by the task's cancellation — and whoever takes it resumes it.
    func waitForProgress(beyond position: Int64, timeout: Duration) async -> Bool {
        let (waiter, startEnd) = cache.withState { ($0.index.newWaiter(), $0.index.progress(of: id)?.writtenEnd ?? start) }
        let (seconds, attoseconds) = timeout.components
        let delay = MediaTime(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let timer = Mutex<ScheduledAction?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // `Task.isCancelled` is set before the cancellation handler runs, and the
                // handler takes the same lock: a cancellation is seen here or finds the waiter.
                let registered = cache.withState { state -> Bool in
                    guard !Task.isCancelled, state.index.registerWaiter(waiter, on: id, beyond: position) else { return false }
                    state.waiters[waiter] = continuation
                    return true
                }
                guard registered else {
                    continuation.resume()
                    return
                }
                // Weak: a host clock keeps a cancelled wake-up until its deadline, and the
                // cache must not outlive its users by a stall timeout.
                let action = cache.configuration.clock.schedule(after: delay) { [weak cache, id] in
                    cache?.resumeWaiter(waiter, of: id)
                }
                timer.withTrackedLock { $0 = action }
            }
        } onCancel: {
            cache.resumeWaiter(waiter, of: id)
        }
        timer.withTrackedLock { $0 }?.cancel()
        // Bytes past `position` count even when they were written before this call began
        // (a reader that saw the gap and got here late): the wait was not a stall.
        return cache.withState { $0.index.hasMoved(id, beyond: position, since: startEnd) }
    }
}

/// The one writer of a range of a cached resource: it owns `start ..< limit` until it
/// finishes, and no one else writes those bytes. Bytes go into a `.partial` file; every
/// ``RangeCache/Configuration/segmentSize`` bytes (and at the end) the file is synced and
/// renamed to a span named by its offset, length and MD5, which is when it becomes part
/// of the cache on disk. Until then other readers in this process may read the written
/// bytes from the partial file (the index knows they were written in order and in full),
/// but a restart discards it.
///
/// `append`, `finish` and `abandon` are called by the one task that owns the writer. Its
/// progress, which other reads look at, is in the cache's index (``handle``).
final class SpanWriter: Sendable {
    /// Who is writing: playback and index prefetches are waited for; preloads give way.
    enum Priority: Sendable { case playback, preload }

    /// The partial file being written and the digest of its bytes: the writing task's
    /// own. The mutex is never contended (one task writes); it makes the state the
    /// handle's without `@unchecked`.
    private struct Segment {
        var descriptor: Int32 = -1
        var hasher = Hasher()
        var length: Int64 = 0
    }

    /// The MD5 context of the segment (not copyable, so boxed to live in `Segment`).
    private final class Hasher {
        var md5 = MD5()
    }

    let handle: WriterHandle
    private let segment = Mutex(Segment())

    var cache: RangeCache { handle.cache }
    var id: CacheIndex.WriterID { handle.id }
    var start: Int64 { handle.start }
    var priority: Priority { handle.priority }

    init(handle: WriterHandle) {
        self.handle = handle
    }

    /// A writer dropped without `finish` gives its range up (its partial file discarded).
    deinit {
        let open = segment.withTrackedLock { segment -> Bool in segment.descriptor >= 0 }
        if open { abandonSegment(reason: nil) }
        let finished = cache.withState { $0.index.progress(of: id)?.isFinished ?? true }
        if !finished { cache.writerFinished(id) }
    }

    func limitSnapshot() -> Int64? { handle.limitSnapshot() }
    func writtenEndSnapshot() -> Int64 { handle.writtenEndSnapshot() }

    func waitForProgress(beyond position: Int64, timeout: Duration) async -> Bool {
        await handle.waitForProgress(beyond: position, timeout: timeout)
    }

    /// Stores the next bytes (they must follow the ones before). Returns how many were
    /// stored; fewer than given means the writer has stopped (its limit reached, the
    /// resource invalidated, or the disk failed) and is finished.
    func append(_ data: Data) -> Int {
        guard !data.isEmpty else { return 0 }
        guard let target = cache.withState({ $0.index.writeTarget(id) }), target.usable else {
            abandonSegment(reason: nil)
            finish()
            return 0
        }
        let count = Int(min(Int64(data.count), target.room ?? Int64.max))
        guard count > 0 else {
            finish()
            return 0
        }
        let bytes = count == data.count ? data : data.prefix(count)
        let directory = cache.directoryPath(area: target.area, name: target.name)
        let outcome = segment.withTrackedLock { segment -> Result<Int64, POSIXError> in
            do throws(POSIXError) {
                if segment.descriptor < 0 {
                    let name = CacheLayout.partialName(offset: target.segmentStart)
                    segment.descriptor = try POSIXFile.createExclusive(directory + "/" + name)
                    cache.withState { $0.index.partialCreated(id, name: name) }
                }
                if let code = cache.configuration.faults?.beforeWrite(bytes.count) {
                    throw POSIXError(call: "write", path: directory, code: code)
                }
                try POSIXFile.writeAll(segment.descriptor, bytes, path: directory)
            } catch {
                return .failure(error)
            }
            segment.hasher.md5.update(bytes)
            segment.length += Int64(count)
            return .success(segment.length)
        }
        guard case .success(let segmentLength) = outcome else {
            if case .failure(let error) = outcome { abandonSegment(reason: error) }
            finish()
            return 0
        }
        cache.writerAdvanced(id, by: Int64(count))
        if segmentLength >= Int64(cache.configuration.segmentSize) {
            commitSegment()
        }
        if count < data.count {
            finish()
        }
        return count
    }

    /// Commits what was written and gives the range up. Safe to call more than once.
    func finish() {
        commitSegment()
        cache.writerFinished(id)
    }

    /// Throws away the segment being written (an error, or bytes that must not be kept)
    /// and gives the range up.
    func abandon() {
        abandonSegment(reason: nil)
        cache.writerFinished(id)
    }

    /// Syncs the partial file and renames it to its span name.
    private func commitSegment() {
        enum Step { case nothing, abandon, commit(fd: Int32, length: Int64, digest: String) }
        let step = segment.withTrackedLock { segment -> Step in
            guard segment.descriptor >= 0 else { return .nothing }
            guard segment.length > 0 else { return .abandon }
            let step = Step.commit(fd: segment.descriptor, length: segment.length, digest: segment.hasher.md5.finalize())
            segment.descriptor = -1
            segment.length = 0
            return step
        }
        switch step {
        case .nothing:
            return
        case .abandon:
            abandonSegment(reason: nil)
        case .commit(let fd, let length, let digest):
            var syncError: POSIXError?
            if cache.configuration.syncWrites {
                do { try POSIXFile.sync(fd, path: "span") } catch { syncError = error }
            }
            close(fd)
            cache.commitSegment(of: id, length: length, digest: digest, failure: syncError)
        }
    }

    private func abandonSegment(reason: POSIXError?) {
        segment.withTrackedLock { segment in
            if segment.descriptor >= 0 {
                close(segment.descriptor)
                segment.descriptor = -1
            }
            segment.hasher.md5.reset()
            segment.length = 0
        }
        cache.discardPartial(of: id, reason: reason)
    }
}
