import Foundation

/// A writer's events: what the one task writing through it reports, and the reads that
/// wait for it.
extension CacheIndex {
    /// What a writer needs to know before it writes the next bytes.
    struct WriteTarget: Sendable, Equatable {
        /// Bytes it may still store (`nil`: up to the end of the resource).
        var room: Int64?
        var area: RangeCache.Area
        var name: String
        /// Where the partial file's bytes start (the offset in its name).
        var segmentStart: Int64
        /// Whether it may write at all (not finished, resource current, directory made, storing).
        var usable: Bool
    }

    func writeTarget(_ writer: WriterID) -> WriteTarget? {
        guard let progress = writers[writer], let entry = entries[progress.entry] else { return nil }
        return WriteTarget(
            room: progress.limit.map { $0 - progress.writtenEnd }, area: entry.area, name: entry.name,
            segmentStart: progress.segmentStart,
            usable: !progress.isFinished && !entry.isInvalidated && entry.hasDirectory && storing
        )
    }

    /// The writer created its partial file.
    mutating func partialCreated(_ writer: WriterID, name: String) {
        writers[writer]?.partialName = name
    }

    /// The writer wrote `count` more bytes: the reads waiting for it wake.
    mutating func advance(_ writer: WriterID, by count: Int64) -> Effects {
        guard writers[writer] != nil else { return .none }
        writers[writer]!.writtenEnd += count
        counters.bytesStored += count
        return Effects(wake: takeWaiters(of: writer))
    }

    /// Where a segment's partial file is to be renamed to its span name, if it is to be.
    struct CommitPlan: Sendable, Equatable {
        var area: RangeCache.Area
        var name: String
        var partial: String
        /// The span the partial file holds.
        var span: CachedSpan
        /// `false`: the partial file is only to be removed (resource gone, storing stopped).
        var keep: Bool
    }

    /// The writer's segment (`length` bytes whose MD5 is `digest`) is complete and synced:
    /// it becomes a span once its partial file is renamed (``spanCommitted(_:_:)``); the
    /// next segment starts at the written end.
    mutating func beginCommit(_ writer: WriterID, length: Int64, digest: String) -> CommitPlan? {
        guard var progress = writers[writer], let partial = progress.partialName,
              let entry = entries[progress.entry] else { return nil }
        let span = CachedSpan(offset: progress.segmentStart, length: length, digest: digest)
        progress.partialName = nil
        progress.segmentStart = progress.writtenEnd
        writers[writer] = progress
        return CommitPlan(area: entry.area, name: entry.name, partial: partial, span: span,
                          keep: !entry.isInvalidated && storing)
    }

    /// The span file exists: the span is part of the resource.
    mutating func spanCommitted(_ writer: WriterID, _ span: CachedSpan) {
        guard let id = writers[writer]?.entry, entries[id] != nil else { return }
        entries[id]!.insert(span)
    }

    /// The writer throws its partial file away; returns where it was. The bytes in it are
    /// no longer readable.
    mutating func discardPartial(_ writer: WriterID) -> (area: RangeCache.Area, name: String, file: String)? {
        guard var progress = writers[writer] else { return nil }
        let partial = progress.partialName
        progress.partialName = nil
        progress.writtenEnd = progress.segmentStart
        writers[writer] = progress
        guard let partial, let entry = entries[progress.entry] else { return nil }
        return (entry.area, entry.name, partial)
    }

    /// The writer gives its range up (safe to report twice): its waiters wake, a resource
    /// now complete moves to `media/`, and the limits are applied.
    mutating func finish(_ writer: WriterID, now: Date) -> Effects {
        guard let progress = writers[writer], !progress.isFinished else { return .none }
        writers[writer]!.isFinished = true
        var effects = Effects(wake: takeWaiters(of: writer))
        if entries[progress.entry] != nil {
            entries[progress.entry]!.writers.removeAll { $0 == writer }
            effects.add(completeIfPossible(progress.entry))
            dropIfUnreferenced(progress.entry)
        }
        effects.add(trim(now: now))
        forgetIfDone(writer)
        return effects
    }

    /// One more handle reads this writer's progress.
    mutating func retainWriter(_ writer: WriterID) {
        guard writers[writer] != nil else { return }
        writerHandles[writer, default: 0] += 1
    }

    /// A handle on this writer went; the last one of a finished writer forgets it.
    mutating func releaseWriterHandle(_ writer: WriterID) {
        guard let count = writerHandles[writer] else { return }
        writerHandles[writer] = count - 1
        forgetIfDone(writer)
    }

    private mutating func forgetIfDone(_ writer: WriterID) {
        guard writers[writer]?.isFinished == true, (writerHandles[writer] ?? 0) <= 0 else { return }
        writers[writer] = nil
        writerHandles[writer] = nil
    }

    // MARK: Waiting reads

    /// An ID for a read about to wait (known before it registers, so its cancellation
    /// can name it whenever it comes).
    mutating func newWaiter() -> WaiterID { WaiterID(raw: nextID()) }

    /// A read waits for bytes past `position`: `false` when it need not (the writer
    /// finished or already wrote past it), else it is registered until taken.
    mutating func registerWaiter(_ waiter: WaiterID, on writer: WriterID, beyond position: Int64) -> Bool {
        guard let progress = writers[writer], !progress.isFinished, progress.writtenEnd <= position else { return false }
        writers[writer]!.waiters.append(waiter)
        return true
    }

    /// Takes a waiter out (its deadline, its cancellation); `false` when it was taken already.
    mutating func removeWaiter(_ waiter: WaiterID, from writer: WriterID) -> Bool {
        guard let index = writers[writer]?.waiters.firstIndex(of: waiter) else { return false }
        writers[writer]!.waiters.remove(at: index)
        return true
    }

    mutating func takeWaiters(of writer: WriterID) -> [WaiterID] {
        guard let waiters = writers[writer]?.waiters, !waiters.isEmpty else { return [] }
        writers[writer]!.waiters = []
        return waiters
    }

    /// Whether the writer moved since `startEnd` or is past `position` (or finished).
    func hasMoved(_ writer: WriterID, beyond position: Int64, since startEnd: Int64) -> Bool {
        guard let progress = writers[writer] else { return true }
        return progress.isFinished || progress.writtenEnd > position || progress.writtenEnd != startEnd
    }
}
