import Foundation

/// A small, fast, seedable generator (SplitMix64). Its sequence for a seed is fixed
/// here, not by the standard library, so a seed names the same bytes on every
/// toolchain and machine.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `0..<bound` (`bound` > 0): multiply-high with rejection (Lemire).
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        let range = UInt64(bound)
        var product = next().multipliedFullWidth(by: range)
        if product.low < range {
            let threshold = (0 &- range) % range
            while product.low < threshold { product = next().multipliedFullWidth(by: range) }
        }
        return Int(product.high)
    }

    /// Uniform in `range`.
    public mutating func pick(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    /// One element of a non-empty array.
    public mutating func element<T>(of array: [T]) -> T { array[below(array.count)] }

    /// A length from 1 to `maximum`, small ones as likely as large ones in log scale.
    public mutating func length(upTo maximum: Int) -> Int {
        guard maximum > 1 else { return 1 }
        let bits = Int.bitWidth - (maximum - 1).leadingZeroBitCount
        let top = 1 << below(bits + 1)
        return min(maximum, 1 + below(top))
    }
}

/// Damages media files the way the world does — flipped bytes, cut or duplicated
/// chunks, zeroed runs, truncation — and the way a fuzzer aims: a wrong MP4 box size,
/// type or entry count, a wrong Matroska element size, a wrong RIFF chunk size, a
/// wrong PNG chunk or JPEG segment length. Deterministic from a seed (``SplitMix64``),
/// and every mutation says what it did and where, so a failing file is named by its
/// source and its seed ("seed 17: stsz size ← 0xffffffff (was 0x14) at 0x1c4") and
/// made again with `MediaMutator.mutate(source, seed: 17)`.
public enum MediaMutator {
    /// The container a file is, as far as the mutator walks it.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// ISO base media (MP4, MOV, fMP4).
        case mp4
        /// Matroska and WebM.
        case matroska
        /// RIFF (AVI, WAV).
        case riff
        case png, jpeg
        /// Anything else: only the byte-level mutations apply.
        case unknown

