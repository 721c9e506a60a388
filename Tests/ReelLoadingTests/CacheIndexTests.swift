import Foundation
import ReelCore
@testable import ReelLoading
import Testing

/// The cache's index as a value: every event is run on a plain variable, and what it
/// asks the disk and the waiting reads to do is checked as returned — no thread, file,
/// clock or socket.
@Suite("Cache index")
struct CacheIndexTests {
    static let t0 = Date(timeIntervalSince1970: 1_000_000)
    static let url = URL(string: "https://example.test/a.mp4")!

    static func makeIndex(tempBytes: Int64 = 1 << 30, mediaBytes: Int64 = 1 << 30, maxAge: TimeInterval = 3600) -> CacheIndex {
        CacheIndex(tempLimit: .init(maxBytes: tempBytes, maxAge: maxAge),
                   mediaLimit: .init(maxBytes: mediaBytes, maxAge: maxAge), isReadOnly: false)
    }

    static func info(_ length: Int64?, tag: String = "\"1\"") -> ContentInformation {
        ContentInformation(length: length, entityTag: tag)
    }

    /// A lease on `name` whose metadata is recorded and whose directory exists.
    static func recorded(_ index: inout CacheIndex, _ name: String, length: Int64?, at now: Date = t0) -> CacheIndex.LeaseID {
        let lease = index.lease(name: name, key: name, now: now)
        let (outcome, effects) = index.reconcile(lease, info(length), url: url, now: now, sync: false)
        #expect(outcome == .accepted)
        guard case .createDirectory(let id)? = effects.disk.first else {
            Issue.record("a first response asks for the directory: \(effects)")
            return lease
        }
        index.directoryCreated(id)
        return lease
    }

    /// Stores `range` through a writer of its own, as one committed span.
    static func store(_ index: inout CacheIndex, _ lease: CacheIndex.LeaseID, _ range: Range<Int64>, at now: Date = t0) -> CacheIndex.Effects {
        let (claim, _) = index.claim(lease, at: range.lowerBound, takeOver: false, priority: .playback, now: now)
        guard let writer = claim.writer else {
            Issue.record("no writer for \(range)")
            return .none
        }
        index.partialCreated(writer, name: "p")
        _ = index.advance(writer, by: Int64(range.count))
        let plan = index.beginCommit(writer, length: Int64(range.count), digest: String(repeating: "0", count: 32))
        #expect(plan?.keep == true)
        if let plan { index.spanCommitted(writer, plan.span) }
        let effects = index.finish(writer, now: now)
        index.releaseWriterHandle(writer)
        return effects
    }

    // MARK: Leases and entries

    @Test func aLeaseMakesAnEntryAndTheLastReleaseOfAnEmptyOneForgetsIt() {
        var index = Self.makeIndex()
        let one = index.lease(name: "a", key: "a", now: Self.t0)
        let two = index.lease(name: "a", key: "a", now: Self.t0)
        #expect(index.entry(named: "a")?.leases == 2)
        let afterRelease1 = index.release(one, now: Self.t0)
        #expect(afterRelease1 == .none)
        let afterRelease2 = index.release(one, now: Self.t0)
        #expect(afterRelease2 == .none, "a second release does nothing")
        #expect(index.entry(named: "a")?.leases == 1)
        _ = index.release(two, now: Self.t0)
        #expect(index.entry(named: "a") == nil)
        #expect(index.entries.isEmpty)
    }

