import Foundation
import Testing

@testable import ReelCore

// Example tests for every MediaTime rule. Each expectation names the rule it pins down;
// the values are worked out by hand in the comments so that a broken rule fails here.

/// `value/timescale` with the given epoch, for brevity.
private func t(_ value: Int64, _ timescale: Int32, epoch: Int64 = 0) -> MediaTime {
    MediaTime(value: value, timescale: timescale, epoch: epoch)
}

/// A numeric time carrying the rounding flag: 1/6 to timescale 3 is 0.5 → 1/3, rounded.
private let roundedThird = t(1, 6).convertScale(3)

/// The five kinds of time, for tables of combinations.
enum TimeKind: String, CaseIterable, CustomStringConvertible {
    case numeric, positiveInfinity, negativeInfinity, indefinite, invalid
    var description: String { rawValue }

    var sample: MediaTime {
        switch self {
        case .numeric: t(3, 2)
        case .positiveInfinity: .positiveInfinity
        case .negativeInfinity: .negativeInfinity
        case .indefinite: .indefinite
        case .invalid: .invalid
        }
    }

    init(_ time: MediaTime) {
        if !time.isValid {
            self = .invalid
        } else if time.isPositiveInfinity {
            self = .positiveInfinity
        } else if time.isNegativeInfinity {
            self = .negativeInfinity
        } else if time.isIndefinite {
            self = .indefinite
        } else {
            #expect(time.isNumeric)
            self = .numeric
        }
    }
}

@Suite("MediaTime construction and inspection")
struct MediaTimeConstructionTests {
    @Test func valueTimescaleInitializerMakesAValidNumericTime() {
        let time = t(1001, 30000)
        #expect(time.value == 1001)
        #expect(time.timescale == 30000)
        #expect(time.epoch == 0)
        #expect(time.flags == .valid)
        #expect(time.isValid && time.isNumeric)
        #expect(!time.isIndefinite && !time.isPositiveInfinity && !time.isNegativeInfinity)
        #expect(!time.hasBeenRounded)
        #expect(t(1, 2, epoch: 7).epoch == 7)
    }

    @Test(arguments: [Int32(0), -1, .min])
    func nonPositiveTimescaleIsInvalid(timescale: Int32) {
        let time = MediaTime(value: 5, timescale: timescale)
        #expect(!time.isValid)
        #expect(!time.isNumeric)
    }

    @Test func constants() {
        #expect(MediaTime.zero.value == 0 && MediaTime.zero.timescale == 1)
        #expect(MediaTime.zero.isNumeric && MediaTime.zero.epoch == 0)
        #expect(MediaTime.maxTimescale == 0x7fff_ffff)

        #expect(MediaTime.invalid.flags == [])
        #expect(!MediaTime.invalid.isValid && !MediaTime.invalid.isNumeric)

        #expect(MediaTime.indefinite.isValid && MediaTime.indefinite.isIndefinite)
        #expect(!MediaTime.indefinite.isNumeric)

        #expect(MediaTime.positiveInfinity.isValid && MediaTime.positiveInfinity.isPositiveInfinity)
        #expect(!MediaTime.positiveInfinity.isNumeric && !MediaTime.positiveInfinity.isNegativeInfinity)

        #expect(MediaTime.negativeInfinity.isValid && MediaTime.negativeInfinity.isNegativeInfinity)
        #expect(!MediaTime.negativeInfinity.isNumeric && !MediaTime.negativeInfinity.isPositiveInfinity)
    }

    @Test func flagsHaveCoreMediaBitValues() {
        #expect(MediaTime.Flags.valid.rawValue == 1)
        #expect(MediaTime.Flags.hasBeenRounded.rawValue == 2)
        #expect(MediaTime.Flags.positiveInfinity.rawValue == 4)
        #expect(MediaTime.Flags.negativeInfinity.rawValue == 8)
        #expect(MediaTime.Flags.indefinite.rawValue == 16)
    }

    @Test func secondsOfEachKind() {
        #expect(t(1, 4).seconds == 0.25)
        #expect(t(-3, 2, epoch: 9).seconds == -1.5)
        #expect(MediaTime.invalid.seconds.isNaN)
        #expect(MediaTime.indefinite.seconds.isNaN)
        #expect(MediaTime.positiveInfinity.seconds == .infinity)
        #expect(MediaTime.negativeInfinity.seconds == -.infinity)
    }

    @Test func nanoseconds() {
        let time = MediaTime(nanoseconds: 1_500)
        #expect(time.value == 1_500 && time.timescale == 1_000_000_000 && time.flags == .valid)
    }

    @Test func hasBeenRoundedIsOnlyForNumericTimes() {
        #expect(roundedThird.hasBeenRounded)
        #expect(roundedThird.flags == [.valid, .hasBeenRounded])
        #expect(!t(1, 3).hasBeenRounded)
    }
}

@Suite("MediaTime(seconds:preferredTimescale:)")
struct MediaTimeSecondsInitializerTests {
    @Test func exactSeconds() {
        let time = MediaTime(seconds: 1.5, preferredTimescale: 600)
        #expect(time.value == 900 && time.timescale == 600 && time.flags == .valid && time.epoch == 0)
    }

    @Test func roundTripInDoubleIsNotRounded() {
        // 0.1 is not exactly 1/10 in binary, but 1.0 / 10.0 == 0.1: Core Media's test is the
        // round trip through seconds, so this is not marked as rounded.
        let time = MediaTime(seconds: 0.1, preferredTimescale: 10)
        #expect(time.value == 1 && time.timescale == 10)
        #expect(!time.hasBeenRounded)
    }

