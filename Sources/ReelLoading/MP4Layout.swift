import Foundation
import ReelCore

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
            let box: ISOBox
            switch ISOBox.read(bytes, at: position) {
            case .box(let read): box = read
            case .needsMoreBytes: return .undetermined
            case .malformed: return .notMP4
            }
            if first {
                guard box.type == "ftyp" else { return .notMP4 }
                first = false
            }
            guard let end = box.end else {
                // The box runs to the end of the file: nothing can follow it.
                return box.type == "mdat" || box.type == "moov" ? .indexFirst : .notMP4
            }
            switch box.type {
            case "moov":
                return .indexFirst
            case "mdat":
                if let length, Int64(end) >= length { return .indexFirst }
                return .indexAfterMedia(offset: Int64(end))
            default:
                position = end
            }
        }
        return first && bytes.count >= 8 ? .notMP4 : .undetermined
    }
}
