import Foundation
import ReelCore

/// An HLS media playlist (RFC 8216bis), as Reel's preloader, head start and segment scheduler
/// read one: its segments with their media sequence numbers, durations, init sections and
/// discontinuities, and for live streams what low-latency HLS adds — partial segments, the
/// preload hint, server control (blocking reload, delta updates, hold-backs), a delta
/// update's skipped segments and the preferred start. Pure value code.
///
/// Hostile input is bounded: at most ``maximumSegments`` segments and ``maximumParts`` parts,
/// numbers that do not fit or are negative are refused, and a playlist whose media sequence
/// plus its segments would overflow is refused.
public struct HLSMediaPlaylist: Sendable, Hashable {
    /// A resource a playlist names: a URI as written (relative to the playlist) and a byte range.
    public struct Part: Sendable, Hashable {
        public var uri: String
        public var range: ByteRange?

        public init(uri: String, range: ByteRange? = nil) {
            self.uri = uri
            self.range = range
        }
    }

    /// A media segment.
    public struct Segment: Sendable, Hashable {
        /// Its media sequence number.
        public var sequence: Int64
        /// `#EXTINF`'s duration, in seconds.
        public var duration: Double
        public var resource: Part
        /// The `#EXT-X-MAP` in force for it.
        public var initSection: Part?
        /// `#EXT-X-DISCONTINUITY` before it.
        public var discontinuity: Bool
        /// Its discontinuity sequence number.
        public var discontinuitySequence: Int64
        /// `#EXT-X-GAP`: the segment is missing on purpose.
        public var isGap: Bool
        /// Its partial segments, in order (low-latency HLS; empty when none are listed).
        public var parts: [PartialSegment]

        public var uri: String { resource.uri }
        public var range: ByteRange? { resource.range }
    }

    /// An `#EXT-X-PART`.
    public struct PartialSegment: Sendable, Hashable {
        public var duration: Double
        public var resource: Part
        /// `INDEPENDENT=YES`: it starts with a frame that decodes on its own.
        public var independent: Bool
        public var isGap: Bool
    }

    /// `#EXT-X-PRELOAD-HINT`: a resource the server will have soon.
    public struct PreloadHint: Sendable, Hashable {
        public enum Kind: Sendable, Hashable { case part, map }
        public var kind: Kind
        /// Its URI; its range starts at `BYTERANGE-START` and, when `BYTERANGE-LENGTH` is
        /// absent, runs to the end of the resource (`ByteRange.length` nil).
        public var resource: Part

        public init(kind: Kind, resource: Part) {
            self.kind = kind
            self.resource = resource
        }
    }

    /// `#EXT-X-SERVER-CONTROL`.
    public struct ServerControl: Sendable, Hashable {
        /// `CAN-BLOCK-RELOAD=YES`: a reload may ask for a future `_HLS_msn`/`_HLS_part`.
        public var canBlockReload = false
        /// `CAN-SKIP-UNTIL`: a reload may ask `_HLS_skip=YES` for a delta update; seconds.
        public var canSkipUntil: Double?
        /// `HOLD-BACK`: how far from the end playback should start, seconds.
        public var holdBack: Double?
        /// `PART-HOLD-BACK`: the same, when playing parts.
        public var partHoldBack: Double?

        public init() {}
    }

    /// `#EXT-X-PLAYLIST-TYPE`.
    public enum PlaylistType: Sendable, Hashable { case vod, event }

    /// Why a playlist was refused.
    public enum ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        case notAMediaPlaylist
        case tooManySegments(limit: Int)
        case tooManyParts(limit: Int)
        case badValue(tag: String, value: String)