    @Test func inexactSecondsAreRoundedHalfAwayFromZero() {
        let third = MediaTime(seconds: 0.1, preferredTimescale: 3)  // 0.3 units → 0
        #expect(third.value == 0 && third.timescale == 3 && third.hasBeenRounded)

        let up = MediaTime(seconds: 2.5, preferredTimescale: 1)  // exactly 2.5 → 3
        #expect(up.value == 3 && up.hasBeenRounded)

        let down = MediaTime(seconds: -2.5, preferredTimescale: 1)  // exactly -2.5 → -3
        #expect(down.value == -3 && down.hasBeenRounded)

        let near = MediaTime(seconds: 2.4, preferredTimescale: 1)
        #expect(near.value == 2 && near.hasBeenRounded)

        let tiny = MediaTime(seconds: .leastNonzeroMagnitude, preferredTimescale: 1000)  // subnormal
        #expect(tiny.value == 0 && tiny.hasBeenRounded)
    }

    @Test func specialSecondsAndTimescales() {
        #expect(!MediaTime(seconds: .nan, preferredTimescale: 600).isValid)
        #expect(MediaTime(seconds: .infinity, preferredTimescale: 600).isPositiveInfinity)
        #expect(MediaTime(seconds: -.infinity, preferredTimescale: 600).isNegativeInfinity)
        #expect(!MediaTime(seconds: 1, preferredTimescale: 0).isValid)
        #expect(!MediaTime(seconds: 1, preferredTimescale: -600).isValid)
    }

    @Test func overflowHalvesTheTimescale() {
        // 1e10 s × (2^31 - 1) overflows Int64, and so does 1e10 × 1073741823;
        // 1e10 × 536870911 = 5368709110000000000 fits, exactly.
        let time = MediaTime(seconds: 1e10, preferredTimescale: MediaTime.maxTimescale)
        #expect(time.timescale == 536_870_911)
        #expect(time.value == 5_368_709_110_000_000_000)
        #expect(!time.hasBeenRounded)
    }

    @Test func overflowAtTimescaleOneIsInfinite() {
        #expect(MediaTime(seconds: 1e19, preferredTimescale: 1000).isPositiveInfinity)
        #expect(MediaTime(seconds: -1e19, preferredTimescale: 1000).isNegativeInfinity)
        #expect(MediaTime(seconds: 1e300, preferredTimescale: 1).isPositiveInfinity)
        #expect(MediaTime(seconds: -1e300, preferredTimescale: 1).isNegativeInfinity)
    }
}

@Suite("convertScale and the rounding methods")
struct MediaTimeConvertScaleTests {
    struct Case: Sendable, CustomStringConvertible {
        let tenths: Int64
        let method: MediaTime.RoundingMethod
        let expected: Int64
        var description: String { "\(tenths)/10 \(method) → \(expected)" }
    }

    /// Tenths converted to whole seconds (a smaller timescale), for every method, on
    /// positive and negative values with an exact .5, fractions above and below .5, an
    /// exact value, and a fraction below 1.
    static let cases: [Case] = {
        typealias M = MediaTime.RoundingMethod
        let table: [(M, [Int64: Int64])] = [
            (.halfAwayFromZero, [25: 3, 27: 3, 23: 2, 20: 2, 1: 0, -25: -3, -27: -3, -23: -2, -20: -2, -1: 0, -5: -1]),
            (.towardZero, [25: 2, 27: 2, 23: 2, 20: 2, 1: 0, -25: -2, -27: -2, -23: -2, -20: -2, -1: 0, -5: 0]),
            (.awayFromZero, [25: 3, 27: 3, 23: 3, 20: 2, 1: 1, -25: -3, -27: -3, -23: -3, -20: -2, -1: -1, -5: -1]),
            // To a smaller timescale QuickTime truncates, but never turns a negative time into 0.
            (.quickTime, [25: 2, 27: 2, 23: 2, 20: 2, 1: 0, -25: -2, -27: -2, -23: -2, -20: -2, -1: -1, -5: -1]),
            (.towardPositiveInfinity, [25: 3, 27: 3, 23: 3, 20: 2, 1: 1, -25: -2, -27: -2, -23: -2, -20: -2, -1: 0, -5: 0]),
            (.towardNegativeInfinity, [25: 2, 27: 2, 23: 2, 20: 2, 1: 0, -25: -3, -27: -3, -23: -3, -20: -2, -1: -1, -5: -1]),
        ]
        return table.flatMap { method, expectations in
            expectations.sorted { $0.key < $1.key }.map { Case(tenths: $0.key, method: method, expected: $0.value) }
        }
    }()

    @Test(arguments: cases)
    func roundingToASmallerTimescale(_ c: Case) {
        let result = t(c.tenths, 10).convertScale(1, method: c.method)
        #expect(result.value == c.expected)
        #expect(result.timescale == 1)
        // Rounded exactly when the tenths were not whole seconds.
        #expect(result.hasBeenRounded == (c.tenths % 10 != 0))
    }

    @Test func allSixMethodsAreCovered() {
        #expect(Set(Self.cases.map(\.method)) == Set(MediaTime.RoundingMethod.allCases))
        #expect(MediaTime.RoundingMethod.allCases.count == 6)
    }

    @Test func defaultIsHalfAwayFromZero() {
        #expect(MediaTime.RoundingMethod.default == .halfAwayFromZero)
        #expect(t(25, 10).convertScale(1).value == 3)
        #expect(t(-25, 10).convertScale(1).value == -3)
    }

    @Test func quickTimeRoundsAwayFromZeroToALargerTimescale() {
        // 1/7 at timescale 10 is 1.43 units: QuickTime gives 2 where half-away gives 1.
        #expect(t(1, 7).convertScale(10, method: .quickTime).value == 2)
        #expect(t(-1, 7).convertScale(10, method: .quickTime).value == -2)
        #expect(t(1, 7).convertScale(10, method: .halfAwayFromZero).value == 1)
        // 1/3 at 5 is 1.67 units → 2; exact conversions to a larger timescale do not round.
        let third = t(1, 3).convertScale(5, method: .quickTime)
        #expect(third.value == 2 && third.hasBeenRounded)
        let half = t(1, 2).convertScale(8, method: .quickTime)
        #expect(half.value == 4 && half.timescale == 8 && !half.hasBeenRounded)
    }

