import Foundation

/// Where an MP4's index (`moov`) sits, read from the top-level boxes at its head.
///
/// A file written for progressive download has `ftyp`, `moov`, `mdat`; many files
/// straight from an encoder have `ftyp`, `mdat`, `moov`, and a player must fetch the
/// tail before it can show anything. Seeing `mdat` before any `moov` tells the cache
/// to fetch `[end of mdat, end of file)` at once, beside the head.
enum MP4Layout: Equatable {
    /// The index comes before the media data (or there is nothing after it).
    case indexFirst
    /// The media data ends at `offset` and the index follows it.
    case indexAfterMedia(offset: Int64)
    /// Not an ISO base media file (no `ftyp` first, or nonsense box sizes).
    case notMP4
    /// More head bytes are needed to tell.
    case undetermined

    /// Examines `head` (the first bytes of a resource of `length` bytes, if known).
    static func examine(head: Data, length: Int64?) -> MP4Layout {
        let bytes = [UInt8](head)
        var position = 0
        var first = true
        while position + 8 <= bytes.count {
            var size = Int64(readUInt32(bytes, at: position))
            let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
            var headerSize: Int64 = 8
            if size == 1 {
                guard position + 16 <= bytes.count else { return .undetermined }
                size = Int64(bitPattern: readUInt64(bytes, at: position + 8))
                headerSize = 16
            }
            if first {
                guard type == "ftyp" else { return .notMP4 }
                first = false
            }
            if size == 0 {
                // The box runs to the end of the file: nothing can follow it.
                return type == "mdat" || type == "moov" ? .indexFirst : .notMP4
            }
            guard size >= headerSize, type.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return .notMP4 }
            switch type {
            case "moov":
                return .indexFirst
            case "mdat":
                let end = Int64(position) + size
                if let length, end >= length { return .indexFirst }
                return .indexAfterMedia(offset: end)
            default:
                let next = Int64(position) + size
                guard next <= Int64(Int.max / 2) else { return .notMP4 }
                position = Int(next)
            }
        }
        return first && bytes.count >= 8 ? .notMP4 : .undetermined
    }

    private static func readUInt32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        bytes[index..<(index + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func readUInt64(_ bytes: [UInt8], at index: Int) -> UInt64 {
        bytes[index..<(index + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
