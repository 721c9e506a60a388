import Foundation
import ReelCore
import ReelMedia

/// Drives a ``ManualClock`` deterministically: before each of the clock's actions runs,
/// every player has settled (done all it can without time moving). The same script then
/// gives the same result on every run, on an idle machine or a busy one.
///
/// ```swift
/// let driver = ManualClockDriver(clock: clock, players: [player])
/// player.play()
/// #expect(await driver.run(upTo: .seconds(2)) { player.timeControlStatus == .playing })
/// ```
///
/// It awaits; it never blocks the concurrency pool (settling waits on the pipelines' own queues).
public struct ManualClockDriver: Sendable {
    public let clock: ManualClock
    private let settle: @Sendable () async -> Void

    /// A driver that settles with `settle` before each action.
    public init(clock: ManualClock, settle: @escaping @Sendable () async -> Void) {
        self.clock = clock
        self.settle = settle
    }

    /// A driver that settles `players` before each action.
    public init(clock: ManualClock, players: [Player]) {
        self.init(clock: clock) {
            for player in players { await player.settled() }
        }
    }

    /// Lets everything settle without moving time.
    public func settled() async { await settle() }

    /// Runs the clock's actions one at a time, settling before each, until `condition` holds
    /// or `limit` of clock time has passed (time then stands at the limit). Returns whether
    /// `condition` held.
    @discardableResult
    public func run(upTo limit: MediaTime, until condition: () -> Bool = { false }) async -> Bool {
        let end = clock.now + limit
        while true {
            await settle()
            if condition() { return true }
            guard clock.runNext(notAfter: end) else { break }
        }
        await settle()
        return condition()
    }
}

extension MediaTime {
    /// `value` seconds, for scripts (microsecond precision).
    public static func seconds(_ value: Double) -> MediaTime {
        MediaTime(seconds: value, preferredTimescale: 1_000_000)
    }

    /// `value` milliseconds, for scripts.
    public static func milliseconds(_ value: Int64) -> MediaTime {
        MediaTime(value: value, timescale: 1000)
    }
}

