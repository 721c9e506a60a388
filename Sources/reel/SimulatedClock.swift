import Foundation
import ReelCore
import ReelMedia
import ReelThreads

/// `--clock fast`: time jumps to the next thing due as soon as the pipeline has done
/// all it can, so playback runs as fast as decoding allows while every decision
/// (pacing, drops, the audio clock) is the one real time would make. Runs on a thread
/// of its own until `done` holds; returns a message when nothing progressed for 30 s.
func driveSimulatedClock(_ clock: ManualClock, player: Player, until done: @escaping @Sendable () -> Bool) async -> String? {
    await onOwnThread(named: "reel.simulation") {
        var idleSince: Date?
        while !done() {
            player.waitUntilSettled()
            if clock.runNext() {
                idleSince = nil
                continue
            }
            // Nothing scheduled: a real network may still be delivering.
            let now = Date()
            if let since = idleSince, now.timeIntervalSince(since) > 30 {
                return "playback made no progress for 30 s"
            }
            if idleSince == nil { idleSince = now }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return nil
    }
}
