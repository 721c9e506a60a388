@testable import ReelCore
import Foundation
import Testing

@Suite struct LightHistogramTests {
    /// The sorted list's value at index `total · 999 / 1000`, as the peak meter chose it before.
    static func sortedPercentile(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, sorted.count * 999 / 1000)]
    }

    @Test func percentileIsTheSortedOnesWithinABucket() throws {
        var generator = SplitMix(seed: 7)
        var histogram = LightHistogram()
        let half = 0.5 / Double(LightHistogram.bucketCount - 1)
        for count in [1, 2, 999, 1000, 1001, 10_000, 12_345] {
            // Mostly mid-tones, a bright tail, and a few hot pixels above it.
            let codes = (0..<count).map { i -> Double in
                let u = generator.unit()
                return i % 97 == 0 ? 0.9 + 0.1 * u : 0.2 + 0.5 * u * u
            }
            histogram.reset()
            #expect(histogram.total == 0 && histogram.percentilePQ(0.999) == nil)
            for code in codes { histogram.add(pq: Float(code)) }
            #expect(histogram.total == count)
            let expected = Self.sortedPercentile(codes)
            let found = try #require(histogram.percentilePQ(0.999))
            #expect(abs(found - expected) <= half + 1e-6, "\(count) samples: \(found) against \(expected)")
            // In nits, the same bucket.
            histogram.reset()
            for code in codes { histogram.add(nits: Float(PQ.eotf(code))) }
            let fromNits = try #require(histogram.percentilePQ(0.999))
            #expect(abs(fromNits - expected) <= half + 1e-6, "\(count) samples by nits: \(fromNits) against \(expected)")
        }
    }

    @Test func extremesAndOtherFractions() {
        var histogram = LightHistogram()
        for _ in 0..<10 { histogram.add(pq: -1) }
        for _ in 0..<10 { histogram.add(pq: 2) }
        #expect(histogram.percentilePQ(0) == 0)
        #expect(histogram.percentilePQ(0.5) == 1)
        #expect(histogram.percentilePQ(0.45) == 0)
        #expect(histogram.percentile(1) == 10_000)
        // A reset forgets, and the next frame's counts stand alone.
        histogram.reset()
        histogram.add(nits: 1000)
        #expect(abs(histogram.percentile(0.999)! - 1000) / 1000 < 0.02)
    }
}
