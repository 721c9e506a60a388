/// A range of bytes in a resource: an offset and a length, or an offset and "to the end".
///
/// `ByteRange(offset: 100, length: 50)` covers bytes 100 through 149;
/// `ByteRange(offset: 100)` covers byte 100 to the end of the resource, whatever
/// its length turns out to be. Offsets and lengths are never negative.
public struct ByteRange: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The first byte of the range.
    public var offset: Int64
    /// The number of bytes, or `nil` for "to the end of the resource".
    public var length: Int64?

    /// A range of `length` bytes from `offset`, or to the end when `length` is `nil`.
    ///
    /// - Precondition: `offset >= 0` and `length >= 0`.
    public init(offset: Int64, length: Int64? = nil) {
        precondition(offset >= 0, "ByteRange offset must not be negative")
        precondition(length.map { $0 >= 0 } ?? true, "ByteRange length must not be negative")
        self.offset = offset
        self.length = length
    }

    /// The half-open range `bounds`.
    public init(_ bounds: Range<Int64>) {
        self.init(offset: bounds.lowerBound, length: bounds.count > 0 ? bounds.upperBound - bounds.lowerBound : 0)
    }

    /// The whole resource.
    public static let all = ByteRange(offset: 0)

    /// One past the last byte, or `nil` when the range runs to the end.
    public var end: Int64? { length.map { offset + $0 } }

    /// Whether the range runs to the end of the resource.
    public var isToEnd: Bool { length == nil }

    /// The range limited to a resource of `resourceLength` bytes: the bytes of this
    /// range that exist. Empty (at `resourceLength`) when the range starts at or past the end.
    public func clamped(toResourceLength resourceLength: Int64) -> ByteRange {
        let start = min(offset, resourceLength)
        let stop = min(end ?? resourceLength, resourceLength)
        return ByteRange(offset: start, length: max(0, stop - start))
    }

    /// Whether `position` lies inside the range.
    public func contains(_ position: Int64) -> Bool {
        position >= offset && (end.map { position < $0 } ?? true)
    }

    /// The value of an HTTP `Range` header for this range: `bytes=0-99` or `bytes=100-`.
    /// An empty range has no HTTP form; it is written as its first byte.
    public var httpRangeHeader: String {
        if let length {
            return "bytes=\(offset)-\(offset + max(length, 1) - 1)"
        }
        return "bytes=\(offset)-"
    }

    /// `bytes 100-149` or `bytes 100-`; an empty range is `bytes 100+0`.
    public var description: String {
        guard let length else { return "bytes \(offset)-" }
        if length == 0 { return "bytes \(offset)+0" }
        return "bytes \(offset)-\(offset + length - 1)"
    }
}
