import ReelCore

/// The timing parameters of a TTML document (`ttp:` attributes of its `tt` element), as
/// TTML 1 §6.2 defines them, kept as exact ratios.
public struct TTMLTimingParameters: Sendable, Hashable {
    /// `ttp:frameRate`: frames per second before the multiplier (30 when absent).
    public var frameRate: Int64
    /// `ttp:frameRateMultiplier`, `numerator denominator` (1 1 when absent).
    public var frameRateMultiplier: (numerator: Int64, denominator: Int64) {
        get { (multiplierNumerator, multiplierDenominator) }
        set { (multiplierNumerator, multiplierDenominator) = newValue }
    }
    private var multiplierNumerator: Int64
    private var multiplierDenominator: Int64
    /// `ttp:subFrameRate` (1 when absent).
    public var subFrameRate: Int64
    /// `ttp:tickRate` as written; `nil` when absent (then ``effectiveTickRate`` applies the spec's default).
    public var tickRate: Int64?
    /// Whether `ttp:frameRate` was written (the default tick rate depends on it).
    public var frameRateIsSpecified: Bool

    /// Parameters as a `tt` element's `ttp:` attributes give them; `nil` or a default for each
    /// one the document does not write (`frameRate` `nil` is 30 fps, not specified).
    public init(frameRate: Int64? = nil, frameRateMultiplier: (numerator: Int64, denominator: Int64) = (1, 1),
                subFrameRate: Int64 = 1, tickRate: Int64? = nil) {
        self.frameRate = frameRate ?? 30
        self.frameRateIsSpecified = frameRate != nil
        self.multiplierNumerator = frameRateMultiplier.numerator
        self.multiplierDenominator = frameRateMultiplier.denominator
        self.subFrameRate = subFrameRate
        self.tickRate = tickRate
    }

    /// Frames per second: `frameRate × numerator / denominator`, as (numerator, denominator).
    public var effectiveFrameRate: (numerator: Int64, denominator: Int64) {
        (frameRate * multiplierNumerator, multiplierDenominator)
    }

    /// Ticks per second: `ttp:tickRate`; else, when a frame rate is written, the effective
    /// frame rate × the sub-frame rate; else 1 (TTML 1 §6.2.10).
    public var effectiveTickRate: (numerator: Int64, denominator: Int64) {
        if let tickRate { return (tickRate, 1) }
        if frameRateIsSpecified {
            let (numerator, denominator) = effectiveFrameRate
            return (numerator * subFrameRate, denominator)
        }
        return (1, 1)
    }
}

/// TTML time expressions (TTML 1 §10.3.1) read into exact `MediaTime`s (ReelCore):
/// - clock time `hh:mm:ss`, `hh:mm:ss.fraction`, `hh:mm:ss:frames`, `hh:mm:ss:frames.subframes`;
/// - offset time `count(.fraction)?` with a metric `h`, `m`, `s`, `ms`, `f` (frames) or `t` (ticks).
///
/// No floating point: a time is a ratio of integers until it becomes a `MediaTime`.
public enum TTMLTime {
    /// The time `expression` denotes, or `nil` when it is not a TTML time expression (or is
    /// out of range: minutes or seconds past 59, frames past the frame rate).
    public static func parse(_ expression: String, parameters: TTMLTimingParameters = TTMLTimingParameters()) -> MediaTime? {
        let text = expression.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.unicodeScalars.allSatisfy(\.isASCII) else { return nil }
        let ratio = text.contains(":") ? clockTime(text, parameters) : offsetTime(text, parameters)
        return ratio.flatMap(\.mediaTime)
    }

