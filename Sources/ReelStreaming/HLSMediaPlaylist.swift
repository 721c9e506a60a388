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

    /// An empty playlist, which the parser fills.
    init() {
        segments = []
        isFinal = false
        mediaSequence = 0
        serverControl = ServerControl()
        trailingParts = []
        preloadHints = []
        skippedSegments = 0
    }

    /// Reads `data` as a media playlist, or says why it is not one Reel can use: line by line,
    /// each tag read by its own function (``HLSMediaPlaylistParser``).
    public static func parse(_ data: Data) throws(ParseError) -> HLSMediaPlaylist {
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard lines.first(where: { !$0.isEmpty })?.hasPrefix("#EXTM3U") == true else { throw .notAMediaPlaylist }
        var parser = HLSMediaPlaylistParser()
        for line in lines where !line.isEmpty { try parser.read(line) }
        return try parser.finish()
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
