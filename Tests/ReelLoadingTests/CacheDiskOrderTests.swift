import Foundation
import ReelCore
@testable import ReelLoading
import ReelTestSupport
import Synchronization
import Testing

/// The cache once it exists, for a fault hook given before it does.
final class CacheSlot: Sendable {
    private let stored = Mutex<RangeCache?>(nil)
    func set(_ cache: RangeCache?) { stored.withTrackedLock { $0 = cache } }
    var cache: RangeCache? { stored.withTrackedLock { $0 } }
}

/// Writing `meta.json` (and its sync) leaves the cache's lock free: lookups and
/// statistics go on while it runs.
@Suite("Cache disk order")
struct CacheDiskOrderTests {
    @Test func metadataIsWrittenOutsideTheCachesLock() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let slot = CacheSlot()
        let answered = OutcomeBox()
        let cache = try makeTestCache(directory) { configuration in
            configuration.faults = .init(beforeMetadataWrite: {
                // Runs on the writing thread, right before the write. Another thread asks
                // the cache something that takes its lock: it must answer now.
                guard let cache = slot.cache, answered.value == nil else { return nil }
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    _ = cache.statistics
                    done.signal()
                }
                // A watchdog: a lock held across the write would hold this thread until the
                // wait gave up; a new thread on a starved core may take seconds to run.
                answered.set(done.wait(timeout: .now() + .seconds(Int(hangWatchdog.components.seconds))) == .success)
                return nil
            })
        }
        slot.set(cache)
        defer {
            slot.set(nil)
            cache.close()
        }
        let lease = cache.lease(fakeURL("meta"))
        // The first response creates the resource's directory and writes its metadata.
        #expect(lease.reconcile(ContentInformation(length: 10, entityTag: "\"m\"")) == .accepted)
        lease.release()
        #expect(answered.value == true, "the lock was free while meta.json was written")
        #expect(cache.summary(for: fakeURL("meta"))?.entityTag == "\"m\"")
    }
}
