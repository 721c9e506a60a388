/// A rational time, `value / timescale` seconds: Reel's only time type, for timestamps
/// and durations alike.
///
/// `MediaTime` follows Core Media's `CMTime` and its documented behaviour. A time is
/// either *numeric* (`value / timescale` seconds in an `epoch`) or one of four special
/// times: ``invalid``, ``indefinite`` (unknown, such as the duration of a live stream),
/// ``positiveInfinity`` and ``negativeInfinity``.
///
/// Arithmetic is exact whenever the result can be represented; when it cannot, the
/// result is rounded and marked with ``Flags-swift.struct/hasBeenRounded`` (see ``+(_:_:)``,
/// ``convertScale(_:method:)`` and the `multiplied` methods). Intermediate products are
/// formed in 128 or 256 bits, so nothing overflows silently; a result that does not fit
/// becomes an infinity.
///
/// Times are ordered as `CMTimeCompare` orders them:
/// `-infinity < every numeric time < indefinite < +infinity < invalid`, with numeric times
/// compared first by epoch and then exactly by value. Equality follows that order, so
/// `1/2 == 2/4`; it ignores the rounding flag.
///
/// The epoch distinguishes equal timestamps on different passes of a loop or in different
/// items of a sequence. Epoch 0 is the epoch of durations. See ``+(_:_:)`` for how epochs
/// combine.
public struct MediaTime: Sendable {
    /// The numerator: the number of `1/timescale` units. Meaningful only for numeric times.
    public let value: Int64

    /// The denominator: the units per second. Positive for every numeric time; 0 for the
    /// special times.
    public let timescale: Int32

    /// What kind of time this is, and whether it has been rounded.
    public let flags: Flags

    /// The loop or sequence pass this time belongs to; 0 for durations and most times.
    /// Meaningful only for numeric times (the special times have epoch 0).
    public let epoch: Int64

    /// The largest timescale a time can have, `0x7fffffff` (as `kCMTimeMaxTimescale`).
    public static let maxTimescale: Int32 = 0x7fff_ffff

    /// Creates a numeric time of `value / timescale` seconds in `epoch`.
    ///
    /// A `timescale` that is not positive gives ``invalid`` (a numeric time needs a
    /// positive denominator).
    public init(value: Int64, timescale: Int32, epoch: Int64 = 0) {
        guard timescale > 0 else {
            self = .invalid
            return
        }
        self.init(uncheckedValue: value, timescale: timescale, flags: .valid, epoch: epoch)
    }

    /// Creates a time of `nanoseconds` billionths of a second, at timescale 1 000 000 000.
    public init(nanoseconds: Int64) {
        self.init(value: nanoseconds, timescale: 1_000_000_000)
    }

    /// The memberwise initializer; callers keep the invariants (numeric ⇒ timescale > 0).
    init(uncheckedValue value: Int64, timescale: Int32, flags: Flags, epoch: Int64) {
        self.value = value
        self.timescale = timescale
        self.flags = flags
        self.epoch = epoch
    }

    // MARK: - Special times

    /// Zero seconds: `0/1`, epoch 0.
    public static let zero = MediaTime(uncheckedValue: 0, timescale: 1, flags: .valid, epoch: 0)

    /// An invalid time (all fields zero, no flags), the result of undefined operations such
    /// as `+infinity + -infinity`. Invalid times compare equal to each other and greater
    /// than every other time.
    public static let invalid = MediaTime(uncheckedValue: 0, timescale: 0, flags: [], epoch: 0)

    /// An indefinite (unknown) time, such as the duration of a live broadcast.
    public static let indefinite = MediaTime(
        uncheckedValue: 0, timescale: 0, flags: [.valid, .indefinite], epoch: 0)

    /// Positive infinity: later than every numeric and indefinite time.
    public static let positiveInfinity = MediaTime(
        uncheckedValue: 0, timescale: 0, flags: [.valid, .positiveInfinity], epoch: 0)

    /// Negative infinity: earlier than every other time.
    public static let negativeInfinity = MediaTime(
        uncheckedValue: 0, timescale: 0, flags: [.valid, .negativeInfinity], epoch: 0)

    // MARK: - Inspecting

    /// Whether the time is valid: numeric, infinite or indefinite (`CMTIME_IS_VALID`).
    public var isValid: Bool { flags.contains(.valid) }

    /// Whether the time is numeric: valid and neither infinite nor indefinite
    /// (`CMTIME_IS_NUMERIC`). Only numeric times have a meaningful value, timescale and epoch.
    public var isNumeric: Bool { kind == .numeric }

    /// Whether the time is indefinite (`CMTIME_IS_INDEFINITE`).
    public var isIndefinite: Bool { kind == .indefinite }

    /// Whether the time is positive infinity (`CMTIME_IS_POSITIVE_INFINITY`).
    public var isPositiveInfinity: Bool { kind == .positiveInfinity }

    /// Whether the time is negative infinity (`CMTIME_IS_NEGATIVE_INFINITY`).
    public var isNegativeInfinity: Bool { kind == .negativeInfinity }

    /// Whether the time is numeric and was rounded, or derived from a rounded time
    /// (`CMTIME_HAS_BEEN_ROUNDED`).
    public var hasBeenRounded: Bool { isNumeric && flags.contains(.hasBeenRounded) }

    /// The time in seconds, `value / timescale` computed in `Double` (the epoch is ignored):
    /// `nan` for invalid and indefinite times, `±infinity` for the infinities
    /// (as `CMTimeGetSeconds`).
    public var seconds: Double {
        switch kind {
        case .numeric: Double(value) / Double(timescale)
        case .positiveInfinity: .infinity
        case .negativeInfinity: -.infinity
        case .indefinite, .invalid: .nan
        }
    }

    // MARK: - Kind

    /// The five kinds of time, in `CMTimeCompare` order.
    enum Kind: Int, Sendable, Comparable {
        case negativeInfinity, numeric, indefinite, positiveInfinity, invalid

        static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    var kind: Kind {
        if !flags.contains(.valid) { return .invalid }
        if flags.contains(.positiveInfinity) { return .positiveInfinity }
        if flags.contains(.negativeInfinity) { return .negativeInfinity }
        if flags.contains(.indefinite) { return .indefinite }
        return .numeric
    }
}
