import Foundation
import ReelCore
import ReelMedia
import ReelTestSupport
import Testing

/// The mutator is deterministic from its seed, and every mutation changes exactly
/// what its description says, where it says.
@Suite struct MediaMutatorTests {
    static let bytes = LoaderContract.pattern(count: 20_000, seed: 5)

    static func picture(_ name: String) throws -> Data {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-mutator-\(getpid())-\(name)")
        if !FileManager.default.fileExists(atPath: url.path) {
            try ClipEncoder.encodeImage(source: "testsrc2=size=64x48", width: 64, height: 48, to: url)
        }
        return try Data(contentsOf: url)
    }

    static let mp4 = ClipSpec(width: 64, height: 48, frameRate: 10, duration: 1, keyframeInterval: 10, audioCodec: .aac)

    @Test func splitMixGivesItsPublishedSequence() {
        // The reference SplitMix64 (Vigna) from seed 0.
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        #expect(random.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(random.next() == 0x06C4_5D18_8009_454F)
        var bounded = SplitMix64(seed: 42)
        let draws = (0..<10_000).map { _ in bounded.below(7) }
        #expect(draws.allSatisfy { (0..<7).contains($0) })
        #expect(Set(draws).count == 7)
    }

    @Test func theSameSeedGivesTheSameBytesAndDescription() throws {
        let clip = try Fixtures.data(Self.mp4)
        for seed: UInt64 in [0, 1, 17, 12_345, .max] {
            let a = MediaMutator.mutate(clip, seed: seed, steps: 3)
            let b = MediaMutator.mutate(clip, seed: seed, steps: 3)
            #expect(a.bytes == b.bytes, "seed \(seed)")
            #expect(a.description == b.description)
            #expect(a.description.hasPrefix("seed \(seed): "))
            #expect(a.mutations.count == 3)
            #expect(a.bytes != [UInt8](clip), "seed \(seed) changed nothing: \(a)")
        }
        let outcomes = Set((0..<50).map { MediaMutator.mutate(clip, seed: UInt64($0)).bytes })
        #expect(outcomes.count >= 45, "different seeds damage the file differently")
    }

    @Test func byteLevelMutationsChangeWhatTheySayWhereTheySay() {
        let original = [UInt8](Self.bytes)
        for kind in [MediaMutator.Kind.flipBytes, .cutChunk, .duplicateChunk, .zeroRun, .truncate] {
            for seed in 0..<40 as Range<UInt64> {
                var bytes = original
                var random = SplitMix64(seed: seed)
                let mutation = try! #require(MediaMutator.apply(kind, to: &bytes, using: &random))
                let at = mutation.offset, n = mutation.length
                #expect(mutation.kind == kind)
                #expect(mutation.description.hasSuffix("at 0x\(String(at, radix: 16))"))
                switch kind {
                case .flipBytes:
                    #expect(bytes.count == original.count)
                    #expect(Array(bytes[at..<(at + n)]) == mutation.written)
                    #expect((at..<(at + n)).allSatisfy { bytes[$0] != original[$0] }, "every flipped byte differs")
                    #expect(Array(bytes[..<at]) == Array(original[..<at]) && Array(bytes[(at + n)...]) == Array(original[(at + n)...]))
                    #expect(mutation.summary.contains("flip \(n) byte"))
                case .cutChunk:
                    #expect(bytes == Array(original[..<at]) + Array(original[(at + n)...]))
                    #expect(mutation.summary == "cut \(n) bytes")
                case .duplicateChunk:
                    #expect(mutation.written == Array(original[(at - n)..<at]), "a copy of the bytes before")
                    #expect(bytes == Array(original[..<at]) + mutation.written + Array(original[at...]))
                case .zeroRun:
                    #expect(bytes.count == original.count)
                    #expect(bytes[at..<(at + n)].allSatisfy { $0 == 0 })
                    #expect(Array(bytes[..<at]) == Array(original[..<at]) && Array(bytes[(at + n)...]) == Array(original[(at + n)...]))
                case .truncate:
                    #expect(bytes == Array(original[..<at]))
                    #expect(n == original.count - at)
                default:
                    Issue.record("not a byte-level kind")
                }
            }
        }
    }

