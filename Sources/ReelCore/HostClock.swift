import Dispatch
import Foundation

/// The machine's monotonic clock (it never jumps with wall-clock changes), in
/// nanoseconds. Scheduled actions run in deadline order on one serial queue per instance
/// (``makeTimeline()`` makes another; every instance reads the same time).
public final class HostClock: EngineClock {
    /// One shared host clock; they all read the same time.
    public static let shared = HostClock()

    private let queue = DispatchQueue(label: "reel.host-clock", qos: .userInteractive)

    public init() {}

    /// Another host clock: the same time, its own serial queue.
    public func makeTimeline() -> any EngineClock { HostClock() }

    public var now: MediaTime {
        MediaTime(value: Int64(DispatchTime.now().uptimeNanoseconds), timescale: 1_000_000_000)
    }

    @discardableResult
    public func schedule(at deadline: MediaTime, _ action: @escaping @Sendable () -> Void) -> ScheduledAction {
        let scheduled = ScheduledAction()
        let nanos = deadline.convertScale(1_000_000_000).value
        let when = DispatchTime(uptimeNanoseconds: UInt64(max(1, nanos)))
        queue.asyncAfter(deadline: when) {
            if scheduled.claim() { action() }
        }
        return scheduled
    }
}