        /// The format `bytes` start like.
        public static func detect(_ bytes: [UInt8]) -> Format {
            if bytes.count >= 8, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return .png }
            if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
            if bytes.count >= 4, bytes.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return .matroska }
            if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)) { return .riff }
            if bytes.count >= 8 {
                let type = String(decoding: bytes[4..<8], as: UTF8.self)
                if ["ftyp", "moov", "mdat", "free", "wide", "styp", "moof", "skip"].contains(type) { return .mp4 }
            }
            return .unknown
        }
    }

    /// What a mutation does.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// XORs a run of one to four bytes with non-zero masks.
        case flipBytes
        /// Removes a chunk (the bytes after it move up).
        case cutChunk
        /// Inserts a copy of a chunk right after it.
        case duplicateChunk
        /// Overwrites a run with zeros.
        case zeroRun
        /// Drops everything from an offset on.
        case truncate
        /// Rewrites an MP4 box's 32-bit size (moov, trak, stbl, stsz, stco, mdat…).
        case mp4BoxSize
        /// Rewrites an MP4 box's four-character type.
        case mp4BoxType
        /// Rewrites the entry count of a sample table box (stsz, stco, co64, stts, stsc, stss, ctts, trun).
        case mp4EntryCount
        /// Rewrites a Matroska element's size, keeping its width (EBML header, Segment, Cluster, SimpleBlock…).
        case ebmlElementSize
        /// Rewrites a RIFF chunk's size (RIFF, LIST hdrl/strl/movi, strh, strf, idx1, 00dc…).
        case riffChunkSize
        /// Rewrites a PNG chunk's length (IHDR, IDAT, IEND…).
        case pngChunkLength
        /// Rewrites a JPEG segment's length (DQT, SOF0, DHT, SOS…).
        case jpegSegmentLength

        /// The format it needs (`nil`: any bytes).
        public var format: Format? {
            switch self {
            case .flipBytes, .cutChunk, .duplicateChunk, .zeroRun, .truncate: nil
            case .mp4BoxSize, .mp4BoxType, .mp4EntryCount: .mp4
            case .ebmlElementSize: .matroska
            case .riffChunkSize: .riff
            case .pngChunkLength: .png
            case .jpegSegmentLength: .jpeg
            }
        }

        /// The kinds that apply to a file of `format`.
        public static func applicable(to format: Format) -> [Kind] {
            allCases.filter { $0.format == nil || $0.format == format }
        }
    }

    /// One change, as applied to the bytes it was given.
    public struct Mutation: Sendable, Hashable, CustomStringConvertible {
        public var kind: Kind
        /// Where it applies, in the bytes before it.
        public var offset: Int
        /// Bytes removed (cut, truncate), inserted (duplicate) or overwritten (the rest).
        public var length: Int
        /// The bytes now at `offset` (the overwritten field or run; the inserted copy;
        /// empty for a cut or a truncation).
        public var written: [UInt8]
        /// What changed, in words: `stsz size ← 0xffffffff (was 0x14)`.
        public var summary: String

        public var description: String { "\(summary) at 0x\(String(offset, radix: 16))" }
    }

    /// A mutated file: its bytes and how they were made.
    public struct Mutant: Sendable, CustomStringConvertible {
        public var seed: UInt64
        public var format: Format
        public var bytes: [UInt8]
        public var mutations: [Mutation]
        public var data: Data { Data(bytes) }

        /// `seed 17: stsz size ← 0xffffffff (was 0x14) at 0x1c4`.
        public var description: String {
            "seed \(seed): " + (mutations.isEmpty ? "unchanged" : mutations.map(\.description).joined(separator: "; "))
        }
    }

    /// `data` with `steps` mutations chosen by `seed` among `kinds` (default: every kind
    /// that applies to the file's format, equally likely). A structural kind that finds
    /// nothing to change in damaged bytes falls back to a byte-level one.
    public static func mutate(_ data: Data, seed: UInt64, steps: Int = 1, kinds: [Kind]? = nil) -> Mutant {
        var bytes = [UInt8](data)
        let format = Format.detect(bytes)
        var random = SplitMix64(seed: seed)
        let allowed = (kinds ?? Kind.applicable(to: format)).filter { $0.format == nil || $0.format == format }
        let choices = allowed.isEmpty ? Kind.applicable(to: .unknown) : allowed
        var mutations: [Mutation] = []
        for _ in 0..<max(1, steps) {
            let kind = random.element(of: choices)
            if let mutation = apply(kind, to: &bytes, using: &random)
                ?? apply(.flipBytes, to: &bytes, using: &random) {
                mutations.append(mutation)
            }
        }
        return Mutant(seed: seed, format: format, bytes: bytes, mutations: mutations)
    }

    /// Applies one mutation of `kind` to `bytes`; `nil` when it has nothing to change
    /// (an empty file, no box of that sort).
    public static func apply(_ kind: Kind, to bytes: inout [UInt8], using random: inout SplitMix64) -> Mutation? {
        switch kind {
        case .flipBytes: mutateFlipBytes(kind, &bytes, &random)
        case .cutChunk: mutateCutChunk(kind, &bytes, &random)
        case .duplicateChunk: mutateDuplicateChunk(kind, &bytes, &random)
        case .zeroRun: mutateZeroRun(kind, &bytes, &random)
        case .truncate: mutateTruncate(kind, &bytes, &random)
        case .mp4BoxSize: mutateMp4BoxSize(kind, &bytes, &random)
        case .mp4BoxType: mutateMp4BoxType(kind, &bytes, &random)
        case .mp4EntryCount: mutateMp4EntryCount(kind, &bytes, &random)
        case .ebmlElementSize: mutateEbmlElementSize(kind, &bytes, &random)
        case .riffChunkSize: mutateRiffChunkSize(kind, &bytes, &random)
        case .pngChunkLength: mutatePngChunkLength(kind, &bytes, &random)
        case .jpegSegmentLength: mutateJpegSegmentLength(kind, &bytes, &random)
        }
    }

    // MARK: Corpora

    /// One mutated file written by ``writeCorpus(sources:seeds:steps:into:)``.
    public struct CorpusFile: Sendable, CustomStringConvertible {
        /// The source's name (what it was made from: `h264-aac.mp4`).
        public var source: String
        public var url: URL
        public var mutant: Mutant
        /// `h264-aac.mp4 seed 17: stsz size ← … at 0x1c4`.
        public var description: String { "\(source) \(mutant)" }
    }

    /// Mutates every source with every seed and writes the files into `directory`
    /// (`<source stem>-seed<seed>.<source extension>`, so a directory feed reads them as
    /// media of the same kind). The seeds of source `i` are `seeds` shifted by
    /// `i * 1_000_000`, so no two files share a seed.
    public static func writeCorpus(sources: [(name: String, data: Data)], seeds: Range<UInt64>, steps: Int = 1,
                                   into directory: URL) throws -> [CorpusFile] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var files: [CorpusFile] = []
        for (i, source) in sources.enumerated() {
            let name = source.name as NSString
            for base in seeds {
                let seed = base + UInt64(i) * 1_000_000
                let mutant = mutate(source.data, seed: seed, steps: steps)
                let url = directory.appendingPathComponent("\(name.deletingPathExtension)-seed\(seed).\(name.pathExtension)")
                try mutant.data.write(to: url)
                files.append(CorpusFile(source: source.name, url: url, mutant: mutant))
            }
        }
        return files
    }

    // MARK: Field values

    /// A damaging value for a size field: huge, zero, just too small or too large, doubled, random.
    static func sizeValue(old: UInt64, maximum: UInt64, headerSize: UInt64, using random: inout SplitMix64) -> UInt64 {
        var value: UInt64
        repeat {
            switch random.below(8) {
            case 0: value = maximum
            case 1: value = 0
            case 2: value = min(maximum, 1)
            case 3: value = min(maximum, headerSize > 0 ? headerSize - 1 : 7)
            case 4: value = old < maximum ? old + 1 : old - 1
            case 5: value = old > 0 ? old - 1 : 1
            case 6: value = old <= maximum / 2 ? old * 2 + 1 : maximum - 1
            default: value = random.next() % (maximum == .max ? .max : maximum + 1)
            }
        } while value == old
        return value
    }

    /// A damaging value for an entry count.
    static func countValue(old: UInt64, maximum: UInt64, using random: inout SplitMix64) -> UInt64 {
        var value: UInt64
        repeat {
            switch random.below(6) {
            case 0: value = maximum
            case 1: value = maximum / 2
            case 2: value = 0
            case 3: value = old < maximum / 2 ? old * 2 + 1 : 1
            case 4: value = old < maximum ? old + 1 : 0
            default: value = random.next() % (maximum + 1)
            }
        } while value == old
        return value
    }

    static func writeField(_ kind: Kind, _ bytes: inout [UInt8], at offset: Int, width: Int, value: UInt64,
                                   bigEndian: Bool, name: String, old: UInt64) -> Mutation {
        var written: [UInt8] = []
        for i in 0..<width {
            let shift = bigEndian ? 8 * (width - 1 - i) : 8 * i
            let byte = UInt8(truncatingIfNeeded: value >> UInt64(shift))
            bytes[offset + i] = byte
            written.append(byte)
        }
        return Mutation(kind: kind, offset: offset, length: width, written: written,
                        summary: "\(name) ← 0x\(String(value, radix: 16)) (was 0x\(String(old, radix: 16)))")
    }

    static func readBE(_ bytes: [UInt8], _ offset: Int, _ width: Int) -> UInt64 {
        (0..<width).reduce(0) { $0 << 8 | UInt64(bytes[offset + $1]) }
    }

    static func readLE(_ bytes: [UInt8], _ offset: Int, _ width: Int) -> UInt64 {
        (0..<width).reversed().reduce(0) { $0 << 8 | UInt64(bytes[offset + $1]) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
    }

    static func printable(_ bytes: [UInt8]) -> String {
        String(bytes.map { (0x20...0x7E).contains($0) ? Character(UnicodeScalar($0)) : "?" })
    }
}

