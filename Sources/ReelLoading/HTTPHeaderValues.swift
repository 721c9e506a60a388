/// A parsed `Content-Range` value: `bytes 0-99/1000`, `bytes 0-99/*` or `bytes */1000`.
struct ContentRangeValue: Equatable {
    /// First and last byte (inclusive); `nil` for the unsatisfied form `bytes */N`.
    var first: Int64?
    var last: Int64?
    /// The complete length, `nil` when the server says `*`.
    var completeLength: Int64?

    static func parse(_ value: String) -> ContentRangeValue? {
        let trimmed = value.trimmed(of: " \t")
        guard trimmed.lowercased().hasPrefix("bytes") else { return nil }
        let rest = trimmed.dropFirst("bytes".count).trimmed(of: " \t=")
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let rangePart = parts[0].trimmed(of: " \t")
        let lengthPart = parts[1].trimmed(of: " \t")
        var result = ContentRangeValue()
        if lengthPart != "*" {
            guard let length = Int64(lengthPart), length >= 0 else { return nil }
            result.completeLength = length
        }
        if rangePart == "*" {
            guard result.completeLength != nil else { return nil }
            return result
        }
        let bounds = rangePart.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]),
              first >= 0, last >= first else { return nil }
        if let length = result.completeLength, last >= length { return nil }
        result.first = first
        result.last = last
        return result
    }
}

extension StringProtocol {
    func trimmed(of set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
