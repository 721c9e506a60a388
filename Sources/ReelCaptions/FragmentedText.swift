import Foundation
import ReelCore

/// Why fragmented MP4 text could not be read.
public enum FragmentedTextError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An initialization segment with no `wvtt` or `stpp` track.
    case noTextTrack
    /// Boxes whose sizes or fields do not add up.
    case malformed(String)
    /// More samples in one segment than ``FragmentedTextTrack/maximumSamples``.
    case tooManySamples(limit: Int)

    /// One line saying what was wrong, for a log or an error message.
    public var description: String {
        switch self {
        case .noTextTrack: "no WebVTT (wvtt) or TTML (stpp) track in the initialization segment"
        case .malformed(let what): "malformed fragmented MP4: \(what)"
        case .tooManySamples(let limit): "more than \(limit) text samples in one segment"
        }
    }
}

/// A text track of fragmented MP4 (ISO/IEC 14496-30): WebVTT in `wvtt` sample entries, TTML in
/// `stpp`, as DASH text AdaptationSets and CMAF HLS subtitle renditions carry them. Read from the
/// initialization segment (`moov`); its media segments (`moof` + `mdat`) then give their samples
/// on the track's timeline, which is the video's (the same `tfdt` clock FFmpeg reads the video's
/// segments by). Pure Swift: FFmpeg's mov demuxer sees these tracks as data streams and has no
/// decoder for either.
public struct FragmentedTextTrack: Sendable, Hashable {
    /// What the track's samples hold.
    public enum Format: Sendable, Hashable {
        /// WebVTT cues in `vttc` boxes (sample entry `wvtt`); see ``FragmentedTextSample/webVTTCues``.
        case webvtt
        /// One TTML document per sample (sample entry `stpp`), read with ``TTMLDocument``.
        case ttml
    }

    /// The most samples one segment may hold.
    public static let maximumSamples = 100_000

    /// What the samples hold.
    public var format: Format
    /// The track's `track_ID` in the initialization segment: the `traf` boxes of the media
    /// segments that carry it.
    public var trackID: UInt32
    /// The track's time units per second (its `mdhd` timescale), in which sample times and
    /// durations are counted.
    public var timescale: Int32
    /// `trex` defaults, used when a fragment gives none.
    var defaultDuration: UInt32 = 0
    var defaultSize: UInt32 = 0

    /// Reads the first `wvtt` or `stpp` track of an initialization segment (`ftyp` + `moov`).
    /// Throws ``FragmentedTextError/noTextTrack`` when it has none and
    /// ``FragmentedTextError/malformed(_:)`` when its boxes do not add up.
    public init(initialization data: Data) throws(FragmentedTextError) {
        let bytes = [UInt8](data)
        guard let top = ISOBox.children(bytes, in: 0..<bytes.count) else { throw .malformed("initialization boxes") }
        guard let moov = top.first(where: { $0.type == "moov" }), let moovBoxes = ISOBox.children(bytes, of: moov) else {
            throw .noTextTrack
        }
        var found: (format: Format, trackID: UInt32, timescale: UInt32)?
        for trak in moovBoxes where trak.type == "trak" {
            guard let trakBoxes = ISOBox.children(bytes, of: trak),
                  let tkhd = trakBoxes.first(where: { $0.type == "tkhd" }),
                  let mdia = ISOBox.descendant(bytes, of: trak, path: ["mdia"]),
                  let mdhd = ISOBox.descendant(bytes, of: mdia, path: ["mdhd"]),
                  let stsd = ISOBox.descendant(bytes, of: mdia, path: ["minf", "stbl", "stsd"]) else { continue }
            // stsd: version and flags, entry count, then the first sample entry's header.
            let entry = stsd.payloadStart + 8
            guard entry + 8 <= (stsd.end ?? 0) else { continue }
            let format: Format
            switch String(decoding: bytes[(entry + 4)..<(entry + 8)], as: UTF8.self) {
            case "wvtt": format = .webvtt
            case "stpp": format = .ttml
            default: continue
            }
            // tkhd: version 1 has 64-bit times before the track ID.
            let tkhdVersion = bytes[tkhd.payloadStart]
            let trackIDAt = tkhd.payloadStart + 4 + (tkhdVersion == 1 ? 16 : 8)
            let mdhdVersion = bytes[mdhd.payloadStart]
            let timescaleAt = mdhd.payloadStart + 4 + (mdhdVersion == 1 ? 16 : 8)
            guard trackIDAt + 4 <= (tkhd.end ?? 0), timescaleAt + 4 <= (mdhd.end ?? 0) else { continue }
            found = (format, ISOBox.uint32(bytes, at: trackIDAt), ISOBox.uint32(bytes, at: timescaleAt))
            break
        }
        guard let found else { throw .noTextTrack }
        guard found.timescale > 0, found.timescale <= UInt32(Int32.max) else { throw .malformed("timescale \(found.timescale)") }
        format = found.format
        trackID = found.trackID
        timescale = Int32(found.timescale)
        if let mvex = moovBoxes.first(where: { $0.type == "mvex" }), let mvexBoxes = ISOBox.children(bytes, of: mvex) {
            for trex in mvexBoxes where trex.type == "trex" {
                // version and flags, track ID, description index, duration, size, flags.
                let at = trex.payloadStart
                guard at + 24 <= (trex.end ?? 0), ISOBox.uint32(bytes, at: at + 4) == trackID else { continue }
                defaultDuration = ISOBox.uint32(bytes, at: at + 12)
                defaultSize = ISOBox.uint32(bytes, at: at + 16)
            }
        }
    }

