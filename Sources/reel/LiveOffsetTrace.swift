import Foundation
import ReelCore

extension TraceWriter {
    /// A live item's offset behind its edge, at one decision of the latency machine: the offset
    /// (seconds behind the estimated edge), the target, the speed it plays at after the
    /// decision, what it did (`speed`, or `hold` with why), the playhead and the edge on the
    /// stream's clock, and the wall clock (Unix seconds), so a test can place the playhead
    /// against an origin of its own.
    static func liveOffset(_ decision: LiveLatencyMachine.Decision, wallClock: Date = Date()) -> [String: Any] {
        func rounded(_ value: Double?) -> Any { value.map { ($0 * 1000).rounded() / 1000 } ?? NSNull() }
        var object: [String: Any] = [
            "type": "liveOffset", "offsetSeconds": rounded(decision.offset), "targetSeconds": rounded(decision.target),
            "speed": rounded(decision.speed), "edgeSeconds": rounded(decision.edge),
            "positionSeconds": rounded(decision.edge.flatMap { edge in decision.offset.map { edge - $0 } }),
            "wallClock": wallClock.timeIntervalSince1970,
        ]
        switch decision.action {
        case .speed: object["action"] = "speed"
        case .hold(let why):
            object["action"] = "hold"
            object["why"] = why.rawValue
        }
        return object
    }
}
