/// An exact signed rational number `±numerator / (denominator · 2^shift)`, used internally
/// by ``MediaTime`` to convert the exact result of an operation to an integer value at a
/// given timescale without ever overflowing or going through floating point.
///
/// Every ``MediaTime`` operation first forms its exact result as an `ExactRatio` (sums over
/// the least common multiple of the timescales, products of the value and a multiplier,
/// the dyadic expansion of a `Double`), then asks for its value at the result timescale.
/// The intermediate product `numerator · timescale` is formed in 256 bits, so the only
/// overflow that can happen is the final value not fitting in `Int64`, which the caller
/// reports (by halving the timescale, or by returning an infinity).
struct ExactRatio: Sendable {
    /// Whether the number is negative (ignored when the numerator is zero).
    var isNegative: Bool
    /// The magnitude of the numerator.
    var numerator: UInt128
    /// The odd part of the denominator; must be positive and below 2^126.
    var denominator: UInt128
    /// The denominator's power-of-two factor, for dyadic rationals (`Double`s).
    var shift: Int

    init(isNegative: Bool, numerator: UInt128, denominator: UInt128, shift: Int = 0) {
        precondition(denominator > 0 && denominator < (1 as UInt128) << 126 && shift >= 0)
        self.isNegative = isNegative
        self.numerator = numerator
        self.denominator = denominator
        self.shift = shift
    }

    /// `value / timescale`, as an exact ratio.
    init(value: Int128, timescale: Int64) {
        self.init(isNegative: value < 0, numerator: value.magnitude, denominator: UInt128(timescale))
    }

    /// The exact number of `1/timescale` units in this ratio, rounded with `direction`.
    ///
    /// - Returns: The value and whether it is exact (no remainder was discarded), or `nil`
    ///   when the rounded value does not fit in `Int64` (`Int64.min` fits).
    func value(atTimescale timescale: Int32, rounding direction: Direction) -> (value: Int64, isExact: Bool)? {
        precondition(timescale > 0)
        let product = numerator.multipliedFullWidth(by: UInt128(timescale))
        let shifted = Self.shiftRight(high: product.high, low: product.low, by: shift)
        // The quotient must fit in 128 bits for `dividingFullWidth`; if it does not,
        // it certainly does not fit in 64 either.
        guard shifted.high < denominator else { return nil }
        let (quotient, remainder) = denominator.dividingFullWidth((high: shifted.high, low: shifted.low))

        let isExact = remainder == 0 && !shifted.halfBit && !shifted.sticky
        // Compare the discarded fraction with one half: 2·fraction·denominator is
        // 2·remainder + halfBit + (something in [0, 1) that is non-zero iff sticky).
        let twice = 2 * remainder + (shifted.halfBit ? 1 : 0)
        let half: HalfComparison
        if twice > denominator {
            half = .above
        } else if twice == denominator {
            half = shifted.sticky ? .above : .exactlyHalf
        } else {
            half = .below
        }

        var magnitude = quotient
        if !isExact && direction.roundsAwayFromZero(isNegative: isNegative, half: half) {
            magnitude += 1
        }
        if !isExact && magnitude == 0 && isNegative && direction == .quickTimeTowardZero {
            // QuickTime never rounds a negative time to zero: it answers -1/timescale.
            magnitude = 1
        }
        if isNegative {
            guard magnitude <= UInt128(Int64.min.magnitude) else { return nil }
            return (Int64(bitPattern: 0 &- UInt64(magnitude)), isExact)
        }
        guard magnitude <= UInt128(Int64.max) else { return nil }
        return (Int64(magnitude), isExact)
    }

    /// How to round a discarded remainder, as resolved from ``MediaTime/RoundingMethod``.
    enum Direction: Sendable, Equatable {
        case halfAwayFromZero
        case towardZero
        case awayFromZero
        case towardPositiveInfinity
        case towardNegativeInfinity
        /// Toward zero, except that a negative value never becomes zero.
        case quickTimeTowardZero

        func roundsAwayFromZero(isNegative: Bool, half: HalfComparison) -> Bool {
            switch self {
            case .halfAwayFromZero: half != .below
            case .towardZero, .quickTimeTowardZero: false
            case .awayFromZero: true
            case .towardPositiveInfinity: !isNegative
            case .towardNegativeInfinity: isNegative
            }
        }
    }

    /// Where a non-zero discarded fraction lies relative to one half.
    enum HalfComparison: Sendable, Equatable {
        case below, exactlyHalf, above
    }

    /// Shifts the 256-bit number `high:low` right by `count` bits, reporting the highest
    /// discarded bit (`halfBit`) and whether any lower discarded bit was set (`sticky`).
    static func shiftRight(high: UInt128, low: UInt128, by count: Int)
        -> (high: UInt128, low: UInt128, halfBit: Bool, sticky: Bool)
    {
        guard count > 0 else { return (high, low, false, false) }
        let halfBit = bit(count - 1, high: high, low: low)
        let sticky = anyBitBelow(count - 1, high: high, low: low)
        if count >= 256 { return (0, 0, halfBit, sticky) }
        if count >= 128 { return (0, high >> (count - 128), halfBit, sticky) }
        return (high >> count, (low >> count) | (high << (128 - count)), halfBit, sticky)
    }

    private static func bit(_ index: Int, high: UInt128, low: UInt128) -> Bool {
        if index < 128 { return (low >> index) & 1 == 1 }
        if index < 256 { return (high >> (index - 128)) & 1 == 1 }
        return false
    }

    /// Whether any of the bits `0 ..< count` is set.
    private static func anyBitBelow(_ count: Int, high: UInt128, low: UInt128) -> Bool {
        if count <= 0 { return false }
        if count < 128 { return low & ((1 << count) - 1) != 0 }
        if low != 0 { return true }
        if count == 128 { return false }
        if count < 256 { return high & ((1 << (count - 128)) - 1) != 0 }
        return high != 0
    }
}

/// The greatest common divisor of two unsigned integers (Euclid); `gcd(0, 0) == 0`.
func greatestCommonDivisor<T: UnsignedInteger>(_ a: T, _ b: T) -> T {
    var (a, b) = (a, b)
    while b != 0 { (a, b) = (b, a % b) }
    return a
}
