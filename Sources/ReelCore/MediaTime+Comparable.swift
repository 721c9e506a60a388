extension MediaTime: Comparable, Hashable {
    /// Whether two times are equal in the ``MediaTime`` ordering (`CMTimeCompare(a, b) == 0`).
    ///
    /// Numeric times are equal when they are in the same epoch and denote exactly the same
    /// number of seconds, whatever their timescales: `1/2 == 2/4`. Special times are equal
    /// to the times of the same kind: all invalid times are equal, and so on.
    ///
    /// Equality ignores ``Flags-swift.struct/hasBeenRounded``: a rounded `1/3` equals an
    /// exact `1/3`. Compare ``flags`` as well when that matters.
    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        compare(lhs, rhs) == 0
    }

    /// Whether `lhs` comes before `rhs` in the `CMTimeCompare` order:
    /// `-infinity < every numeric time < indefinite < +infinity < invalid`.
    ///
    /// Numeric times in a larger epoch are later, whatever their values; within an epoch
    /// they are compared exactly (by 128-bit cross multiplication, never through `Double`).
    /// This is a total order, so `Swift.min` and `Swift.max` give `CMTimeMinimum` and
    /// `CMTimeMaximum`, and arrays of times sort safely.
    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Hashes the time consistently with ``==(_:_:)``: numeric times by their reduced
    /// fraction and epoch, special times by their kind alone.
    public func hash(into hasher: inout Hasher) {
        let kind = self.kind
        hasher.combine(kind.rawValue)
        guard kind == .numeric else { return }
        let divisor = greatestCommonDivisor(value.magnitude, UInt64(timescale))
        hasher.combine(Int128(value) / Int128(divisor))
        hasher.combine(Int64(timescale) / Int64(divisor))
        hasher.combine(epoch)
    }

    /// -1, 0 or 1 as `lhs` is before, equal to or after `rhs` (as `CMTimeCompare`).
    static func compare(_ lhs: MediaTime, _ rhs: MediaTime) -> Int {
        let lhsKind = lhs.kind
        let rhsKind = rhs.kind
        if lhsKind != rhsKind { return lhsKind < rhsKind ? -1 : 1 }
        guard lhsKind == .numeric else { return 0 }
        if lhs.epoch != rhs.epoch { return lhs.epoch < rhs.epoch ? -1 : 1 }
        let left = Int128(lhs.value) * Int128(rhs.timescale)
        let right = Int128(rhs.value) * Int128(lhs.timescale)
        return left < right ? -1 : (left == right ? 0 : 1)
    }
}
