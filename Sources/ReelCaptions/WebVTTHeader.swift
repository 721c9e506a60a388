import Foundation
import ReelCore

/// The header of a WebVTT resource (the lines from `WEBVTT` to the first blank line), as far
/// as HLS needs it: the `X-TIMESTAMP-MAP` that ties cue times to the video's MPEG-2 timestamps.
///
/// RFC 8216 §3.5: a WebVTT segment's header SHOULD carry
/// `X-TIMESTAMP-MAP=MPEGTS:<MPEG-2 time>,LOCAL:<cue time>` (attributes in either order); without
/// it, the client assumes cue time 0 maps to MPEG-2 time 0; clients account for the 33-bit PES
/// timestamps having wrapped while cue times have not.
public struct WebVTTHeader: Hashable, Sendable {
    /// Why a header could not be read.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The text does not start with `WEBVTT` (after an optional byte order mark).
        case notWebVTT
        /// An `X-TIMESTAMP-MAP` line that does not hold exactly one MPEGTS and one LOCAL value.
        case invalidTimestampMap(String)

        /// The one line a log prints, starting `WebVTT:` (a bad map line cut to 80 characters).
        public var description: String {
            switch self {
            case .notWebVTT: "WebVTT: the resource does not start with WEBVTT"
            case .invalidTimestampMap(let line): "WebVTT: invalid timestamp map \"\(line.prefix(80))\""
            }
        }
    }

    /// The map, when the header has one.
    public var timestampMap: WebVTTTimestampMap?

    /// A header with the given map, or with none (cue time 0 is MPEG-2 time 0).
    public init(timestampMap: WebVTTTimestampMap? = nil) {
        self.timestampMap = timestampMap
    }

    /// Reads the header of `data` (UTF-8, or UTF-16 with a byte order mark).
    public init(_ data: Data) throws(Failure) {
        guard let text = CaptionText.decode(data.prefix(64 << 10), truncated: data.count > 64 << 10) else { throw .notWebVTT }
        try self.init(text: text)
    }

    /// Reads the header of `text`.
    public init(text: String) throws(Failure) {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).makeIterator()
        guard let first = lines.next(), first.hasPrefix("WEBVTT"),
              first.count == 6 || first.dropFirst(6).first == " " || first.dropFirst(6).first == "\t" else {
            throw .notWebVTT
        }
        var map: WebVTTTimestampMap?
        while let line = lines.next(), !line.allSatisfy(\.isWhitespace) {
            guard line.hasPrefix("X-TIMESTAMP-MAP=") else { continue }
            guard map == nil, let parsed = WebVTTTimestampMap(String(line.dropFirst("X-TIMESTAMP-MAP=".count))) else {
                throw .invalidTimestampMap(String(line))
            }
            map = parsed
        }
        timestampMap = map
    }

    /// What to add to the cue times to put them on the MPEG-2 timeline (seconds since MPEG-2
    /// time 0): `MPEGTS/90000 − LOCAL`, MPEGTS unwrapped near `referencePTS` (90 kHz) when given;
    /// zero without a map, as the RFC says.
    public func offset(nearPTS referencePTS: Int64? = nil) -> MediaTime {
        timestampMap?.offset(nearPTS: referencePTS) ?? .zero
    }
}

/// `X-TIMESTAMP-MAP=MPEGTS:<90 kHz ticks>,LOCAL:<WebVTT timestamp>`.
public struct WebVTTTimestampMap: Hashable, Sendable {
    /// The MPEG-2 (PES) timestamp, 90 kHz ticks, as written.
    public var mpegts: Int64
    /// The cue time that falls at ``mpegts``.
    public var local: MediaTime

    /// A map putting cue time `local` at MPEG-2 time `mpegts` (90 kHz ticks, wrapped or not).
    public init(mpegts: Int64, local: MediaTime) {
        self.mpegts = mpegts
        self.local = local
    }

