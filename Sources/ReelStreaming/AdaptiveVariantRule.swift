import Foundation

/// The rule that decides, at each segment boundary, which variant the next segment comes
/// from: the bandwidth estimate and the buffer together, as Media3's
/// `AdaptiveTrackSelection` does, with a panic step for a buffer about to run dry (the
/// estimate lags a link that just fell). Pure value code: the segment scheduler asks it.
///
/// - **Up** only to a variant whose bandwidth fits `safetyFraction` × the estimate, and only
///   with at least `minimumBufferToStepUp` seconds buffered (a higher variant's first
///   segment takes longer: the buffer pays for it).
/// - **Down** when the current variant no longer fits `keepFraction` × the estimate, unless
///   `maximumBufferToStepDown` seconds or more are buffered (there is time to see whether the
///   drop lasts) — to the highest that fits `safetyFraction`.
/// - **Panic**: with less than `panicBuffer` seconds buffered and the last segment's own
///   throughput below what the current variant needs, down to the highest that fits
///   `safetyFraction` of that throughput.
/// - Otherwise it keeps the current one. The gap between `safetyFraction` (to go up) and
///   `keepFraction` (to stay) is the hysteresis: on a steady link the choice does not move.
public struct AdaptiveVariantRule: Sendable, Hashable {
    /// The part of the estimate a variant may use to be chosen (Media3: 0.7).
    public var safetyFraction: Double
    /// The part of the estimate the current variant may use and still be kept.
    public var keepFraction: Double
    /// Seconds buffered before a step up (Media3: 10; short clips need less).
    public var minimumBufferToStepUp: Double
    /// Seconds buffered at and above which a drop in the estimate does not step down yet
    /// (Media3: 25).
    public var maximumBufferToStepDown: Double
    /// Seconds buffered below which the last segment's throughput alone can step down.
    public var panicBuffer: Double

    public init(safetyFraction: Double = 0.7, keepFraction: Double = 0.85, minimumBufferToStepUp: Double = 4,
                maximumBufferToStepDown: Double = 15, panicBuffer: Double = 2) {
        self.safetyFraction = safetyFraction
        self.keepFraction = max(keepFraction, safetyFraction)
        self.minimumBufferToStepUp = minimumBufferToStepUp
        self.maximumBufferToStepDown = maximumBufferToStepDown
        self.panicBuffer = panicBuffer
    }

    /// What the rule decided, and why.
    public struct Decision: Sendable, Hashable, CustomStringConvertible {
        public enum Reason: Sendable, Hashable {
            /// The current variant still fits the estimate (or nothing is known).
            case keep
            /// A higher variant fits, but too little is buffered to pay for the step yet.
            case holdUpForBuffer
            /// The current variant no longer fits, but enough is buffered to wait.
            case holdDownForBuffer
            /// A higher variant fits the estimate and enough is buffered.
            case up
            /// The current variant no longer fits the estimate.
            case down
            /// The buffer is nearly dry and the last segment came slower than the variant plays.
            case panic
        }

        /// The rank to fetch the next segment from (0 is the lowest bandwidth).
        public var rank: Int
        public var reason: Reason
        /// The bandwidth the rule compared against, bits per second (`nil`: nothing known).
        public var basis: Int64?
        /// Seconds buffered when it decided.
        public var buffered: Double

        /// Whether it changes variant.
        public func isSwitch(from current: Int) -> Bool { rank != current }

        public var description: String {
            let basisText = basis.map { "\($0) b/s" } ?? "no estimate"
            let bufferText = String(format: "%.1f s buffered", buffered)
            switch reason {
            case .keep: return "kept: it fits the estimate (\(basisText), \(bufferText))"
            case .holdUpForBuffer: return "kept: a higher variant fits \(basisText) but only \(bufferText)"
            case .holdDownForBuffer: return "kept: it no longer fits \(basisText) but \(bufferText)"
            case .up: return "up: fits the estimate \(basisText) with \(bufferText)"
            case .down: return "down: the estimate \(basisText) no longer carries it (\(bufferText))"
            case .panic: return "down: \(bufferText) and the last segment came at \(basisText)"
            }
        }
    }

    /// Decides for a ladder of `bandwidths` sorted from lowest to highest (not empty), the
    /// current `rank`, the `estimate` (bits per second, `nil` when unknown), the seconds
    /// `buffered` ahead of the playhead, and the last segment's own throughput, if known.
    public func decide(bandwidths: [Int64], current: Int, estimate: Int64?, buffered: Double,
                       lastThroughput: Int64? = nil) -> Decision {
        precondition(!bandwidths.isEmpty, "nothing to choose from")
        let current = min(max(current, 0), bandwidths.count - 1)
        func highestFitting(_ budget: Double) -> Int {
            bandwidths.lastIndex { Double($0) <= budget } ?? 0
        }
        let need = Double(bandwidths[current])
        if buffered < panicBuffer, current > 0, let lastThroughput, Double(lastThroughput) < need {
            let target = min(highestFitting(Double(lastThroughput) * safetyFraction), current - 1)
            return Decision(rank: target, reason: .panic, basis: lastThroughput, buffered: buffered)
        }
        guard let estimate, estimate > 0 else {
            return Decision(rank: current, reason: .keep, basis: nil, buffered: buffered)
        }
        let ideal = highestFitting(Double(estimate) * safetyFraction)
        if ideal > current {
            guard buffered >= minimumBufferToStepUp else {
                return Decision(rank: current, reason: .holdUpForBuffer, basis: estimate, buffered: buffered)
            }
            return Decision(rank: ideal, reason: .up, basis: estimate, buffered: buffered)
        }
        if need > Double(estimate) * keepFraction, ideal < current {
            guard buffered < maximumBufferToStepDown else {
                return Decision(rank: current, reason: .holdDownForBuffer, basis: estimate, buffered: buffered)
            }
            return Decision(rank: ideal, reason: .down, basis: estimate, buffered: buffered)
        }
        return Decision(rank: current, reason: .keep, basis: estimate, buffered: buffered)
    }
}
