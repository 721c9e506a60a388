/// A half-open range of media time, `start ..< start + duration` (as `CMTimeRange`).
///
/// A range is ``isValid`` when its start and duration are valid times, the duration is in
/// epoch 0 and not negative. Ranges never span epochs: operations on two ranges need
/// starts in the same epoch. The end is *not* part of the range, so
/// `range.contains(range.end)` is always `false`.
///
/// All comparisons use the ``MediaTime`` order, and all arithmetic the ``MediaTime`` rules
/// (so a range may start or end at an infinity, or have an indefinite duration).
public struct TimeRange: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The first time in the range.
    public let start: MediaTime

    /// The length of the range; epoch 0 and not negative in a valid range.
    public let duration: MediaTime

    /// The empty range at zero.
    public static let zero = TimeRange(start: .zero, duration: .zero)

    /// An invalid range: invalid start and duration.
    public static let invalid = TimeRange(start: .invalid, duration: .invalid)

    /// Creates the range `start ..< start + duration` (as `CMTimeRangeMake`).
    ///
    /// A `duration` in a non-zero epoch gives ``invalid``. Other invalid combinations (a
    /// negative duration, an invalid start) are stored as given and reported by ``isValid``.
    public init(start: MediaTime, duration: MediaTime) {
        if duration.isNumeric && duration.epoch != 0 {
            self.start = .invalid
            self.duration = .invalid
        } else {
            self.start = start
            self.duration = duration
        }
    }

    /// Creates the range `start ..< end`, with duration `end - start` (as
    /// `CMTimeRangeFromTimeToTime`); `end` before `start` gives a negative, invalid range,
    /// and times in different epochs an invalid one.
    public init(start: MediaTime, end: MediaTime) {
        self.init(start: start, duration: end - start)
    }

    /// The first time after the range, `start + duration` (as `CMTimeRangeGetEnd`);
    /// ``MediaTime/invalid`` for an invalid range.
    public var end: MediaTime {
        isValid ? start + duration : .invalid
    }

    /// Whether the range is valid: start and duration are valid (numeric, infinite or
    /// indefinite) times, and the duration is in epoch 0 and at least zero
    /// (`CMTIMERANGE_IS_VALID`; a `-infinity` duration is not valid).
    public var isValid: Bool {
        start.isValid && duration.isValid && duration.epoch == 0 && duration >= .zero
    }

    /// Whether the range is valid and has a zero duration (`CMTIMERANGE_IS_EMPTY`).
    public var isEmpty: Bool {
        isValid && duration == .zero
    }

    /// Whether the range is valid and its start or duration is indefinite
    /// (`CMTIMERANGE_IS_INDEFINITE`).
    public var isIndefinite: Bool {
        isValid && (start.isIndefinite || duration.isIndefinite)
    }

    /// Whether `time` is in the range: `start <= time < end` (as `CMTimeRangeContainsTime`).
    ///
    /// An invalid range contains nothing, and no range contains an invalid or indefinite
    /// time. An empty range contains nothing.
    public func contains(_ time: MediaTime) -> Bool {
        guard isValid, time.isValid, !time.isIndefinite else { return false }
        return start <= time && time < end
    }

    /// Whether `other` lies within this range: `start <= other.start` and
    /// `other.end <= end` (as `CMTimeRangeContainsTimeRange`). Both ranges must be valid.
    /// An empty `other` is contained when it lies between this range's start and end.
    public func contains(_ other: TimeRange) -> Bool {
        guard isValid, other.isValid else { return false }
        return start <= other.start && other.end <= end
    }

    /// The largest range both ranges include (as `CMTimeRangeGetIntersection`).
    ///
    /// Starts at the later start and ends at the earlier end. When the ranges are disjoint
    /// (or only touch), the result is the empty range at the later start. Either range
    /// invalid, or starts in different epochs, give ``invalid``.
    public func intersection(_ other: TimeRange) -> TimeRange {
        guard isValid, other.isValid, start.epoch == other.start.epoch else { return .invalid }
        let lower = Swift.max(start, other.start)
        let upper = Swift.min(end, other.end)
        guard lower < upper else { return TimeRange(start: lower, duration: .zero) }
        return TimeRange(start: lower, end: upper)
    }

    /// The smallest range that includes both ranges (as `CMTimeRangeGetUnion`): from the
    /// earlier start to the later end. Like Core Media, this spans any gap between them,
    /// and an empty range still counts by its position (so the union of `[0, 1)` and the
    /// empty range at 5 is `[0, 5)`). Either range invalid, or starts in different
    /// epochs, give ``invalid``.
    public func union(_ other: TimeRange) -> TimeRange {
        guard isValid, other.isValid, start.epoch == other.start.epoch else { return .invalid }
        return TimeRange(start: Swift.min(start, other.start), end: Swift.max(end, other.end))
    }

    /// `{start: …, duration: …}`, with both times as ``MediaTime/description`` prints them.
    public var description: String {
        "{start: \(start), duration: \(duration)}"
    }
}
