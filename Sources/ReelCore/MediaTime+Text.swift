extension MediaTime: CustomStringConvertible, Codable {
    /// A human-readable description: `1001/30000 (0.0334 s)` for a numeric time, with
    /// `, epoch N` appended when the epoch is not 0 and `, rounded` when the time has been
    /// rounded; `invalid`, `indefinite`, `+infinity` or `-infinity` for the special times.
    ///
    /// The seconds are exact `value / timescale` rounded half away from zero to four
    /// decimals (computed in integers, not `Double`). Use ``stringValue`` for a
    /// machine-readable form.
    public var description: String {
        guard isNumeric else { return stringValue }
        var text = "\(value)/\(timescale) (\(secondsText) s)"
        if epoch != 0 { text += ", epoch \(epoch)" }
        if flags.contains(.hasBeenRounded) { text += ", rounded" }
        return text
    }

    /// The machine-readable form used by ``init(string:)`` and `Codable`: `value/timescale`
    /// (such as `1001/30000`), followed by `@epoch` only when the epoch is not 0 (such as
    /// `1001/30000@2`); `invalid`, `indefinite`, `+infinity` or `-infinity` for the special
    /// times. The rounding flag is not part of it.
    public var stringValue: String {
        switch kind {
        case .numeric: epoch == 0 ? "\(value)/\(timescale)" : "\(value)/\(timescale)@\(epoch)"
        case .invalid: "invalid"
        case .indefinite: "indefinite"
        case .positiveInfinity: "+infinity"
        case .negativeInfinity: "-infinity"
        }
    }

    /// Parses the form ``stringValue`` produces.
    ///
    /// Accepts `value/timescale` with an optional `@epoch`, where `value` and `epoch` are
    /// decimal `Int64`s with an optional leading `-` and `timescale` is a decimal number
    /// from 1 to ``maxTimescale``; or one of `invalid`, `indefinite`, `+infinity`,
    /// `-infinity`. Returns `nil` for anything else: no spaces, no `+` sign, no empty
    /// parts, no timescale of 0 or less.
    public init?(string: String) {
        switch string {
        case "invalid": self = .invalid; return
        case "indefinite": self = .indefinite; return
        case "+infinity": self = .positiveInfinity; return
        case "-infinity": self = .negativeInfinity; return
        default: break
        }
        let fraction: Substring
        let epoch: Int64
        let atParts = string.split(separator: "@", omittingEmptySubsequences: false)
        switch atParts.count {
        case 1:
            fraction = atParts[0]
            epoch = 0
        case 2:
            guard let parsed = Self.parseInteger(atParts[1], allowsMinus: true) else { return nil }
            fraction = atParts[0]
            epoch = parsed
        default:
            return nil
        }
        let slashParts = fraction.split(separator: "/", omittingEmptySubsequences: false)
        guard slashParts.count == 2,
            let value = Self.parseInteger(slashParts[0], allowsMinus: true),
            let timescale = Self.parseInteger(slashParts[1], allowsMinus: false),
            timescale > 0, timescale <= Int64(Self.maxTimescale)
        else { return nil }
        self.init(value: value, timescale: Int32(timescale), epoch: epoch)
    }

    /// Encodes the time as the single string ``stringValue``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }

    /// Decodes a time from a single string in the ``stringValue`` form; throws
    /// `DecodingError.dataCorrupted` for anything ``init(string:)`` rejects.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let time = MediaTime(string: string) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Expected \"value/timescale\" with a positive timescale, or invalid, "
                    + "indefinite, +infinity, -infinity; got \"\(string)\"")
        }
        self = time
    }

    /// A decimal integer: ASCII digits, optionally after one `-`; `nil` if malformed or out
    /// of `Int64` range.
    private static func parseInteger(_ text: Substring, allowsMinus: Bool) -> Int64? {
        var digits = text
        if allowsMinus, digits.first == "-" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }

    /// `|value / timescale|` rounded half away from zero to four decimals, with a leading
    /// `-` for negative values (as `printf("%.4f")` prints them).
    private var secondsText: String {
        let timescale = UInt128(self.timescale)
        let (quotient, remainder) = (UInt128(value.magnitude) * 10_000).quotientAndRemainder(dividingBy: timescale)
        let tenThousandths = quotient + (2 * remainder >= timescale ? 1 : 0)
        let fraction = String(tenThousandths % 10_000)
        let padding = String(repeating: "0", count: 4 - fraction.count)
        return (value < 0 ? "-" : "") + "\(tenThousandths / 10_000).\(padding)\(fraction)"
    }
}
