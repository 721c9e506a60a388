import Foundation
import ReelCore

/// Two renditions of fragmented MP4 (an HLS variant's video and an audio rendition, or a DASH
/// video and audio Representation, each with its own init section and segments) read as one
/// stream: the init sections joined into one `moov` whose audio tracks get track IDs after the
/// video's, and each audio segment with its track fragments renumbered to match. FFmpeg's mov
/// demuxer then reads the video and audio segments, interleaved one after another, as one
/// fragmented file, as it reads one rendition's.
///
/// Segments are patched in place (a `tfhd`'s track ID; sizes do not change), so the sample
/// offsets a `trun` gives from its `moof` hold; an audio segment's `sidx` is dropped (it names
/// the audio's own track ID and offsets of its own file). A track fragment with an explicit
/// base data offset (an offset into its own file, which CMAF forbids) cannot be moved and is
/// refused. The audio tracks' edit lists are rescaled to the video's movie timescale.
/// Pure: bytes in, bytes out.
public struct FragmentedMP4Merge: Sendable, Hashable {
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case malformed(what: String, why: String)

        public var description: String {
            switch self {
            case .malformed(let what, let why): "\(what) cannot be joined with the other rendition: \(why)"
            }
        }
    }

    /// The joined init section.
    public var initSection: Data
    /// Each audio track's ID in its own init section → its ID in the joined one.
    public var audioTrackIDs: [UInt32: UInt32]

    /// Joins `video`'s init section (kept as it is, its `ftyp` first) with `audio`'s tracks.
    public init(video: Data, audio: Data) throws {
        let videoBytes = [UInt8](video)
        let audioBytes = [UInt8](audio)
        let (videoTop, videoMoov) = try Self.moov(videoBytes, what: "the video init section")
        let (_, audioMoov) = try Self.moov(audioBytes, what: "the audio init section")
        guard let videoChildren = ISOBox.children(videoBytes, of: videoMoov),
              let audioChildren = ISOBox.children(audioBytes, of: audioMoov) else {
            throw Failure.malformed(what: "an init section", why: "its moov box is malformed")
        }
        guard let videoMvex = videoChildren.first(where: { $0.type == "mvex" }),
              let audioMvex = audioChildren.first(where: { $0.type == "mvex" }) else {
            throw Failure.malformed(what: "an init section", why: "it is not fragmented (no mvex box)")
        }
        let videoIDs = try videoChildren.filter { $0.type == "trak" }.map { try Self.trackID(videoBytes, trak: $0) }
        let audioTraks = audioChildren.filter { $0.type == "trak" }
        guard !audioTraks.isEmpty else { throw Failure.malformed(what: "the audio init section", why: "it has no track") }
        var next = (videoIDs.max() ?? 0) + 1
        var renumbered: [UInt32: UInt32] = [:]
        for trak in audioTraks {
            renumbered[try Self.trackID(audioBytes, trak: trak)] = next
            next += 1
        }
        let videoScale = try Self.movieTimescale(videoBytes, moov: videoChildren)
        let audioScale = try Self.movieTimescale(audioBytes, moov: audioChildren)

        var moovPayload: [UInt8] = []
        for child in videoChildren where child.type != "mvex" {
            var bytes = Array(videoBytes[child.start..<child.end!])
            if child.type == "mvhd" { Self.setNextTrackID(&bytes, next) }
            moovPayload += bytes
        }
        for trak in audioTraks {
            var bytes = Array(audioBytes[trak.start..<trak.end!])
            try Self.renumberTrak(&bytes, map: renumbered, from: audioScale, to: videoScale)
            moovPayload += bytes
        }
        // One mvex: the video's boxes (mehd, trex…), then the audio's trex boxes renumbered.
        var mvexPayload = Array(videoBytes[videoMvex.payloadStart..<videoMvex.end!])
        for box in ISOBox.children(audioBytes, of: audioMvex) ?? [] where box.type == "trex" {
            var bytes = Array(audioBytes[box.start..<box.end!])
            guard bytes.count >= 16 else { throw Failure.malformed(what: "the audio init section", why: "a trex box is short") }
            if let id = renumbered[Self.uint32(bytes, at: 12)] { Self.put(id, into: &bytes, at: 12) }
            mvexPayload += bytes
        }
        moovPayload += Self.box("mvex", mvexPayload)

        var out: [UInt8] = []
        for box in videoTop {
            if box.type == "moov" { out += Self.box("moov", moovPayload) } else { out += videoBytes[box.start..<box.end!] }
        }
        initSection = Data(out)
        audioTrackIDs = renumbered
    }

    /// `segment` of the audio rendition with its track fragments renumbered to the joined init
    /// section's IDs and its `sidx` boxes dropped.
    public func audioSegment(_ segment: Data) throws -> Data {
        var bytes = [UInt8](segment)
        guard let top = ISOBox.children(bytes, in: 0..<bytes.count) else {
            throw Failure.malformed(what: "an audio segment", why: "its boxes are malformed")
        }
        for moof in top where moof.type == "moof" {
            for traf in ISOBox.children(bytes, of: moof) ?? [] where traf.type == "traf" {
                guard let tfhd = ISOBox.children(bytes, of: traf)?.first(where: { $0.type == "tfhd" }),
                      tfhd.payloadStart + 8 <= tfhd.end! else {
                    throw Failure.malformed(what: "an audio segment", why: "a track fragment has no tfhd box")
                }
                let flags = Self.uint32(bytes, at: tfhd.payloadStart) & 0xFF_FFFF
                if flags & 0x1 != 0 {
                    throw Failure.malformed(what: "an audio segment", why: "a track fragment gives an explicit base data offset")
                }
                let at = tfhd.payloadStart + 4
                if let id = audioTrackIDs[Self.uint32(bytes, at: at)] { Self.put(id, into: &bytes, at: at) }
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for box in top where box.type != "sidx" { out += bytes[box.start..<box.end!] }
        return Data(out)
    }

    // MARK: Boxes

    private static func moov(_ bytes: [UInt8], what: String) throws -> (top: [ISOBox], moov: ISOBox) {
        guard let top = ISOBox.children(bytes, in: 0..<bytes.count) else { throw Failure.malformed(what: what, why: "its boxes are malformed") }
        guard let moov = top.first(where: { $0.type == "moov" }) else { throw Failure.malformed(what: what, why: "it has no moov box") }
        return (top, moov)
    }

    /// Where a full box's fields start after its version and flags, and its version.
    private static func fullBox(_ bytes: [UInt8], _ box: ISOBox, minimum: Int) throws -> (version: UInt8, fields: Int) {
        guard let end = box.end, box.payloadStart + 4 + minimum <= end else {
            throw Failure.malformed(what: "an init section", why: "a \(box.type) box is short")
        }
        return (bytes[box.payloadStart], box.payloadStart + 4)
    }

    private static func trackID(_ bytes: [UInt8], trak: ISOBox) throws -> UInt32 {
        guard let tkhd = ISOBox.children(bytes, of: trak)?.first(where: { $0.type == "tkhd" }) else {
            throw Failure.malformed(what: "an init section", why: "a track has no tkhd box")
        }
        let (version, fields) = try fullBox(bytes, tkhd, minimum: 20)
        return uint32(bytes, at: fields + (version == 1 ? 16 : 8))
    }

    private static func movieTimescale(_ bytes: [UInt8], moov children: [ISOBox]) throws -> UInt32 {
        guard let mvhd = children.first(where: { $0.type == "mvhd" }) else {
            throw Failure.malformed(what: "an init section", why: "it has no mvhd box")
        }
        let (version, fields) = try fullBox(bytes, mvhd, minimum: 20)
        let scale = uint32(bytes, at: fields + (version == 1 ? 16 : 8))
        guard scale > 0 else { throw Failure.malformed(what: "an init section", why: "its movie timescale is 0") }
        return scale
    }

    /// mvhd's next_track_ID (after the times, rate, volume, reserved, matrix and pre_defined).
    private static func setNextTrackID(_ mvhd: inout [UInt8], _ next: UInt32) {
        guard case .box(let box) = ISOBox.read(mvhd, at: 0), mvhd.count > box.payloadStart else { return }
        let at = box.payloadStart + 4 + (mvhd[box.payloadStart] == 1 ? 28 : 16) + 76
        if at + 4 <= mvhd.count { put(next, into: &mvhd, at: at) }
    }

    /// A trak's tkhd track ID renumbered and its edit list's durations moved to the video's
    /// movie timescale.
    private static func renumberTrak(_ trak: inout [UInt8], map: [UInt32: UInt32], from: UInt32, to: UInt32) throws {
        guard case .box(let box) = ISOBox.read(trak, at: 0), let children = ISOBox.children(trak, in: box.payloadStart..<trak.count) else {
            throw Failure.malformed(what: "the audio init section", why: "a trak box is malformed")
        }
        for child in children {
            switch child.type {
            case "tkhd":
                let (version, fields) = try fullBox(trak, child, minimum: 20)
                let at = fields + (version == 1 ? 16 : 8)
                if let id = map[uint32(trak, at: at)] { put(id, into: &trak, at: at) }
            case "edts" where from != to:
                for elst in ISOBox.children(trak, of: child) ?? [] where elst.type == "elst" {
                    let (version, fields) = try fullBox(trak, elst, minimum: 4)
                    let count = Int(uint32(trak, at: fields))
                    let entry = version == 1 ? 20 : 12
                    guard count >= 0, fields + 4 + count * entry <= elst.end! else {
                        throw Failure.malformed(what: "the audio init section", why: "an edit list is short")
                    }
                    for index in 0..<count {
                        let at = fields + 4 + index * entry
                        if version == 1 {
                            let scaled = Double(ISOBox.uint64(trak, at: at)) * Double(to) / Double(from)
                            put64(scaled >= 1.8e19 ? .max : UInt64(scaled), into: &trak, at: at)
                        } else {
                            let scaled = UInt64(uint32(trak, at: at)) * UInt64(to) / UInt64(from)
                            put(UInt32(clamping: scaled), into: &trak, at: at)
                        }
                    }
                }
            default:
                break
            }
        }
    }

    private static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 8)
        let size = UInt32(payload.count + 8)
        out += [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
        out += Array(type.utf8)
        out += payload
        return out
    }

    static func uint32(_ bytes: [UInt8], at index: Int) -> UInt32 { ISOBox.uint32(bytes, at: index) }

    private static func put(_ value: UInt32, into bytes: inout [UInt8], at index: Int) {
        for offset in 0..<4 { bytes[index + offset] = UInt8(value >> (24 - 8 * UInt32(offset)) & 0xFF) }
    }

    private static func put64(_ value: UInt64, into bytes: inout [UInt8], at index: Int) {
        for offset in 0..<8 { bytes[index + offset] = UInt8(value >> (56 - 8 * UInt64(offset)) & 0xFF) }
    }
}
