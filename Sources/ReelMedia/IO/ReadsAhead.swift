import Foundation
import ReelCore
import Synchronization

/// The head start of an HLS or DASH item, in one place: reads of what the demuxer will open
/// next, started before it asks, side by side, through the item's loader and behind its door.
///
/// A read is started at most once for a URL and byte range, handed whole to the demuxer's
/// first open of the same URL and range (so nothing is read twice), and cancelled at the
/// item's close if the demuxer never took it. Who decides what to start: ``NestedIO`` when a
/// playlist has been read to its end, ``DASHAsHLS`` when it has translated the manifest; both
/// start through the item's one `ReadsAhead`, and ``NestedIO``'s opens take from it.
///
/// Threads: any; everything mutable is under one `Mutex`, and no read is started or cancelled
/// while it is held.
final class ReadsAhead: Sendable {
    /// A resource read ahead: its URL (as ``NestedAccessPolicy/admit(_:)`` gave it) and range.
    struct Key: Hashable {
        var url: String
        var offset: Int64
        var end: Int64?

        init(url: URL, offset: Int64, end: Int64?) {
            self.url = url.absoluteString
            self.offset = offset
            self.end = end
        }

        init(url: URL, range: ByteRange) {
            self.init(url: url, offset: range.offset, end: range.end)
        }
    }

    private struct State {
        /// Started and not yet taken.
        var waiting: [Key: ByteStream] = [:]
        /// Every read ever started: none starts twice, even after it was taken.
        var everStarted: Set<Key> = []
        var closed = false
    }

    private let state = Mutex(State())

    /// Starts reading `url` at `range` through `loader`, unless a read of the same was ever
    /// started or the item is closing. Whether it started.
    @discardableResult
    func start(_ url: URL, range: ByteRange, through loader: any ResourceLoader) -> Bool {
        let key = Key(url: url, range: range)
        let wanted = state.withTrackedLock { state -> Bool in
            guard !state.closed, !state.everStarted.contains(key) else { return false }
            state.everStarted.insert(key)
            return true
        }
        guard wanted else { return false }
        let stream = loader.read(url, range: range)
        let unused = state.withTrackedLock { state -> ByteStream? in
            if state.closed { return stream }
            state.waiting[key] = stream
            return nil
        }
        unused?.cancel()
        return unused == nil
    }

    /// The read started ahead for `url` from `offset` to `end`, taken (at most once).
    func take(_ url: URL, offset: Int64, end: Int64?) -> ByteStream? {
        let key = Key(url: url, offset: offset, end: end)
        return state.withTrackedLock { $0.waiting.removeValue(forKey: key) }
    }

    /// Cancels every read the demuxer did not take, and starts none after; how many there were
    /// (each was still a request).
    @discardableResult
    func close() -> Int {
        let unused = state.withTrackedLock { state -> [ByteStream] in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for stream in unused { stream.cancel() }
        return unused.count
    }

    deinit { close() }
}
