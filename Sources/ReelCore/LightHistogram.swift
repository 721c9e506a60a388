import Foundation

/// How many of a frame's samples fall at each light level, in ``bucketCount`` equal steps of PQ
/// (a perceptual scale: 1/1024 of PQ is about 1 % of light near 1000 nits): what ``ScenePeak``
/// is fed, a percentile of it. Counting is O(1) a sample and the storage is fixed, so one
/// histogram serves every frame of a stream (``reset()`` between frames).
public struct LightHistogram: Sendable {
    /// Buckets over PQ 0…1.
    public static let bucketCount = 1024

    @usableFromInline var counts: [UInt32]
    @usableFromInline var counted = 0

    /// Samples counted since the last reset.
    public var total: Int { counted }

    public init() {
        counts = [UInt32](repeating: 0, count: Self.bucketCount)
    }

    /// Forgets every sample (the storage stays).
    public mutating func reset() {
        guard counted > 0 else { return }
        counts.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        counted = 0
    }

    /// The bucket of PQ code `code` (clamped to 0…1).
    @inlinable
    public static func bucket(pq code: Float) -> Int {
        Int(min(max(code, 0), 1) * Float(bucketCount - 1) + 0.5)
    }

    /// Counts a sample whose light has PQ code `code`.
    public mutating func add(pq code: Float) {
        add(bucket: Self.bucket(pq: code))
    }

    /// Counts a sample whose light is `nits`.
    public mutating func add(nits: Float) {
        add(bucket: Self.bucket(nits: nits))
    }

    /// Counts a sample in `bucket` (clamped to 0..<``bucketCount``).
    @inlinable
    public mutating func add(bucket: Int) {
        counts[min(max(bucket, 0), Self.bucketCount - 1)] &+= 1
        counted += 1
    }

    /// The PQ code of the light that `fraction` (0…1) of the samples stay at or under: the
    /// centre of the bucket that holds the sample a sorted list would have at index
    /// `total · fraction` (within half a bucket of it). Nil when nothing was counted.
    public func percentilePQ(_ fraction: Double) -> Double? {
        guard total > 0 else { return nil }
        // In millionths, so 0.999 of 10 000 is index 9990 exactly, as `total * 999 / 1000` is.
        let millionths = Int((min(max(fraction, 0), 1) * 1_000_000).rounded())
        let index = min(total - 1, total * millionths / 1_000_000)
        var seen = 0
        for (bucket, count) in counts.enumerated() {
            seen += Int(count)
            if seen > index { return Double(bucket) / Double(Self.bucketCount - 1) }
        }
        return 1
    }

    /// ``percentilePQ(_:)`` as light in nits.
    public func percentile(_ fraction: Double) -> Double? {
        percentilePQ(fraction).map(PQ.eotf)
    }

    /// The bucket of light `nits`: PQ by a table over √(nits / 10 000) (4096 points, nearest),
    /// which keeps every bucket above a few nits exact to within its own width.
    @inlinable
    public static func bucket(nits: Float) -> Int {
        let u = (min(max(nits, 0), 10_000) / 10_000).squareRoot()
        return Int(bucketOfRoot[Int(u * Float(rootCount - 1) + 0.5)])
    }

    @usableFromInline static let rootCount = 4096
    /// The bucket of light `10 000 · (i / (rootCount − 1))²`.
    @usableFromInline static let bucketOfRoot: [UInt16] = (0..<rootCount).map { i in
        let u = Double(i) / Double(rootCount - 1)
        return UInt16(bucket(pq: Float(PQ.inverseEOTF(u * u * 10_000))))
    }
}
