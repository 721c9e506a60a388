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
