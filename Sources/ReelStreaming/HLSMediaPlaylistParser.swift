import Foundation
import ReelCore

/// Reads an HLS media playlist line by line into an ``HLSMediaPlaylist``: each tag by a small
/// function of its own, found in a table by the line's prefix, with what the lines so far left
/// pending (a byte range, a duration, parts, a discontinuity) for the next segment's URI.
struct HLSMediaPlaylistParser {
    typealias ParseError = HLSMediaPlaylist.ParseError
    typealias Read = @Sendable (inout HLSMediaPlaylistParser, String) throws(ParseError) -> Void

    var playlist = HLSMediaPlaylist()
    /// A tag only a media playlist has was seen.
    var sawSegmentTag = false
    var pendingRange: (length: Int64, offset: Int64?)?
    var pendingDuration: Double?
    var pendingDiscontinuity = false
    var pendingGap = false
    var pendingParts: [HLSMediaPlaylist.PartialSegment] = []
    var partCount = 0
    var currentMap: HLSMediaPlaylist.Part?
    var discontinuitySequence: Int64 = 0
    /// Where the next range of each resource starts when its `BYTERANGE` gives no offset.
    var nextOffset: [String: Int64] = [:]
    var nextPartOffset: [String: Int64] = [:]

    /// Each tag's reading, by the line's prefix, in the order they are tried (a longer tag
    /// before a shorter one it starts with).
    static let tags: [(prefix: String, read: Read)] = [
        ("#EXT-X-ENDLIST", { parser, _ throws(ParseError) in parser.playlist.isFinal = true }),
        ("#EXT-X-PLAYLIST-TYPE:", { parser, value throws(ParseError) in parser.playlistType(value) }),
        ("#EXT-X-TARGETDURATION:", { parser, value throws(ParseError) in try parser.targetDuration(value) }),
        ("#EXT-X-MEDIA-SEQUENCE:", { parser, value throws(ParseError) in
            parser.playlist.mediaSequence = try number("#EXT-X-MEDIA-SEQUENCE", value)
        }),
        ("#EXT-X-DISCONTINUITY-SEQUENCE:", { parser, value throws(ParseError) in
            parser.discontinuitySequence = try number("#EXT-X-DISCONTINUITY-SEQUENCE", value)
        }),
        ("#EXT-X-DISCONTINUITY", { parser, _ throws(ParseError) in parser.pendingDiscontinuity = true }),
        ("#EXT-X-GAP", { parser, _ throws(ParseError) in parser.pendingGap = true }),
        ("#EXT-X-MAP:", { parser, value throws(ParseError) in parser.map(value) }),
        ("#EXT-X-BYTERANGE:", { parser, value throws(ParseError) in
            guard let parts = HLSMediaPlaylist.rangeParts(value) else { throw .badValue(tag: "#EXT-X-BYTERANGE", value: value) }
            parser.pendingRange = parts
        }),
        ("#EXTINF:", { parser, value throws(ParseError) in parser.duration(value) }),
        ("#EXTINF", { parser, _ throws(ParseError) in parser.sawSegmentTag = true }),
        ("#EXT-X-PART-INF:", { parser, value throws(ParseError) in
            parser.playlist.partTarget = try seconds("PART-TARGET", HLSMasterPlaylist.attributes(value)["PART-TARGET"])
        }),
        ("#EXT-X-PART:", { parser, value throws(ParseError) in try parser.part(value) }),
        ("#EXT-X-PRELOAD-HINT:", { parser, value throws(ParseError) in try parser.preloadHint(value) }),
        ("#EXT-X-SERVER-CONTROL:", { parser, value throws(ParseError) in try parser.serverControl(value) }),
        ("#EXT-X-SKIP:", { parser, value throws(ParseError) in try parser.skip(value) }),
        ("#EXT-X-START:", { parser, value throws(ParseError) in try parser.start(value) }),
    ]

