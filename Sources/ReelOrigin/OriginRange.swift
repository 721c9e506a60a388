/// What a `Range` request header asks of a resource of known length, after RFC 9110 §14.
enum OriginRange: Equatable {
    /// No usable `Range` (absent, not `bytes=`, several ranges, or malformed): send it all.
    case whole
    /// Bytes `start...end` (inclusive), already clamped to the resource.
    case partial(start: Int64, end: Int64)
    /// Nothing of the range exists: `416`.
    case unsatisfiable

    /// Interprets the header `value` for a resource of `length` bytes.
    static func parse(_ value: String?, length: Int64) -> OriginRange {
        guard let value else { return .whole }
        let trimmed = value.trimmingWhitespace()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = trimmed.dropFirst("bytes=".count).trimmingWhitespace()
        // One range only; several would need multipart/byteranges, which we do not send.
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash].trimmingWhitespace()
        let last = spec[spec.index(after: dash)...].trimmingWhitespace()
        if first.isEmpty {
            // bytes=-N: the last N bytes.
            guard let suffix = Int64(last), suffix >= 0 else { return .whole }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .partial(start: max(0, length - suffix), end: length - 1)
        }
        guard let start = Int64(first), start >= 0 else { return .whole }
        var end = length - 1
        if !last.isEmpty {
            guard let requestedEnd = Int64(last), requestedEnd >= start else { return .whole }
            end = min(requestedEnd, length - 1)
        }
        guard start < length else { return .unsatisfiable }
        return .partial(start: start, end: end)
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