        public var description: String {
            switch self {
            case .notAMediaPlaylist: "not an HLS media playlist"
            case .tooManySegments(let limit): "more than \(limit) segments"
            case .tooManyParts(let limit): "more than \(limit) partial segments"
            case .badValue(let tag, let value): "\(tag) has a value that is not allowed: \(value.prefix(40))"
            }
        }
    }

    /// The most segments a playlist may list.
    public static let maximumSegments = 100_000
    /// The most partial segments a playlist may list.
    public static let maximumParts = 10_000

    /// The `#EXT-X-MAP` of the first segment.
    public var initSection: Part?
    public var segments: [Segment]
    /// `#EXT-X-ENDLIST` or `#EXT-X-PLAYLIST-TYPE:VOD`: it will not change.
    public var isFinal: Bool
    public var playlistType: PlaylistType?
    /// `#EXT-X-TARGETDURATION`, seconds.
    public var targetDuration: Double?
    /// `#EXT-X-MEDIA-SEQUENCE`: the first listed segment's number (0 when absent), counting
    /// the skipped ones of a delta update.
    public var mediaSequence: Int64
    /// `#EXT-X-PART-INF:PART-TARGET`, seconds.
    public var partTarget: Double?
    public var serverControl: ServerControl
    /// Parts listed after the last segment: of the segment being written (number
    /// ``nextSequence``).
    public var trailingParts: [PartialSegment]
    public var preloadHints: [PreloadHint]
    /// `#EXT-X-SKIP:SKIPPED-SEGMENTS`: in a delta update, the segments left out before the
    /// first listed one (whose number is `mediaSequence + skippedSegments`).
    public var skippedSegments: Int
    /// `#EXT-X-START:TIME-OFFSET` (negative: from the end) and `PRECISE`.
    public var start: (offset: Double, precise: Bool)? {
        get { startOffset.map { ($0, startPrecise) } }
        set { startOffset = newValue?.offset; startPrecise = newValue?.precise ?? false }
    }
    private var startOffset: Double?
    private var startPrecise = false

    /// The number the next segment will have: one past the last listed.
    public var nextSequence: Int64 { mediaSequence + Int64(skippedSegments) + Int64(segments.count) }

    /// The listed segments' total duration, seconds.
    public var duration: Double { segments.reduce(0) { $0 + $1.duration } }

    /// `nil` when `data` is not an HLS media playlist or is refused (see ``parse(_:)``).
    public init?(_ data: Data) {
        guard let playlist = try? Self.parse(data) else { return nil }
        self = playlist
    }

    private init() {
        segments = []
        isFinal = false
        mediaSequence = 0
        serverControl = ServerControl()
        trailingParts = []
        preloadHints = []
        skippedSegments = 0
    }

    /// Reads `data` as a media playlist, or says why it is not one Reel can use.
    public static func parse(_ data: Data) throws(ParseError) -> HLSMediaPlaylist {
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard lines.first(where: { !$0.isEmpty })?.hasPrefix("#EXTM3U") == true else { throw .notAMediaPlaylist }
        var playlist = HLSMediaPlaylist()
        var sawSegmentTag = false
        var pendingRange: (length: Int64, offset: Int64?)?
        var pendingDuration: Double?
        var pendingDiscontinuity = false
        var pendingGap = false
        var pendingParts: [PartialSegment] = []
        var partCount = 0
        var currentMap: Part?
        var discontinuitySequence: Int64 = 0
        var nextOffset: [String: Int64] = [:]
        var nextPartOffset: [String: Int64] = [:]

        func number(_ tag: String, _ value: String) throws(ParseError) -> Int64 {
            guard let number = Int64(value.trimmingCharacters(in: .whitespaces)), number >= 0 else {
                throw .badValue(tag: tag, value: value)
            }
            return number
        }
        func seconds(_ tag: String, _ value: String?) throws(ParseError) -> Double? {
            guard let value else { return nil }
            guard let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds.isFinite, seconds >= 0,
                  seconds < 1_000_000 else { throw .badValue(tag: tag, value: value) }
            return seconds
        }
        func value(_ line: String, _ tag: String) -> String { String(line.dropFirst(tag.count)) }

        for line in lines where !line.isEmpty {
            if line.hasPrefix("#EXT-X-ENDLIST") {
                playlist.isFinal = true
            } else if line.hasPrefix("#EXT-X-PLAYLIST-TYPE:") {
                switch value(line, "#EXT-X-PLAYLIST-TYPE:").uppercased() {
                case "VOD": playlist.playlistType = .vod; playlist.isFinal = true
                case "EVENT": playlist.playlistType = .event
                default: break
                }
            } else if line.hasPrefix("#EXT-X-TARGETDURATION:") {
                let tag = "#EXT-X-TARGETDURATION"
                // A live playlist before its first segment is still a media playlist.
                sawSegmentTag = true
                playlist.targetDuration = try seconds(tag, value(line, tag + ":"))
            } else if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") {
                let tag = "#EXT-X-MEDIA-SEQUENCE"
                playlist.mediaSequence = try number(tag, value(line, tag + ":"))
            } else if line.hasPrefix("#EXT-X-DISCONTINUITY-SEQUENCE:") {
                let tag = "#EXT-X-DISCONTINUITY-SEQUENCE"
                discontinuitySequence = try number(tag, value(line, tag + ":"))
            } else if line.hasPrefix("#EXT-X-DISCONTINUITY") {
                pendingDiscontinuity = true
            } else if line.hasPrefix("#EXT-X-GAP") {
                pendingGap = true
            } else if line.hasPrefix("#EXT-X-MAP:") {
                let attributes = HLSMasterPlaylist.attributes(value(line, "#EXT-X-MAP:"))
                if let uri = attributes["URI"] {
                    currentMap = Part(uri: uri, range: attributes["BYTERANGE"].flatMap { Self.range($0, after: 0) })
                    if playlist.segments.isEmpty, playlist.initSection == nil { playlist.initSection = currentMap }
                }
            } else if line.hasPrefix("#EXT-X-BYTERANGE:") {
                let text = value(line, "#EXT-X-BYTERANGE:")
                guard let parts = Self.rangeParts(text) else { throw .badValue(tag: "#EXT-X-BYTERANGE", value: text) }
                pendingRange = parts
            } else if line.hasPrefix("#EXTINF:") {
                sawSegmentTag = true
                let field = value(line, "#EXTINF:").split(separator: ",", maxSplits: 1).first.map(String.init) ?? ""
                // Lenient, as players are: `-1` and other nonsense mean "about the target".
                pendingDuration = try? seconds("#EXTINF", field)
            } else if line.hasPrefix("#EXTINF") {
                sawSegmentTag = true
            } else if line.hasPrefix("#EXT-X-PART-INF:") {
                let attributes = HLSMasterPlaylist.attributes(value(line, "#EXT-X-PART-INF:"))
                playlist.partTarget = try seconds("PART-TARGET", attributes["PART-TARGET"])
            } else if line.hasPrefix("#EXT-X-PART:") {
                sawSegmentTag = true
                let attributes = HLSMasterPlaylist.attributes(value(line, "#EXT-X-PART:"))
                guard let uri = attributes["URI"], let duration = try seconds("#EXT-X-PART DURATION", attributes["DURATION"]) else {
                    throw .badValue(tag: "#EXT-X-PART", value: line)
                }
                partCount += 1
                guard partCount <= maximumParts else { throw .tooManyParts(limit: maximumParts) }
                var range: ByteRange?
                if let text = attributes["BYTERANGE"] {
                    range = Self.range(text, after: nextPartOffset[uri] ?? 0)
                    guard let range else { throw .badValue(tag: "#EXT-X-PART BYTERANGE", value: text) }
                    nextPartOffset[uri] = range.end
                }
                pendingParts.append(PartialSegment(
                    duration: duration, resource: Part(uri: uri, range: range),
                    independent: attributes["INDEPENDENT"]?.uppercased() == "YES",
                    isGap: attributes["GAP"]?.uppercased() == "YES"))
            } else if line.hasPrefix("#EXT-X-PRELOAD-HINT:") {
                let attributes = HLSMasterPlaylist.attributes(value(line, "#EXT-X-PRELOAD-HINT:"))
                guard let uri = attributes["URI"], let type = attributes["TYPE"]?.uppercased(), type == "PART" || type == "MAP" else { continue }
                var start: Int64 = 0
                var length: Int64?
                if let text = attributes["BYTERANGE-START"] { start = try number("BYTERANGE-START", text) }
                if let text = attributes["BYTERANGE-LENGTH"] { length = try number("BYTERANGE-LENGTH", text) }
                guard playlist.preloadHints.count < 16 else { continue }
                playlist.preloadHints.append(PreloadHint(
                    kind: type == "PART" ? .part : .map, resource: Part(uri: uri, range: ByteRange(offset: start, length: length))))
            } else if line.hasPrefix("#EXT-X-SERVER-CONTROL:") {
                let attributes = HLSMasterPlaylist.attributes(value(line, "#EXT-X-SERVER-CONTROL:"))
                var control = ServerControl()
                control.canBlockReload = attributes["CAN-BLOCK-RELOAD"]?.uppercased() == "YES"
                control.canSkipUntil = try seconds("CAN-SKIP-UNTIL", attributes["CAN-SKIP-UNTIL"])
                control.holdBack = try seconds("HOLD-BACK", attributes["HOLD-BACK"])
                control.partHoldBack = try seconds("PART-HOLD-BACK", attributes["PART-HOLD-BACK"])
                playlist.serverControl = control
            } else if line.hasPrefix("#EXT-X-SKIP:") {
                let attributes = HLSMasterPlaylist.attributes(value(line, "#EXT-X-SKIP:"))
                let skipped = try number("SKIPPED-SEGMENTS", attributes["SKIPPED-SEGMENTS"] ?? "")
                guard playlist.segments.isEmpty, skipped <= Int64(maximumSegments) else {
                    throw .badValue(tag: "#EXT-X-SKIP", value: line)
                }
                playlist.skippedSegments = Int(skipped)
            } else if line.hasPrefix("#EXT-X-START:") {
                let attributes = HLSMasterPlaylist.attributes(value(line, "#EXT-X-START:"))
                guard let text = attributes["TIME-OFFSET"], let offset = Double(text), offset.isFinite, abs(offset) < 1_000_000 else {
                    throw .badValue(tag: "#EXT-X-START", value: line)
                }
                playlist.start = (offset, attributes["PRECISE"]?.uppercased() == "YES")
            } else if !line.hasPrefix("#") {
                guard playlist.segments.count < maximumSegments else { throw .tooManySegments(limit: maximumSegments) }
                if pendingDiscontinuity, !playlist.segments.isEmpty || playlist.skippedSegments > 0 {
                    discontinuitySequence += 1
                }
                var range: ByteRange?
                if let pending = pendingRange {
                    // `n` without `@o` follows the previous range of the same resource.
                    let start = pending.offset ?? nextOffset[line] ?? 0
                    guard start <= Int64.max - pending.length else {
                        throw .badValue(tag: "#EXT-X-BYTERANGE", value: "\(pending.length)@\(start)")
                    }
                    range = ByteRange(offset: start, length: pending.length)
                    nextOffset[line] = start + pending.length
                }
                let (sequence, overflow) = playlist.mediaSequence.addingReportingOverflow(
                    Int64(playlist.skippedSegments + playlist.segments.count))
                guard !overflow, sequence < Int64.max - Int64(maximumSegments) else {
                    throw .badValue(tag: "#EXT-X-MEDIA-SEQUENCE", value: String(playlist.mediaSequence))
                }
                playlist.segments.append(Segment(
                    sequence: sequence, duration: pendingDuration ?? playlist.targetDuration ?? 0,
                    resource: Part(uri: line, range: range), initSection: currentMap,
                    discontinuity: pendingDiscontinuity, discontinuitySequence: discontinuitySequence,
                    isGap: pendingGap, parts: pendingParts))
                pendingRange = nil
                pendingDuration = nil
                pendingDiscontinuity = false
                pendingGap = false
                pendingParts = []
            }
        }
        guard sawSegmentTag else { throw .notAMediaPlaylist }
        if playlist.playlistType == .vod || playlist.isFinal { pendingParts = [] }
        playlist.trailingParts = pendingParts
        return playlist
    }

    /// `n[@o]` as a length and, when written, an offset (`nil` when refused).
    static func rangeParts(_ text: String) -> (length: Int64, offset: Int64?)? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2, let length = parts.first.flatMap({ Int64($0) }), length >= 0 else { return nil }
        guard parts.count == 2 else { return (length, nil) }
        guard let offset = Int64(parts[1]), offset >= 0, offset <= Int64.max - length else { return nil }
        return (length, offset)
    }

    /// `n[@o]` → bytes `o..<o+n`; without `@o` it starts at `previous` (where the previous
    /// range of the same resource ended).
    static func range(_ text: String, after previous: Int64) -> ByteRange? {
        guard let (length, offset) = rangeParts(text) else { return nil }
        let start = offset ?? previous
        guard start <= Int64.max - length else { return nil }
        return ByteRange(offset: start, length: length)
    }
}
