import Foundation
import ReelCore

/// A live stream's edge and join, asked by the playlist's URL, answered by its reader's stream.
extension HLSSchedulingLoader: LiveLatencyReporting {
    public func liveEdge(of url: URL) -> LiveEdgeReport? {
        stream(url).flatMap(live.liveEdge(of:))
    }

    public func presentationStart(of url: URL, firstDecoded time: Double) -> Double? {
        stream(url).flatMap { live.presentationStart(of: $0, firstDecoded: time) }
    }
}
