import Foundation

/// A caption file to show beside an item: a path or URL, and how to name it.
public struct CaptionSource: Hashable, Sendable {
    /// Where the file is. ReelMedia reads it through the item's loader, so any URL that loader
    /// reads will do: a `file:` path, `http(s)`, a test's own scheme.
    public var url: URL
    /// The language (a BCP 47 tag such as `zh-Hans`, or an ISO 639 code), if known.
    public var language: String?
    /// The name a track picker shows; `nil` shows the language (or, with neither, the file's name).
    public var label: String?
    /// Named by a document (a feed page, a manifest) rather than by the user: it is read only
    /// where the item's own references may go (an http item's from http(s); a local item's from
    /// its directory), as nested opens are.
    public var isNamedByDocument: Bool

    /// A caption file at `url`, named by the user unless `isNamedByDocument` says a document named it.
    public init(url: URL, language: String? = nil, label: String? = nil, isNamedByDocument: Bool = false) {
        self.url = url
        self.language = language
        self.label = label
        self.isNamedByDocument = isNamedByDocument
    }
}

/// Which caption track to show, kept for a session and applied to every item: off, or on with
/// an explicit track or preferred languages (as `AVPlayer`'s and Media3's text preferences).
///
/// The rule, when on: the explicit track if the item offers it; else the first track in the first
/// preferred language that has one; else a track the item marks default; else its first track.
public struct CaptionSelection: Hashable, Sendable {
    /// Whether captions show at all; off, no track is chosen whatever the rest says.
    public var isEnabled: Bool
    /// Languages in order of preference (`zh` matches `zh-Hans`, `zho` and `chi`).
    public var preferredLanguages: [String]
    /// A track chosen by the user, honoured while the item offers it.
    public var track: CaptionTrackID?

    /// A selection that is on by default, with no preference: an item's default track (or its
    /// first) shows.
    public init(isEnabled: Bool = true, preferredLanguages: [String] = [], track: CaptionTrackID? = nil) {
        self.isEnabled = isEnabled
        self.preferredLanguages = preferredLanguages
        self.track = track
    }

    /// Captions off: no track shows.
    public static let off = CaptionSelection(isEnabled: false)

    /// The track to show among `tracks`, or `nil`.
    public func choose(from tracks: [CaptionTrack]) -> CaptionTrackID? {
        guard isEnabled, !tracks.isEmpty else { return nil }
        if let track, tracks.contains(where: { $0.id == track }) { return track }
        for language in preferredLanguages {
            if let match = tracks.first(where: { Self.language($0.language, matches: language) }) { return match.id }
        }
        return (tracks.first { $0.isDefault } ?? tracks[0]).id
    }

    /// What `c` does (as mpv's subtitle cycling): off → the item's first track; a track → its
    /// next one; the last → off. A track chosen this way becomes the preferred language
    /// too, so the next items in that language start with captions shown.
    public func cycled(through tracks: [CaptionTrack]) -> CaptionSelection {
        var next = self
        let current = choose(from: tracks)
        guard !tracks.isEmpty else {
            next.isEnabled.toggle()
            return next
        }
        let chosen: CaptionTrack?
        if let current, let index = tracks.firstIndex(where: { $0.id == current }) {
            chosen = index + 1 < tracks.count ? tracks[index + 1] : nil
        } else {
            chosen = tracks[0]
        }
        guard let chosen else {
            next.isEnabled = false
            return next
        }
        next.isEnabled = true
        next.track = chosen.id
        if let language = chosen.language, Self.primary(language) != nil {
            next.preferredLanguages = [language] + preferredLanguages.filter { !Self.language(language, matches: $0) }
        }
        return next
    }

    /// Whether a track's `language` is `wanted`: the same primary language, however written
    /// (`en`, `eng`, `en-GB`; `zh`, `zho`, `chi`, `zh-Hans`).
    public static func language(_ language: String?, matches wanted: String) -> Bool {
        guard let language, let a = primary(language), let b = primary(wanted) else { return false }
        return a == b
    }

    /// The primary language subtag as an ISO 639-1 code where Reel knows one, lowercased.
    static func primary(_ tag: String) -> String? {
        let head = tag.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
        guard !head.isEmpty, head != "und" else { return nil }
        return threeLetterToTwo[head] ?? head
    }

    /// ISO 639-2 (bibliographic and terminology) to 639-1, for the languages captions most
    /// often come in.
    static let threeLetterToTwo: [String: String] = [
        "eng": "en", "zho": "zh", "chi": "zh", "jpn": "ja", "kor": "ko", "fra": "fr", "fre": "fr",
        "deu": "de", "ger": "de", "spa": "es", "por": "pt", "ita": "it", "rus": "ru", "ara": "ar",
        "hin": "hi", "vie": "vi", "tha": "th", "ind": "id", "msa": "ms", "may": "ms", "tur": "tr",
        "nld": "nl", "dut": "nl", "pol": "pl", "swe": "sv", "ukr": "uk", "heb": "he", "yue": "yue",
    ]
}