    /// The track's samples in a media segment (one or more `moof` + `mdat`), in order.
    public func samples(in segment: Data) throws(FragmentedTextError) -> [FragmentedTextSample] {
        let bytes = [UInt8](segment)
        guard let top = ISOBox.children(bytes, in: 0..<bytes.count) else { throw .malformed("segment boxes") }
        var samples: [FragmentedTextSample] = []
        for (index, moof) in top.enumerated() where moof.type == "moof" {
            guard let moofBoxes = ISOBox.children(bytes, of: moof) else { throw .malformed("moof") }
            // The media data of this fragment: the mdat payloads up to the next moof.
            let mdats = top[(index + 1)...].prefix { $0.type != "moof" }.filter { $0.type == "mdat" }
                .map { $0.payloadStart..<($0.end ?? bytes.count) }
            for traf in moofBoxes where traf.type == "traf" {
                try readFragment(bytes, traf: traf, moofStart: moof.start, mdats: mdats, into: &samples)
            }
        }
        return samples
    }

    private func readFragment(_ bytes: [UInt8], traf: ISOBox, moofStart: Int, mdats: [Range<Int>],
                              into samples: inout [FragmentedTextSample]) throws(FragmentedTextError) {
        guard let boxes = ISOBox.children(bytes, of: traf),
              let tfhd = boxes.first(where: { $0.type == "tfhd" }) else { throw .malformed("traf without tfhd") }
        var reader = FieldReader(bytes: bytes, position: tfhd.payloadStart, end: tfhd.end ?? 0)
        let tfhdFlags = try reader.versionAndFlags().flags
        guard try reader.uint32() == trackID else { return }
        var base = moofStart
        var duration = defaultDuration
        var size = defaultSize
        if tfhdFlags & 0x01 != 0 {
            let offset = try reader.uint64()
            guard offset <= UInt64(bytes.count) else { throw .malformed("base data offset") }
            base = Int(offset)
        }
        if tfhdFlags & 0x02 != 0 { _ = try reader.uint32() }
        if tfhdFlags & 0x08 != 0 { duration = try reader.uint32() }
        if tfhdFlags & 0x10 != 0 { size = try reader.uint32() }
        var decodeTime: Int64 = 0
        if let tfdt = boxes.first(where: { $0.type == "tfdt" }) {
            var tfdtReader = FieldReader(bytes: bytes, position: tfdt.payloadStart, end: tfdt.end ?? 0)
            let version = try tfdtReader.versionAndFlags().version
            let time = version == 1 ? try tfdtReader.uint64() : UInt64(try tfdtReader.uint32())
            guard time <= UInt64(Int64.max / 4) else { throw .malformed("decode time") }
            decodeTime = Int64(time)
        }
        var dataPosition = base
        for trun in boxes where trun.type == "trun" {
            var runReader = FieldReader(bytes: bytes, position: trun.payloadStart, end: trun.end ?? 0)
            let (version, flags) = try runReader.versionAndFlags()
            let count = Int(try runReader.uint32())
            guard samples.count + count <= Self.maximumSamples else { throw .tooManySamples(limit: Self.maximumSamples) }
            if flags & 0x01 != 0 {
                let offset = Int(Int32(bitPattern: try runReader.uint32()))
                dataPosition = base + offset
            }
            if flags & 0x04 != 0 { _ = try runReader.uint32() }
            var entries: [(duration: UInt32, size: Int, compositionOffset: Int64)] = []
            for _ in 0..<count {
                let sampleDuration = flags & 0x100 != 0 ? try runReader.uint32() : duration
                let sampleSize = flags & 0x200 != 0 ? try runReader.uint32() : size
                if flags & 0x400 != 0 { _ = try runReader.uint32() }
                var compositionOffset: Int64 = 0
                if flags & 0x800 != 0 {
                    let raw = try runReader.uint32()
                    compositionOffset = version == 0 ? Int64(raw) : Int64(Int32(bitPattern: raw))
                }
                guard sampleSize <= UInt32(bytes.count) else { throw .malformed("a sample larger than its segment") }
                entries.append((sampleDuration, Int(sampleSize), compositionOffset))
            }
            // Where the offsets say; else, as other players read such files, from the start of
            // the fragment's media data (an offset that misses it by a header's length).
            guard let placed = Self.place(entries.map(\.size), from: dataPosition, in: mdats)
                    ?? mdats.first.flatMap({ Self.place(entries.map(\.size), from: $0.lowerBound, in: mdats) }) else {
                throw .malformed("samples that are not in the fragment's media data")
            }
            for (entry, position) in zip(entries, placed) {
                samples.append(FragmentedTextSample(
                    start: MediaTime(value: decodeTime + entry.compositionOffset, timescale: timescale),
                    duration: MediaTime(value: Int64(entry.duration), timescale: timescale),
                    bytes: Array(bytes[position..<(position + entry.size)])))
                decodeTime += Int64(entry.duration)
            }
            dataPosition = (placed.last ?? dataPosition) + (entries.last?.size ?? 0)
        }
    }

