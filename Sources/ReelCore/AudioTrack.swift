import Foundation

/// One audio track an item offers: an audio stream of its container (MKV, MP4, MPEG-TS), an HLS
/// master's `EXT-X-MEDIA TYPE=AUDIO` rendition (as FFmpeg's HLS demuxer exposes it, or as Reel's
/// segment scheduler reads it), or a DASH manifest's audio AdaptationSet.
public struct AudioTrack: Sendable, Codable, Hashable {
    /// The stream's index in the container, or the rendition's place among those a segment
    /// scheduler offers (``StreamSchedulingLoader/audioTracks(_:document:)``): what ReelMedia's
    /// `AudioSelection.track` names.
    public var id: Int
    public var language: String?
    /// The stream's own name (Matroska's and MP4's `title`, an HLS rendition's `NAME`).
    public var label: String?
    public var codec: String
    public var channels: Int?
    public var channelLayout: String?
    /// What the track is for, as Media3 and HLS `CHARACTERISTICS` name it: `describes-video`
    /// (audio description), `hearing-impaired`, `commentary`, `dub`, `original`.
    public var roles: [String]
    /// The container marks it as the default audio.
    public var isDefault: Bool
    /// The player decodes it.
    public var isSelected: Bool

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

    public static let describesVideo = "describes-video"
}
