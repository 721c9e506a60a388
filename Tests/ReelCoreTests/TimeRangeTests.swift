import Foundation
import Testing

@testable import ReelCore

/// `value` whole seconds at timescale 1, in `epoch`.
private func s(_ value: Int64, epoch: Int64 = 0) -> MediaTime {
    MediaTime(value: value, timescale: 1, epoch: epoch)
}

/// The range `[start, end)` in whole seconds.
private func r(_ start: Int64, _ end: Int64, epoch: Int64 = 0) -> TimeRange {
    TimeRange(start: s(start, epoch: epoch), end: s(end, epoch: epoch))
}

@Suite("TimeRange")
struct TimeRangeTests {
    @Test func startAndDuration() {
        let range = TimeRange(start: s(2), duration: s(3))
        #expect(range.start == s(2) && range.duration == s(3))
        #expect(range.end == s(5))
        #expect(range.isValid && !range.isEmpty && !range.isIndefinite)
    }

    @Test func startAndEnd() {
        let range = TimeRange(start: MediaTime(value: 1, timescale: 3), end: MediaTime(value: 1, timescale: 2))
        #expect(range.duration.value == 1 && range.duration.timescale == 6)
        #expect(range.end == MediaTime(value: 1, timescale: 2))
        // End in the same non-zero epoch as the start: the duration is in epoch 0.
        let looped = TimeRange(start: s(1, epoch: 4), end: s(3, epoch: 4))
        #expect(looped.isValid && looped.duration == s(2) && looped.end == s(3, epoch: 4))
    }

    @Test func constants() {
        #expect(TimeRange.zero.isValid && TimeRange.zero.isEmpty)
        #expect(TimeRange.zero.start == .zero && TimeRange.zero.duration == .zero)
        #expect(!TimeRange.invalid.isValid && !TimeRange.invalid.isEmpty)
        #expect(!TimeRange.invalid.start.isValid && !TimeRange.invalid.duration.isValid)
    }

    @Test func validity() {
        #expect(!TimeRange(start: s(0), duration: s(-1)).isValid)  // negative duration
        #expect(!r(5, 2).isValid)
        #expect(!TimeRange(start: .invalid, duration: s(1)).isValid)
        #expect(!TimeRange(start: s(0), duration: .invalid).isValid)
        #expect(!TimeRange(start: s(0), duration: .negativeInfinity).isValid)
        #expect(TimeRange(start: s(0), duration: .positiveInfinity).isValid)
        #expect(TimeRange(start: .negativeInfinity, duration: s(1)).isValid)
        // A duration in a non-zero epoch makes an invalid range (as CMTimeRangeMake).
        #expect(!TimeRange(start: s(0), duration: s(1, epoch: 2)).isValid)
        // Start and end in different epochs.
        #expect(!TimeRange(start: s(0, epoch: 1), end: s(1, epoch: 2)).isValid)
        #expect(!TimeRange(start: s(0), end: s(1, epoch: 2)).isValid)
        // The end of an invalid range is invalid.
        #expect(!r(5, 2).end.isValid)
        #expect(!TimeRange.invalid.end.isValid)
    }

    @Test func emptyAndIndefinite() {
        #expect(r(3, 3).isEmpty)
        #expect(TimeRange(start: s(3), duration: MediaTime(value: 0, timescale: 90000)).isEmpty)
        #expect(!r(3, 4).isEmpty)
        #expect(!TimeRange(start: s(0), duration: s(-1)).isEmpty)
        let live = TimeRange(start: s(0), duration: .indefinite)
        #expect(live.isValid && live.isIndefinite && !live.isEmpty && live.end.isIndefinite)
        #expect(TimeRange(start: .indefinite, duration: s(1)).isIndefinite)
    }

    @Test func infiniteDuration() {
        let forever = TimeRange(start: s(0), duration: .positiveInfinity)
        #expect(forever.end.isPositiveInfinity)
        #expect(forever.contains(s(1_000_000)))
        #expect(!forever.contains(.positiveInfinity))
    }

    @Test func containsTime() {
        let range = r(2, 5)
        #expect(range.contains(s(2)))  // start is in
        #expect(range.contains(MediaTime(value: 49, timescale: 10)))
        #expect(!range.contains(s(5)))  // end is out
        #expect(!range.contains(range.end))
        #expect(!range.contains(MediaTime(value: 19, timescale: 10)))
        #expect(!range.contains(s(7)))
        #expect(range.contains(MediaTime(value: 9_999_999, timescale: 2_000_000)))  // exact, not Double
        #expect(!range.contains(MediaTime.invalid))
        #expect(!range.contains(.indefinite))
        #expect(!range.contains(.positiveInfinity))
        #expect(!range.contains(.negativeInfinity))
        #expect(!r(2, 2).contains(s(2)))  // empty
        #expect(!r(5, 2).contains(s(3)))  // invalid
        #expect(!TimeRange.invalid.contains(MediaTime.invalid))
    }

    @Test func containsTimeRespectsEpochs() {
        let range = r(2, 5, epoch: 1)
        #expect(range.contains(s(3, epoch: 1)))
        #expect(!range.contains(s(3)))
        #expect(!range.contains(s(3, epoch: 2)))
    }

