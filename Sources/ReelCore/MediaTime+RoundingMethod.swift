extension MediaTime {
    /// How ``MediaTime/convertScale(_:method:)`` rounds when the exact value has no
    /// representation at the new timescale (as `CMTimeRoundingMethod`).
    ///
    /// The "fraction" below is the part of the exact value, in units of the new timescale,
    /// that the result discards. Whenever it is non-zero the result has
    /// ``Flags-swift.struct/hasBeenRounded`` set.
    public enum RoundingMethod: Sendable, Hashable, CaseIterable {
        /// Toward zero if the fraction's magnitude is below 0.5, away from zero if it is
        /// 0.5 or more: `2.5 → 3`, `-2.5 → -3`, `2.4 → 2`. This is the default, and the
        /// rounding every other operation uses.
        case halfAwayFromZero

        /// Toward zero whenever the fraction is non-zero (truncation): `2.9 → 2`, `-2.9 → -2`.
        case towardZero

        /// Away from zero whenever the fraction is non-zero: `2.1 → 3`, `-2.1 → -3`.
        case awayFromZero

        /// Core Media's QuickTime rule: ``towardZero`` when converting to a smaller
        /// timescale (less precision), ``awayFromZero`` when converting to a larger one
        /// (more precision); and a negative time is never rounded to zero: it becomes the
        /// smallest negative time, `-1/newTimescale`.
        ///
        /// This is Apple's documented text for `kCMTimeRoundingMethod_QuickTime`. Exact
        /// conversions (including every conversion to the same timescale) do not round.
        case quickTime

        /// Toward +infinity whenever the fraction is non-zero (ceiling): `2.1 → 3`, `-2.9 → -2`.
        case towardPositiveInfinity

        /// Toward -infinity whenever the fraction is non-zero (floor): `2.9 → 2`, `-2.1 → -3`.
        case towardNegativeInfinity

        /// The default rounding method, ``halfAwayFromZero`` (`kCMTimeRoundingMethod_Default`).
        public static let `default`: RoundingMethod = .halfAwayFromZero
    }
}
