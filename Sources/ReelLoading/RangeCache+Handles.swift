import Foundation
import ReelCore
#if canImport(Glibc)
import Glibc
#endif

/// What leases (``ResourceLease``) and writers (``SpanWriter``) ask of the cache: each a
/// call of an index event under the lock, with its effects carried out after.
extension RangeCache {
    /// Registers a use of `url`'s entry: it is not evicted until the lease is released.
    func lease(_ url: URL) -> ResourceLease {
        let key = configuration.cacheKey(url)
        let name = CacheLayout.directoryName(forKey: key)
        if isReadOnly { refreshFromDisk(name: name) }
        let now = configuration.now()
        let id = withState { $0.index.lease(name: name, key: key, now: now) }
        return ResourceLease(cache: self, id: id, url: url)
    }

    /// Ends a use (a second call for the same lease does nothing).
    func release(_ lease: CacheIndex.LeaseID) {
        let now = configuration.now()
        change { index in ((), index.release(lease, now: now)) }
    }

    /// A writer wrote `count` more bytes: the reads waiting for it wake.
    func writerAdvanced(_ writer: CacheIndex.WriterID, by count: Int64) {
        let woken = withState { state in takeWaiters(state.index.advance(writer, by: count).wake, from: &state) }
        woken.forEach { $0.resume() }
    }

    /// A writer gave its range up.
    func writerFinished(_ writer: CacheIndex.WriterID) {
        let now = configuration.now()
        change { index in ((), index.finish(writer, now: now)) }
        purgeTrashInBackground()
    }

    /// A writer's segment is written and synced: its partial file is renamed to the span
    /// name in the critical section that adds the span to the index (a rename; the bytes
    /// and their sync came before), so a lookup finds either the partial file or the span.
    func commitSegment(of writer: CacheIndex.WriterID, length: Int64, digest: String, failure: POSIXError?) {
        let (leftover, error) = withState { state -> (String?, POSIXError?) in
            guard let plan = state.index.beginCommit(writer, length: length, digest: digest) else { return (nil, nil) }
            let directory = directoryPath(area: plan.area, name: plan.name)
            let partialPath = directory + "/" + plan.partial
            if let failure { return (partialPath, failure) }
            guard plan.keep else { return (partialPath, nil) }
            do throws(POSIXError) {
                try POSIXFile.rename(partialPath, directory + "/" + plan.span.name)
            } catch {
                return (partialPath, error)
            }
            state.index.spanCommitted(writer, plan.span)
            return (nil, nil)
        }
        if let leftover { POSIXFile.unlinkIfPresent(leftover) }
        if let error { stopStoring(error) }
    }

    /// A writer throws away its partial file (an error, or it stopped before committing).
    func discardPartial(of writer: CacheIndex.WriterID, reason: POSIXError?) {
        let partial = withState { $0.index.discardPartial(writer) }
        if let partial {
            POSIXFile.unlinkIfPresent(directoryPath(area: partial.area, name: partial.name) + "/" + partial.file)
        }
        if let reason { stopStoring(reason) }
    }

    /// Takes a waiting read out of the index (its deadline, its cancellation) and resumes
    /// it, unless its writer took it first.
    func resumeWaiter(_ waiter: CacheIndex.WaiterID, of writer: CacheIndex.WriterID) {
        let continuation = withState { state in
            state.index.removeWaiter(waiter, from: writer) ? state.waiters.removeValue(forKey: waiter) : nil
        }
        continuation?.resume()
    }
}
