import Foundation

/// What the network is thought to carry, in bits per second.
public struct BandwidthEstimate: Sendable, Hashable, CustomStringConvertible {
    public enum Source: Sendable, Hashable {
        /// Nothing measured and no initial estimate: nothing is known.
        case unknown
        /// The configured initial estimate (not enough measured yet).
        case initial
        /// The sliding percentile of measured transfers.
        case measured
        /// What an earlier process measured, kept in the cache directory, `age` seconds old
        /// (and discounted for it).
        case saved(age: Double)
    }

    /// `nil` when nothing is known.
    public var bitsPerSecond: Int64?
    public var source: Source
    /// Samples taken so far (each the bytes of one or more overlapping transfers over their time).
    public var samples: Int

    public init(bitsPerSecond: Int64?, source: Source, samples: Int = 0) {
        self.bitsPerSecond = bitsPerSecond
        self.source = source
        self.samples = samples
    }

    public static let unknown = BandwidthEstimate(bitsPerSecond: nil, source: .unknown)

    public var description: String {
        guard let bitsPerSecond else { return "unknown" }
        switch source {
        case .unknown, .initial: return "\(bitsPerSecond) b/s (initial)"
        case .measured: return "\(bitsPerSecond) b/s (\(samples) samples)"
        case .saved(let age): return "\(bitsPerSecond) b/s (saved \(Int(age)) s ago)"
        }
    }
}

/// Something that knows a bandwidth estimate (a ``BandwidthMeter``, or a fixed one in tests).
public protocol BandwidthEstimating: Sendable {
    var bandwidthEstimate: BandwidthEstimate { get }
}

/// A fixed estimate (for tests and `--bandwidth`).
public struct FixedBandwidth: BandwidthEstimating {
    public let bandwidthEstimate: BandwidthEstimate
    public init(bitsPerSecond: Int64?) {
        bandwidthEstimate = bitsPerSecond.map { BandwidthEstimate(bitsPerSecond: $0, source: .initial) } ?? .unknown
    }
}