    @Test func theLastReleaseOfARecordedEntryWritesItsLastUse() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 100)
        let id = try #require(index.current["a"])
        let later = Self.t0.addingTimeInterval(60)
        let afterRelease = index.release(lease, now: later)
        #expect(afterRelease.disk == [.writeMetadata(id, sync: false)])
        #expect(index.entry(named: "a")?.metadata?.lastAccess == later.timeIntervalSince1970)
    }

    // MARK: Spans, writers and lookups

    @Test func lookupsFindSpansWrittenBytesPendingOnesAndHoles() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 1000)
        _ = Self.store(&index, lease, 600..<800)
        let lookup1 = index.lookup(lease, at: 0)
        #expect(lookup1 == .hole(end: 600), "a hole ends at the next span")
        let lookup2 = index.lookup(lease, at: 900)
        #expect(lookup2 == .hole(end: 1000), "or at the length")
        guard case .cached(_, "a", let file, 50, 150) = index.lookup(lease, at: 650) else {
            Issue.record("not in the span"); return
        }
        #expect(file == CachedSpan(offset: 600, length: 200, digest: String(repeating: "0", count: 32)).name)

        let (claim, _) = index.claim(lease, at: 100, takeOver: false, priority: .playback, now: Self.t0)
        let writer = try #require(claim.writer)
        #expect(claim.holeEnd == 600)
        let lookup3 = index.lookup(lease, at: 0)
        #expect(lookup3 == .hole(end: 100), "a writer's start ends a hole too")
        let lookup4 = index.lookup(lease, at: 150, retain: false)
        #expect(lookup4 == .pending(writer))
        index.partialCreated(writer, name: "100-x.partial")
        _ = index.advance(writer, by: 80)
        let lookup5 = index.lookup(lease, at: 120)
        #expect(lookup5 == .written(area: .temp, name: "a", file: "100-x.partial", fileOffset: 20, available: 60))
        let lookup6 = index.lookup(lease, at: 180, retain: false)
        #expect(lookup6 == .pending(writer))
        let lookup7 = index.lookup(lease, at: 650)
        #expect(lookup7 != .pending(writer), "its range ends at the span")

        // Committing turns the written bytes into a span; the next segment starts after them.
        let commitPlan = index.beginCommit(writer, length: 80, digest: String(repeating: "1", count: 32))
        let plan = try #require(commitPlan)
        #expect(plan.span == CachedSpan(offset: 100, length: 80, digest: String(repeating: "1", count: 32)))
        index.spanCommitted(writer, plan.span)
        guard case .cached(_, _, _, 20, 60) = index.lookup(lease, at: 120) else { Issue.record("not committed"); return }
        #expect(index.entry(named: "a")?.cachedRanges == [100..<180, 600..<800])
    }

    @Test func aDiscardedPartialFileTakesItsBytesBackFromReaders() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 1000)
        let claimed = index.claim(lease, at: 0, takeOver: false, priority: .playback, now: Self.t0)
        let writer = try #require(claimed.0.writer)
        index.partialCreated(writer, name: "0-x.partial")
        _ = index.advance(writer, by: 50)
        let discardedFile = index.discardPartial(writer)
        let discarded = try #require(discardedFile)
        #expect(discarded.file == "0-x.partial")
        let lookup = index.lookup(lease, at: 10, retain: false)
        #expect(lookup == .pending(writer))
        #expect(index.progress(of: writer)?.writtenEnd == 0)
    }

    @Test func oneWriterPerRangeUnlessTakenOver() throws {
        var index = Self.makeIndex()
        let one = Self.recorded(&index, "a", length: 1000)
        let two = index.lease(name: "a", key: "a", now: Self.t0)
        let claimed = index.claim(one, at: 0, takeOver: false, priority: .preload, now: Self.t0)
        let first = try #require(claimed.0.writer)
        let blocked = index.claim(two, at: 500, takeOver: false, priority: .playback, now: Self.t0).0
        #expect(blocked.blocked && blocked.writer == nil)
        let taken = index.claim(two, at: 500, takeOver: true, priority: .playback, now: Self.t0).0
        let second = try #require(taken.writer)
        #expect(index.progress(of: first)?.limit == 500, "the first writer now stops where the second starts")
        #expect(index.progress(of: second)?.limit == 1000)
        #expect(index.writeTarget(first)?.room == 500)
    }

    // MARK: Waiting for a writer

    @Test func progressWakesTheReadsWaitingForItOnce() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 1000)
        let claimed = index.claim(lease, at: 0, takeOver: false, priority: .playback, now: Self.t0)
        let writer = try #require(claimed.0.writer)
        let early = index.newWaiter(), later = index.newWaiter()
        let waits1 = index.registerWaiter(early, on: writer, beyond: 0)
        #expect(waits1)
        let waits2 = index.registerWaiter(later, on: writer, beyond: 0)
        #expect(waits2)
        let advanced1 = index.advance(writer, by: 10)
        #expect(advanced1.wake == [early, later])
        let advanced2 = index.advance(writer, by: 10)
        #expect(advanced2.wake == [], "each waiter is taken once")
        let removed = index.removeWaiter(early, from: writer)
        #expect(!removed, "its deadline finds it gone")
        let waits3 = index.registerWaiter(index.newWaiter(), on: writer, beyond: 15)
        #expect(!waits3, "bytes past the position: no wait")
    }

    @Test func aWaiterLeavesByItsDeadlineOrByTheWriterFinishing() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 1000)
        let claimed = index.claim(lease, at: 0, takeOver: false, priority: .playback, now: Self.t0)
        let writer = try #require(claimed.0.writer)
        let timedOut = index.newWaiter(), finished = index.newWaiter()
        let waits1 = index.registerWaiter(timedOut, on: writer, beyond: 0)
        #expect(waits1)
        let waits2 = index.registerWaiter(finished, on: writer, beyond: 0)
        #expect(waits2)
        let removed = index.removeWaiter(timedOut, from: writer)
        #expect(removed)
        #expect(!index.hasMoved(writer, beyond: 0, since: 0), "a writer that did not move stalled")
        let finishing = index.finish(writer, now: Self.t0)
        #expect(finishing.wake == [finished])
        #expect(index.hasMoved(writer, beyond: 0, since: 0), "a finished writer moved")
        let waits3 = index.registerWaiter(index.newWaiter(), on: writer, beyond: 0)
        #expect(!waits3, "nobody waits for a finished writer")
    }

    @Test func aLateWaiterSeesTheBytesThatCameBeforeItWaited() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 1000)
        let claimed = index.claim(lease, at: 0, takeOver: false, priority: .playback, now: Self.t0)
        let writer = try #require(claimed.0.writer)
        _ = index.advance(writer, by: 10)
        // The read saw the gap at 0 before the bytes came, and began to wait after.
        let waits = index.registerWaiter(index.newWaiter(), on: writer, beyond: 0)
        #expect(!waits)
        #expect(index.hasMoved(writer, beyond: 0, since: 10), "bytes past the position count as progress")
        #expect(!index.hasMoved(writer, beyond: 10, since: 10))
    }

    @Test func aFinishedWritersProgressStaysReadableUntilItsLastHandleGoes() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 1000)
        let claimed = index.claim(lease, at: 0, takeOver: false, priority: .playback, now: Self.t0)
        let writer = try #require(claimed.0.writer)
        guard case .pending(writer) = index.lookup(lease, at: 5) else { Issue.record("not pending"); return }
        _ = index.finish(writer, now: Self.t0)
        index.releaseWriterHandle(writer)
        #expect(index.progress(of: writer)?.isFinished == true, "the reader's handle still reads it")
        index.releaseWriterHandle(writer)
        #expect(index.progress(of: writer) == nil)
        #expect(index.entry(named: "a")?.writers == [])
    }

    // MARK: Entities, completion, eviction

    @Test func aDifferentEntityInvalidatesTheEntryAndRenewMovesTheLease() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 1000)
        _ = Self.store(&index, lease, 0..<100)
        let claimed = index.claim(lease, at: 100, takeOver: false, priority: .playback, now: Self.t0)
        let writer = try #require(claimed.0.writer)
        let waiter = index.newWaiter()
        let waits = index.registerWaiter(waiter, on: writer, beyond: 100)
        #expect(waits)
        let (outcome, effects) = index.reconcile(lease, Self.info(1000, tag: "\"2\""), url: Self.url, now: Self.t0, sync: false)
        #expect(outcome == .changed(previous: Self.info(1000)))
        #expect(effects.disk == [.moveToTrash(area: .temp, name: "a")])
        #expect(effects.wake == [waiter], "reads waiting for its writers wake")
        #expect(index.entry(named: "a") == nil)
        #expect(index.entry(of: lease)?.isInvalidated == true)
        #expect(index.writeTarget(writer)?.usable == false, "its writer stops")
        #expect(index.counters.invalidations == 1)

        _ = index.finish(writer, now: Self.t0)
        index.releaseWriterHandle(writer)
        _ = index.renew(lease, now: Self.t0)
        #expect(index.entry(of: lease)?.isInvalidated == false)
        #expect(index.entry(of: lease)?.spans == [])
        #expect(index.entries.count == 1, "the invalidated entry went with its last lease")
    }

    @Test func aCompleteResourceMovesToMediaWhenItsLastWriterFinishes() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 200)
        let id = try #require(index.current["a"])
        #expect(Self.store(&index, lease, 0..<100).disk == [])
        #expect(Self.store(&index, lease, 100..<200).disk == [.promote(id, name: "a")])
        #expect(index.entry(named: "a")?.area == .media)
        index.promotionFailed(id)
        #expect(index.entry(named: "a")?.area == .temp, "a failed move leaves it in temp/")
    }

    @Test func evictionTakesTheLeastRecentlyUsedAndNeverOneInUse() throws {
        var index = Self.makeIndex(tempBytes: 250)
        var lastEffects = CacheIndex.Effects()
        for (offset, name) in ["old", "held", "new"].enumerated() {
            let when = Self.t0.addingTimeInterval(Double(offset))
            let lease = Self.recorded(&index, name, length: 1000, at: when)
            lastEffects = Self.store(&index, lease, 0..<100, at: when)
            if name != "new" {
                #expect(lastEffects.disk == [], "\(name): within the limit")
            }
            if name != "held" { _ = index.release(lease, now: when) }
        }
        // The third span makes 300 bytes in temp/, 250 allowed: the writer's end trims,
        // and the least recently used one not in use goes; the held one stays.
        #expect(lastEffects.disk == [.moveToTrash(area: .temp, name: "old")])
        #expect(index.entry(named: "held") != nil && index.entry(named: "new") != nil)
        #expect(index.counters.evictions == 1)
        // Released last, the held one is now the most recently used: "new" goes before it.
        let heldLease = try #require(index.leases.first { index.entries[$0.value]?.name == "held" }?.key)
        _ = index.release(heldLease, now: Self.t0.addingTimeInterval(3))
        let more = Self.recorded(&index, "more", length: 1000, at: Self.t0.addingTimeInterval(5))
        let evicted = Self.store(&index, more, 0..<100, at: Self.t0.addingTimeInterval(5))
        #expect(evicted.disk == [.moveToTrash(area: .temp, name: "new")])
        #expect(index.entry(named: "held") != nil)
    }

    @Test func aLeaseKeepsAnEntryPastItsAgeAndItsReleaseLetsItGo() throws {
        var index = Self.makeIndex(maxAge: 60)
        let lease = Self.recorded(&index, "a", length: 1000)
        _ = Self.store(&index, lease, 0..<100)
        let trimmed1 = index.trim(now: Self.t0.addingTimeInterval(120))
        #expect(trimmed1.disk == [], "pinned")
        _ = index.release(lease, now: Self.t0)
        let trimmed2 = index.trim(now: Self.t0.addingTimeInterval(120))
        #expect(trimmed2.disk == [.moveToTrash(area: .temp, name: "a")])
        #expect(index.entries.isEmpty)
    }

    @Test func noRoomInTempEvictsBeforeAWriterIsGivenAndStopsStoringWhenAllIsInUse() throws {
        var index = Self.makeIndex(tempBytes: 100)
        let held = Self.recorded(&index, "held", length: 1000)
        _ = Self.store(&index, held, 0..<150)
        let other = Self.recorded(&index, "b", length: 1000)
        let (claim, effects) = index.claim(other, at: 0, takeOver: false, priority: .playback, now: Self.t0)
        #expect(claim.writer == nil && !claim.blocked, "temp/ is full of bytes in use: read without storing")
        #expect(effects == .none)
        _ = index.release(held, now: Self.t0)
        let (second, evicted) = index.claim(other, at: 0, takeOver: false, priority: .playback, now: Self.t0)
        #expect(second.writer != nil)
        #expect(evicted.disk == [.moveToTrash(area: .temp, name: "held")])
    }

    @Test func afterADiskFailureNothingIsWrittenOrClaimed() throws {
        var index = Self.makeIndex()
        let lease = Self.recorded(&index, "a", length: 1000)
        let stopped1 = index.stopStoring()
        #expect(stopped1)
        let stopped2 = index.stopStoring()
        #expect(!stopped2, "said once")
        let claimed = index.claim(lease, at: 0, takeOver: false, priority: .playback, now: Self.t0)
        #expect(claimed.0.writer == nil)
        let layoutRecorded = index.recordLayout(lease, indexOffset: 10)
        #expect(layoutRecorded == .none)
        let id = try #require(index.current["a"])
        #expect(index.metadataToWrite(id, creating: false) == nil)
    }

    @Test func recoveryLoadsWhatTheDiskHoldsAndMovesCompleteResourcesOn() throws {
        var index = Self.makeIndex()
        var metadata = CacheMetadata(key: "k", url: Self.url, information: Self.info(100), now: Self.t0)
        metadata.lastAccess = Self.t0.timeIntervalSince1970
        let span = CachedSpan(offset: 0, length: 100, digest: String(repeating: "2", count: 32))
        let effects = index.load([
            .init(name: "done", area: .temp, metadata: metadata, spans: [span]),
            .init(name: "part", area: .temp, metadata: metadata, spans: []),
        ])
        let done = try #require(index.current["done"])
        #expect(effects.disk == [.promote(done, name: "done")])
        #expect(index.entry(named: "part")?.area == .temp)
        #expect(index.entry(named: "done")?.hasDirectory == true)
    }
}
