/// Maps host time to media time while playing at a rate: the media time at one
/// host instant, and how fast media time moves from there. The player's clock and
/// the audio clock are both anchors; re-anchoring on play, pause, seek and rate
/// changes keeps the mapping continuous.
public struct TimelineAnchor: Sendable, Hashable {
    /// Media time at ``host``.
    public var media: MediaTime
    /// The host instant the anchor was taken.
    public var host: MediaTime
    /// Media seconds per host second while running.
    public var rate: Double
    /// Whether media time moves.
    public var isRunning: Bool

    public init(media: MediaTime, host: MediaTime, rate: Double, isRunning: Bool) {
        self.media = media
        self.host = host
        self.rate = rate
        self.isRunning = isRunning
    }

    /// Media time at host instant `now`.
    public func media(at now: MediaTime) -> MediaTime {
        guard isRunning, rate > 0, now != host else { return media }
        let elapsed = now - host
        if rate == 1 { return media + elapsed }
        return media + elapsed.multiplied(byFloat64: rate)
    }

    /// The host instant media time reaches `target` (now or in the past if it already has).
    /// `nil` when time is stopped and `target` is ahead.
    public func host(forMedia target: MediaTime) -> MediaTime? {
        if target <= media { return host - (media - target).multiplied(byFloat64: 1 / max(rate, 1e-9)) }
        guard isRunning, rate > 0 else { return nil }
        let ahead = target - media
        if rate == 1 { return host + ahead }
        return host + ahead.multiplied(byFloat64: 1 / rate)
    }

    /// The same timeline re-anchored at `now` (for a rate change or a pause).
    public func reanchored(at now: MediaTime, rate newRate: Double? = nil, running: Bool? = nil) -> TimelineAnchor {
        TimelineAnchor(media: media(at: now), host: now, rate: newRate ?? rate, isRunning: running ?? isRunning)
    }
}
