import Foundation
import ReelCaptions
import PropertyBased
import ReelCore
import Testing

/// Fragmented MP4 text read from another project's test segments (shaka-player's `wvtt` and
/// `stpp` assets, corpus/captions/shaka; source and licence in corpus/MANIFEST.tsv). The expected
/// cues are the ones shaka-player's own parser tests expect of the same files.
@Suite struct FragmentedTextTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../corpus/captions/shaka").standardizedFileURL

    static func bytes(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    static func seconds(_ value: Double) -> MediaTime { MediaTime(value: Int64((value * 1000).rounded()), timescale: 1000) }

    struct Cue: Equatable, CustomStringConvertible {
        var start: MediaTime
        var end: MediaTime
        var payload: String
        var description: String { "\(start.seconds)–\(end.seconds) \(payload.debugDescription)" }
    }

    static func webVTTCues(_ segment: String) throws -> [Cue] {
        let track = try FragmentedTextTrack(initialization: bytes("vtt-init.mp4"))
        #expect(track.format == .webvtt)
        return try track.samples(in: bytes(segment)).flatMap(\.webVTTCues).map { Cue(start: $0.start, end: $0.end, payload: $0.payload) }
    }

    @Test func wvttCuesAndGaps() throws {
        #expect(try Self.webVTTCues("vtt-segment.mp4") == [
            Cue(start: Self.seconds(111.8), end: Self.seconds(115.8), payload: "It has shed much innocent blood.\n"),
            Cue(start: Self.seconds(118), end: Self.seconds(120), payload: "You're a fool for traveling alone,\nso completely unprepared.\n"),
        ])
    }

    @Test func aWvttSampleWithTwoCuesShowsBoth() throws {
        #expect(try Self.webVTTCues("vtt-segment-multi-payload.mp4") == [
            Cue(start: Self.seconds(110), end: Self.seconds(113), payload: "Hello"),
            Cue(start: Self.seconds(110), end: Self.seconds(113), payload: "and"),
            Cue(start: Self.seconds(113), end: Self.seconds(116.276), payload: "goodbye"),
        ])
    }

    @Test func wvttSamplesWithoutDurationsTakeTheDefault() throws {
        let cues = try Self.webVTTCues("vtt-segment-no-duration.mp4")
        let expected: [Cue] = (10..<20).map { (second: Int) -> Cue in
            Cue(start: Self.seconds(Double(second)), end: Self.seconds(Double(second + 1)), payload: "cue \(second)")
        }
        #expect(cues == expected)
    }

    @Test func wvttSettingsAreKeptForTheDecoder() throws {
        let track = try FragmentedTextTrack(initialization: Self.bytes("vtt-init.mp4"))
        let cues = try track.samples(in: Self.bytes("vtt-segment-settings.mp4")).flatMap(\.webVTTCues)
        #expect(cues.count == 2)
        let document = WebVTTSampleCue.document(cues)
        #expect(document.hasPrefix("WEBVTT\n\n00:01:51.800 --> 00:01:55.800 "))
        #expect(cues.first.map { document.contains($0.settings) && !$0.settings.isEmpty } == true)
        #expect(document.contains("00:01:58.000 --> 00:02:00.000"))
    }

    @Test func stppSamplesAreTTMLDocumentsOnTheTracksTimeline() throws {
        let track = try FragmentedTextTrack(initialization: Self.bytes("ttml-init.mp4"))
        #expect(track.format == .ttml)
        for (name, starts) in [("ttml-segment.mp4", [0.0]), ("ttml-segment-multiple-sample.mp4", [0, 60]),
                               ("ttml-segment-multiple-mdat.mp4", [0, 60])] {
            let samples = try track.samples(in: Self.bytes(name))
            #expect(samples.map(\.start) == starts.map(Self.seconds), "\(name)")
            let cues = try samples.flatMap { try TTMLDocument(Data($0.bytes)).events(track: CaptionTrackID("t")) }
            #expect(cues.count == 10, "\(name)")
            #expect(cues.first?.start == Self.seconds(23) && cues.first?.end == Self.seconds(24.5))
            #expect(cues.first?.plainText == "You're a jerk, Thom.")
            #expect(cues.last?.start == Self.seconds(50) && cues.last?.plainText == "Robot's memory synced and locked!")
        }
    }

    @Test func aWebVTTDocumentCannotBeSplitByAPayload() {
        let hostile = WebVTTSampleCue(start: Self.seconds(1), end: Self.seconds(2), identifier: "", settings: "line:0\n\n",
                                      payload: "one\n\n00:00:05.000 --> 00:00:09.000\ninjected")
        let document = WebVTTSampleCue.document([hostile])
        #expect(document == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000 line:0  \none\n00:00:05.000 -> 00:00:09.000\ninjected\n\n")
    }

    @Test func anInitializationWithoutATextTrackIsNamed() throws {
        #expect(throws: FragmentedTextError.noTextTrack) { try FragmentedTextTrack(initialization: Data()) }
        // A video's init segment: a track, but no wvtt or stpp sample entry.
        var video = try Self.bytes("vtt-init.mp4")
        let range = try #require(video.firstRange(of: Data("wvtt".utf8)))
        video.replaceSubrange(range, with: Data("avc1".utf8))
        #expect(throws: FragmentedTextError.noTextTrack) { try FragmentedTextTrack(initialization: video) }
    }

    /// Every cut of a segment, and random single-byte changes of the segment and of its
    /// initialization, either read or throw a ``FragmentedTextError``: no trap, no sample past
    /// the bytes. (A few hundred changes: the body runs on a concurrency thread, the only one
    /// when the suite is pinned to one core.)
    @Test func mutatedSegmentsNeverTrap() throws {
        let initialization = try Self.bytes("vtt-init.mp4")
        let segment = try Self.bytes("vtt-segment-no-duration.mp4")
        let track = try FragmentedTextTrack(initialization: initialization)
        for length in 0..<segment.count {
            let samples = (try? track.samples(in: segment.prefix(length))) ?? []
            #expect(samples.allSatisfy { $0.bytes.count <= length })
            _ = samples.flatMap(\.webVTTCues)
        }
        var generator = Xoshiro(seed: (24, 7, 1, 2))
        for _ in 0..<600 {
            var mutated = segment
            let index = Int(generator.next() % UInt64(mutated.count))
            mutated[index] = UInt8(truncatingIfNeeded: generator.next())
            let samples = (try? track.samples(in: mutated)) ?? []
            _ = WebVTTSampleCue.document(samples.flatMap(\.webVTTCues))
            var mutatedInit = initialization
            let initIndex = Int(generator.next() % UInt64(mutatedInit.count))
            mutatedInit[initIndex] = UInt8(truncatingIfNeeded: generator.next())
            if let other = try? FragmentedTextTrack(initialization: mutatedInit) {
                _ = try? other.samples(in: segment)
            }
        }
    }

}
