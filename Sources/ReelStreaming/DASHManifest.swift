import Foundation
import ReelCaptions
import ReelCore
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A DASH manifest (MPD) as far as playing its first Period from the start needs: each
/// Representation's kind, bandwidth and size, and its initialization and media segments as
/// absolute URLs (BaseURLs resolved level by level, `SegmentTemplate`s expanded, with or
/// without a `SegmentTimeline`; `SegmentList`; a single-file `SegmentBase`/`BaseURL`).
/// Pure value code (libxml2 through FoundationXML); it opens nothing.
///
/// Refused (``Failure``): live manifests (`type="dynamic"`), document type declarations
/// (entities), remote elements (`xlink:href`), more than `maxSegments` segments in one
/// Representation, and templates it cannot expand.
public struct DASHManifest: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case video, audio, text, other }

    public struct Segment: Sendable, Hashable {
        public var url: URL
        /// Bytes of `url`, or the whole resource.
        public var range: ByteRange?
        /// Seconds (0 for an initialization segment).
        public var duration: Double
    }

    public struct Representation: Sendable, Hashable {
        /// `@id` as written.
        public var id: String
        public var kind: Kind
        /// `@bandwidth`, bits per second.
        public var bandwidth: Int64
        public var width: Int?
        public var height: Int?
        public var codecs: String?
        /// `@mimeType` (the Representation's, else its AdaptationSet's).
        public var mimeType: String?
        /// The AdaptationSet's `@lang` (a text or audio track's language), and its `Label`.
        public var language: String?
        public var label: String?
        /// Where it is in the first Period, counting every Representation (document order).
        public var index: Int
        public var initialization: Segment?
        public var segments: [Segment]
        /// Which AdaptationSet of the first Period it belongs to (document order).
        public var adaptationSet = 0
        /// What its AdaptationSet's `Role` and `Accessibility` descriptors say it is for, as
        /// ReelCore's `AudioTrack.roles` names it (`main`, `describes-video`, `commentary`…).
        public var roles: [String] = []

        /// `WIDTHxHEIGHT`, as an HLS `RESOLUTION` would say it.
        public var resolution: String? {
            guard let width, let height else { return nil }
            return "\(width)x\(height)"
        }
    }

    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// Not an MPD at all (not XML, or its root is not `MPD`).
        case notAManifest(String)
        /// An MPD this player does not play (live, entities, remote elements…).
        case unsupported(String)
        /// One Representation lists more segments than allowed.
        case tooManySegments(limit: Int)
        /// A BaseURL or segment reference that is not a URL (or names a protocol that is not a URL scheme).
        case invalidReference(String)

        public var description: String {
            switch self {
            case .notAManifest(let why): "not a DASH manifest: \(why)"
            case .unsupported(let why): "unsupported DASH manifest: \(why)"
            case .tooManySegments(let limit): "a DASH Representation lists more than \(limit) segments"
            case .invalidReference(let reference): "not a URL: \(reference)"
            }
        }
    }

    /// `@mediaPresentationDuration` (or the Period's duration), seconds.
    public var duration: Double?
    /// The first Period's Representations, in document order.
    public var representations: [Representation]

    public var videos: [Representation] { representations.filter { $0.kind == .video } }

    /// Its caption and subtitle Representations (`text/vtt`, `application/ttml+xml`, or fMP4
    /// `wvtt`/`stpp`), which the video's demuxer never sees.
    public var texts: [Representation] { representations.filter { $0.kind == .text } }

    /// The audio Representation a player takes: the lowest bandwidth (the first listed of equal ones).
    public var preferredAudio: Representation? {
        representations.filter { $0.kind == .audio }.min { ($0.bandwidth, $0.index) < ($1.bandwidth, $1.index) }
    }

    /// Whether `data` starts like an MPD (XML whose first element is `MPD`).
    public static func looksLikeManifest(_ data: Data) -> Bool {
        let head = String(decoding: data.prefix(4096), as: UTF8.self)
        return head.drop { $0 == "\u{FEFF}" || $0.isWhitespace }.hasPrefix("<") && head.contains("<MPD")
    }

    /// Parses `data`, resolving relative references against `url` (where it came from, after redirects).
    public init(_ data: Data, url: URL, maxSegments: Int = 20_000) throws {
        let (root, period) = try Self.document(data)
        duration = Self.seconds(Self.attribute(root, "mediaPresentationDuration"))
        let periodDuration = Self.seconds(Self.attribute(period, "duration")) ?? duration
        let base = try Self.base(of: period, over: try Self.base(of: root, over: url))
        var representations: [Representation] = []
        for (setIndex, set) in Self.children(period, "AdaptationSet").enumerated() {
            let setBase = try Self.base(of: set, over: base)
            let setKind = Self.kind(of: set)
            for element in Self.children(set, "Representation") {
                let index = representations.count
                let id = Self.attribute(element, "id") ?? "\(index)"
                let bandwidth = Self.attribute(element, "bandwidth").flatMap { Int64($0) } ?? 0
                var kind = Self.kind(of: element)
                if kind == .other { kind = setKind }
                let repBase = try Self.base(of: element, over: setBase)
                let (initialization, segments) = try Self.segments(
                    of: element, levels: [period, set, element], base: repBase, id: id, bandwidth: bandwidth,
                    periodDuration: periodDuration, maxSegments: maxSegments)
                representations.append(Representation(
                    id: id, kind: kind, bandwidth: bandwidth,
                    width: (Self.attribute(element, "width") ?? Self.attribute(set, "width")).flatMap { Int($0) },
                    height: (Self.attribute(element, "height") ?? Self.attribute(set, "height")).flatMap { Int($0) },
                    codecs: Self.attribute(element, "codecs") ?? Self.attribute(set, "codecs"),
                    mimeType: Self.attribute(element, "mimeType") ?? Self.attribute(set, "mimeType"),
                    language: Self.attribute(element, "lang") ?? Self.attribute(set, "lang"),
                    label: (Self.children(element, "Label").first ?? Self.children(set, "Label").first)?.stringValue?
                        .trimmingCharacters(in: .whitespacesAndNewlines),
                    index: index, initialization: initialization, segments: segments, adaptationSet: setIndex,
                    roles: Self.roles(of: set)))
            }
        }
        guard !representations.isEmpty else { throw Failure.notAManifest("its first Period has no Representation") }
        self.representations = representations
    }

    /// The MPD with only the video Representation at `video` and the audio one at `audio`
    /// (indexes as in ``Representation/index``); every other video and audio Representation is
    /// removed, and an AdaptationSet left empty with it. Everything else is kept as written.
    public static func keeping(_ data: Data, video: Int?, audio: Int?) throws -> Data {
        let document = try Self.parse(data)
        guard let root = document.rootElement(), let period = children(root, "Period").first else {
            throw Failure.notAManifest("no Period")
        }
        var index = 0
        for set in children(period, "AdaptationSet") {
            let setKind = kind(of: set)
            var kept = 0
            var all = 0
            for element in children(set, "Representation") {
                defer { index += 1 }
                all += 1
                var kind = kind(of: element)
                if kind == .other { kind = setKind }
                let keep: Bool
                switch kind {
                case .video: keep = video == nil || index == video
                case .audio: keep = audio == nil || index == audio
                case .text, .other: keep = true
                }
                if keep { kept += 1 } else { element.detach() }
            }
            if all > 0 && kept == 0 { set.detach() }
        }
        return document.xmlData
    }

    // MARK: Parsing

    private static func parse(_ data: Data) throws -> XMLDocument {
        // A DTD can declare entities (billion laughs, external files): an MPD needs none.
        if SafeXML.hasDeclarations(data) { throw Failure.unsupported("it has a document type declaration") }
        guard looksLikeManifest(data) else { throw Failure.notAManifest("its first element is not MPD") }
        // Checked first with the SAX parser, which reports errors to us: XMLDocument's libxml2
        // prints a malformed document's errors on standard error.
        if SafeXML.firstErrorLine(in: data) != nil { throw Failure.notAManifest("not well-formed XML") }
        do {
            return try XMLDocument(data: data, options: [])
        } catch {
            throw Failure.notAManifest("not well-formed XML")
        }
    }

    private static func document(_ data: Data) throws -> (XMLElement, XMLElement) {
        let document = try parse(data)
        guard let root = document.rootElement(), root.localName == "MPD" else {
            throw Failure.notAManifest("its root element is not MPD")
        }
        if attribute(root, "type")?.lowercased() == "dynamic" {
            throw Failure.unsupported("a live manifest (type=\"dynamic\")")
        }
        guard let period = children(root, "Period").first else { throw Failure.notAManifest("it has no Period") }
        for element in [period] + children(period, "AdaptationSet") + children(period, "AdaptationSet").flatMap({ children($0, "Representation") })
            where element.attributes?.contains(where: { $0.localName == "href" || $0.name == "xlink:href" }) == true {
            throw Failure.unsupported("remote elements (xlink:href)")
        }
        return (root, period)
    }

    /// The child elements of `element` named `name` (namespace prefixes ignored).
    public static func children(_ element: XMLElement, _ name: String) -> [XMLElement] {
        (element.children ?? []).compactMap { $0 as? XMLElement }.filter { ($0.localName ?? $0.name) == name }
    }

    /// The value of `element`'s attribute `name`.
    public static func attribute(_ element: XMLElement, _ name: String) -> String? {
        attributeNode(element, name)?.stringValue
    }

    /// `element`'s attribute node `name` (an unprefixed name; FoundationXML's
    /// `attribute(forName:)` finds none on an element in a default namespace on Linux).
    public static func attributeNode(_ element: XMLElement, _ name: String) -> XMLNode? {
        element.attributes?.first { $0.name == name }
    }

    /// An AdaptationSet's roles: its `Role` values (`urn:mpeg:dash:role:2011`: `description` is
    /// `describes-video`) and its `Accessibility` (the same scheme, or TV-Anytime's audio purpose:
    /// 1 describes the video, 2 is for the hard of hearing).
    static func roles(of set: XMLElement) -> [String] {
        var roles: [String] = []
        for descriptor in children(set, "Role") + children(set, "Accessibility") {
            let scheme = attribute(descriptor, "schemeIdUri") ?? ""
            let value = (attribute(descriptor, "value") ?? "").lowercased()
            let role: String? = switch (scheme, value) {
            case ("urn:tva:metadata:cs:AudioPurposeCS:2007", "1"), (_, "description"): "describes-video"
            case ("urn:tva:metadata:cs:AudioPurposeCS:2007", "2"), (_, "enhanced-audio-intelligibility"): "hearing-impaired"
            case (_, "main"), (_, "alternate"), (_, "commentary"), (_, "dub"), (_, "supplementary"): value
            default: nil
            }
            if let role, !roles.contains(role) { roles.append(role) }
        }
        return roles
    }

    private static func kind(of element: XMLElement) -> Kind {
        let type = (attribute(element, "contentType") ?? attribute(element, "mimeType") ?? "").lowercased()
        if type.hasPrefix("video") { return .video }
        if type.hasPrefix("audio") { return .audio }
        if type.hasPrefix("text") || type == "application/ttml+xml" { return .text }
        let codecs = (attribute(element, "codecs") ?? "").lowercased()
        if type == "application/mp4", codecs.hasPrefix("wvtt") || codecs.hasPrefix("stpp") { return .text }
        return .other
    }

    /// `over` with the element's first `BaseURL` applied.
    private static func base(of element: XMLElement, over base: URL) throws -> URL {
        guard let text = children(element, "BaseURL").first?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines),
              !text.isEmpty else { return base }
        return try resolve(text, against: base)
    }

    /// `reference` made absolute against `base`. A reference that starts with a protocol the
    /// way FFmpeg sees one (`x:` before any `/`, such as `subfile,,…:` or `concat:a|b`) keeps
    /// it, whether or not it is a valid URL scheme, so a closed door sees the protocol.
    static func resolve(_ reference: String, against base: URL) throws -> URL {
        let prefix = reference.firstIndex(of: ":").map { reference[..<$0] }
        let hasProtocol = prefix.map { !$0.contains("/") && !$0.isEmpty } ?? false
        if let url = URL(string: reference, relativeTo: base)?.absoluteURL, !hasProtocol || url.scheme != nil && reference.lowercased().hasPrefix(url.scheme!.lowercased() + ":") {
            return url
        }
        if let escaped = reference.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed),
           let url = URL(string: escaped, relativeTo: base)?.absoluteURL,
           !hasProtocol || url.scheme != nil && escaped.lowercased().hasPrefix(url.scheme!.lowercased() + ":") {
            return url
        }
        throw Failure.invalidReference(String(reference.prefix(200)))
    }

    /// An ISO 8601 duration (`PT1M30.5S`, `P1DT2H`) in seconds.
    static func seconds(_ text: String?) -> Double? {
        guard var rest = text?.trimmingCharacters(in: .whitespaces), rest.hasPrefix("P") else { return nil }
        rest.removeFirst()
        var total = 0.0
        var number = ""
        var inTime = false
        for character in rest {
            switch character {
            case "T": inTime = true
            case "0"..."9", ".": number.append(character)
            default:
                guard let value = Double(number) else { return nil }
                number = ""
                switch (character, inTime) {
                case ("Y", false): total += value * 365 * 86_400
                case ("M", false): total += value * 30 * 86_400
                case ("W", false): total += value * 7 * 86_400
                case ("D", false): total += value * 86_400
                case ("H", true): total += value * 3_600
                case ("M", true): total += value * 60
                case ("S", true): total += value
                default: return nil
                }
            }
        }
        return number.isEmpty ? total : nil
    }

    // MARK: Segments

    /// The merged attributes and timeline of the `SegmentTemplate`s on `levels` (inner wins).
    private struct Template {
        var attributes: [String: String] = [:]
        var timeline: XMLElement?
    }

    private static func segments(of element: XMLElement, levels: [XMLElement], base: URL, id: String, bandwidth: Int64,
                                 periodDuration: Double?, maxSegments: Int) throws -> (Segment?, [Segment]) {
        var template: Template?
        var list: XMLElement?
        var segmentBase: XMLElement?
        for level in levels {
            if let found = children(level, "SegmentTemplate").first {
                var merged = template ?? Template()
                for attribute in found.attributes ?? [] {
                    if let name = attribute.localName ?? attribute.name, let value = attribute.stringValue { merged.attributes[name] = value }
                }
                if let timeline = children(found, "SegmentTimeline").first { merged.timeline = timeline }
                template = merged
            }
            if let found = children(level, "SegmentList").first { list = found }
            if let found = children(level, "SegmentBase").first { segmentBase = found }
        }
        func resolve(_ reference: String) throws -> URL {
            try Self.resolve(reference, against: base)
        }
        if let template {
            return try templateSegments(template, resolve: resolve, id: id, bandwidth: bandwidth,
                                        periodDuration: periodDuration, maxSegments: maxSegments)
        }
        if let list {
            let timescale = Double(attribute(list, "timescale").flatMap { Int64($0) } ?? 1)
            let duration = Double(attribute(list, "duration").flatMap { Int64($0) } ?? 0) / max(timescale, 1)
            var initialization: Segment?
            if let initial = children(list, "Initialization").first {
                initialization = Segment(url: try attribute(initial, "sourceURL").map(resolve) ?? base,
                                         range: attribute(initial, "range").flatMap(byteRange), duration: 0)
            }
            let urls = children(list, "SegmentURL")
            guard urls.count <= maxSegments else { throw Failure.tooManySegments(limit: maxSegments) }
            let segments = try urls.map { entry in
                Segment(url: try attribute(entry, "media").map(resolve) ?? base,
                        range: attribute(entry, "mediaRange").flatMap(byteRange), duration: duration)
            }
            return (initialization, segments)
        }
        // A single file: the BaseURL is the whole Representation (its index ignored).
        _ = segmentBase
        return (nil, [Segment(url: base, range: nil, duration: periodDuration ?? 0)])
    }

    private static func templateSegments(_ template: Template, resolve: (String) throws -> URL, id: String, bandwidth: Int64,
                                         periodDuration: Double?, maxSegments: Int) throws -> (Segment?, [Segment]) {
        let attributes = template.attributes
        let timescale = max(1, attributes["timescale"].flatMap { Int64($0) } ?? 1)
        let startNumber = attributes["startNumber"].flatMap { Int64($0) } ?? 1
        var initialization: Segment?
        if let initial = attributes["initialization"] {
            initialization = Segment(url: try resolve(try expand(initial, id: id, bandwidth: bandwidth, number: nil, time: nil)),
                                     range: nil, duration: 0)
        }
        guard let media = attributes["media"] else { throw Failure.unsupported("a SegmentTemplate without @media") }
        var times: [(time: Int64, duration: Int64)] = []
        if let timeline = template.timeline {
            var next: Int64 = 0
            let end = periodDuration.map { Int64($0 * Double(timescale)) }
            for entry in children(timeline, "S") {
                guard let duration = attribute(entry, "d").flatMap({ Int64($0) }), duration > 0 else {
                    throw Failure.notAManifest("a SegmentTimeline entry without a positive @d")
                }
                if let start = attribute(entry, "t").flatMap({ Int64($0) }) { next = start }
                var repeats = attribute(entry, "r").flatMap { Int64($0) } ?? 0
                if repeats < 0 {
                    guard let end else { throw Failure.unsupported("an open-ended SegmentTimeline without a duration") }
                    repeats = max(0, (end - next + duration - 1) / duration - 1)
                }
                guard repeats < Int64(maxSegments), times.count + Int(repeats) + 1 <= maxSegments else {
                    throw Failure.tooManySegments(limit: maxSegments)
                }
                for _ in 0...repeats {
                    times.append((next, duration))
                    next += duration
                }
            }
        } else {
            guard let duration = attributes["duration"].flatMap({ Int64($0) }), duration > 0 else {
                throw Failure.unsupported("a SegmentTemplate with neither @duration nor a SegmentTimeline")
            }
            guard let total = periodDuration, total > 0 else {
                throw Failure.unsupported("a SegmentTemplate without a presentation duration")
            }
            let count = (total * Double(timescale) / Double(duration)).rounded(.up)
            guard count <= Double(maxSegments) else { throw Failure.tooManySegments(limit: maxSegments) }
            let end = Int64((total * Double(timescale)).rounded())
            for number in 0..<Int64(count) {
                let start = number * duration
                times.append((start, min(duration, max(1, end - start))))
            }
        }
        let segments = try times.enumerated().map { offset, entry in
            let name = try expand(media, id: id, bandwidth: bandwidth, number: startNumber + Int64(offset), time: entry.time)
            return Segment(url: try resolve(name), range: nil, duration: Double(entry.duration) / Double(timescale))
        }
        return (initialization, segments)
    }

    /// A template with `$RepresentationID$`, `$Bandwidth$`, `$Number$`, `$Time$` (each with an
    /// optional `%0Nd` width) and `$$` replaced.
    static func expand(_ template: String, id: String, bandwidth: Int64, number: Int64?, time: Int64?) throws -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "$") {
            out += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "$") else {
                throw Failure.notAManifest("an unterminated $ in the template \(template.prefix(200))")
            }
            let name = rest[afterOpen..<close]
            rest = rest[rest.index(after: close)...]
            if name.isEmpty { out += "$"; continue }
            let parts = name.split(separator: "%", maxSplits: 1)
            let identifier = String(parts[0])
            var width = 0
            if parts.count == 2 {
                let format = parts[1]
                let digits = format.dropLast()
                guard format.hasSuffix("d"), let value = digits.isEmpty ? 0 : Int(digits), value >= 0, value < 32 else {
                    throw Failure.unsupported("the template format %\(format)")
                }
                width = value
            }
            let value: String
            switch identifier {
            case "RepresentationID": value = id
            case "Bandwidth": value = String(bandwidth)
            case "Number":
                guard let number else { throw Failure.unsupported("$Number$ in an initialization template") }
                value = String(number)
            case "Time":
                guard let time else { throw Failure.unsupported("$Time$ in an initialization template") }
                value = String(time)
            default:
                throw Failure.unsupported("the template identifier $\(identifier)$")
            }
            out += value.count < width ? String(repeating: "0", count: width - value.count) + value : value
        }
        out += rest
        return out
    }

    /// `first-last` (inclusive) → a byte range.
    static func byteRange(_ text: String) -> ByteRange? {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), last >= first else { return nil }
        return ByteRange(offset: first, length: last - first + 1)
    }
}
