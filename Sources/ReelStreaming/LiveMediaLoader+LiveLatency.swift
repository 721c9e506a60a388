import Foundation
import ReelCore

/// What a live stream's reader knows of its edge and its join, for the player that holds the
/// target offset (``LiveLatencyReporting``).
extension LiveMediaLoader: LiveLatencyReporting {
    public func liveEdge(of url: URL) -> LiveEdgeReport? {
        guard let (sections, now) = running(url), let edge = sections.liveEdge(now: now()) else { return nil }
        return LiveEdgeReport(newest: edge.newest, age: edge.age, target: edge.holdBack)
    }

    public func presentationStart(of url: URL, firstDecoded time: Double) -> Double? {
        guard let (sections, now) = running(url) else { return nil }
        return sections.presentationStart(firstDecoded: time, now: now())
    }
}
