import Foundation
import ReelCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The one writer of a range of a cached resource: it owns `start ..< limit` until it
/// finishes, and no one else writes those bytes. Bytes go into a `.partial` file; every
/// ``RangeCache/Configuration/segmentSize`` bytes (and at the end) the file is synced and
/// renamed to a span named by its offset, length and MD5, which is when it becomes part
/// of the cache on disk. Until then other readers in this process may read the written
/// bytes from the partial file (the index knows they were written in order and in full),
/// but a restart discards it.
///
/// `append`, `finish` and `abandon` are called by the one task that owns the writer;
/// the fields marked "guarded" are read by others under the cache's lock.
final class SpanWriter: @unchecked Sendable {
    /// Who is writing: playback and index prefetches are waited for; preloads give way.
    enum Priority: Sendable { case playback, preload }

    // Strong: a writer outlives nothing but its own task (it leaves the index when it finishes).
    let cache: RangeCache
    let entry: CacheEntry
    let start: Int64
    let priority: Priority

    // Guarded by the cache's lock.
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
    /// Reads waiting for this writer to move (``waitForProgress(beyond:timeout:)``).
    private var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]

    // Owned by the writing task.
    private var descriptor: Int32 = -1
    private var hasher = MD5()
    private var segmentLength: Int64 = 0
    private var bytesStored: Int64 = 0

    init(cache: RangeCache, entry: CacheEntry, start: Int64, limit: Int64?, priority: Priority) {
        self.cache = cache
        self.entry = entry
        self.start = start
        self.writtenEnd = start
        self.segmentStart = start
        self.limit = limit
        self.priority = priority
    }

    /// Stores the next bytes (they must follow the ones before). Returns how many were
    /// stored; fewer than given means the writer has stopped (its limit reached, the
    /// resource invalidated, or the disk failed) and is finished.
    func append(_ data: Data) -> Int {
        guard !data.isEmpty else { return 0 }
        let (room, directory, usable) = cache.withLock { () -> (Int64?, String, Bool) in
            (limit.map { $0 - writtenEnd }, cache.directoryPath(for: entry),
             !isFinished && !entry.isInvalidated && entry.hasDirectory && cache.isStoringLocked)
        }
        guard usable else {
            abandonSegment(reason: nil)
            finish()
            return 0
        }
        let count = Int(min(Int64(data.count), room ?? Int64.max))
        guard count > 0 else {
            finish()
            return 0
        }
        let bytes = count == data.count ? data : data.prefix(count)
        do {
            if descriptor < 0 {
                let name = CacheLayout.partialName(offset: segmentStart)
                descriptor = try POSIXFile.createExclusive(directory + "/" + name)
                cache.withLock { partialName = name }
            }
            if let code = cache.configuration.faults?.beforeWrite(bytes.count) {
                throw POSIXError(call: "write", path: directory + "/" + (cache.withLock { partialName } ?? "?"), code: code)
            }
            try POSIXFile.writeAll(descriptor, bytes, path: directory)
        } catch {
            abandonSegment(reason: error)
            finish()
            return 0
        }
        hasher.update(bytes)
        segmentLength += Int64(count)
        bytesStored += Int64(count)
        let toWake = cache.withLock { () -> [CheckedContinuation<Void, Never>] in
            writtenEnd += Int64(count)
            return takeWaitersLocked()
        }
        toWake.forEach { $0.resume() }
        cache.noteStored(count)
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
        cache.writerFinished(self)
    }

    /// Throws away the segment being written (an error, or bytes that must not be kept)
    /// and gives the range up.
    func abandon() {
        abandonSegment(reason: nil)
        cache.writerFinished(self)
    }

    /// Syncs the partial file and renames it to its span name.
    private func commitSegment() {
        guard descriptor >= 0 else { return }
        guard segmentLength > 0 else {
            abandonSegment(reason: nil)
            return
        }
        let fd = descriptor
        descriptor = -1
        var syncError: POSIXError?
        if cache.configuration.syncWrites {
            do { try POSIXFile.sync(fd, path: "span") } catch { syncError = error }
        }
        close(fd)
        let digest = hasher.finalize()
        let span = CachedSpan(offset: segmentStart, length: segmentLength, digest: digest)
        hasher.reset()
        segmentLength = 0
        cache.commit(span, from: self, failure: syncError)
    }

    private func abandonSegment(reason: (any Error)?) {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        hasher.reset()
        segmentLength = 0
        cache.discardPartial(of: self, reason: reason)
    }

    // MARK: Waiting for the writer

    /// Waits until bytes past `position` are written, the writer finishes, or `timeout`
    /// passes on the cache's clock (``RangeCache/Configuration/clock``). Returns whether
    /// the writer moved (wrote or finished) or already had bytes past `position`.
    ///
    /// The condition is checked and the waiter registered under the cache's lock, which
    /// `append`, `finish` and invalidation take to move the writer and take its waiters;
    /// the waiter then leaves the table once — taken by one of those, by the clock's
    /// wake-up, or by the task's cancellation — and whoever takes it resumes it.
    func waitForProgress(beyond position: Int64, timeout: Duration) async -> Bool {
        let id = UUID()
        let startEnd = cache.withLock { writtenEnd }
        let clock = cache.configuration.clock
        let (seconds, attoseconds) = timeout.components
        let delay = MediaTime(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let timer = Mutex<ScheduledAction?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // `Task.isCancelled` is set before the cancellation handler runs, and the
                // handler takes the same lock: a cancellation is seen here or finds the waiter.
                let ready = cache.withLock { () -> Bool in
                    if isFinished || writtenEnd > position || Task.isCancelled { return true }
                    waiters[id] = continuation
                    return false
                }
                if ready {
                    continuation.resume()
                    return
                }
                let action = clock.schedule(after: delay) { [weak self] in self?.resumeWaiter(id) }
                timer.withTrackedLock { $0 = action }
            }
        } onCancel: {
            self.resumeWaiter(id)
        }
        timer.withTrackedLock { $0 }?.cancel()
        // Bytes past `position` count even when they were written before this call began
        // (a reader that saw the gap and got here late): the wait was not a stall.
        return cache.withLock { isFinished || writtenEnd > position || writtenEnd != startEnd }
    }

    private func resumeWaiter(_ id: UUID) {
        let waiter = cache.withLock { waiters.removeValue(forKey: id) }
        waiter?.resume()
    }

    /// Must be called with the cache's lock held.
    func takeWaitersLocked() -> [CheckedContinuation<Void, Never>] {
        defer { waiters = [:] }
        return Array(waiters.values)
    }
}