    /// Reads one line that is not empty: a tag Reel knows, a URI, or (anything else) nothing.
    mutating func read(_ line: String) throws(ParseError) {
        if let tag = Self.tags.first(where: { line.hasPrefix($0.prefix) }) {
            try tag.read(&self, String(line.dropFirst(tag.prefix.count)))
        } else if !line.hasPrefix("#") {
            try segment(line)
        }
    }

    /// The playlist, once every line was read.
    mutating func finish() throws(ParseError) -> HLSMediaPlaylist {
        guard sawSegmentTag else { throw .notAMediaPlaylist }
        if playlist.playlistType == .vod || playlist.isFinal { pendingParts = [] }
        playlist.trailingParts = pendingParts
        return playlist
    }

    // MARK: - Tags

    mutating func playlistType(_ value: String) {
        switch value.uppercased() {
        case "VOD": playlist.playlistType = .vod; playlist.isFinal = true
        case "EVENT": playlist.playlistType = .event
        default: break
        }
    }

    mutating func targetDuration(_ value: String) throws(ParseError) {
        // A live playlist before its first segment is still a media playlist.
        sawSegmentTag = true
        playlist.targetDuration = try Self.seconds("#EXT-X-TARGETDURATION", value)
    }

    mutating func map(_ value: String) {
        let attributes = HLSMasterPlaylist.attributes(value)
        guard let uri = attributes["URI"] else { return }
        currentMap = HLSMediaPlaylist.Part(uri: uri, range: attributes["BYTERANGE"].flatMap { HLSMediaPlaylist.range($0, after: 0) })
        if playlist.segments.isEmpty, playlist.initSection == nil { playlist.initSection = currentMap }
    }

    mutating func duration(_ value: String) {
        sawSegmentTag = true
        let field = value.split(separator: ",", maxSplits: 1).first.map(String.init) ?? ""
        // Lenient, as players are: `-1` and other nonsense mean "about the target".
        pendingDuration = try? Self.seconds("#EXTINF", field)
    }

    mutating func part(_ value: String) throws(ParseError) {
        sawSegmentTag = true
        let attributes = HLSMasterPlaylist.attributes(value)
        guard let uri = attributes["URI"], let duration = try Self.seconds("#EXT-X-PART DURATION", attributes["DURATION"]) else {
            throw .badValue(tag: "#EXT-X-PART", value: "#EXT-X-PART:" + value)
        }
        partCount += 1
        guard partCount <= HLSMediaPlaylist.maximumParts else { throw .tooManyParts(limit: HLSMediaPlaylist.maximumParts) }
        var range: ByteRange?
        if let text = attributes["BYTERANGE"] {
            range = HLSMediaPlaylist.range(text, after: nextPartOffset[uri] ?? 0)
            guard let range else { throw .badValue(tag: "#EXT-X-PART BYTERANGE", value: text) }
            nextPartOffset[uri] = range.end
        }
        pendingParts.append(HLSMediaPlaylist.PartialSegment(
            duration: duration, resource: HLSMediaPlaylist.Part(uri: uri, range: range),
            independent: attributes["INDEPENDENT"]?.uppercased() == "YES",
            isGap: attributes["GAP"]?.uppercased() == "YES"))
    }

    mutating func preloadHint(_ value: String) throws(ParseError) {
        let attributes = HLSMasterPlaylist.attributes(value)
        guard let uri = attributes["URI"], let type = attributes["TYPE"]?.uppercased(), type == "PART" || type == "MAP" else { return }
        var start: Int64 = 0
        var length: Int64?
        if let text = attributes["BYTERANGE-START"] { start = try Self.number("BYTERANGE-START", text) }
        if let text = attributes["BYTERANGE-LENGTH"] { length = try Self.number("BYTERANGE-LENGTH", text) }
        guard playlist.preloadHints.count < 16 else { return }
        playlist.preloadHints.append(HLSMediaPlaylist.PreloadHint(
            kind: type == "PART" ? .part : .map,
            resource: HLSMediaPlaylist.Part(uri: uri, range: ByteRange(offset: start, length: length))))
    }