// MARK: Walking containers

/// A box of an ISO base media file, found by walking the box tree.
struct MP4Box: Sendable {
    var type: String
    /// `moov/trak/mdia/minf/stbl/stsz`.
    var path: String
    /// Where its header (the 32-bit size) starts.
    var offset: Int
    /// Its size as stored (the 64-bit size for `size == 1`; to the end for `size == 0`).
    var size: Int

    /// Boxes holding boxes (descended into).
    static let containers: Set<String> = ["moov", "trak", "mdia", "minf", "stbl", "edts", "dinf", "udta", "mvex",
                                          "moof", "traf", "mfra", "sinf", "schi"]
    /// The offset of the entry count of sample-table boxes, from the box's start.
    static let countField: [String: Int] = ["stsz": 16, "stz2": 16, "stco": 12, "co64": 12, "stts": 12, "stsc": 12,
                                            "stss": 12, "ctts": 12, "trun": 12, "elst": 12, "stsd": 12, "dref": 12]
    static let knownTypes = ["moov", "trak", "mdia", "minf", "stbl", "stsz", "stco", "stts", "stsc", "stss", "mdat",
                             "moof", "traf", "trun", "mvhd", "tkhd", "mdhd", "hdlr", "stsd", "ftyp", "co64", "ctts"]