    @Test func exactConversionIsNotRounded() {
        let result = t(1, 2).convertScale(30000)
        #expect(result.value == 15000 && result.timescale == 30000 && result.flags == .valid)
        #expect(t(30, 60).convertScale(2).value == 1)
        #expect(!t(30, 60).convertScale(2).hasBeenRounded)
    }

    @Test func roundingFlagIsKeptFromTheSource() {
        let result = roundedThird.convertScale(6)
        #expect(result.value == 2 && result.timescale == 6)
        #expect(result.hasBeenRounded)
    }

    @Test func epochIsKept() {
        let result = t(25, 10, epoch: 4).convertScale(1)
        #expect(result.epoch == 4)
    }

    @Test func sameTimescaleIsUnchanged() {
        for method in MediaTime.RoundingMethod.allCases {
            let result = t(-7, 3).convertScale(3, method: method)
            #expect(result.value == -7 && result.timescale == 3 && result.flags == .valid)
        }
    }

    @Test func intermediateProductDoesNotOverflow() {
        // Int64.max × 1000 needs 74 bits; the result 9223372036854.775807 → 9223372036855.
        let result = t(.max, 1_000_000_000).convertScale(1000)
        #expect(result.value == 9_223_372_036_855)
        #expect(result.timescale == 1000 && result.hasBeenRounded)
    }

    @Test func overflowGivesInfinity() {
        #expect(t(.max, 1).convertScale(2).isPositiveInfinity)
        #expect(t(.min, 1).convertScale(2).isNegativeInfinity)
        #expect(t(.max / 2 + 1, 1).convertScale(2).isPositiveInfinity)
        // Int64.min itself is representable.
        #expect(t(.min / 2, 1).convertScale(2).value == .min)
    }

    @Test func nonNumericTimesConvertToThemselves() {
        for kind in TimeKind.allCases where kind != .numeric {
            let result = kind.sample.convertScale(600, method: .towardZero)
            #expect(TimeKind(result) == kind)
            #expect(result.flags == kind.sample.flags)
        }
    }

    @Test func nonPositiveTimescaleIsInvalid() {
        #expect(!t(1, 2).convertScale(0).isValid)
        #expect(!t(1, 2).convertScale(-600).isValid)
    }
}

@Suite("MediaTime addition and subtraction")
struct MediaTimeAdditiveTests {
    @Test func sameTimescaleIsKept() {
        let sum = t(1, 30) + t(2, 30)
        #expect(sum.value == 3 && sum.timescale == 30 && sum.flags == .valid)
        let difference = t(1, 30) - t(2, 30)
        #expect(difference.value == -1 && difference.timescale == 30)
    }

    @Test func differentTimescalesUseTheirLeastCommonMultiple() {
        let sum = t(1, 6) + t(1, 4)  // 2/12 + 3/12
        #expect(sum.value == 5 && sum.timescale == 12 && !sum.hasBeenRounded)

        let ntsc = t(1001, 30000) + t(1, 25)  // lcm(30000, 25) = 30000; 1001 + 1200
        #expect(ntsc.value == 2201 && ntsc.timescale == 30000)

        let difference = t(1, 6) - t(1, 4)
        #expect(difference.value == -1 && difference.timescale == 12)
    }

    @Test func leastCommonMultipleAboveTheMaximumIsCappedAndRounded() {
        // lcm(2^31 - 1, 2) = 2^32 - 2. 1/max + 1/2 at max = (2 + max) / 2 = 1073741824.5 → …825.
        let sum = t(1, MediaTime.maxTimescale) + t(1, 2)
        #expect(sum.timescale == MediaTime.maxTimescale)
        #expect(sum.value == 1_073_741_825)
        #expect(sum.hasBeenRounded)

        // Capped, but exact at the maximum timescale: not rounded.
        let exact = t(0, MediaTime.maxTimescale) + t(2, 2)
        #expect(exact.timescale == MediaTime.maxTimescale)
        #expect(exact.value == Int64(MediaTime.maxTimescale))
        #expect(!exact.hasBeenRounded)
    }

    @Test func valueOverflowHalvesTheTimescale() {
        // (2^63 - 1)/3 + 1/3 = 2^63/3: overflows at 3; at 1 it is 3074457345618258602.67 → …603.
        let rounded = t(.max, 3) + t(1, 3)
        #expect(rounded.timescale == 1)
        #expect(rounded.value == 3_074_457_345_618_258_603)
        #expect(rounded.hasBeenRounded)

        // (2^63 - 1)/2 + 1/2 = 2^63/2 overflows at 2; at 1 it is exactly 2^62: not rounded.
        let exact = t(.max, 2) + t(1, 2)
        #expect(exact.timescale == 1)
        #expect(exact.value == 1 << 62)
        #expect(!exact.hasBeenRounded)

        // Halving stops as soon as the value fits: 2^63/1000 fits at 500.
        let halfway = t(.max, 1000) + t(1, 1000)
        #expect(halfway.timescale == 500)
        #expect(halfway.value == 4_611_686_018_427_387_904)
    }

    @Test func overflowAtTimescaleOneIsInfinite() {
        #expect((t(.max, 1) + t(1, 1)).isPositiveInfinity)
        #expect((t(.min, 1) + t(-1, 1)).isNegativeInfinity)
        #expect((t(.min, 1) - t(1, 1)).isNegativeInfinity)
        #expect((t(.max, 1) - t(-1, 1)).isPositiveInfinity)
        // Int64.min itself is a representable result.
        #expect((t(.min, 1) + .zero).value == .min)
    }