    mutating func serverControl(_ value: String) throws(ParseError) {
        let attributes = HLSMasterPlaylist.attributes(value)
        var control = HLSMediaPlaylist.ServerControl()
        control.canBlockReload = attributes["CAN-BLOCK-RELOAD"]?.uppercased() == "YES"
        control.canSkipUntil = try Self.seconds("CAN-SKIP-UNTIL", attributes["CAN-SKIP-UNTIL"])
        control.holdBack = try Self.seconds("HOLD-BACK", attributes["HOLD-BACK"])
        control.partHoldBack = try Self.seconds("PART-HOLD-BACK", attributes["PART-HOLD-BACK"])
        playlist.serverControl = control
    }

    mutating func skip(_ value: String) throws(ParseError) {
        let skipped = try Self.number("SKIPPED-SEGMENTS", HLSMasterPlaylist.attributes(value)["SKIPPED-SEGMENTS"] ?? "")
        guard playlist.segments.isEmpty, skipped <= Int64(HLSMediaPlaylist.maximumSegments) else {
            throw .badValue(tag: "#EXT-X-SKIP", value: "#EXT-X-SKIP:" + value)
        }
        playlist.skippedSegments = Int(skipped)
    }

    mutating func start(_ value: String) throws(ParseError) {
        let attributes = HLSMasterPlaylist.attributes(value)
        guard let text = attributes["TIME-OFFSET"], let offset = Double(text), offset.isFinite, abs(offset) < 1_000_000 else {
            throw .badValue(tag: "#EXT-X-START", value: "#EXT-X-START:" + value)
        }
        playlist.start = (offset, attributes["PRECISE"]?.uppercased() == "YES")
    }

    /// A URI: the segment the pending tags described.
    mutating func segment(_ uri: String) throws(ParseError) {
        let maximum = HLSMediaPlaylist.maximumSegments
        guard playlist.segments.count < maximum else { throw .tooManySegments(limit: maximum) }
        if pendingDiscontinuity, !playlist.segments.isEmpty || playlist.skippedSegments > 0 {
            discontinuitySequence += 1
        }
        var range: ByteRange?
        if let pending = pendingRange {
            // `n` without `@o` follows the previous range of the same resource.
            let start = pending.offset ?? nextOffset[uri] ?? 0
            guard start <= Int64.max - pending.length else {
                throw .badValue(tag: "#EXT-X-BYTERANGE", value: "\(pending.length)@\(start)")
            }
            range = ByteRange(offset: start, length: pending.length)
            nextOffset[uri] = start + pending.length
        }
        let (sequence, overflow) = playlist.mediaSequence.addingReportingOverflow(
            Int64(playlist.skippedSegments + playlist.segments.count))
        guard !overflow, sequence < Int64.max - Int64(maximum) else {
            throw .badValue(tag: "#EXT-X-MEDIA-SEQUENCE", value: String(playlist.mediaSequence))
        }
        playlist.segments.append(HLSMediaPlaylist.Segment(
            sequence: sequence, duration: pendingDuration ?? playlist.targetDuration ?? 0,
            resource: HLSMediaPlaylist.Part(uri: uri, range: range), initSection: currentMap,
            discontinuity: pendingDiscontinuity, discontinuitySequence: discontinuitySequence,
            isGap: pendingGap, parts: pendingParts))
        pendingRange = nil
        pendingDuration = nil
        pendingDiscontinuity = false
        pendingGap = false
        pendingParts = []
    }

    // MARK: - Values

    static func number(_ tag: String, _ value: String) throws(ParseError) -> Int64 {
        guard let number = Int64(value.trimmingCharacters(in: .whitespaces)), number >= 0 else {
            throw .badValue(tag: tag, value: value)
        }
        return number
    }

    static func seconds(_ tag: String, _ value: String?) throws(ParseError) -> Double? {
        guard let value else { return nil }
        guard let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds.isFinite, seconds >= 0,
              seconds < 1_000_000 else { throw .badValue(tag: tag, value: value) }
        return seconds
    }
}
