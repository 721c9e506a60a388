import Foundation
import Synchronization

/// How long an audio device's callbacks took: a summary of ``RealTimeTimings``.
public struct AudioCallbackStatistics: Sendable, Hashable, Codable {
    /// How many callbacks were recorded (since the timings were made or last reset).
    public var callbacks: Int
    /// The median in microseconds: half the callbacks took at most this long. A bucket's upper
    /// bound (5 µs buckets), capped at ``maxMicroseconds``; zero when none was recorded.
    public var p50Microseconds: Double
    /// The 99th percentile in microseconds: at most one callback in a hundred took longer. A
    /// bucket's upper bound (5 µs buckets), capped at ``maxMicroseconds``; zero when none was
    /// recorded.
    public var p99Microseconds: Double
    /// The longest callback in microseconds, exact (not bucketed); zero when none was recorded.
    public var maxMicroseconds: Double

    /// A summary with these values (``RealTimeTimings/statistics`` makes one from its histogram).
    public init(callbacks: Int, p50Microseconds: Double, p99Microseconds: Double, maxMicroseconds: Double) {
        self.callbacks = callbacks
        self.p50Microseconds = p50Microseconds
        self.p99Microseconds = p99Microseconds
        self.maxMicroseconds = maxMicroseconds
    }
}

/// Durations recorded by one real-time thread (an audio callback) without a lock or an
/// allocation: a histogram of atomic counters, written by that thread alone, read by anyone.
/// Buckets are 5 µs wide up to 2 ms, then one bucket for everything longer; the maximum is
/// kept exactly. Checked `Sendable`: every field is an atomic (the buckets an inline array of
/// them, part of the object: no pointer to share).
public final class RealTimeTimings: Sendable {
    static let bucketWidthNanos: Int64 = 5_000
    private typealias Buckets = InlineArray<401, Atomic<Int>>
    static let bucketCount = Buckets.count
    private let buckets = Buckets { _ in Atomic(0) }
    private let count = Atomic<Int>(0)
    private let maximum = Atomic<Int64>(0)

    /// Empty timings: nothing recorded yet. One thread records into them from then on (an
    /// audio output makes one for its device's callback); any thread may read ``statistics``.
    public init() {}

    /// The monotonic clock in nanoseconds (for timing a callback; real-time safe).
    public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Records one duration. Call from the one thread that records (real-time safe).
    public func record(nanoseconds: Int64) {
        let index = Int(min(Int64(Self.bucketCount - 1), max(0, nanoseconds) / Self.bucketWidthNanos))
        buckets[index].store(buckets[index].load(ordering: .relaxed) + 1, ordering: .relaxed)
        if nanoseconds > maximum.load(ordering: .relaxed) { maximum.store(nanoseconds, ordering: .relaxed) }
        count.store(count.load(ordering: .relaxed) + 1, ordering: .releasing)
    }

    /// Forgets what was recorded (call while nothing records).
    public func reset() {
        for i in 0..<Self.bucketCount { buckets[i].store(0, ordering: .relaxed) }
        maximum.store(0, ordering: .relaxed)
        count.store(0, ordering: .releasing)
    }

    /// A summary of what was recorded so far: the count, the median and 99th percentile (upper
    /// bounds of 5 µs buckets, capped at the maximum), and the exact maximum. Read from any
    /// thread while the real-time thread records: a callback being recorded at that moment may
    /// be left out.
    public var statistics: AudioCallbackStatistics {
        let total = count.load(ordering: .acquiring)
        let counts = (0..<Self.bucketCount).map { buckets[$0].load(ordering: .relaxed) }
        let maxMicros = Double(maximum.load(ordering: .relaxed)) / 1000
        func quantile(_ q: Double) -> Double {
            guard total > 0 else { return 0 }
            let rank = max(1, Int((q * Double(total)).rounded(.up)))
            var seen = 0
            for (i, c) in counts.enumerated() {
                seen += c
                if seen >= rank { return min(maxMicros, Double(Int64(i + 1) * Self.bucketWidthNanos) / 1000) }
            }
            return maxMicros
        }
        return AudioCallbackStatistics(callbacks: total, p50Microseconds: quantile(0.5), p99Microseconds: quantile(0.99),
                                       maxMicroseconds: maxMicros)
    }
}
