/// Which queued frame to show at a media time, and which to drop as late —
/// ffplay's rule: a frame is dropped when the frame after it is already due (it
/// would be on screen for no time at all); otherwise the due frame is shown, even
/// a little late. Frames are never shown out of order.
public enum FrameSelection {
    /// For frames queued in presentation order with times `pts`, at media time `now`:
    /// how many to drop from the front, and whether the next one (after the drops)
    /// is due. `slack` lets a frame count as due slightly early.
    public static func select(pts: [MediaTime], now: MediaTime, slack: MediaTime = .zero) -> (drop: Int, presentNext: Bool) {
        var drop = 0
        while pts.count - drop >= 2, pts[drop + 1] <= now {
            drop += 1
        }
        guard drop < pts.count else { return (drop, false) }
        return (drop, pts[drop] <= now + slack)
    }
}