    /// Where each of `sizes` consecutive samples starts, from `position`, each inside one of the
    /// `mdats` payloads: a sample that would cross into the next box's header starts in that
    /// box's payload instead (samples spread over several mdats). `nil` if one fits nowhere.
    static func place(_ sizes: [Int], from position: Int, in mdats: [Range<Int>]) -> [Int]? {
        var position = position
        var placed: [Int] = []
        placed.reserveCapacity(sizes.count)
        for size in sizes {
            if let mdat = mdats.first(where: { $0.contains(position) || $0.lowerBound == position }),
               position + size <= mdat.upperBound {
                placed.append(position)
            } else if let next = mdats.first(where: { $0.lowerBound >= position && $0.lowerBound - position <= 16 }),
                      next.lowerBound + size <= next.upperBound {
                placed.append(next.lowerBound)
            } else {
                return nil
            }
            position = placed[placed.count - 1] + size
        }
        return placed
    }

    /// Big-endian fields of a full box, each read checked against the box's end.
    struct FieldReader {
        let bytes: [UInt8]
        var position: Int
        let end: Int

        mutating func uint32() throws(FragmentedTextError) -> UInt32 {
            guard position + 4 <= end else { throw .malformed("a box shorter than its fields") }
            defer { position += 4 }
            return ISOBox.uint32(bytes, at: position)
        }

        mutating func uint64() throws(FragmentedTextError) -> UInt64 {
            guard position + 8 <= end else { throw .malformed("a box shorter than its fields") }
            defer { position += 8 }
            return ISOBox.uint64(bytes, at: position)
        }

