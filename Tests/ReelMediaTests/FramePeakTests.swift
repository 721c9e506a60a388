import Foundation
import Testing
import ReelCore
import ReelLoading
@testable import ReelMedia
import ReelTestSupport

/// The peak meter's histogram and tables against the definition they stand for: every sample
/// of the same grid linearised exactly (`ColorMapping.linearise`), sorted, the value at 99.9 %.
@Suite(.enabled(if: HDRBars.isAvailable, "ffmpeg with zscale is needed to make the HDR bars"))
struct FramePeakTests {
    static func sortedPeak(_ frame: VideoFrame) -> Double {
        let reader = SampleReader(frame)
        let mapping = ColorMapping(transfer: frame.color.transfer, primaries: frame.color.primaries, sourcePeak: 10_000)
        let step = max(1, max(frame.width, frame.height) / FramePeak.grid)
        var values: [Double] = []
        frame.withPlanes { planes in
            for y in stride(from: step / 2, to: frame.height, by: step) {
                for x in stride(from: step / 2, to: frame.width, by: step) {
                    values.append(mapping.linearise(reader.rgb(planes, x: x, y: y)).max())
                }
            }
        }
        values.sort()
        return values[min(values.count - 1, values.count * 999 / 1000)]
    }

    @Test(arguments: [HDRBars.Kind.pq, .hlg])
    func measuresTheSortedPeakWithinABucket(kind: HDRBars.Kind) async throws {
        let (measured, sorted, again) = try await offThePool { () -> (Double?, Double, Double?) in
            let frame = try HDRColorTests.firstFrame(HDRBars.clip(kind))
            var meter = FramePeak()
            let first = meter.measure(frame)
            // The histogram is kept between frames: a second frame is measured afresh.
            return (first, Self.sortedPeak(frame), meter.measure(frame))
        }
        let peak = try #require(measured)
        print("Frame peak, \(kind) bars: \(peak) nits measured, \(sorted) sorted")
        #expect(again == measured)
        // Within one bucket (1/1024 of PQ) and the tables' error, which is far smaller.
        #expect(abs(PQ.inverseEOTF(peak) - PQ.inverseEOTF(sorted)) <= 1.0 / 1023, "\(kind): \(peak) against \(sorted)")
    }

    @Test func framesItCannotReadAreNotMeasured() async throws {
        let peak = try await offThePool { () -> Double? in
            var meter = FramePeak()
            return meter.measure(try HDRColorTests.firstFrame(HDRBars.clip(.sdr)))
        }
        #expect(peak == nil)
    }
}