    @Test func roundingFlagPropagatesFromEitherOperand() {
        #expect((roundedThird + t(1, 3)).hasBeenRounded)
        #expect((t(1, 3) + roundedThird).hasBeenRounded)
        #expect((roundedThird - t(1, 3)).hasBeenRounded)
        #expect((t(1, 3) - roundedThird).hasBeenRounded)
        #expect(!(t(1, 3) + t(1, 3)).hasBeenRounded)
    }

    static let kindPairs: [(TimeKind, TimeKind)] = TimeKind.allCases.flatMap { a in TimeKind.allCases.map { (a, $0) } }

    /// The Core Media rules for `+`: invalid wins; opposite infinities are invalid; an
    /// infinity wins over everything else; then indefinite; else numeric.
    static func expectedSum(_ a: TimeKind, _ b: TimeKind) -> TimeKind {
        switch (a, b) {
        case (.invalid, _), (_, .invalid): .invalid
        case (.positiveInfinity, .negativeInfinity), (.negativeInfinity, .positiveInfinity): .invalid
        case (.positiveInfinity, _), (_, .positiveInfinity): .positiveInfinity
        case (.negativeInfinity, _), (_, .negativeInfinity): .negativeInfinity
        case (.indefinite, _), (_, .indefinite): .indefinite
        default: .numeric
        }
    }

    @Test(arguments: kindPairs)
    func additionOfEachKind(_ a: TimeKind, _ b: TimeKind) {
        #expect(TimeKind(a.sample + b.sample) == Self.expectedSum(a, b))
    }

    @Test func additionTableSpotChecks() {
        // Written out, so that the table above cannot be wrong in the same way as the code.
        #expect(TimeKind(.positiveInfinity + .negativeInfinity) == .invalid)
        #expect(TimeKind(.negativeInfinity + .positiveInfinity) == .invalid)
        #expect(TimeKind(.positiveInfinity + .positiveInfinity) == .positiveInfinity)
        #expect(TimeKind(.negativeInfinity + .negativeInfinity) == .negativeInfinity)
        #expect(TimeKind(.positiveInfinity + t(5, 1)) == .positiveInfinity)
        #expect(TimeKind(t(5, 1) + .negativeInfinity) == .negativeInfinity)
        #expect(TimeKind(.indefinite + t(5, 1)) == .indefinite)
        #expect(TimeKind(.positiveInfinity + .indefinite) == .positiveInfinity)
        #expect(TimeKind(.invalid + .indefinite) == .invalid)
        #expect(TimeKind(.invalid + .positiveInfinity) == .invalid)
    }

    @Test(arguments: kindPairs)
    func subtractionOfEachKind(_ a: TimeKind, _ b: TimeKind) {
        let expected: TimeKind
        switch (a, b) {
        case (.invalid, _), (_, .invalid): expected = .invalid
        case (.positiveInfinity, .positiveInfinity), (.negativeInfinity, .negativeInfinity): expected = .invalid
        case (.positiveInfinity, _), (_, .negativeInfinity): expected = .positiveInfinity
        case (.negativeInfinity, _), (_, .positiveInfinity): expected = .negativeInfinity
        case (.indefinite, _), (_, .indefinite): expected = .indefinite
        default: expected = .numeric
        }
        #expect(TimeKind(a.sample - b.sample) == expected)
    }

    @Test func subtractionTableSpotChecks() {
        #expect(TimeKind(.positiveInfinity - .positiveInfinity) == .invalid)
        #expect(TimeKind(.negativeInfinity - .negativeInfinity) == .invalid)
        #expect(TimeKind(.positiveInfinity - .negativeInfinity) == .positiveInfinity)
        #expect(TimeKind(.negativeInfinity - .positiveInfinity) == .negativeInfinity)
        #expect(TimeKind(t(5, 1) - .positiveInfinity) == .negativeInfinity)
        #expect(TimeKind(t(5, 1) - .negativeInfinity) == .positiveInfinity)
        #expect(TimeKind(.indefinite - .positiveInfinity) == .negativeInfinity)
        #expect(TimeKind(t(5, 1) - .indefinite) == .indefinite)
        #expect(TimeKind(.indefinite - .invalid) == .invalid)
    }

    @Test func epochsOfSums() {
        // Same epoch (zero or not) → epoch 0.
        let same = t(1, 1, epoch: 3) + t(1, 1, epoch: 3)
        #expect(same.value == 2 && same.epoch == 0)
        #expect((t(1, 1) + t(1, 1)).epoch == 0)
        // A duration (epoch 0) added to a time in epoch n → epoch n, either order.
        #expect((t(1, 1) + t(1, 1, epoch: 3)).epoch == 3)
        #expect((t(1, 1, epoch: 3) + t(1, 1)).epoch == 3)
        // Different non-zero epochs → invalid.
        #expect(!(t(1, 1, epoch: 3) + t(1, 1, epoch: 4)).isValid)
        // Epochs only matter between numeric times.
        #expect((t(1, 1, epoch: 3) + .positiveInfinity).isPositiveInfinity)
    }

    @Test func epochsOfDifferences() {
        let duration = t(5, 1, epoch: 3) - t(2, 1, epoch: 3)
        #expect(duration.value == 3 && duration.epoch == 0)
        let moved = t(5, 1, epoch: 3) - t(2, 1)
        #expect(moved.value == 3 && moved.epoch == 3)
        // Undocumented by Core Media; Reel keeps the symmetric rule.
        let reversed = t(5, 1) - t(2, 1, epoch: 3)
        #expect(reversed.value == 3 && reversed.epoch == 3)
        #expect(!(t(5, 1, epoch: 3) - t(2, 1, epoch: 4)).isValid)
    }

