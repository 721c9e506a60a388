import Foundation
import Testing
import ReelCore
import ReelCaptions

@Suite struct WebVTTHeaderTests {
    private func header(_ text: String) throws -> WebVTTHeader { try WebVTTHeader(Data(text.utf8)) }

    @Test func theMapGivesTheOffsetToAddToCueTimes() throws {
        let header = try header("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n\n00:00:01.000 --> 00:00:02.000\nHi\n")
        #expect(header.timestampMap == WebVTTTimestampMap(mpegts: 900_000, local: .zero))
        #expect(header.offset() == MediaTime(value: 10, timescale: 1))
    }

    @Test func eitherOrderAndALocalTimeNotZero() throws {
        let header = try header("WEBVTT\r\nX-TIMESTAMP-MAP=LOCAL:00:00:01.500, MPEGTS:126000\r\n\r\n")
        #expect(header.timestampMap?.mpegts == 126_000)
        #expect(header.timestampMap?.local == MediaTime(value: 1500, timescale: 1000))
        // 126000/90000 s − 1.5 s = −0.1 s.
        #expect(header.offset() == MediaTime(value: -1, timescale: 10))
        let short = try self.header("\u{FEFF}WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:90000,LOCAL:01:00.250\n")
        #expect(short.timestampMap?.local == MediaTime(value: 60_250, timescale: 1000))
    }

    @Test func withoutAMapCueTimeZeroIsMPEGTimeZero() throws {
        let header = try header("WEBVTT\n\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n")  // after the header: a cue's text, not a map
        #expect(header.timestampMap == nil)
        #expect(header.offset() == .zero)
        #expect(header.offset(nearPTS: 123_456) == .zero)
    }

    @Test func malformedMapsAndNonWebVTTAreErrors() {
        for line in ["MPEGTS:abc,LOCAL:00:00:00.000", "MPEGTS:900000", "LOCAL:00:00:00.000", "MPEGTS:1,LOCAL:00:00:00.00",
                     "MPEGTS:1,LOCAL:00:60:00.000", "MPEGTS:-5,LOCAL:00:00:00.000", "MPEGTS:1,MPEGTS:2,LOCAL:00:00:00.000",
                     "MPEGTS:1,LOCAL:00:00:00.000,EXTRA:3"] {
            #expect(throws: WebVTTHeader.Failure.invalidTimestampMap("X-TIMESTAMP-MAP=" + line)) {
                try header("WEBVTT\nX-TIMESTAMP-MAP=\(line)\n")
            }
        }
        #expect(throws: WebVTTHeader.Failure.notWebVTT) { try header("1\n00:00:01,000 --> 00:00:02,000\n") }
        #expect(throws: WebVTTHeader.Failure.notWebVTT) { try header("WEBVTTX\n") }
    }

    @Test func unwrapPicksTheNearestTurnOfThe33BitClock() {
        let wrap = MPEGTimestamp.wrap
        #expect(wrap == 8_589_934_592)
        // A map written just after the wrap, for a video that started just before it.
        #expect(MPEGTimestamp.unwrap(100, near: wrap - 90_000) == wrap + 100)
        // A map written just before the wrap, for a video whose timestamps the demuxer already unwrapped past it.
        #expect(MPEGTimestamp.unwrap(wrap - 100, near: 50) == -100)
        #expect(MPEGTimestamp.unwrap(5000, near: 3 * wrap + 4000) == 3 * wrap + 5000)
        #expect(MPEGTimestamp.unwrap(126_000, near: 126_000) == 126_000)
        // Values written already unrolled past 2^33 are reduced first.
        #expect(MPEGTimestamp.unwrap(wrap + 7, near: 0) == 7)
        // Exactly half a turn apart: the later one.
        #expect(MPEGTimestamp.unwrap(wrap / 2, near: 0) == wrap / 2)
        #expect(MPEGTimestamp.unwrap(0, near: wrap / 2) == wrap)
    }

    @Test func theOffsetUsesTheUnwrappedTimestamp() throws {
        let header = try header("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900,LOCAL:00:00:00.000\n")
        let reference = MPEGTimestamp.wrap - 900
        #expect(header.offset(nearPTS: reference) == MediaTime(value: MPEGTimestamp.wrap + 900, timescale: 90_000))
        #expect(header.offset() == MediaTime(value: 900, timescale: 90_000))
    }
}