    @Test func containsRange() {
        let range = r(0, 10)
        #expect(range.contains(r(2, 5)))
        #expect(range.contains(range))
        #expect(range.contains(r(0, 3)) && range.contains(r(7, 10)))
        #expect(!range.contains(r(5, 15)))
        #expect(!range.contains(r(-1, 3)))
        #expect(!range.contains(r(20, 30)))
        #expect(range.contains(r(4, 4)))  // an empty range inside
        #expect(!range.contains(r(11, 11)))
        #expect(!range.contains(r(5, 2)))  // invalid
        #expect(!r(5, 2).contains(r(3, 4)))
    }

    @Test func intersectionOfOverlappingRanges() {
        #expect(r(0, 10).intersection(r(5, 15)) == r(5, 10))
        #expect(r(5, 15).intersection(r(0, 10)) == r(5, 10))
        #expect(r(0, 10).intersection(r(2, 4)) == r(2, 4))
        let thirds = TimeRange(start: MediaTime(value: 1, timescale: 3), duration: s(1))
        let halves = TimeRange(start: MediaTime(value: 1, timescale: 2), duration: s(1))
        let overlap = thirds.intersection(halves)
        #expect(overlap.start == MediaTime(value: 1, timescale: 2))
        #expect(overlap.end == MediaTime(value: 4, timescale: 3))
    }

    @Test func intersectionOfDisjointRangesIsEmpty() {
        let disjoint = r(0, 2).intersection(r(5, 7))
        #expect(disjoint.isValid && disjoint.isEmpty)
        #expect(disjoint.start == s(5))
        let touching = r(0, 5).intersection(r(5, 10))
        #expect(touching.isEmpty && touching.start == s(5))
        #expect(r(5, 7).intersection(r(0, 2)).isEmpty)
    }

    @Test func intersectionWithInfinity() {
        let forever = TimeRange(start: s(0), duration: .positiveInfinity)
        #expect(forever.intersection(r(5, 10)) == r(5, 10))
        #expect(forever.intersection(r(-5, 10)) == r(0, 10))
    }

    @Test func intersectionNeedsValidRangesInOneEpoch() {
        #expect(!r(0, 10).intersection(r(5, 15, epoch: 1)).isValid)
        #expect(!r(0, 10).intersection(.invalid).isValid)
        #expect(!TimeRange.invalid.intersection(r(0, 10)).isValid)
        #expect(r(0, 10, epoch: 2).intersection(r(5, 15, epoch: 2)) == r(5, 10, epoch: 2))
    }

    @Test func union() {
        #expect(r(0, 10).union(r(5, 15)) == r(0, 15))
        #expect(r(0, 10).union(r(2, 4)) == r(0, 10))
        // Disjoint ranges: the smallest range covering both spans the gap.
        #expect(r(0, 2).union(r(5, 7)) == r(0, 7))
        #expect(r(5, 7).union(r(0, 2)) == r(0, 7))
        // An empty range counts by its position, as in Core Media.
        #expect(r(0, 1).union(r(5, 5)) == r(0, 5))
        let forever = TimeRange(start: s(0), duration: .positiveInfinity)
        let union = r(-5, 3).union(forever)
        #expect(union.start == s(-5) && union.duration.isPositiveInfinity)
    }

    @Test func unionNeedsValidRangesInOneEpoch() {
        #expect(!r(0, 10).union(r(5, 15, epoch: 1)).isValid)
        #expect(!r(0, 10).union(.invalid).isValid)
        #expect(!r(5, 2).union(r(0, 10)).isValid)
        #expect(r(0, 1, epoch: 3).union(r(2, 3, epoch: 3)) == r(0, 3, epoch: 3))
    }

    @Test func equalityAndHashingUseMediaTimeEquality() {
        let a = TimeRange(start: MediaTime(value: 1, timescale: 2), duration: MediaTime(value: 1, timescale: 2))
        let b = TimeRange(start: MediaTime(value: 2, timescale: 4), duration: MediaTime(value: 3, timescale: 6))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != TimeRange(start: MediaTime(value: 1, timescale: 2), duration: s(1)))
    }

    @Test func description() {
        #expect(r(0, 1).description == "{start: 0/1 (0.0000 s), duration: 1/1 (1.0000 s)}")
        #expect(TimeRange.invalid.description == "{start: invalid, duration: invalid}")
    }

    @Test func codable() throws {
        let range = TimeRange(start: MediaTime(value: 1001, timescale: 30000), duration: .positiveInfinity)
        let decoded = try JSONDecoder().decode(TimeRange.self, from: JSONEncoder().encode(range))
        #expect(decoded == range)
        let json = #"{"start": "1/2", "duration": "3/4"}"#
        let parsed = try JSONDecoder().decode(TimeRange.self, from: Data(json.utf8))
        #expect(parsed == TimeRange(start: MediaTime(value: 1, timescale: 2), duration: MediaTime(value: 3, timescale: 4)))
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(TimeRange.self, from: Data(#"{"start": "1/2", "duration": "3/0"}"#.utf8))
        }
    }
}