    /// Reads the value after `X-TIMESTAMP-MAP=`: `MPEGTS:n,LOCAL:t` or `LOCAL:t,MPEGTS:n`
    /// (spaces around the comma tolerated); `nil` for anything else.
    public init?(_ value: String) {
        var mpegts: Int64?
        var local: MediaTime?
        for field in value.split(separator: ",", omittingEmptySubsequences: false) {
            let field = field.trimmingCharacters(in: .whitespaces)
            if field.hasPrefix("MPEGTS:") {
                let digits = field.dropFirst(7)
                guard mpegts == nil, !digits.isEmpty, digits.count <= 18, digits.allSatisfy(\.isASCIIDigit) else { return nil }
                mpegts = Int64(digits)
            } else if field.hasPrefix("LOCAL:") {
                guard local == nil, let time = WebVTTTimestampMap.timestamp(field.dropFirst(6)) else { return nil }
                local = time
            } else {
                return nil
            }
        }
        guard let mpegts, let local else { return nil }
        self.init(mpegts: mpegts, local: local)
    }

    /// `MPEGTS/90000 − LOCAL`, MPEGTS first unwrapped near `referencePTS` (see ``MPEGTimestamp/unwrap(_:near:)``).
    public func offset(nearPTS referencePTS: Int64? = nil) -> MediaTime {
        let ticks = referencePTS.map { MPEGTimestamp.unwrap(mpegts, near: $0) } ?? mpegts
        return MediaTime(value: ticks, timescale: MPEGTimestamp.clockRate) - local
    }

    /// A WebVTT timestamp, `(hh+:)?mm:ss.ttt` (WebVTT §4.3: minutes and seconds 00–59, three
    /// fraction digits), as an exact millisecond time.
    public static func timestamp(_ text: Substring) -> MediaTime? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3 else { return nil }
        var hours: Int64 = 0
        if fields.count == 3 {
            guard fields[0].count >= 2, fields[0].count <= 12, fields[0].allSatisfy(\.isASCIIDigit),
                  let value = Int64(fields[0]) else { return nil }
            hours = value
        }
        let minutesField = fields[fields.count - 2]
        let secondsParts = fields[fields.count - 1].split(separator: ".", omittingEmptySubsequences: false)
        guard minutesField.count == 2, minutesField.allSatisfy(\.isASCIIDigit), let minutes = Int64(minutesField), minutes < 60,
              secondsParts.count == 2, secondsParts[0].count == 2, secondsParts[0].allSatisfy(\.isASCIIDigit),
              let seconds = Int64(secondsParts[0]), seconds < 60,
              secondsParts[1].count == 3, secondsParts[1].allSatisfy(\.isASCIIDigit), let milliseconds = Int64(secondsParts[1])
        else { return nil }
        return MediaTime(value: ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds, timescale: 1000)
    }
}

/// MPEG-2 presentation timestamps: 33 bits of a 90 kHz clock, wrapping every 2^33 ticks (about 26.5 hours).
public enum MPEGTimestamp {
    /// Ticks per second of the MPEG-2 system clock's timestamps: 90 kHz.
    public static let clockRate: Int32 = 90_000
    /// The timestamps' range: they count modulo 2^33 ticks.
    public static let wrap: Int64 = 1 << 33

    /// The value congruent to `pts` modulo 2^33 that is nearest to `reference` (an already
    /// unwrapped timestamp on the same clock, such as the video's first pts as the demuxer gives
    /// it): a segment map written after the wrap lands just after the reference, not 26 hours back.
    /// Ties (exactly 2^32 apart) go to the later value.
    public static func unwrap(_ pts: Int64, near reference: Int64) -> Int64 {
        let reduced = ((pts % wrap) + wrap) % wrap
        let distance = reference - reduced
        // floor((distance + wrap/2) / wrap): how many wraps separate them, rounded to nearest.
        let shifted = distance + wrap / 2
        let turns = shifted >= 0 ? shifted / wrap : -((-shifted + wrap - 1) / wrap)
        return reduced + turns * wrap
    }
}
