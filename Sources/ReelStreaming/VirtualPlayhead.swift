/// Where a player that reads what the segment scheduler fetched is thought to be, for the
/// adaptive rule's "seconds buffered": it plays at 1× from the first delivery and, when the
/// fetching falls behind it (the buffer ran dry: the player stalled), it waits for the next
/// delivery. A value the scheduler updates with each delivery; the caller gives the time.
public struct VirtualPlayhead: Sendable, Hashable {
    /// When the playhead would have been at 0, had it never stalled (`nil`: nothing delivered).
    public private(set) var origin: Double?
    /// Seconds of media delivered.
    public private(set) var delivered: Double = 0
    /// Seconds the player is thought to have waited for media.
    public private(set) var stalled: Double = 0

    public init() {}

    /// Records `seconds` of media delivered at `now`.
    public mutating func deliver(_ seconds: Double, at now: Double) {
        if let origin {
            let position = now - origin
            if position > delivered {
                // It ran dry: the player waited from `delivered` until now.
                stalled += position - delivered
                self.origin = now - delivered
            }
        } else {
            origin = now
        }
        delivered += max(0, seconds)
    }

    /// The playhead at `now`, in seconds of media.
    public func position(at now: Double) -> Double {
        guard let origin else { return 0 }
        return min(delivered, max(0, now - origin))
    }

    /// Seconds delivered ahead of the playhead at `now`.
    public func buffered(at now: Double) -> Double {
        delivered - position(at: now)
    }
}
