import PropertyBased
import Testing

@testable import ReelCore

// Property-based tests of the MediaTime algebra. Generators mix small values and
// timescales (so that sums stay exact and equal values are common) with the full Int64 /
// Int32 ranges (so that overflow, LCM capping and rounding are exercised).

/// The timescales media usually comes in.
private let commonTimescales: [Int32] = [
    1, 24, 25, 30, 48, 60, 600, 1000, 24000, 30000, 44100, 48000, 90000, 1_000_000_000, MediaTime.maxTimescale,
]

/// Timescales: small ones, the common media ones, and any at all.
private let timescales = Gen.frequency(
    (2, Gen.int32(in: 1...1000)),
    (2, Gen.int(in: 0..<commonTimescales.count).map { commonTimescales[$0] }),
    (1, Gen.int32(in: 1...Int32.max)),
)

/// Values: small ones and any at all.
private let values = Gen.frequency(
    (3, Gen.int64(in: -1_000_000...1_000_000)),
    (1, Gen.int64(in: .min ... .max)),
)

private let epochs = Gen.int64(in: 0...2)

/// Numeric times over the full range, in epochs 0–2.
private let numericTimes = zip(values, timescales, epochs).map { parts in
    MediaTime(value: parts.0, timescale: parts.1, epoch: parts.2)
}

/// Numeric times small enough that sums and differences are always exact.
private let smallTimes = zip(Gen.int64(in: -1_000_000_000...1_000_000_000), Gen.int32(in: 1...1000))
    .map { value, timescale in MediaTime(value: value, timescale: timescale) }

private let specialTimes: [MediaTime] = [.invalid, .indefinite, .positiveInfinity, .negativeInfinity]

/// Times of every kind, with tiny values and timescales so that equal times are frequent.
private let anyTimes = Gen.frequency(
    (8, zip(Gen.int64(in: -4...4), Gen.int32(in: 1...4), Gen.int64(in: 0...1)).map { parts in
        MediaTime(value: parts.0, timescale: parts.1, epoch: parts.2)
    }),
    (1, Gen.int(in: 0..<specialTimes.count).map { specialTimes[$0] }),
)

@Suite("MediaTime properties")
struct MediaTimePropertyTests {
    @Test func addingThenSubtractingIsTheIdentityWhenNothingRounds() async {
        await propertyCheck(count: 300, input: numericTimes, numericTimes) { a, b in
            let sum = a + b
            guard sum.isNumeric, !sum.hasBeenRounded else { return }
            let back = sum - b
            guard !back.hasBeenRounded else { return }
            #expect(back.isNumeric)
            #expect(back == a, "(\(a) + \(b)) - \(b) = \(back)")
            #expect(back.epoch == a.epoch)
        }
    }

    @Test func smallSumsAreExactAndInvertible() async {
        await propertyCheck(count: 300, input: smallTimes, smallTimes) { a, b in
            let sum = a + b
            #expect(!sum.hasBeenRounded, "\(a) + \(b) = \(sum)")
            #expect(Int64(sum.timescale) == Self.lcm(a.timescale, b.timescale))
            let back = sum - b
            #expect(!back.hasBeenRounded)
            #expect(back == a, "(\(a) + \(b)) - \(b) = \(back)")
        }
    }