    @Test func compoundAssignment() {
        var time = t(1, 2)
        time += t(1, 3)
        #expect(time.value == 5 && time.timescale == 6)
        time -= t(1, 6)
        #expect(time.value == 4 && time.timescale == 6)
    }

    @Test func negation() {
        let negated = -t(1, 3)
        #expect(negated.value == -1 && negated.timescale == 3)
        let keepsEverything = -MediaTime(value: 7, timescale: 2, epoch: 5)
        #expect(keepsEverything.value == -7 && keepsEverything.epoch == 5)
        #expect((-roundedThird).hasBeenRounded)
        #expect((-MediaTime.positiveInfinity).isNegativeInfinity)
        #expect((-MediaTime.negativeInfinity).isPositiveInfinity)
        #expect((-MediaTime.indefinite).isIndefinite)
        #expect(!(-MediaTime.invalid).isValid)
        // -Int64.min does not fit: the timescale is halved (exactly, here) …
        let halved = -t(.min, 2)
        #expect(halved.value == 1 << 62 && halved.timescale == 1 && !halved.hasBeenRounded)
        // … or the result is +infinity at timescale 1.
        #expect((-t(.min, 1)).isPositiveInfinity)
    }

    @Test func absoluteValue() {
        let positive = MediaTime.abs(t(-3, 2, epoch: 1))
        #expect(positive.value == 3 && positive.timescale == 2 && positive.epoch == 1)
        #expect(MediaTime.abs(t(3, 2)).value == 3)
        #expect(MediaTime.abs(.zero) == .zero)
        #expect(MediaTime.abs(.negativeInfinity).isPositiveInfinity)
        #expect(MediaTime.abs(.positiveInfinity).isPositiveInfinity)
        #expect(MediaTime.abs(.indefinite).isIndefinite)
        #expect(!MediaTime.abs(.invalid).isValid)
    }
}

@Suite("MediaTime multiplication")
struct MediaTimeMultiplicationTests {
    @Test func byInteger() {
        let tripled = t(1001, 30000) * Int32(3)
        #expect(tripled.value == 3003 && tripled.timescale == 30000 && tripled.flags == .valid)
        let negated = Int32(-2) * t(1001, 30000)
        #expect(negated.value == -2002 && negated.timescale == 30000)
        var time = t(1, 2, epoch: 6)
        time *= 5
        #expect(time.value == 5 && time.epoch == 6)
        #expect((t(1, 2) * 3).value == 3)  // plain integer literals work
        #expect((roundedThird * 3).hasBeenRounded)
    }

    @Test func byIntegerHalvesTheTimescaleOnOverflow() {
        // 2^62 × 3 overflows at 1000; at 500 it is 2^62 × 3 / 2 exactly.
        let exact = t(1 << 62, 1000) * 3
        #expect(exact.timescale == 500 && exact.value == 6_917_529_027_641_081_856)
        #expect(!exact.hasBeenRounded)
        // (2^62 + 1) × 3 / 2 = …857.5 → …858, rounded.
        let rounded = t((1 << 62) + 1, 1000) * 3
        #expect(rounded.timescale == 500 && rounded.value == 6_917_529_027_641_081_858)
        #expect(rounded.hasBeenRounded)
    }

    @Test func byIntegerOverflowIsInfinite() {
        #expect((t(.max, 1) * 2).isPositiveInfinity)
        #expect((t(.max, 1) * -2).isNegativeInfinity)
        #expect((t(.min, 1) * -1).isPositiveInfinity)
    }

    @Test func byIntegerSpecialTimes() {
        #expect((MediaTime.positiveInfinity * 2).isPositiveInfinity)
        #expect((MediaTime.positiveInfinity * -2).isNegativeInfinity)
        #expect((MediaTime.negativeInfinity * -2).isPositiveInfinity)
        #expect(!(MediaTime.positiveInfinity * 0).isValid)
        #expect((MediaTime.indefinite * 2).isIndefinite)
        #expect(!(MediaTime.invalid * 2).isValid)
        let zero = t(5, 3) * 0
        #expect(zero.value == 0 && zero.timescale == 3)
    }

    @Test func byFloatRaisesTheTimescaleToAtLeast65536() {
        // 30 doubled 12 times is 122880; 1/30 × 0.5 = 1/60 = 2048/122880, exactly.
        let half = t(1, 30).multiplied(byFloat64: 0.5)
        #expect(half.timescale == 122_880 && half.value == 2048 && !half.hasBeenRounded)
        // 600 doubled 7 times is 76800; 43804/600 × 0.25 = 1401728/76800.
        let quarter = t(43804, 600).multiplied(byFloat64: 0.25)
        #expect(quarter.timescale == 76_800 && quarter.value == 1_401_728 && !quarter.hasBeenRounded)
        // A timescale of 65536 or more is kept.
        let doubled = t(1, 90000).multiplied(byFloat64: 2.0)
        #expect(doubled.timescale == 90000 && doubled.value == 2)
        #expect(t(1, 65536).multiplied(byFloat64: 1.0).timescale == 65536)
        #expect(t(7, 2, epoch: 3).multiplied(byFloat64: 1.0).epoch == 3)
    }

    @Test func byFloatRoundsTheExactProduct() {
        // 0.1 is 0.1000000000000000055511151231257827…, × 65536 = 6553.6000000000003638 → 6554.
        let tenth = t(1, 1).multiplied(byFloat64: 0.1)
        #expect(tenth.timescale == 65536 && tenth.value == 6554 && tenth.hasBeenRounded)
        let negative = t(-1, 1).multiplied(byFloat64: 0.1)
        #expect(negative.value == -6554 && negative.hasBeenRounded)
        #expect(roundedThird.multiplied(byFloat64: 1.0).hasBeenRounded)
        // Only the lowest bits are discarded: 1 + 2^-52 units is still rounded to 1.
        let almostOne = t(1, 65536).multiplied(byFloat64: 1 + .ulpOfOne)
        #expect(almostOne.value == 1 && almostOne.timescale == 65536 && almostOne.hasBeenRounded)
        #expect(!t(1, 65536).multiplied(byFloat64: 1).hasBeenRounded)
    }

