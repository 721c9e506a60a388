/// One box header of ISO base media bytes (MP4, fragmented MP4), read with every size checked
/// against what is there: the one reader of box headers for the cache's layout probe and the
/// caption readers of fragmented text.
public struct ISOBox: Sendable, Hashable {
    /// The four-character type, as written (`moov`, `mdat`, `vttc`…).
    public var type: String
    /// Where the header starts in the bytes read.
    public var start: Int
    /// Where the box's payload starts (after a 8- or 16-byte header).
    public var payloadStart: Int
    /// Where the box ends; `nil` when its size is 0 (it runs to the end of the file).
    public var end: Int?

    /// What is at `position` of `bytes` (a box may reach past the bytes given: a head of a file).
    public enum Read: Sendable, Hashable {
        case box(ISOBox)
        /// The header itself is cut short.
        case needsMoreBytes
        /// A size smaller than its header, or a type that is not four printable characters.
        case malformed
    }

    /// Reads the header at `position`, before `limit` (the end of the enclosing box or the bytes).
    public static func read(_ bytes: [UInt8], at position: Int, limit: Int? = nil) -> Read {
        let limit = min(limit ?? bytes.count, bytes.count)
        guard position >= 0, position <= limit - 8 else { return .needsMoreBytes }
        let typeBytes = bytes[(position + 4)..<(position + 8)]
        guard typeBytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return .malformed }
        let type = String(decoding: typeBytes, as: UTF8.self)
        var size = UInt64(uint32(bytes, at: position))
        var header = 8
        if size == 1 {
            guard position <= limit - 16 else { return .needsMoreBytes }
            size = uint64(bytes, at: position + 8)
            header = 16
        }
        if size == 0 { return .box(ISOBox(type: type, start: position, payloadStart: position + header, end: nil)) }
        guard size >= UInt64(header), size <= UInt64(Int.max / 2 - position) else { return .malformed }
        return .box(ISOBox(type: type, start: position, payloadStart: position + header, end: position + Int(size)))
    }

    /// The complete boxes in `range` of `bytes`, in order; `nil` if one is malformed or reaches
    /// past the range (a box of size 0 reaches to the range's end).
    public static func children(_ bytes: [UInt8], in range: Range<Int>) -> [ISOBox]? {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        var boxes: [ISOBox] = []
        var position = range.lowerBound
        while position < range.upperBound {
            guard case .box(var box) = read(bytes, at: position, limit: range.upperBound) else { return nil }
            let end = box.end ?? range.upperBound
            guard end <= range.upperBound else { return nil }
            box.end = end
            boxes.append(box)
            position = end
        }
        return boxes
    }

    /// The complete boxes in `box`'s payload; `nil` for a box of size 0 or malformed children.
    public static func children(_ bytes: [UInt8], of box: ISOBox) -> [ISOBox]? {
        guard let end = box.end else { return nil }
        return children(bytes, in: box.payloadStart..<end)
    }

    /// The first box down `path` from `box` (`["minf", "stbl", "stsd"]`), each the first child
    /// of its type.
    public static func descendant(_ bytes: [UInt8], of box: ISOBox, path: [String]) -> ISOBox? {
        var current = box
        for type in path {
            guard let next = children(bytes, of: current)?.first(where: { $0.type == type }) else { return nil }
            current = next
        }
        return current
    }

    /// The payload's range (the end of a size-0 box is `fileEnd`).
    public func payload(fileEnd: Int) -> Range<Int> { payloadStart..<(end ?? fileEnd) }

    public static func uint32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        bytes[index..<(index + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    public static func uint64(_ bytes: [UInt8], at index: Int) -> UInt64 {
        bytes[index..<(index + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
