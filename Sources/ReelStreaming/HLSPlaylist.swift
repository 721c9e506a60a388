import Foundation
import ReelCore

/// An HLS master playlist as far as choosing a variant needs: its variants
/// (`#EXT-X-STREAM-INF` and the URI after it) and its renditions (`#EXT-X-MEDIA`).
/// Pure value code.
public struct HLSMasterPlaylist: Sendable, Hashable {
    public struct Variant: Sendable, Hashable {
        /// `BANDWIDTH`: the peak bit rate, bits per second.
        public var bandwidth: Int64
        public var averageBandwidth: Int64?
        /// `RESOLUTION` as written (`1280x720`).
        public var resolution: String?
        public var codecs: String?
        /// The URI as written (relative to the playlist).
        public var uri: String
        /// The `AUDIO`, `VIDEO`, `SUBTITLES` and `CLOSED-CAPTIONS` groups it names.
        public var groups: Set<String>
        /// Its `AUDIO` group.
        public var audioGroup: String?
        /// Where the variant is in the playlist (its `#EXT-X-STREAM-INF` line).
        public var index: Int

        /// The height of its resolution, if any.
        public var height: Int? {
            resolution.flatMap { $0.split(separator: "x").last.flatMap { Int($0) } }
        }
    }

    public var variants: [Variant]
    /// The `URI`s of its `#EXT-X-MEDIA` renditions (alternative audio, subtitles), as written.
    public var renditions: [String]
    /// The `URI`s of its `AUDIO` and `VIDEO` renditions, as written: the ones FFmpeg's HLS
    /// demuxer opens beside the variants (it leaves subtitles and closed captions alone).
    public var audioVideoRenditions: [String]
    /// The playlist's lines (without line ends).
    public var lines: [String]
    /// Its `TYPE=SUBTITLES` renditions, in order: what Reel reads for captions (FFmpeg's HLS
    /// demuxer leaves them alone).
    public var subtitleRenditions: [SubtitleRendition] = []