    @Test func byFloatHalvesTheTimescaleOnOverflow() {
        // 2^50 × 1.5 × 65536 overflows; the first timescale that fits is 4096 (value 1.5 × 2^62).
        let time = t(1 << 50, 1).multiplied(byFloat64: 1.5)
        #expect(time.timescale == 4096 && time.value == 6_917_529_027_641_081_856)
        #expect(!time.hasBeenRounded)
        #expect(t(.max, 1).multiplied(byFloat64: 2.0).isPositiveInfinity)
        #expect(t(.max, 1).multiplied(byFloat64: -2.0).isNegativeInfinity)
        #expect(t(1, 1).multiplied(byFloat64: 1e300).isPositiveInfinity)
        #expect(t(1, 1).multiplied(byFloat64: -1e300).isNegativeInfinity)
    }

    @Test func byFloatSpecialCases() {
        #expect(!t(1, 1).multiplied(byFloat64: Double.nan).isValid)
        #expect(t(1, 1).multiplied(byFloat64: Double.infinity).isPositiveInfinity)
        #expect(t(-1, 1).multiplied(byFloat64: Double.infinity).isNegativeInfinity)
        #expect(t(1, 1).multiplied(byFloat64: -Double.infinity).isNegativeInfinity)
        #expect(!t(0, 1).multiplied(byFloat64: Double.infinity).isValid)
        #expect(MediaTime.positiveInfinity.multiplied(byFloat64: 2.0).isPositiveInfinity)
        #expect(MediaTime.positiveInfinity.multiplied(byFloat64: -2.0).isNegativeInfinity)
        #expect(MediaTime.negativeInfinity.multiplied(byFloat64: 0.5).isNegativeInfinity)
        #expect(!MediaTime.positiveInfinity.multiplied(byFloat64: 0.0).isValid)
        #expect(!MediaTime.positiveInfinity.multiplied(byFloat64: Double.nan).isValid)
        #expect(MediaTime.indefinite.multiplied(byFloat64: 2.0).isIndefinite)
        #expect(!MediaTime.invalid.multiplied(byFloat64: 2.0).isValid)
        let zero = t(5, 1).multiplied(byFloat64: 0.0)
        #expect(zero.value == 0 && zero.isNumeric && !zero.hasBeenRounded)
    }

    @Test func byRatioKeepsTheExactValue() {
        // Core Media's documented behaviour: 43804/600 × 1/4 is 43804/2400.
        let quarter = t(43804, 600).multiplied(byRatio: 1, divisor: 4)
        #expect(quarter.value == 43804 && quarter.timescale == 2400 && quarter.flags == .valid)
        let thrice = t(1, 3).multiplied(byRatio: 3, divisor: 1)
        #expect(thrice.value == 3 && thrice.timescale == 3)
        // The ratio is reduced first: 2/4 is 1/2.
        let half = t(1, 30).multiplied(byRatio: 2, divisor: 4)
        #expect(half.value == 1 && half.timescale == 60)
        // A negative divisor moves the sign to the value.
        let negative = t(1, 2).multiplied(byRatio: 1, divisor: -3)
        #expect(negative.value == -1 && negative.timescale == 6)
        let epoch = t(1, 2, epoch: 8).multiplied(byRatio: 1, divisor: 2)
        #expect(epoch.epoch == 8)
        #expect(roundedThird.multiplied(byRatio: 1, divisor: 2).hasBeenRounded)
    }

    @Test func byRatioUsesA128BitIntermediate() {
        // x × 3/3 is exactly x, even next to Int64.max.
        let same = t(.max - 1, 7).multiplied(byRatio: 3, divisor: 3)
        #expect(same.value == .max - 1 && same.timescale == 7 && !same.hasBeenRounded)
        // 3·2^61 × 2 = 3·2^62 overflows Int64 on the way, but the result 2^62 fits.
        let twoThirds = t(3 << 61, 1).multiplied(byRatio: 2, divisor: 3)
        #expect(twoThirds.value == 1 << 62 && twoThirds.timescale == 1 && !twoThirds.hasBeenRounded)
    }

    @Test func byRatioRoundsHalfAwayFromZeroWhenInexact() {
        // (2^62 - 1) × 3 / 2 = 6917529027641081854.5 → …855 at timescale 1.
        let time = t((1 << 62) - 1, 1).multiplied(byRatio: 3, divisor: 2)
        #expect(time.value == 6_917_529_027_641_081_855 && time.timescale == 1 && time.hasBeenRounded)
        let negative = t(-((1 << 62) - 1), 1).multiplied(byRatio: 3, divisor: 2)
        #expect(negative.value == -6_917_529_027_641_081_855 && negative.hasBeenRounded)
        // A denominator past the maximum timescale: 1/(2·max) at max is 0.5 → 1.
        let tiny = t(1, MediaTime.maxTimescale).multiplied(byRatio: 1, divisor: 2)
        #expect(tiny.value == 1 && tiny.timescale == MediaTime.maxTimescale && tiny.hasBeenRounded)
    }

    @Test func byRatioOverflowIsInfinite() {
        #expect(t(.max, 1).multiplied(byRatio: .max, divisor: 1).isPositiveInfinity)
        #expect(t(.max, 1).multiplied(byRatio: .min, divisor: 1).isNegativeInfinity)
    }

