import Foundation

// One function per kind of mutation (`MediaMutator.apply` picks one). Each draws from the
// generator in a fixed order: a seed names the same mutant only while that order holds, so a
// change here changes every corpus made from seeds.
extension MediaMutator {
    static func mutateFlipBytes(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let count = bytes.count
        guard count > 0 else { return nil }
        let offset = random.below(count)
        let length = min(count - offset, random.pick(1...4))
        var written: [UInt8] = []
        for i in offset..<(offset + length) {
            let mask = UInt8(truncatingIfNeeded: random.pick(1...255))
            bytes[i] ^= mask
            written.append(bytes[i])
        }
        return Mutation(kind: kind, offset: offset, length: length, written: written,
                        summary: "flip \(length) byte\(length == 1 ? "" : "s") → \(hex(written))")
    }

    static func mutateCutChunk(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let count = bytes.count
        guard count > 1 else { return nil }
        let offset = random.below(count)
        let length = random.length(upTo: min(count - offset, 64 * 1024))
        bytes.removeSubrange(offset..<(offset + length))
        return Mutation(kind: kind, offset: offset, length: length, written: [], summary: "cut \(length) bytes")
    }

    static func mutateDuplicateChunk(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let count = bytes.count
        guard count > 0 else { return nil }
        let offset = random.below(count)
        let length = random.length(upTo: min(count - offset, 64 * 1024))
        let chunk = Array(bytes[offset..<(offset + length)])
        bytes.insert(contentsOf: chunk, at: offset + length)
        return Mutation(kind: kind, offset: offset + length, length: length, written: chunk,
                        summary: "duplicate the \(length) bytes before")
    }

    static func mutateZeroRun(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let count = bytes.count
        guard count > 0 else { return nil }
        let offset = random.below(count)
        let length = random.length(upTo: min(count - offset, 16 * 1024))
        for i in offset..<(offset + length) { bytes[i] = 0 }
        return Mutation(kind: kind, offset: offset, length: length, written: [UInt8](repeating: 0, count: length),
                        summary: "zero \(length) bytes")
    }

    static func mutateTruncate(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let count = bytes.count
        guard count > 1 else { return nil }
        let offset = random.pick(1...(count - 1))
        bytes.removeSubrange(offset...)
        return Mutation(kind: kind, offset: offset, length: count - offset, written: [],
                        summary: "truncate to \(offset) bytes (drop \(count - offset))")
    }

    static func mutateMp4BoxSize(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let boxes = MP4Box.walk(bytes)
        guard !boxes.isEmpty else { return nil }
        let box = random.element(of: boxes)
        return resizeField(kind, &bytes, &random, at: box.offset, width: 4, bigEndian: true, headerSize: 8,
                           name: "\(box.path) size")
    }

    static func mutateMp4BoxType(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let boxes = MP4Box.walk(bytes)
        guard !boxes.isEmpty else { return nil }
        let box = random.element(of: boxes)
        let old = Array(bytes[(box.offset + 4)..<(box.offset + 8)])
        var type: [UInt8]
        repeat {
            switch random.below(4) {
            case 0: type = Array(random.element(of: MP4Box.knownTypes).utf8)
            case 1: type = Array("free".utf8)
            case 2: type = [0, 0, 0, 0]
            default: type = (0..<4).map { _ in UInt8(random.pick(0x61...0x7A)) }
            }
        } while type == old
        for i in 0..<4 { bytes[box.offset + 4 + i] = type[i] }
        return Mutation(kind: kind, offset: box.offset + 4, length: 4, written: type,
                        summary: "\(box.path) type ← '\(printable(type))'")
    }

    static func mutateMp4EntryCount(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let count = bytes.count
        let tables = MP4Box.walk(bytes).compactMap { box -> (MP4Box, Int)? in
            guard let field = MP4Box.countField[box.type], box.offset + field + 4 <= min(count, box.offset + box.size) else { return nil }
            return (box, box.offset + field)
        }
        guard !tables.isEmpty else { return nil }
        let (box, at) = random.element(of: tables)
        let old = readBE(bytes, at, 4)
        let value = countValue(old: old, maximum: 0xFFFF_FFFF, using: &random)
        return writeField(kind, &bytes, at: at, width: 4, value: value, bigEndian: true,
                          name: "\(box.path) entry count", old: old)
    }

    static func mutateEbmlElementSize(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let elements = EBMLElement.walk(bytes)
        guard !elements.isEmpty else { return nil }
        let element = random.element(of: elements)
        let width = element.sizeLength
        let maximum = (UInt64(1) << UInt64(7 * width)) - 1  // all ones: "unknown size"
        let old = element.size ?? maximum
        let value = sizeValue(old: old, maximum: maximum, headerSize: 0, using: &random)
        let encoded = (UInt64(1) << UInt64(7 * width)) | value
        let summary = "\(element.name) size ← " + (value == maximum ? "unknown" : "0x" + String(value, radix: 16))
            + " (was " + (element.size.map { "0x" + String($0, radix: 16) } ?? "unknown") + ")"
        var written: [UInt8] = []
        for i in 0..<width {
            let byte = UInt8(truncatingIfNeeded: encoded >> UInt64(8 * (width - 1 - i)))
            bytes[element.sizeOffset + i] = byte
            written.append(byte)
        }
        return Mutation(kind: kind, offset: element.sizeOffset, length: width, written: written, summary: summary)
    }

    static func mutateRiffChunkSize(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let chunks = RIFFChunk.walk(bytes)
        guard !chunks.isEmpty else { return nil }
        let chunk = random.element(of: chunks)
        return resizeField(kind, &bytes, &random, at: chunk.offset + 4, width: 4, bigEndian: false,
                           name: "\(chunk.name) size")
    }

    static func mutatePngChunkLength(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let count = bytes.count
        var chunks: [(offset: Int, type: String)] = []
        var at = 8
        while at + 12 <= count {
            let length = Int(readBE(bytes, at, 4))
            chunks.append((at, printable(Array(bytes[(at + 4)..<(at + 8)]))))
            guard length <= count else { break }
            at += 12 + length
        }
        guard !chunks.isEmpty else { return nil }
        let chunk = random.element(of: chunks)
        return resizeField(kind, &bytes, &random, at: chunk.offset, width: 4, bigEndian: true,
                           name: "\(chunk.type) length")
    }

    static func mutateJpegSegmentLength(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64) -> Mutation? {
        let segments = JPEGSegment.walk(bytes)
        guard !segments.isEmpty else { return nil }
        let segment = random.element(of: segments)
        return resizeField(kind, &bytes, &random, at: segment.offset + 2, width: 2, bigEndian: true,
                           name: "\(segment.name) length")
    }

    /// Replaces the size field of `width` bytes at `offset` with a value ``sizeValue`` draws
    /// (its maximum: every bit of the field set). What the MP4, RIFF, PNG and JPEG size
    /// mutations share once each has picked its box, chunk or segment.
    private static func resizeField(_ kind: Kind, _ bytes: inout [UInt8], _ random: inout SplitMix64, at offset: Int,
                                    width: Int, bigEndian: Bool, headerSize: UInt64 = 0, name: String) -> Mutation? {
        let old = bigEndian ? readBE(bytes, offset, width) : readLE(bytes, offset, width)
        let maximum = UInt64.max >> UInt64(64 - 8 * width)
        let value = sizeValue(old: old, maximum: maximum, headerSize: headerSize, using: &random)
        return writeField(kind, &bytes, at: offset, width: width, value: value, bigEndian: bigEndian, name: name, old: old)
    }
}
