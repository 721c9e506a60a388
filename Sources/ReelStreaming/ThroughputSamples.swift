/// What the scheduler's own transfers say of the link: the last segment's throughput (the
/// adaptive rule's panic step looks at it) and an estimate from the last few, for before the
/// meter has one (it waits for 2 s of transfers or 512 KiB). A value: the reader records each
/// transfer, the switching rule reads it.
public struct ThroughputSamples: Sendable, Hashable {
    /// Transfers smaller than this measure the round trip more than the link: they set
    /// ``last`` but are not kept for the estimate.
    public static let minimumBytes = 16 << 10
    /// How many samples the estimate is taken over.
    public static let kept = 3

    /// The last transfer's throughput, bits per second.
    public private(set) var last: Int64?
    /// The last few samples kept for the estimate, oldest first.
    public private(set) var recent: [Int64] = []

    public init() {}

    /// A segment of `bytes` arrived in `seconds` (one that took under a millisecond says
    /// nothing of the link).
    public mutating func transferred(bytes: Int, seconds: Double) {
        guard seconds > 0.001 else { return }
        let throughput = Int64(Double(bytes * 8) / seconds)
        last = throughput
        if bytes >= Self.minimumBytes { keep(throughput) }
    }

    /// A segment was abandoned in flight at `throughput` bits per second: the rate seen is a
    /// sample whatever the bytes that came.
    public mutating func abandoned(at throughput: Int64) {
        last = throughput
        keep(throughput)
    }

    /// The harmonic mean of the samples kept (a slow one weighs most, as hls.js does), when
    /// there are two or more; else `nil`.
    public var estimate: Int64? {
        let positive = recent.filter { $0 > 0 }
        guard positive.count >= 2 else { return nil }
        return Int64(Double(positive.count) / positive.reduce(0) { $0 + 1 / Double($1) })
    }

    private mutating func keep(_ throughput: Int64) {
        recent = Array((recent + [throughput]).suffix(Self.kept))
    }
}
