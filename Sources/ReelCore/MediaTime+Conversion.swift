extension MediaTime {
    /// Creates the time closest to `seconds` at `preferredTimescale` (as `CMTimeMakeWithSeconds`).
    ///
    /// - `nan` gives ``invalid``, `±infinity` gives ``positiveInfinity`` / ``negativeInfinity``,
    ///   and a `preferredTimescale` that is not positive gives ``invalid``.
    /// - The value is the exact `seconds · preferredTimescale` (the `Double` taken at its
    ///   exact binary value), rounded half away from zero.
    /// - If that value does not fit in `Int64`, the timescale is halved until it does; if it
    ///   still does not fit at timescale 1, the result is `±infinity`.
    /// - ``Flags-swift.struct/hasBeenRounded`` is set when the result, converted back to
    ///   seconds (``seconds``), is not exactly `seconds` — Core Media's documented test.
    ///   So `MediaTime(seconds: 0.1, preferredTimescale: 10)` is `1/10`, not rounded, while
    ///   `MediaTime(seconds: 0.1, preferredTimescale: 3)` is `0/3`, rounded.
    ///
    /// The epoch is 0.
    public init(seconds: Double, preferredTimescale: Int32) {
        guard preferredTimescale > 0, !seconds.isNaN else {
            self = .invalid
            return
        }
        guard seconds.isFinite else {
            self = seconds < 0 ? .negativeInfinity : .positiveInfinity
            return
        }
        let parts = Self.binaryParts(of: seconds)
        let exact: ExactRatio
        if parts.exponent >= 0 {
            guard let shifted = Self.shiftedLeft(UInt128(parts.significand), by: parts.exponent) else {
                self = seconds < 0 ? .negativeInfinity : .positiveInfinity
                return
            }
            exact = ExactRatio(isNegative: parts.isNegative, numerator: shifted, denominator: 1)
        } else {
            exact = ExactRatio(
                isNegative: parts.isNegative, numerator: UInt128(parts.significand), denominator: 1,
                shift: -parts.exponent)
        }
        let result = Self.rounded(exact, timescale: preferredTimescale, epoch: 0, inheritsRounding: false)
        guard result.isNumeric else {
            self = result
            return
        }
        let isExact = Double(result.value) / Double(result.timescale) == seconds
        self.init(
            uncheckedValue: result.value, timescale: result.timescale,
            flags: isExact ? .valid : [.valid, .hasBeenRounded], epoch: 0)
    }

    /// Converts the time to `newTimescale`, rounding with `method` if the exact value has
    /// no representation there (as `CMTimeConvertScale`).
    ///
    /// - The result has timescale `newTimescale`, the same epoch, and
    ///   ``Flags-swift.struct/hasBeenRounded`` if a remainder was discarded or the time was
    ///   already rounded.
    /// - The value is computed exactly (128-bit intermediate); if it does not fit in
    ///   `Int64`, the result is ``positiveInfinity`` or ``negativeInfinity``.
    /// - Non-numeric times convert to themselves. A `newTimescale` that is not positive
    ///   gives ``invalid``.
    ///
    /// See ``RoundingMethod`` for the six methods.
    public func convertScale(_ newTimescale: Int32, method: RoundingMethod = .default) -> MediaTime {
        guard isNumeric else { return self }
        guard newTimescale > 0 else { return .invalid }
        if newTimescale == timescale { return self }

        let direction: ExactRatio.Direction
        switch method {
        case .halfAwayFromZero: direction = .halfAwayFromZero
        case .towardZero: direction = .towardZero
        case .awayFromZero: direction = .awayFromZero
        case .towardPositiveInfinity: direction = .towardPositiveInfinity
        case .towardNegativeInfinity: direction = .towardNegativeInfinity
        case .quickTime:
            direction = newTimescale < timescale ? .quickTimeTowardZero : .awayFromZero
        }
        let exact = ExactRatio(value: Int128(value), timescale: Int64(timescale))
        guard let converted = exact.value(atTimescale: newTimescale, rounding: direction) else {
            return value < 0 ? .negativeInfinity : .positiveInfinity
        }
        var flags: Flags = .valid
        if !converted.isExact || self.flags.contains(.hasBeenRounded) { flags.insert(.hasBeenRounded) }
        return MediaTime(uncheckedValue: converted.value, timescale: newTimescale, flags: flags, epoch: epoch)
    }

    // MARK: - Internal helpers

    /// The numeric time closest to `exact` at `timescale`, rounded half away from zero; if
    /// the value overflows, the timescale is halved until it fits, and the result is
    /// `±infinity` if it does not fit even at timescale 1. This is the overflow rule Core
    /// Media documents for addition, subtraction and multiplication.
    ///
    /// ``Flags-swift.struct/hasBeenRounded`` is set when a remainder was discarded, or when
    /// `inheritsRounding` (an operand was rounded).
    static func rounded(
        _ exact: ExactRatio, timescale: Int32, epoch: Int64, inheritsRounding: Bool
    ) -> MediaTime {
        var timescale = timescale
        while true {
            if let result = exact.value(atTimescale: timescale, rounding: .halfAwayFromZero) {
                let flags: Flags = result.isExact && !inheritsRounding ? .valid : [.valid, .hasBeenRounded]
                return MediaTime(uncheckedValue: result.value, timescale: timescale, flags: flags, epoch: epoch)
            }
            if timescale == 1 {
                return exact.isNegative ? .negativeInfinity : .positiveInfinity
            }
            timescale /= 2
        }
    }

    /// A finite `Double` as `±significand · 2^exponent`, exactly.
    static func binaryParts(of x: Double) -> (isNegative: Bool, significand: UInt64, exponent: Int) {
        let isNegative = x.sign == .minus
        if x == 0 { return (isNegative, 0, 0) }
        let fraction = x.significandBitPattern
        let biased = Int(x.exponentBitPattern)
        if biased == 0 {
            // Subnormal: 0.fraction · 2^-1022.
            return (isNegative, fraction, -1074)
        }
        return (isNegative, fraction | (1 << 52), biased - 1075)
    }

    /// `number << count`, or `nil` if the result would be 2^127 or more.
    static func shiftedLeft(_ number: UInt128, by count: Int) -> UInt128? {
        if number == 0 { return 0 }
        let bitLength = UInt128.bitWidth - number.leadingZeroBitCount
        guard bitLength + count <= 127 else { return nil }
        return number << count
    }
}
