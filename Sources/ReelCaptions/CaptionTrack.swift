import Foundation
import ReelCore

/// Names one caption track of an item, stable for the item's life: `s:2` (the container's
/// stream 2), `cc1` (CEA-608 channel 1 in the video), `side:0` (the first sideloaded file).
public struct CaptionTrackID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The id as text (`s:2`, `cc1`, `side:0`), as `reel play --trace`'s caption lines print it.
    public var raw: String

    /// The id spelled `raw`. Prefer ``stream(_:)``, ``closedCaptions(_:)`` and ``sideloaded(_:)``,
    /// which spell the ids the player gives its tracks.
    public init(_ raw: String) { self.raw = raw }

    /// The container's subtitle stream `index`.
    public static func stream(_ index: Int) -> CaptionTrackID { CaptionTrackID("s:\(index)") }
    /// CEA-608 captions carried in the video, channel `channel` (1–4).
    public static func closedCaptions(_ channel: Int) -> CaptionTrackID { CaptionTrackID("cc\(channel)") }
    /// The `index`-th sideloaded caption source of the item.
    public static func sideloaded(_ index: Int) -> CaptionTrackID { CaptionTrackID("side:\(index)") }

    /// The id as text: ``raw``.
    public var description: String { raw }

    /// Reads the id from a single string, as ``encode(to:)`` writes it.
    public init(from decoder: any Decoder) throws {
        raw = try decoder.singleValueContainer().decode(String.self)
    }

    /// Writes the id as a single string, ``raw``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(raw)
    }
}

/// A caption track an item offers: where its cues come from and how to name it in a picker.
public struct CaptionTrack: Hashable, Sendable {
    /// Where the cues come from.
    public enum Origin: Hashable, Sendable {
        /// A subtitle stream of the container, by its index.
        case inBand(stream: Int)
        /// CEA-608 captions in the video's A53 side data.
        case closedCaptions(channel: Int)
        /// A caption file beside the item (`--captions`, a feed item's `captions`, a sidecar).
        case sideloaded(URL)
        /// A subtitle rendition the item's HLS master or DASH manifest names, `position` in the
        /// document's order (its playlist, file or initialization segment is `URL`).
        case manifest(URL, position: Int)
    }

    /// The cue format, as the decoder that reads it is named.
    public enum Format: String, Sendable, Hashable {
        /// SubRip text.
        case subrip
        /// ASS or SSA text, styled by the track's ``CaptionTrack/assHeader``.
        case ass
        /// WebVTT text (a file, an HLS rendition's segments, or cues in MP4 samples).
        case webvtt
        /// MP4's timed text (3GPP TS 26.245), as in iPhone and QuickTime recordings.
        case movText = "mov_text"
        /// CEA-608 closed captions carried in the video's A53 side data.
        case eia608 = "eia_608"
        /// Blu-ray's presentation graphics: picture cues.
        case pgs = "hdmv_pgs_subtitle"
        /// DVB subtitles (broadcast MPEG-TS): picture cues.
        case dvb = "dvb_subtitle"
        /// DVD subtitles (VobSub): picture cues.
        case dvd = "dvd_subtitle"
        /// TTML, IMSC or DFXP text, read by ``TTMLDocument`` (a file, or in MP4 samples).
        case ttml
        /// A format libavcodec decodes that has no name here; its cues are text or pictures as
        /// the decoder gives them.
        case other

        /// The format libavcodec's decoder `name` reads; `.other` for the ones Reel has no name for.
        public init(decoderName name: String) {
            switch name {
            case "subrip", "srt": self = .subrip
            case "ass", "ssa": self = .ass
            case "webvtt": self = .webvtt
            case "mov_text": self = .movText
            case "eia_608", "cc_dec": self = .eia608
            case "hdmv_pgs_subtitle", "pgssub": self = .pgs
            case "dvb_subtitle", "dvbsub": self = .dvb
            case "dvd_subtitle", "dvdsub": self = .dvd
            case "ttml": self = .ttml
            default: self = .other
            }
        }

        /// Whether cues are pictures rather than text.
        public var isBitmap: Bool { self == .pgs || self == .dvb || self == .dvd }
    }

    /// The track's id, unique within the item.
    public var id: CaptionTrackID
    /// Where the cues come from.
    public var origin: Origin
    /// The format the cues are in.
    public var format: Format
    /// The language as the source names it (an ISO 639-2 code from a container, a BCP 47 tag
    /// from a feed), if it names one.
    public var language: String?
    /// A human-readable name (a stream title, a feed's label).
    public var label: String?
    /// The source marks the track default (a container's default disposition, an HLS
    /// rendition's `DEFAULT=YES`): shown when captions are on and no preferred language matches.
    public var isDefault: Bool
    /// The source marks the track forced: it carries only what the audio does not say (signs,
    /// foreign-language lines). `reel probe` lists it; ``CaptionSelection`` does not treat it
    /// specially.
    public var isForced: Bool
    /// The source marks the track for the deaf and hard of hearing (SDH: sounds and speakers
    /// named as well as words).
    public var isHearingImpaired: Bool
    /// The ASS header (`[Script Info]`, `[V4+ Styles]`) the cues' styles refer to: the decoder's
    /// `subtitle_header`, an ASS file's own. `nil` when the renderer's defaults apply.
    public var assHeader: String?

    /// A track with the given id, origin and format; the rest default to unknown and unmarked.
    public init(id: CaptionTrackID, origin: Origin, format: Format, language: String? = nil, label: String? = nil,
                isDefault: Bool = false, isForced: Bool = false, isHearingImpaired: Bool = false,
                assHeader: String? = nil) {
        self.id = id
        self.origin = origin
        self.format = format
        self.language = language
        self.label = label
        self.isDefault = isDefault
        self.isForced = isForced
        self.isHearingImpaired = isHearingImpaired
        self.assHeader = assHeader
    }

    /// What a picker shows for the track: its label, else its language, else its id.
    public var displayName: String {
        if let label, !label.isEmpty { return label }
        if let language, !language.isEmpty, language != "und" { return language }
        return id.raw
    }
}