    /// Every box, depth first, until the structure stops making sense.
    static func walk(_ bytes: [UInt8]) -> [MP4Box] {
        var boxes: [MP4Box] = []
        walk(bytes, from: 0, to: bytes.count, parent: "", into: &boxes)
        return boxes
    }

    private static func walk(_ bytes: [UInt8], from start: Int, to end: Int, parent: String, into boxes: inout [MP4Box]) {
        var at = start
        while at + 8 <= end, boxes.count < 100_000 {
            let size32 = Int(MediaMutator.readBE(bytes, at, 4))
            let type = MediaMutator.printable(Array(bytes[(at + 4)..<(at + 8)]))
            var size = size32
            var header = 8
            if size32 == 1 {
                guard at + 16 <= end else { return }
                let large = MediaMutator.readBE(bytes, at + 8, 8)
                guard large <= UInt64(Int.max) else { return }
                size = Int(large)
                header = 16
            } else if size32 == 0 {
                size = end - at
            }
            let path = parent.isEmpty ? type : parent + "/" + type
            boxes.append(MP4Box(type: type, path: path, offset: at, size: size))
            guard size >= header, size <= end - at else { return }
            if containers.contains(type) {
                walk(bytes, from: at + header, to: at + size, parent: path, into: &boxes)
            }
            at += size
        }
    }
}

/// An element of a Matroska (EBML) file, found by walking the element tree.
struct EBMLElement: Sendable {
    var id: UInt32
    var sizeOffset: Int
    var sizeLength: Int
    /// `nil`: unknown (all ones).
    var size: UInt64?

    var name: String { Self.names[id] ?? String(format: "element 0x%X", id) }

    static let masters: Set<UInt32> = [
        0x1A45_DFA3, 0x1853_8067, 0x114D_9B74, 0x4DBB, 0x1549_A966, 0x1654_AE6B, 0xAE, 0xE0, 0xE1,
        0x1F43_B675, 0xA0, 0x1C53_BB6B, 0xBB, 0xB7, 0x1254_C367, 0x7373, 0x63C0, 0x67C8, 0x1043_A770,
        0x6D80, 0x6240,
    ]
    static let names: [UInt32: String] = [
        0x1A45_DFA3: "EBML header", 0x4282: "DocType", 0x1853_8067: "Segment", 0x114D_9B74: "SeekHead",
        0x4DBB: "Seek", 0x53AB: "SeekID", 0x53AC: "SeekPosition", 0x1549_A966: "Info", 0x2AD7B1: "TimestampScale",
        0x4489: "Duration", 0x1654_AE6B: "Tracks", 0xAE: "TrackEntry", 0xD7: "TrackNumber", 0x83: "TrackType",
        0x86: "CodecID", 0x63A2: "CodecPrivate", 0x23E383: "DefaultDuration", 0x56AA: "CodecDelay",
        0x56BB: "SeekPreRoll", 0xE0: "Video", 0xB0: "PixelWidth", 0xBA: "PixelHeight", 0xE1: "Audio",
        0xB5: "SamplingFrequency", 0x9F: "Channels", 0x1F43_B675: "Cluster", 0xE7: "Timestamp",
        0xA3: "SimpleBlock", 0xA0: "BlockGroup", 0xA1: "Block", 0x1C53_BB6B: "Cues", 0xBB: "CuePoint",
        0xB3: "CueTime", 0xB7: "CueTrackPositions", 0xF1: "CueClusterPosition", 0xF7: "CueTrack",
        0x1254_C367: "Tags", 0x7373: "Tag", 0x63C0: "Targets", 0x67C8: "SimpleTag", 0xEC: "Void", 0xBF: "CRC-32",
        0x1043_A770: "Chapters", 0x6D80: "ContentEncodings", 0x6240: "ContentEncoding",
    ]

    static func walk(_ bytes: [UInt8]) -> [EBMLElement] {
        var elements: [EBMLElement] = []
        walk(bytes, from: 0, to: bytes.count, into: &elements)
        return elements
    }

