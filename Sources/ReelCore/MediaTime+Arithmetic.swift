extension MediaTime {
    // MARK: - Addition and subtraction

    /// The sum of two times (as `CMTimeAdd`).
    ///
    /// **Numeric operands.** The result timescale is the operands' timescale if they share
    /// one, else their least common multiple. If that exceeds ``maxTimescale``, the result
    /// is the exact sum rounded (half away from zero) to ``maxTimescale``. If the value
    /// overflows `Int64`, the timescale is halved (rounding the same way) until it fits; if
    /// it does not fit at timescale 1, the result is `±infinity`. The sum is formed in 128
    /// bits, so nothing overflows on the way.
    ///
    /// **Rounding flag.** Set if anything was rounded, or if either operand has
    /// ``Flags-swift.struct/hasBeenRounded``.
    ///
    /// **Special times**, in this order of precedence:
    /// - either operand invalid → ``invalid``;
    /// - `+infinity + -infinity` (either order) → ``invalid``;
    /// - otherwise, if an operand is infinite, that infinity (so `+infinity + indefinite`
    ///   is `+infinity`, as Core Media documents);
    /// - otherwise, if an operand is indefinite → ``indefinite``.
    ///
    /// **Epochs** (numeric operands only), as documented for `CMTimeAdd`: epoch 0 holds
    /// durations, which can be added to times in any epoch:
    /// - equal epochs → epoch 0 (two times in the same non-zero epoch give a duration);
    /// - one epoch 0, the other `n` → epoch `n`;
    /// - two different non-zero epochs → ``invalid``.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, subtracting: false)
    }

    /// The difference of two times (as `CMTimeSubtract`).
    ///
    /// Follows the same rules as ``+(_:_:)`` (timescales, overflow, rounding flag, epochs),
    /// with these for the infinities: `+infinity - +infinity` and `-infinity - -infinity`
    /// are ``invalid``; `+infinity - -infinity` is `+infinity`; `-infinity - +infinity` is
    /// `-infinity`; `numeric - +infinity` is `-infinity` and `numeric - -infinity` is
    /// `+infinity`.
    ///
    /// Epochs: `a - a` is zero in epoch 0 for any epoch; a duration (epoch 0) can be
    /// subtracted from a time in epoch `n`, giving epoch `n`; Core Media does not document
    /// `duration - time(epoch n)`, which Reel also answers in epoch `n` (the rule is
    /// symmetric, so `a - b == a + (-b)`).
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, subtracting: true)
    }

    /// Adds `rhs` to `lhs`; see ``+(_:_:)``.
    public static func += (lhs: inout MediaTime, rhs: MediaTime) {
        lhs = lhs + rhs
    }

    /// Subtracts `rhs` from `lhs`; see ``-(_:_:)``.
    public static func -= (lhs: inout MediaTime, rhs: MediaTime) {
        lhs = lhs - rhs
    }

    /// The negation of a time.
    ///
    /// A numeric time keeps its timescale, epoch and rounding flag; `+infinity` and
    /// `-infinity` swap; invalid and indefinite times are unchanged. The one value whose
    /// negation does not fit, `Int64.min`, is halved like any overflow (see ``+(_:_:)``).
    public static prefix func - (time: MediaTime) -> MediaTime {
        switch time.kind {
        case .positiveInfinity: return .negativeInfinity
        case .negativeInfinity: return .positiveInfinity
        case .invalid, .indefinite: return time
        case .numeric:
            if time.value != .min {
                return MediaTime(
                    uncheckedValue: -time.value, timescale: time.timescale, flags: time.flags, epoch: time.epoch)
            }
            return rounded(
                ExactRatio(value: -Int128(time.value), timescale: Int64(time.timescale)),
                timescale: time.timescale, epoch: time.epoch,
                inheritsRounding: time.flags.contains(.hasBeenRounded))
        }
    }

    /// The absolute value of a time (as `CMTimeAbsoluteValue`): a negative numeric time is
    /// negated (see ``-(_:)``), `-infinity` becomes `+infinity`, and every other time is
    /// returned unchanged.
    public static func abs(_ time: MediaTime) -> MediaTime {
        switch time.kind {
        case .negativeInfinity: .positiveInfinity
        case .numeric where time.value < 0: -time
        default: time
        }
    }

    private static func combine(_ lhs: MediaTime, _ rhs: MediaTime, subtracting: Bool) -> MediaTime {
        let lhsKind = lhs.kind
        var rhsKind = rhs.kind
        if subtracting {
            // Subtracting an infinity adds the opposite one.
            if rhsKind == .positiveInfinity {
                rhsKind = .negativeInfinity
            } else if rhsKind == .negativeInfinity {
                rhsKind = .positiveInfinity
            }
        }
        switch (lhsKind, rhsKind) {
        case (.invalid, _), (_, .invalid):
            return .invalid
        case (.positiveInfinity, .negativeInfinity), (.negativeInfinity, .positiveInfinity):
            return .invalid
        case (.positiveInfinity, _), (_, .positiveInfinity):
            return .positiveInfinity
        case (.negativeInfinity, _), (_, .negativeInfinity):
            return .negativeInfinity
        case (.indefinite, _), (_, .indefinite):
            return .indefinite
        case (.numeric, .numeric):
            break
        }

        let epoch: Int64
        if lhs.epoch == rhs.epoch {
            epoch = 0
        } else if lhs.epoch == 0 {
            epoch = rhs.epoch
        } else if rhs.epoch == 0 {
            epoch = lhs.epoch
        } else {
            return .invalid
        }
        let inheritsRounding = lhs.flags.contains(.hasBeenRounded) || rhs.flags.contains(.hasBeenRounded)

        // The exact result over the least common multiple (at most 2^62), in 128 bits.
        let lhsScale = Int64(lhs.timescale)
        let rhsScale = Int64(rhs.timescale)
        let divisor = Int64(greatestCommonDivisor(UInt64(lhsScale), UInt64(rhsScale)))
        let lcm = lhsScale / divisor * rhsScale
        let lhsPart = Int128(lhs.value) * Int128(lcm / lhsScale)
        let rhsPart = Int128(rhs.value) * Int128(lcm / rhsScale)
        let sum = subtracting ? lhsPart - rhsPart : lhsPart + rhsPart

        let timescale = lcm <= Int64(maxTimescale) ? Int32(lcm) : maxTimescale
        return rounded(
            ExactRatio(value: sum, timescale: lcm), timescale: timescale, epoch: epoch,
            inheritsRounding: inheritsRounding)
    }

    // MARK: - Multiplication

    /// The product of a time and an integer (as `CMTimeMultiply`).
    ///
    /// A numeric result keeps the time's timescale and epoch; if the value overflows `Int64`
    /// the timescale is halved (rounding half away from zero, which sets
    /// ``Flags-swift.struct/hasBeenRounded``) until it fits, and the result is `±infinity`
    /// if it does not fit at timescale 1. The rounding flag is inherited from `time`.
    ///
    /// Special times: invalid stays invalid, indefinite stays indefinite; an infinity times a
    /// positive number is that infinity, times a negative number the opposite one, and times
    /// zero ``invalid`` (Core Media does not document `infinity × 0`; Reel follows IEEE 754).
    public func multiplied(by multiplier: Int32) -> MediaTime {
        switch kind {
        case .invalid, .indefinite:
            return self
        case .positiveInfinity, .negativeInfinity:
            return Self.infinity(times: multiplier.signum(), from: self)
        case .numeric:
            let product = Int128(value) * Int128(multiplier)
            return Self.rounded(
                ExactRatio(value: product, timescale: Int64(timescale)), timescale: timescale, epoch: epoch,
                inheritsRounding: flags.contains(.hasBeenRounded))
        }
    }

    /// The product of a time and an integer; see ``multiplied(by:)``.
    public static func * (time: MediaTime, multiplier: Int32) -> MediaTime {
        time.multiplied(by: multiplier)
    }

    /// The product of an integer and a time; see ``multiplied(by:)``.
    public static func * (multiplier: Int32, time: MediaTime) -> MediaTime {
        time.multiplied(by: multiplier)
    }

    /// Multiplies `time` by an integer; see ``multiplied(by:)``.
    public static func *= (time: inout MediaTime, multiplier: Int32) {
        time = time.multiplied(by: multiplier)
    }

    /// The product of a time and a floating-point number (as `CMTimeMultiplyByFloat64`).
    ///
    /// The result timescale starts at the time's timescale, doubled until it is at least
    /// 65 536. The value is the exact product of the time and the multiplier (the `Double`
    /// taken at its exact binary value), rounded half away from zero at that timescale; if
    /// it overflows `Int64`, the timescale is halved until it fits, and the result is
    /// `±infinity` if it does not fit at timescale 1. ``Flags-swift.struct/hasBeenRounded``
    /// is set when a remainder was discarded or `time` was rounded. The epoch is kept.
    ///
    /// Special cases: an invalid time or a `nan` multiplier gives ``invalid``; an indefinite
    /// time stays indefinite; an infinity times a positive (negative) multiplier is that
    /// (the opposite) infinity; a non-zero time times an infinite multiplier is the infinity
    /// of the product's sign; and `infinity × 0` and `0 × infinity` are ``invalid``
    /// (undocumented by Core Media; Reel follows IEEE 754).
    ///
    /// There is deliberately no `*` operator for `Double`: next to the `Int32` one it would
    /// make `time * 3` ambiguous, and the change of timescale is worth spelling out.
    public func multiplied(byFloat64 multiplier: Double) -> MediaTime {
        switch kind {
        case .invalid, .indefinite:
            return self
        case .positiveInfinity, .negativeInfinity:
            if multiplier.isNaN { return .invalid }
            return Self.infinity(times: multiplier == 0 ? 0 : (multiplier < 0 ? -1 : 1), from: self)
        case .numeric:
            break
        }
        if multiplier.isNaN { return .invalid }
        let isNegative = (value < 0) != (multiplier.sign == .minus)
        if multiplier.isInfinite {
            if value == 0 { return .invalid }
            return isNegative ? .negativeInfinity : .positiveInfinity
        }

        var resultScale = Int64(timescale)
        while resultScale < 65_536 { resultScale *= 2 }

        let parts = Self.binaryParts(of: multiplier)
        var numerator = UInt128(value.magnitude) * UInt128(parts.significand)
        var shift = 0
        if parts.exponent >= 0 {
            guard let shifted = Self.shiftedLeft(numerator, by: parts.exponent) else {
                // At least 2^127 / 2^31 seconds: no timescale can hold it.
                return isNegative ? .negativeInfinity : .positiveInfinity
            }
            numerator = shifted
        } else {
            shift = -parts.exponent
        }
        let exact = ExactRatio(
            isNegative: isNegative, numerator: numerator, denominator: UInt128(timescale), shift: shift)
        return Self.rounded(
            exact, timescale: Int32(resultScale), epoch: epoch, inheritsRounding: flags.contains(.hasBeenRounded))
    }

    /// `time · multiplier / divisor` (as `CMTimeMultiplyByRatio`).
    ///
    /// The exact rational result is kept whenever it can be: the ratio is reduced, and the
    /// result is `(value · multiplier) / (timescale · divisor)` — so
    /// `43804/600 × 1/4` is `43804/2400`, and `x × 3/3` is exactly `x` even for values near
    /// `Int64.max` (the product is formed in 128 bits). If that does not fit, the fraction
    /// is reduced further; if it still does not fit, the exact result is rounded half away
    /// from zero at the largest timescale it allows (at most ``maxTimescale``), halving the
    /// timescale until the value fits, and giving `±infinity` if it does not fit at
    /// timescale 1. ``Flags-swift.struct/hasBeenRounded`` is set when anything was rounded
    /// or `time` was rounded. The epoch is kept.
    ///
    /// Special cases, as documented for `CMTimeMultiplyByRatio`: an invalid time gives
    /// ``invalid`` and an indefinite time stays indefinite; a zero `divisor` gives
    /// ``invalid`` when `multiplier` or the (numeric) time is zero, and otherwise the
    /// infinity of the sign of `time × multiplier`; an infinite time gives the infinity of
    /// the sign of `time × multiplier × divisor`, or ``invalid`` when `multiplier` is zero.
    public func multiplied(byRatio multiplier: Int32, divisor: Int32) -> MediaTime {
        let sign: Int
        switch kind {
        case .invalid, .indefinite:
            return self
        case .positiveInfinity:
            sign = 1
        case .negativeInfinity:
            sign = -1
        case .numeric:
            sign = Int(value.signum())
        }
        if divisor == 0 {
            if multiplier == 0 || (isNumeric && value == 0) { return .invalid }
            return sign * Int(multiplier.signum()) < 0 ? .negativeInfinity : .positiveInfinity
        }
        if !isNumeric {
            return Self.infinity(times: multiplier.signum() * divisor.signum(), from: self)
        }

        // Reduce the ratio and make the divisor positive.
        var ratioNumerator = Int64(multiplier)
        var ratioDenominator = Int64(divisor)
        let ratioGCD = Int64(greatestCommonDivisor(ratioNumerator.magnitude, ratioDenominator.magnitude))
        ratioNumerator /= ratioGCD
        ratioDenominator /= ratioGCD
        if ratioDenominator < 0 {
            ratioNumerator = -ratioNumerator
            ratioDenominator = -ratioDenominator
        }

        let inheritsRounding = flags.contains(.hasBeenRounded)
        let exactFlags: Flags = inheritsRounding ? [.valid, .hasBeenRounded] : .valid
        let numerator = Int128(value) * Int128(ratioNumerator)  // |numerator| < 2^94
        let denominator = Int64(timescale) * ratioDenominator  // < 2^62
        if let exact = Self.exactTime(numerator, denominator, flags: exactFlags, epoch: epoch) {
            return exact
        }
        let fractionGCD = Int128(greatestCommonDivisor(numerator.magnitude, UInt128(denominator)))
        let reducedNumerator = numerator / fractionGCD
        let reducedDenominator = Int64(Int128(denominator) / fractionGCD)
        if let exact = Self.exactTime(reducedNumerator, reducedDenominator, flags: exactFlags, epoch: epoch) {
            return exact
        }
        let timescale = reducedDenominator <= Int64(Self.maxTimescale) ? Int32(reducedDenominator) : Self.maxTimescale
        return Self.rounded(
            ExactRatio(value: numerator, timescale: denominator), timescale: timescale, epoch: epoch,
            inheritsRounding: inheritsRounding)
    }

    /// `numerator / denominator` as a time, if both fit as they are.
    private static func exactTime(_ numerator: Int128, _ denominator: Int64, flags: Flags, epoch: Int64) -> MediaTime? {
        guard denominator <= Int64(maxTimescale), let value = Int64(exactly: numerator) else { return nil }
        return MediaTime(uncheckedValue: value, timescale: Int32(denominator), flags: flags, epoch: epoch)
    }

    /// An infinite `time` multiplied by something of sign `sign` (-1, 0 or 1).
    private static func infinity(times sign: some BinaryInteger, from time: MediaTime) -> MediaTime {
        if sign == 0 { return .invalid }
        return (sign < 0) == time.isPositiveInfinity ? .negativeInfinity : .positiveInfinity
    }
}
