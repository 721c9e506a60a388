import Foundation

/// One audio track an item offers: an audio stream of its container (MKV, MP4, MPEG-TS), an HLS
/// master's `EXT-X-MEDIA TYPE=AUDIO` rendition (as FFmpeg's HLS demuxer exposes it, or as Reel's
/// segment scheduler reads it), or a DASH manifest's audio AdaptationSet.
public struct AudioTrack: Sendable, Codable, Hashable {
    /// The stream's index in the container, or the rendition's place among those a segment
    /// scheduler offers (``StreamSchedulingLoader/audioTracks(_:document:)``): what ReelMedia's
    /// `AudioSelection.track` names.
    public var id: Int
    /// Its language as the item writes it (`eng`, `fr`, `pt-BR`), if it says one.
    public var language: String?
    /// The stream's own name (Matroska's and MP4's `title`, an HLS rendition's `NAME`).
    public var label: String?
    /// FFmpeg's name for its codec (`aac`, `opus`, `eac3`).
    public var codec: String
    /// How many channels it has, when known before decoding.
    public var channels: Int?
    /// FFmpeg's description of its channel layout (`stereo`, `5.1(side)`), when known.
    public var channelLayout: String?
    /// What the track is for, as Media3 and HLS `CHARACTERISTICS` name it: `describes-video`
    /// (audio description), `hearing-impaired`, `commentary`, `dub`, `original`.
    public var roles: [String]
    /// The container marks it as the default audio.
    public var isDefault: Bool
    /// The player decodes it.
    public var isSelected: Bool

    /// A track as its item describes it.
    public init(id: Int, language: String? = nil, label: String? = nil, codec: String, channels: Int? = nil,
                channelLayout: String? = nil, roles: [String] = [], isDefault: Bool = false, isSelected: Bool = false) {
        self.id = id
        self.language = language
        self.label = label
        self.codec = codec
        self.channels = channels
        self.channelLayout = channelLayout
        self.roles = roles
        self.isDefault = isDefault
        self.isSelected = isSelected
    }

    /// The role of a track that describes the video for those who cannot see it.
    public static let describesVideo = "describes-video"
}