    @Test func byRatioWithAZeroDivisor() {
        #expect(t(1, 2).multiplied(byRatio: 3, divisor: 0).isPositiveInfinity)
        #expect(t(-1, 2).multiplied(byRatio: 3, divisor: 0).isNegativeInfinity)
        #expect(t(1, 2).multiplied(byRatio: -3, divisor: 0).isNegativeInfinity)
        #expect(!t(0, 2).multiplied(byRatio: 3, divisor: 0).isValid)
        #expect(!t(1, 2).multiplied(byRatio: 0, divisor: 0).isValid)
        #expect(MediaTime.negativeInfinity.multiplied(byRatio: 3, divisor: 0).isNegativeInfinity)
        #expect(!MediaTime.positiveInfinity.multiplied(byRatio: 0, divisor: 0).isValid)
    }

    @Test func byRatioSpecialTimes() {
        #expect(MediaTime.positiveInfinity.multiplied(byRatio: 1, divisor: 2).isPositiveInfinity)
        #expect(MediaTime.positiveInfinity.multiplied(byRatio: -1, divisor: 2).isNegativeInfinity)
        #expect(MediaTime.positiveInfinity.multiplied(byRatio: 1, divisor: -2).isNegativeInfinity)
        #expect(MediaTime.negativeInfinity.multiplied(byRatio: -1, divisor: -2).isNegativeInfinity)
        #expect(!MediaTime.positiveInfinity.multiplied(byRatio: 0, divisor: 5).isValid)
        #expect(MediaTime.indefinite.multiplied(byRatio: 1, divisor: 2).isIndefinite)
        #expect(!MediaTime.invalid.multiplied(byRatio: 1, divisor: 2).isValid)
        let zero = t(5, 600).multiplied(byRatio: 0, divisor: 7)
        #expect(zero.value == 0 && zero.timescale == 600)
    }
}

@Suite("MediaTime ordering, equality and hashing")
struct MediaTimeComparisonTests {
    /// One of every kind, in ascending order.
    static let ascending: [MediaTime] = [
        .negativeInfinity,
        t(-1, 1),
        t(1, 3),
        t(1, 2),
        t(-5, 1, epoch: 1),  // a later epoch is later, whatever the value
        .indefinite,
        .positiveInfinity,
        .invalid,
    ]

    @Test func fullOrderOfAllKinds() {
        let times = Self.ascending
        for i in times.indices {
            #expect(times[i] == times[i])
            #expect(!(times[i] < times[i]))
            for j in times.indices where i < j {
                #expect(times[i] < times[j], "\(times[i]) < \(times[j])")
                #expect(!(times[j] < times[i]), "not \(times[j]) < \(times[i])")
                #expect(times[i] != times[j])
                #expect(times[j] > times[i])
            }
        }
        #expect(times.reversed().sorted().map(\.description) == times.map(\.description))
    }

    @Test func specialTimesEqualThemselves() {
        #expect(MediaTime.invalid == MediaTime.invalid)
        #expect(MediaTime(value: 3, timescale: 0) == MediaTime.invalid)
        #expect(MediaTime.indefinite == MediaTime.indefinite)
        #expect(MediaTime.positiveInfinity == MediaTime.positiveInfinity)
        #expect(MediaTime.negativeInfinity == MediaTime.negativeInfinity)
        #expect(MediaTime.invalid > MediaTime.positiveInfinity)
    }

    @Test func equalityIsExactAcrossTimescales() {
        #expect(t(1, 2) == t(2, 4))
        #expect(t(-1001, 30000) == t(-2002, 60000))
        #expect(t(1, 2) != t(1, 2, epoch: 1))
        #expect(t(0, 1) == t(0, 90000))
        #expect(t(1, 3) < t(1, 2))
        #expect(t(-1, 2) < t(-1, 3))
    }

    @Test func equalTimesHashEqually() {
        #expect(t(1, 2).hashValue == t(2, 4).hashValue)
        #expect(Set([t(1, 2), t(2, 4), t(3, 6), t(50, 100)]).count == 1)
        #expect(Set([t(1, 2), t(1, 2, epoch: 1)]).count == 2)
        #expect(Set([MediaTime.invalid, MediaTime(value: 3, timescale: -1)]).count == 1)
        #expect(t(.min, 2).hashValue == t(.min / 2, 1).hashValue)
    }

    @Test func equalityIgnoresTheRoundingFlag() {
        #expect(roundedThird == t(1, 3))
        #expect(roundedThird.hashValue == t(1, 3).hashValue)
    }

    @Test func largerEpochIsLater() {
        #expect(t(100, 1) < t(-100, 1, epoch: 1))
        #expect(t(-100, 1, epoch: -1) < t(-1000, 1))
    }

    @Test func comparisonIsExactNotThroughDouble() {
        // Adjacent values at the largest timescale: equal as Doubles, not as times.
        let a = t(.max, MediaTime.maxTimescale)
        let b = t(.max - 1, MediaTime.maxTimescale)
        #expect(a.seconds == b.seconds)
        #expect(b < a && a != b)
        // Different timescales: (2^61 + 1)/3 = (2^62 + 2)/6 > (2^62 + 1)/6, but both are
        // 2^61/3 as Doubles.
        let c = t((1 << 61) + 1, 3)
        let d = t((1 << 62) + 1, 6)
        #expect(c.seconds == d.seconds)
        #expect(d < c && c != d)
    }

    @Test func minAndMaxFollowTheOrder() {
        #expect(min(MediaTime.positiveInfinity, .invalid).isPositiveInfinity)
        #expect(max(MediaTime.positiveInfinity, .invalid).isValid == false)
        #expect(max(MediaTime.indefinite, t(5, 1)).isIndefinite)
        #expect(min(MediaTime.negativeInfinity, t(1, 1)).isNegativeInfinity)
        #expect(max(t(1, 2), t(1, 3)) == t(1, 2))
        #expect(min(t(1, 2), t(1, 3)) == t(1, 3))
        #expect(max(t(1, 1), t(0, 1, epoch: 1)).epoch == 1)
    }
}

