import Foundation
import ReelCore
import ReelMedia

/// Plays `item` on `player` until `seconds` of it have been shown, letting time pass through
/// `advance` (how long at most, and the condition to stop at); returns whether it got there.
/// The smallest useful thing an app does with Reel's `Player`: an app passes a real wait, a
/// test a ManualClockDriver.
public func playFirstSeconds(of item: PlayerItem, for seconds: Double, player: Player,
                             advance: (MediaTime, () -> Bool) async -> Bool) async -> Bool {
    player.replaceCurrentItem(with: item)
    player.play()
    let target = MediaTime(seconds: seconds, preferredTimescale: 600)
    return await advance(MediaTime(seconds: seconds + 2, preferredTimescale: 600)) { player.currentTime >= target }
}