    private static func clockTime(_ text: String, _ parameters: TTMLTimingParameters) -> Ratio? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3 || fields.count == 4 else { return nil }
        guard fields[0].count >= 2, let hours = digits(fields[0]),
              fields[1].count == 2, let minutes = digits(fields[1]), minutes < 60 else { return nil }
        var total = Ratio(hours * 3600 + minutes * 60)
        if fields.count == 3 {
            // ss or ss.fraction
            let parts = fields[2].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0].count == 2, let seconds = digits(parts[0]), seconds < 60 else { return nil }
            total = total + Ratio(seconds)
            if parts.count == 2 {
                guard let fraction = fraction(parts[1]) else { return nil }
                total = total + fraction
            }
        } else {
            guard fields[2].count == 2, let seconds = digits(fields[2]), seconds < 60 else { return nil }
            total = total + Ratio(seconds)
            let parts = fields[3].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            guard !parts[0].isEmpty, let frames = digits(parts[0]) else { return nil }
            let (rate, rateDenominator) = parameters.effectiveFrameRate
            guard rate > 0, rateDenominator > 0 else { return nil }
            // A frame count names a frame within the second: below the (rounded-up) frame rate.
            guard frames < (rate + rateDenominator - 1) / rateDenominator else { return nil }
            // frames / (rate / rateDenominator) seconds
            total = total + Ratio(Int128(frames) * Int128(rateDenominator), Int128(rate))
            if parts.count == 2 {
                guard !parts[1].isEmpty, let subFrames = digits(parts[1]), subFrames < parameters.subFrameRate else { return nil }
                total = total + Ratio(Int128(subFrames) * Int128(rateDenominator), Int128(rate) * Int128(parameters.subFrameRate))
            }
        }
        return total
    }

    private static func offsetTime(_ text: String, _ parameters: TTMLTimingParameters) -> Ratio? {
        let metricStart = text.firstIndex { !$0.isASCIIDigit && $0 != "." } ?? text.endIndex
        let number = text[..<metricStart]
        let metric = text[metricStart...]
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !parts[0].isEmpty, let whole = digits(parts[0]) else { return nil }
        var count = Ratio(whole)
        if parts.count == 2 {
            guard let fraction = fraction(parts[1]) else { return nil }
            count = count + fraction
        }
        switch metric {
        case "h": return count * Ratio(3600)
        case "m": return count * Ratio(60)
        case "s": return count
        case "ms": return count * Ratio(1, 1000)
        case "f":
            let (rate, denominator) = parameters.effectiveFrameRate
            guard rate > 0, denominator > 0 else { return nil }
            return count * Ratio(Int128(denominator), Int128(rate))
        case "t":
            let (rate, denominator) = parameters.effectiveTickRate
            guard rate > 0, denominator > 0 else { return nil }
            return count * Ratio(Int128(denominator), Int128(rate))
        default: return nil
        }
    }

    /// A run of ASCII digits as a number (at most 15, so sums stay far from overflow).
    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 15, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int64(text)
    }

    /// `0.digits` exactly (at most 18 digits).
    private static func fraction(_ text: Substring) -> Ratio? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy(\.isASCIIDigit), let value = Int128(text) else { return nil }
        var scale: Int128 = 1
        for _ in 0..<text.count { scale *= 10 }
        return Ratio(value, scale)
    }
}

/// A non-negative exact ratio of 128-bit integers, reduced.
struct Ratio: Hashable {
    var numerator: Int128
    var denominator: Int128

    init(_ numerator: Int128, _ denominator: Int128 = 1) {
        let divisor = Ratio.gcd(numerator.magnitude, denominator.magnitude)
        self.numerator = numerator / Int128(divisor)
        self.denominator = denominator / Int128(divisor)
    }

    init(_ value: Int64) { self.init(Int128(value), 1) }

    static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a == 0 ? 1 : a
    }

    static func + (lhs: Ratio, rhs: Ratio) -> Ratio {
        let divisor = Int128(gcd(lhs.denominator.magnitude, rhs.denominator.magnitude))
        let lhsFactor = rhs.denominator / divisor
        return Ratio(lhs.numerator * lhsFactor + rhs.numerator * (lhs.denominator / divisor), lhs.denominator * lhsFactor)
    }

    static func * (lhs: Ratio, rhs: Ratio) -> Ratio {
        let a = gcd(lhs.numerator.magnitude, rhs.denominator.magnitude)
        let b = gcd(rhs.numerator.magnitude, lhs.denominator.magnitude)
        return Ratio((lhs.numerator / Int128(a)) * (rhs.numerator / Int128(b)),
                     (lhs.denominator / Int128(b)) * (rhs.denominator / Int128(a)))
    }

    /// The ratio as a time: exact when its reduced denominator fits a timescale, else rounded
    /// (half up) to nanoseconds; `nil` when it does not fit at all.
    var mediaTime: MediaTime? {
        if denominator <= Int128(MediaTime.maxTimescale), let value = Int64(exactly: numerator) {
            return MediaTime(value: value, timescale: Int32(denominator))
        }
        let nanoseconds = (numerator * 1_000_000_000 + denominator / 2) / denominator
        guard let value = Int64(exactly: nanoseconds) else { return nil }
        return MediaTime(value: value, timescale: 1_000_000_000)
    }
}