@Suite("MediaTime text and Codable")
struct MediaTimeTextTests {
    @Test func descriptionOfNumericTimes() {
        #expect(t(1001, 30000).description == "1001/30000 (0.0334 s)")
        #expect(t(1, 2).description == "1/2 (0.5000 s)")
        #expect(t(-1, 2).description == "-1/2 (-0.5000 s)")
        #expect(t(0, 1).description == "0/1 (0.0000 s)")
        #expect(t(1, 8).description == "1/8 (0.1250 s)")
        // Exact half-away rounding of the fourth decimal: 0.00005 → 0.0001.
        #expect(t(1, 20000).description == "1/20000 (0.0001 s)")
        #expect(t(-1, 30000).description == "-1/30000 (-0.0000 s)")
        #expect(t(.max, 1).description == "9223372036854775807/1 (9223372036854775807.0000 s)")
        #expect(t(.min, 1).description == "-9223372036854775808/1 (-9223372036854775808.0000 s)")
    }

    @Test func descriptionAddsEpochAndRounding() {
        #expect(t(3, 2, epoch: 5).description == "3/2 (1.5000 s), epoch 5")
        #expect(roundedThird.description == "1/3 (0.3333 s), rounded")
        let both = MediaTime(value: 1, timescale: 6, epoch: -2).convertScale(3)
        #expect(both.description == "1/3 (0.3333 s), epoch -2, rounded")
    }

    @Test func descriptionOfSpecialTimes() {
        #expect(MediaTime.invalid.description == "invalid")
        #expect(MediaTime.indefinite.description == "indefinite")
        #expect(MediaTime.positiveInfinity.description == "+infinity")
        #expect(MediaTime.negativeInfinity.description == "-infinity")
    }

    @Test func stringValue() {
        #expect(t(1001, 30000).stringValue == "1001/30000")
        #expect(t(-5, 3).stringValue == "-5/3")
        #expect(t(1001, 30000, epoch: 2).stringValue == "1001/30000@2")
        #expect(roundedThird.stringValue == "1/3")
        #expect(MediaTime.invalid.stringValue == "invalid")
        #expect(MediaTime.indefinite.stringValue == "indefinite")
        #expect(MediaTime.positiveInfinity.stringValue == "+infinity")
        #expect(MediaTime.negativeInfinity.stringValue == "-infinity")
    }

    @Test func parsing() throws {
        let time = try #require(MediaTime(string: "1001/30000"))
        #expect(time.value == 1001 && time.timescale == 30000 && time.epoch == 0 && time.flags == .valid)
        let withEpoch = try #require(MediaTime(string: "-7/2@-3"))
        #expect(withEpoch.value == -7 && withEpoch.timescale == 2 && withEpoch.epoch == -3)
        #expect(MediaTime(string: "-9223372036854775808/2147483647")?.value == .min)
        #expect(MediaTime(string: "invalid").map { !$0.isValid } == true)
        #expect(MediaTime(string: "indefinite")?.isIndefinite == true)
        #expect(MediaTime(string: "+infinity")?.isPositiveInfinity == true)
        #expect(MediaTime(string: "-infinity")?.isNegativeInfinity == true)
    }

    static let malformed = [
        "", "1", "1/", "/2", "1//2", "1/2/3", "1/0", "1/-5", "1/+5", "+1/2", "--1/2", "-/2",
        " 1/2", "1/2 ", "1 /2", "1.5/2", "1/2.0", "a/2", "1/b", "0x10/2", "1/٣",
        "1/2@", "1/2@x", "1/2@3@4", "1/2@+3", "@3",
        "9223372036854775808/1", "1/2147483648", "1/99999999999999999999",
        "Invalid", "INDEFINITE", "infinity", "inf", "+inf", "nan", "-invalid",
    ]

    @Test(arguments: malformed)
    func parsingRejectsMalformedStrings(_ string: String) {
        #expect(MediaTime(string: string) == nil)
    }

    @Test(arguments: malformed)
    func decodingRejectsMalformedStrings(_ string: String) throws {
        let json = try JSONEncoder().encode([string])
        #expect {
            _ = try JSONDecoder().decode([MediaTime].self, from: json)
        } throws: { error in
            guard case DecodingError.dataCorrupted = error else { return false }
            return true
        }
    }

    @Test func decodingRejectsNonStrings() throws {
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode([MediaTime].self, from: Data("[5]".utf8))
        }
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode([MediaTime].self, from: Data(#"[{"value": 1, "timescale": 2}]"#.utf8))
        }
    }

    @Test func encodesAsASingleString() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let data = try encoder.encode([t(1001, 30000), t(1, 2, epoch: 4), .invalid, .indefinite, .positiveInfinity])
        #expect(String(decoding: data, as: UTF8.self) == #"["1001/30000","1/2@4","invalid","indefinite","+infinity"]"#)
    }

    @Test func codableRoundTrip() throws {
        let times: [MediaTime] = [
            t(1001, 30000), t(-5, 3), t(.max, MediaTime.maxTimescale), t(.min, 1), t(0, 90000),
            t(7, 2, epoch: 3), t(7, 2, epoch: .min), roundedThird,
            .invalid, .indefinite, .positiveInfinity, .negativeInfinity,
        ]
        let decoded = try JSONDecoder().decode([MediaTime].self, from: JSONEncoder().encode(times))
        #expect(decoded.count == times.count)
        for (original, copy) in zip(times, decoded) {
            #expect(copy == original)
            #expect(copy.stringValue == original.stringValue)
            // The representation survives, not just the value; the rounding flag does not.
            #expect(copy.value == original.value && copy.timescale == original.timescale)
            #expect(copy.epoch == original.epoch)
            #expect(copy.flags == original.flags.subtracting(.hasBeenRounded))
        }
    }
}