        mutating func versionAndFlags() throws(FragmentedTextError) -> (version: UInt8, flags: UInt32) {
            let word = try uint32()
            return (UInt8(word >> 24), word & 0xFF_FFFF)
        }
    }
}

/// One sample of a fragmented text track: its time on the track's timeline and its bytes (a
/// TTML document for `stpp`; `vttc`/`vtte` boxes for `wvtt`).
public struct FragmentedTextSample: Sendable, Hashable {
    /// When the sample begins on the track's timeline: the fragment's `tfdt`, plus the durations
    /// of the samples before it and the sample's composition offset.
    public var start: MediaTime
    /// How long the sample lasts (its `trun` duration, or the `tfhd`/`trex` default).
    public var duration: MediaTime
    /// The sample's bytes as the `mdat` holds them.
    public var bytes: [UInt8]

    /// When the sample ends: ``start`` + ``duration``.
    public var end: MediaTime { start + duration }

    /// The WebVTT cues of a `wvtt` sample: one per `vttc` box, each shown for the whole sample
    /// (a `vtte` box is a gap with no cue).
    public var webVTTCues: [WebVTTSampleCue] {
        guard let boxes = ISOBox.children(bytes, in: 0..<bytes.count) else { return [] }
        return boxes.compactMap { box -> WebVTTSampleCue? in
            guard box.type == "vttc", let parts = ISOBox.children(bytes, of: box) else { return nil }
            func text(_ type: String) -> String {
                guard let part = parts.first(where: { $0.type == type }), let end = part.end else { return "" }
                return String(decoding: bytes[part.payloadStart..<end], as: UTF8.self)
            }
            let payload = text("payl")
            guard !payload.isEmpty else { return nil }
            return WebVTTSampleCue(start: start, end: end, identifier: text("iden"), settings: text("sttg"), payload: payload)
        }
    }
}

/// A WebVTT cue out of a `wvtt` sample.
public struct WebVTTSampleCue: Sendable, Hashable {
    /// When the cue appears: its sample's start.
    public var start: MediaTime
    /// When the cue goes: its sample's end.
    public var end: MediaTime
    /// The cue's identifier (the `iden` box); empty when it has none.
    public var identifier: String
    /// The cue settings (the `sttg` box: `line:`, `position:`, `align:` …); empty when none.
    public var settings: String
    /// The cue's text with its WebVTT markup (the `payl` box).
    public var payload: String

    /// A cue shown from `start` to `end` with the given text and, optionally, identifier and settings.
    public init(start: MediaTime, end: MediaTime, identifier: String = "", settings: String = "", payload: String) {
        self.start = start
        self.end = end
        self.identifier = identifier
        self.settings = settings
        self.payload = payload
    }

    /// The cues as a WebVTT file, for the same WebVTT decoder a sidecar file goes through. Times
    /// are written to the millisecond (WebVTT's own precision); a payload's blank lines (which
    /// would end its cue) and `-->` are neutralized, and so are line breaks in settings.
    public static func document(_ cues: [WebVTTSampleCue]) -> String {
        var text = "WEBVTT\n\n"
        for cue in cues where cue.end > cue.start {
            let settings = cue.settings.replacing("\n", with: " ").replacing("\r", with: " ")
            let payload = cue.payload.replacing("\r\n", with: "\n").replacing("-->", with: "->")
                .split(separator: "\n", omittingEmptySubsequences: true).joined(separator: "\n")
            guard !payload.isEmpty else { continue }
            text += "\(timestamp(cue.start)) --> \(timestamp(cue.end))"
            text += settings.isEmpty ? "\n" : " \(settings)\n"
            text += payload + "\n\n"
        }
        return text
    }

    static func timestamp(_ time: MediaTime) -> String {
        let milliseconds = max(0, time.convertScale(1000, method: .halfAwayFromZero).value)
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let seconds = milliseconds / 1000 % 60
        let rest = milliseconds % 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2)).\(pad(rest, 3))"
    }
}
