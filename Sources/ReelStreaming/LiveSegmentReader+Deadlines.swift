import Foundation
import ReelCore

/// The watchdogs of a live stream: a blocking reload held past what a server may hold one,
/// and a segment, part or init section that does not arrive in time.
extension LiveSegmentReader {
    /// How long a blocking reload may go unanswered: a server holds one for at most three
    /// target durations (RFC 8216bis §6.2.5.2), and a second more is allowed for the way;
    /// never past ``maximumBlockingWait`` and its second (the loader's own response timeout is
    /// longer, and would retry).
    public func blockingDeadline(targetDuration: Double) -> Double {
        min(3 * targetDuration, maximumBlockingWait) + 1
    }

    /// How long a live segment or part may take to arrive: three target durations and a second,
    /// as a blocking reload, and never less than ``minimumArrivalDeadline``. A segment that
    /// takes longer has let the player run dry for two target durations at least, and one that
    /// never ends (a body that trickles for ever, a response that stalls) would otherwise hold
    /// the stream for the loader's timeouts and retries, or for ever. The floor keeps a starved
    /// machine from being taken for a stalled origin (``minimumArrivalDeadline``).
    public func liveArrivalDeadline(targetDuration: Double) -> Double {
        max(3 * targetDuration + 1, minimumArrivalDeadline)
    }

    /// `read`'s bytes; a live one (`live`) fails as ``Failure/notArrived(what:url:seconds:)`` when
    /// ``watchdog`` has waited out ``liveArrivalDeadline(targetDuration:)`` first.
    func arrival(of url: URL, what: String, live: Bool, targetDuration: Double,
                         _ read: @escaping @Sendable () async throws -> Data) async throws -> Data {
        guard live, arrivalDeadlines, targetDuration > 0 else { return try await read() }
        let deadline = liveArrivalDeadline(targetDuration: targetDuration)
        guard let bytes = try await firstOf(read, orNilAfter: deadline) else {
            throw Failure.notArrived(what: what, url: url, seconds: deadline)
        }
        return bytes
    }

    /// `body`'s result, or `nil` when ``watchdog`` waited out `seconds` first (`body` is then
    /// cancelled).
    func firstOf<T: Sendable>(_ body: @escaping @Sendable () async throws -> T,
                                      orNilAfter seconds: Double) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask { [watchdog] in
                try await watchdog(seconds)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Loads the playlist as `reload` asks into the run's tracker; whether it listed something
    /// new, or `nil` for a blocking reload left unanswered past its deadline (given up: the
    /// tracker is as it was).
    func load(_ reload: LivePlaylistTracker.Reload, state: inout Run, stored: Bool) async throws -> Bool? {
        let url = reload.url(for: variants[state.rank].playlist)
        guard reload.blockingSequence != nil else { return try await load(url, into: &state.tracker, stored: stored) }
        let tracker = state.tracker
        let answer = try await firstOf({ [self] in
            var tracker = tracker
            let changed = try await load(url, into: &tracker, stored: false)
            return (tracker, changed)
        }, orNilAfter: blockingDeadline(targetDuration: state.tracker.targetDuration))
        guard let answer else { return nil }
        state.tracker = answer.0
        return answer.1
    }
}