    @Test func orderIsTotal() async {
        await propertyCheck(count: 500, input: anyTimes, anyTimes, anyTimes) { a, b, c in
            // Exactly one of <, ==, > (trichotomy, hence antisymmetry and irreflexivity).
            let relations = [a < b, a == b, b < a].filter { $0 }.count
            #expect(relations == 1, "\(a) vs \(b)")
            #expect((a == b) == (b == a))
            #expect((a <= b) == !(b < a))
            if a == b { #expect(a.hashValue == b.hashValue, "\(a) == \(b)") }
            // Transitivity.
            if a < b && b < c { #expect(a < c, "\(a) < \(b) < \(c)") }
            if a <= b && b <= c { #expect(a <= c, "\(a) <= \(b) <= \(c)") }
            if a == b && b == c { #expect(a == c) }
            // Min and max agree with the order.
            #expect(min(a, b) <= max(a, b))
        }
    }

    @Test func numericOrderMatchesTheRationalValues() async {
        await propertyCheck(count: 300, input: anyTimes, anyTimes) { a, b in
            guard a.isNumeric, b.isNumeric, a.epoch == b.epoch else { return }
            // Values and timescales are tiny, so the cross products are exact.
            let left = a.value * Int64(b.timescale)
            let right = b.value * Int64(a.timescale)
            #expect((a < b) == (left < right))
            #expect((a == b) == (left == right))
        }
    }

    @Test func convertScaleIsWithinOneUnitAndRoundsInTheRightDirection() async {
        let newTimescales = Gen.frequency((1, Gen.int32(in: 1...100)), (1, Gen.int32(in: 1...Int32.max)))
        let allMethods = MediaTime.RoundingMethod.allCases
        let methods = Gen.int(in: 0..<allMethods.count).map { allMethods[$0] }
        await propertyCheck(count: 500, input: numericTimes, newTimescales, methods) { time, newTimescale, method in
            let result = time.convertScale(newTimescale, method: method)
            // The exact result is exact / divisor units of the new timescale.
            let exact = Int128(time.value) * Int128(newTimescale)
            let divisor = Int128(time.timescale)
            guard result.isNumeric else {
                // Only an unrepresentable value becomes infinite.
                #expect(exact / divisor >= Int128(Int64.max) || exact / divisor <= Int128(Int64.min))
                #expect(result.isPositiveInfinity == (exact > 0))
                #expect(result.isNegativeInfinity == (exact < 0))
                return
            }
            #expect(result.timescale == newTimescale)
            #expect(result.epoch == time.epoch)
            let scaled = Int128(result.value) * divisor  // result in units of 1/(newTimescale·timescale)
            let error = scaled - exact
            #expect(error.magnitude < divisor.magnitude, "\(time) → \(result) by \(method)")
            #expect(result.hasBeenRounded == (error != 0))
            guard error != 0 else { return }

            let awayFromZero = (exact > 0) == (error > 0)
            switch method {
            case .towardZero:
                #expect(!awayFromZero)
            case .awayFromZero:
                #expect(awayFromZero)
            case .towardPositiveInfinity:
                #expect(error > 0)
            case .towardNegativeInfinity:
                #expect(error < 0)
            case .halfAwayFromZero:
                // Within half a unit; exactly half only when rounding away from zero.
                #expect(2 * error.magnitude <= divisor.magnitude)
                if 2 * error.magnitude == divisor.magnitude { #expect(awayFromZero) }
            case .quickTime:
                if newTimescale > time.timescale {
                    #expect(awayFromZero)
                } else if exact < 0 && exact > -divisor {
                    // Negative, and truncation would give 0: -1 instead.
                    #expect(result.value == -1)
                } else {
                    #expect(!awayFromZero)
                }
            }
        }
    }

    @Test func subtractingATimeFromItselfIsZero() async {
        await propertyCheck(count: 300, input: numericTimes) { a in
            let difference = a - a
            #expect(difference == .zero, "\(a) - \(a) = \(difference)")
            #expect(difference.isNumeric && difference.value == 0)
            #expect(difference.epoch == 0)
            #expect(!difference.hasBeenRounded)
        }
    }

    @Test func addingZeroChangesNothing() async {
        await propertyCheck(count: 300, input: numericTimes) { a in
            let sum = a + .zero
            #expect(sum == a)
            #expect(sum.value == a.value && sum.timescale == a.timescale && sum.epoch == a.epoch)
            #expect(sum.flags == a.flags)
            #expect(MediaTime.zero + a == a)
        }
    }

    @Test func negationIsAnInvolutionAndSubtractionAddsTheNegation() async {
        await propertyCheck(count: 300, input: numericTimes, numericTimes) { a, b in
            guard a.value != .min, b.value != .min else { return }
            #expect(-(-a) == a)
            #expect((a - b) == (a + -b))
        }
    }

    private static func lcm(_ a: Int32, _ b: Int32) -> Int64 {
        var (x, y) = (Int64(a), Int64(b))
        while y != 0 { (x, y) = (y, x % y) }
        return Int64(a) / x * Int64(b)
    }
}
