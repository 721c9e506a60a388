extension MediaTime {
    /// The flag bits of a ``MediaTime``, with the same meanings and bit values as
    /// `CMTimeFlags`.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32

        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        /// Set on every valid time (numeric, infinite or indefinite); a time without it is
        /// invalid whatever its other flags.
        public static let valid = Flags(rawValue: 1 << 0)

        /// Set when the value was rounded, or derived from a rounded time.
        public static let hasBeenRounded = Flags(rawValue: 1 << 1)

        /// Set on positive infinity.
        public static let positiveInfinity = Flags(rawValue: 1 << 2)

        /// Set on negative infinity.
        public static let negativeInfinity = Flags(rawValue: 1 << 3)

        /// Set on indefinite (unknown) times.
        public static let indefinite = Flags(rawValue: 1 << 4)
    }
}