    /// The field a structural mutation names holds the value it names, as the bytes
    /// written, and nothing else in the file changed.
    private func checkField(_ kind: MediaMutator.Kind, in data: Data, seeds: Range<UInt64> = 0..<30,
                            bigEndian: Bool = true, names: Set<String>) throws {
        let original = [UInt8](data)
        var seen: Set<String> = []
        for seed in seeds {
            var bytes = original
            var random = SplitMix64(seed: seed)
            let mutation = try #require(MediaMutator.apply(kind, to: &bytes, using: &random), "\(kind) found nothing to change")
            let at = mutation.offset, n = mutation.length
            #expect(bytes.count == original.count)
            #expect(Array(bytes[at..<(at + n)]) == mutation.written)
            #expect(Array(bytes[..<at]) == Array(original[..<at]) && Array(bytes[(at + n)...]) == Array(original[(at + n)...]),
                    "only the named field changed: \(mutation)")
            #expect(bytes != original)
            let field = mutation.summary.components(separatedBy: " ← ").first ?? ""
            seen.insert(field)
            guard kind != .mp4BoxType, kind != .ebmlElementSize else { continue }
            // "… ← 0xNEW (was 0xOLD)": the bytes at the offset read as NEW now and read as OLD before.
            let values = mutation.summary.split(separator: "0x").dropFirst().map { UInt64($0.prefix { $0.isHexDigit }, radix: 16) }
            let ordered = bigEndian ? mutation.written : mutation.written.reversed()
            let read = ordered.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let before = (bigEndian ? Array(original[at..<(at + n)]) : Array(original[at..<(at + n)]).reversed()).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(values.first == read, "\(mutation)")
            #expect(values.last == before, "\(mutation)")
        }
        let named = Set(seen.map { $0.split(separator: " ").first.map(String.init) ?? $0 })
        #expect(!named.isDisjoint(with: names), "\(kind) reached \(seen.sorted())")
    }

    @Test func mp4BoxSizesTypesAndCountsAreFoundByWalkingTheBoxTree() throws {
        let faststart = try Fixtures.data(Self.mp4)
        try checkField(.mp4BoxSize, in: faststart, seeds: 0..<80,
                       names: ["moov/trak/mdia/minf/stbl/stsz", "moov/trak/mdia/minf/stbl/stco", "mdat", "moov"])
        try checkField(.mp4EntryCount, in: faststart, seeds: 0..<60,
                       names: ["moov/trak/mdia/minf/stbl/stsz", "moov/trak/mdia/minf/stbl/stts"])
        try checkField(.mp4BoxType, in: faststart, names: ["moov", "moov/trak", "moov/trak/mdia/minf/stbl"])
        // The path is the box tree: the type at offset+4 is the path's last component.
        for seed in 0..<40 as Range<UInt64> {
            var bytes = [UInt8](faststart)
            var random = SplitMix64(seed: seed)
            let mutation = try #require(MediaMutator.apply(.mp4BoxSize, to: &bytes, using: &random))
            let path = mutation.summary.components(separatedBy: " size").first ?? ""
            let type = String(decoding: bytes[(mutation.offset + 4)..<(mutation.offset + 8)], as: UTF8.self)
            #expect(path.hasSuffix(type), "\(mutation)")
        }
        let fragmented = try Fixtures.data(ClipSpec(width: 64, height: 48, frameRate: 10, duration: 1, keyframeInterval: 5,
                                                    audioCodec: nil, container: .fragmentedMP4))
        try checkField(.mp4BoxSize, in: fragmented, seeds: 0..<60, names: ["moof/traf/trun", "moof", "moof/traf", "mdat"])
    }

    @Test func matroskaElementSizesKeepTheirWidth() throws {
        let mkv = try Fixtures.data(ClipSpec(width: 64, height: 48, frameRate: 10, duration: 1, videoCodec: .vp9,
                                             keyframeInterval: 10, audioCodec: .opus, container: .webm))
        try checkField(.ebmlElementSize, in: mkv, seeds: 0..<80, names: ["SimpleBlock", "Cluster", "Segment", "EBML", "Tracks"])
        for seed in 0..<40 as Range<UInt64> {
            var bytes = [UInt8](mkv)
            var random = SplitMix64(seed: seed)
            let mutation = try #require(MediaMutator.apply(.ebmlElementSize, to: &bytes, using: &random))
            // Same width: the length marker is where it was.
            let first = bytes[mutation.offset]
            #expect(first.leadingZeroBitCount + 1 == mutation.length, "\(mutation)")
            #expect(mkv[mutation.offset].leadingZeroBitCount == first.leadingZeroBitCount)
            let value = mutation.written.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & ((UInt64(1) << UInt64(7 * mutation.length)) - 1)
            let all = (UInt64(1) << UInt64(7 * mutation.length)) - 1
            #expect(mutation.summary.contains(value == all ? "← unknown" : "← 0x" + String(value, radix: 16)), "\(mutation)")
        }
    }

    @Test func riffChunkSizesAreLittleEndian() throws {
        let avi = try Fixtures.data(ClipSpec(width: 64, height: 48, frameRate: 10, duration: 1, videoCodec: .mpeg4,
                                             keyframeInterval: 10, audioCodec: .mp3, container: .avi))
        try checkField(.riffChunkSize, in: avi, seeds: 0..<80, bigEndian: false, names: ["LIST", "RIFF", "strh", "strf", "idx1", "00dc"])
    }

    @Test func picturesGetTheirChunkAndSegmentLengthsDamaged() throws {
        let png = try Self.picture("p.png")
        let jpeg = try Self.picture("p.jpg")
        #expect(MediaMutator.Format.detect([UInt8](png)) == .png)
        #expect(MediaMutator.Format.detect([UInt8](jpeg)) == .jpeg)
        try checkField(.pngChunkLength, in: png, names: ["IHDR", "IDAT", "IEND"])
        try checkField(.jpegSegmentLength, in: jpeg, seeds: 0..<60, names: ["SOF0", "DQT", "DHT", "SOS"])
        // Only what applies to a picture is chosen.
        for seed in 0..<50 as Range<UInt64> {
            let mutant = MediaMutator.mutate(png, seed: seed)
            #expect(mutant.mutations.allSatisfy { $0.kind.format == nil || $0.kind.format == .png }, "\(mutant)")
        }
    }

    @Test func formatsAreDetectedAndKindsChosenAmongThoseThatApply() throws {
        let mkv = try Fixtures.data(ClipSpec(width: 64, height: 48, frameRate: 10, duration: 1, audioCodec: nil, container: .mkv))
        #expect(MediaMutator.Format.detect([UInt8](try Fixtures.data(Self.mp4))) == .mp4)
        #expect(MediaMutator.Format.detect([UInt8](mkv)) == .matroska)
        #expect(MediaMutator.Format.detect([UInt8](Self.bytes)) == .unknown)
        var kinds: Set<MediaMutator.Kind> = []
        for seed in 0..<200 as Range<UInt64> {
            for mutation in MediaMutator.mutate(mkv, seed: seed).mutations { kinds.insert(mutation.kind) }
        }
        #expect(kinds == Set(MediaMutator.Kind.applicable(to: .matroska)), "\(kinds)")
        // Bytes of no known format get the byte-level kinds only.
        for seed in 0..<50 as Range<UInt64> {
            #expect(MediaMutator.mutate(Self.bytes, seed: seed).mutations.allSatisfy { $0.kind.format == nil })
        }
        // Asking for a kind that does not apply falls back to flipping bytes.
        let fallback = MediaMutator.mutate(Self.bytes, seed: 3, kinds: [.riffChunkSize])
        #expect(fallback.mutations.map(\.kind) == [.flipBytes])
    }

    @Test func aCorpusIsWrittenWithOneSeedPerFileAndReadsBack() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-corpus-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try MediaMutator.writeCorpus(sources: [("a.mp4", try Fixtures.data(Self.mp4)), ("b.png", try Self.picture("p.png"))],
                                                 seeds: 5..<9, into: directory)
        #expect(files.count == 8)
        #expect(Set(files.map(\.mutant.seed)).count == 8)
        #expect(files.map(\.url.lastPathComponent).prefix(2) == ["a-seed5.mp4", "a-seed6.mp4"])
        #expect(files.last?.url.lastPathComponent == "b-seed1000008.png")
        for file in files {
            #expect(try Data(contentsOf: file.url) == file.mutant.data)
            let source = file.source == "a.mp4" ? try Fixtures.data(Self.mp4) : try Self.picture("p.png")
            #expect(MediaMutator.mutate(source, seed: file.mutant.seed).bytes == file.mutant.bytes, "reproducible from \(file)")
            #expect(file.description.hasPrefix(file.source + " seed \(file.mutant.seed): "))
        }
    }
}
