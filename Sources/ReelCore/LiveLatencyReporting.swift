import Foundation

/// Where a live item's edge is, as the loader that schedules its segments knows it: the newest
/// media its latest playlist listed, placed on the stream's own clock, and how long ago that
/// playlist arrived; and the offset behind the edge the stream asks players to hold.
public struct LiveEdgeReport: Sendable, Hashable {
    /// The end of the newest listed media, in seconds on the stream's clock (the timestamps
    /// its frames carry).
    public var newest: Double
    /// Seconds since the playlist that listed it arrived.
    public var age: Double
    /// The offset to hold: `PART-HOLD-BACK` when playing parts, `HOLD-BACK`, three target
    /// durations, or the user's choice.
    public var target: Double

    public init(newest: Double, age: Double, target: Double) {
        self.newest = newest
        self.age = age
        self.target = target
    }
}

/// A loader that schedules live streams itself and joins them at their target offset: it says
/// where a live item's edge is (``liveEdge(of:)``) and where its presentation starts
/// (``presentationStart(of:firstDecoded:)``). Called on engine threads and observers' queues:
/// keep them short and never block.
public protocol LiveLatencyReporting: Sendable {
    /// Where the live item at `url` has its edge now; `nil` when it is not live or not placed yet.
    func liveEdge(of url: URL) -> LiveEdgeReport?

    /// The item's first frame was decoded with the timestamp `time` (seconds): the timestamp
    /// from which its frames are shown (those before it decoded, not shown), or `nil` to show
    /// from that frame. A live item joined at an independent part before its target offset
    /// answers where the target is now. Asked once per item, before any frame is shown.
    func presentationStart(of url: URL, firstDecoded time: Double) -> Double?
}