    /// The variants that carry video: all but the audio-only ones (a `CODECS` naming no video
    /// codec, or the playlist of an audio rendition, as packagers list an audio-only variant
    /// for a link too slow for any picture). All of them when none carries video (a stream of
    /// sound alone), so a player always has something to choose.
    public var videoVariants: [Variant] {
        let audioURIs = Set(audioRenditions.compactMap(\.uri))
        let video = variants.filter { variant in
            if audioURIs.contains(variant.uri) { return false }
            guard let codecs = variant.codecs?.lowercased() else { return true }
            let names = codecs.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).split(separator: ".").first.map(String.init) ?? "" }
            return names.contains { Self.videoCodecs.contains($0) }
        }
        return video.isEmpty ? variants : video
    }

    /// The `CODECS` sample entries of video (RFC 6381 names, before the first dot).
    static let videoCodecs: Set<String> = ["avc1", "avc3", "hvc1", "hev1", "dvh1", "dvhe", "dva1", "dvav", "vp08", "vp09",
                                           "av01", "mp4v", "vvc1", "vvi1"]

    /// Its `TYPE=AUDIO` renditions, in order (with or without a `URI`: one without is carried
    /// in the variants themselves).
    public var audioRenditions: [AudioRendition] = []

    /// An `#EXT-X-MEDIA:TYPE=AUDIO` rendition.
    public struct AudioRendition: Sendable, Hashable {
        public var groupID: String
        public var name: String
        public var language: String?
        public var isDefault: Bool
        /// Its media playlist, as written; `nil` when the variants carry it.
        public var uri: String?
        /// `CHARACTERISTICS`, split at commas (`public.accessibility.describes-video`).
        public var characteristics: [String] = []
        /// `CHANNELS`: the channel count before any `/` (`6/JOC` is 6).
        public var channels: Int?
    }

    /// The audio rendition a player plays with every video variant: the `DEFAULT=YES` one
    /// (else the first) of the `AUDIO` group they all name. `nil` when they name none (their
    /// own audio) or different groups (an audio ladder). Without a `URI` it is the variants' own.
    public var playedAudioRendition: AudioRendition? {
        let groups = Set(videoVariants.map(\.audioGroup))
        guard groups.count == 1, let group = groups.first ?? nil else { return nil }
        let members = audioRenditions.filter { $0.groupID == group }
        return members.first(where: \.isDefault) ?? members.first
    }

    /// The renditions of the `AUDIO` group every video variant names, in order, when each is a
    /// playlist of its own (the variants carry video alone): what a player can choose among.
    /// Empty when they name none or different groups, or one of them is the variants' own audio.
    public var separateAudioRenditions: [AudioRendition] {
        let groups = Set(videoVariants.map(\.audioGroup))
        guard groups.count == 1, let group = groups.first ?? nil else { return [] }
        let members = audioRenditions.filter { $0.groupID == group }
        return members.allSatisfy { $0.uri != nil } ? members : []
    }

    /// ``playedAudioRendition`` when it is a playlist of its own (the variants carry video alone).
    public var sharedAudioRendition: AudioRendition? {
        playedAudioRendition?.uri == nil ? nil : playedAudioRendition
    }

    /// The `URI`s of its `TYPE=VIDEO` renditions (another camera angle), as written.
    public var videoRenditions: [String] {
        audioVideoRenditions.filter { uri in !audioRenditions.contains { $0.uri == uri } }
    }

    /// An `#EXT-X-MEDIA:TYPE=SUBTITLES` rendition.
    public struct SubtitleRendition: Sendable, Hashable {
        public var groupID: String
        public var name: String
        public var language: String?
        public var isDefault: Bool
        public var isForced: Bool
        /// Its media playlist, as written.
        public var uri: String
    }

    /// `nil` when `data` is not an HLS master playlist (no `#EXTM3U`, or no `#EXT-X-STREAM-INF`,
    /// or it lists segments).
    public init?(_ data: Data) {
        // Media playlists (a live one, or 100 000 segments) are most of what is read: they name
        // no variant, and are passed over without decoding and splitting every line.
        guard data.range(of: Data("#EXT-X-STREAM-INF".utf8)) != nil else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\r")) }
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = String(first.dropFirst()) }
        guard lines.first(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty })?
            .trimmingCharacters(in: .whitespaces).hasPrefix("#EXTM3U") == true else { return nil }
        var variants: [Variant] = []
        var renditions: [String] = []
        var audioVideoRenditions: [String] = []
        var subtitles: [SubtitleRendition] = []
        var audio: [AudioRendition] = []
        var pending: (attributes: [String: String], index: Int)?
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#EXTINF") { return nil }
            if line.hasPrefix("#EXT-X-STREAM-INF:") {
                pending = (Self.attributes(String(line.dropFirst("#EXT-X-STREAM-INF:".count))), index)
            } else if line.hasPrefix("#EXT-X-MEDIA:") {
                let attributes = Self.attributes(String(line.dropFirst("#EXT-X-MEDIA:".count)))
                if attributes["TYPE"]?.uppercased() == "AUDIO" {
                    audio.append(AudioRendition(
                        groupID: attributes["GROUP-ID"] ?? "", name: attributes["NAME"] ?? "", language: attributes["LANGUAGE"],
                        isDefault: attributes["DEFAULT"]?.uppercased() == "YES", uri: attributes["URI"],
                        characteristics: (attributes["CHARACTERISTICS"] ?? "").split(separator: ",")
                            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty },
                        channels: attributes["CHANNELS"]?.split(separator: "/").first.flatMap { Int($0) }))
                }
                if let uri = attributes["URI"] {
                    renditions.append(uri)
                    if ["AUDIO", "VIDEO"].contains(attributes["TYPE"]?.uppercased() ?? "") { audioVideoRenditions.append(uri) }
                    if attributes["TYPE"]?.uppercased() == "SUBTITLES" {
                        subtitles.append(SubtitleRendition(
                            groupID: attributes["GROUP-ID"] ?? "", name: attributes["NAME"] ?? "",
                            language: attributes["LANGUAGE"], isDefault: attributes["DEFAULT"]?.uppercased() == "YES",
                            isForced: attributes["FORCED"]?.uppercased() == "YES", uri: uri))
                    }
                }
            } else if !line.isEmpty, !line.hasPrefix("#"), let stream = pending {
                let attributes = stream.attributes
                let groups = Set(["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"].compactMap { attributes[$0] })
                variants.append(Variant(
                    bandwidth: attributes["BANDWIDTH"].flatMap { Int64($0) } ?? 0,
                    averageBandwidth: attributes["AVERAGE-BANDWIDTH"].flatMap { Int64($0) },
                    resolution: attributes["RESOLUTION"], codecs: attributes["CODECS"],
                    uri: line, groups: groups, audioGroup: attributes["AUDIO"], index: stream.index))
                pending = nil
            }
        }
        guard !variants.isEmpty else { return nil }
        self.variants = variants
        self.renditions = renditions
        self.audioVideoRenditions = audioVideoRenditions
        self.subtitleRenditions = subtitles
        self.audioRenditions = audio
        self.lines = lines
    }

    /// The playlist with only `variant` (and the renditions of its groups), every URI made
    /// absolute against `base` (where the playlist came from, after redirects).
    public func keeping(_ variant: Variant, base: URL) -> Data {
        var out: [String] = []
        var skipNextURI = false
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#EXT-X-STREAM-INF:") {
                skipNextURI = index != variant.index
                if !skipNextURI { out.append(raw) }
                continue
            }
            if !line.isEmpty, !line.hasPrefix("#") {
                if skipNextURI {
                    skipNextURI = false
                } else {
                    out.append(Self.absolute(line, base: base))
                }
                continue
            }
            // I-frame playlists are not played; renditions only of the chosen variant's groups.
            if line.hasPrefix("#EXT-X-I-FRAME-STREAM-INF") { continue }
            if line.hasPrefix("#EXT-X-MEDIA:") {
                let attributes = Self.attributes(String(line.dropFirst("#EXT-X-MEDIA:".count)))
                guard let group = attributes["GROUP-ID"], variant.groups.contains(group) else { continue }
                out.append(Self.absoluteURIAttribute(raw, base: base))
                continue
            }
            if line.contains("URI=\"") {
                out.append(Self.absoluteURIAttribute(raw, base: base))
                continue
            }
            out.append(raw)
        }
        return Data(out.joined(separator: "\n").utf8)
    }

    static func absolute(_ reference: String, base: URL) -> String {
        URL(string: reference, relativeTo: base)?.absoluteURL.absoluteString ?? reference
    }

    static func absoluteURIAttribute(_ line: String, base: URL) -> String {
        guard let start = line.range(of: "URI=\"") else { return line }
        let rest = line[start.upperBound...]
        guard let close = rest.firstIndex(of: "\"") else { return line }
        return String(line[..<start.upperBound]) + absolute(String(rest[..<close]), base: base) + String(rest[close...])
    }

    /// `KEY=value,KEY="quoted, value"` → a dictionary (quotes removed).
    static func attributes(_ list: String) -> [String: String] {
        var result: [String: String] = [:]
        var key = ""
        var value = ""
        var inKey = true
        var quoted = false
        func commit() {
            let name = key.trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { result[name.uppercased()] = value }
            key = ""
            value = ""
            inKey = true
        }
        for character in list {
            if inKey {
                if character == "=" { inKey = false } else if character == "," { commit() } else { key.append(character) }
            } else if character == "\"" {
                quoted.toggle()
            } else if character == "," && !quoted {
                commit()
            } else {
                value.append(character)
            }
        }
        commit()
        return result
    }
}