    private static func walk(_ bytes: [UInt8], from start: Int, to end: Int, into elements: inout [EBMLElement]) {
        var at = start
        while at < end, elements.count < 100_000 {
            guard let (id, idLength) = vint(bytes, at, end, keepMarker: true), idLength <= 4,
                  let (raw, sizeLength) = vint(bytes, at + idLength, end, keepMarker: false) else { return }
            let unknown = raw == (UInt64(1) << UInt64(7 * sizeLength)) - 1
            let element = EBMLElement(id: UInt32(id), sizeOffset: at + idLength, sizeLength: sizeLength, size: unknown ? nil : raw)
            elements.append(element)
            let data = at + idLength + sizeLength
            let stop = unknown ? end : (raw <= UInt64(end - data) ? data + Int(raw) : -1)
            guard stop >= data else { return }
            if masters.contains(element.id) { walk(bytes, from: data, to: stop, into: &elements) }
            if unknown { return }
            at = stop
        }
    }

    /// A variable-length integer at `offset`: its value (with or without the length
    /// marker) and its width.
    static func vint(_ bytes: [UInt8], _ offset: Int, _ end: Int, keepMarker: Bool) -> (UInt64, Int)? {
        guard offset < end else { return nil }
        let first = bytes[offset]
        guard first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1
        guard offset + length <= end else { return nil }
        var value = UInt64(keepMarker ? first : first & (0xFF >> length))
        for i in 1..<length { value = value << 8 | UInt64(bytes[offset + i]) }
        return (value, length)
    }
}

/// A chunk of a RIFF file (AVI), found by walking the chunk tree.
struct RIFFChunk: Sendable {
    /// `LIST movi`, `strh`, `RIFF AVI `.
    var name: String
    var offset: Int

    static func walk(_ bytes: [UInt8]) -> [RIFFChunk] {
        var chunks: [RIFFChunk] = []
        walk(bytes, from: 0, to: bytes.count, into: &chunks)
        return chunks
    }

    private static func walk(_ bytes: [UInt8], from start: Int, to end: Int, into chunks: inout [RIFFChunk]) {
        var at = start
        while at + 8 <= end, chunks.count < 100_000 {
            let id = MediaMutator.printable(Array(bytes[at..<(at + 4)]))
            let size = Int(MediaMutator.readLE(bytes, at + 4, 4))
            let isList = (id == "RIFF" || id == "LIST") && at + 12 <= end
            let name = isList ? id + " " + MediaMutator.printable(Array(bytes[(at + 8)..<(at + 12)])) : id
            chunks.append(RIFFChunk(name: name, offset: at))
            let stop = min(end, at + 8 + size)
            if isList { walk(bytes, from: at + 12, to: stop, into: &chunks) }
            guard at + 8 + size <= end else { return }
            at += 8 + size + (size & 1)
        }
    }
}

/// A marker segment of a JPEG file that has a length.
struct JPEGSegment: Sendable {
    var name: String
    /// Where its marker (`FF xx`) starts; the length follows.
    var offset: Int

    static func walk(_ bytes: [UInt8]) -> [JPEGSegment] {
        var segments: [JPEGSegment] = []
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return segments }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }
            if marker == 0xD9 { return segments }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { at += 2; continue }
            let length = Int(MediaMutator.readBE(bytes, at + 2, 2))
            segments.append(JPEGSegment(name: name(marker), offset: at))
            at += 2 + length
            if marker == 0xDA {
                // Entropy-coded data up to the next marker that is not a stuffed byte or a restart.
                while at + 1 < bytes.count, !(bytes[at] == 0xFF && bytes[at + 1] != 0 && !(0xD0...0xD7).contains(bytes[at + 1])) {
                    at += 1
                }
            }
        }
        return segments
    }

    static func name(_ marker: UInt8) -> String {
        switch marker {
        case 0xC0: "SOF0"
        case 0xC1...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC: String(format: "SOF%d", Int(marker) - 0xC0)
        case 0xC4: "DHT"
        case 0xDB: "DQT"
        case 0xDA: "SOS"
        case 0xDD: "DRI"
        case 0xFE: "COM"
        case 0xE0...0xEF: "APP\(Int(marker) - 0xE0)"
        default: String(format: "marker FF%02X", marker)
        }
    }
}
