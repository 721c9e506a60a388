import Foundation
import ReelCore

/// What a media file holds, as `reel probe` prints it.
public struct MediaInfo: Sendable, Codable, Hashable {
    /// The container, as FFmpeg names its demuxer (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`).
    public var container: String
    /// The container's long name (`QuickTime / MOV`).
    public var containerLongName: String
    /// The duration, or `nil` when the container does not say.
    public var duration: MediaTime?
    /// The overall bit rate in bits per second, when known.
    public var bitRate: Int?
    /// Every stream, in file order.
    public var streams: [StreamInfo]
    /// A live stream: it has no end and no duration yet (Reel's segment scheduler following a
    /// live playlist).
    public var isLive = false

    /// A description with the given container and streams; ``isLive`` false, no audio choice.
    public init(container: String, containerLongName: String, duration: MediaTime?, bitRate: Int?, streams: [StreamInfo]) {
        self.container = container
        self.containerLongName = containerLongName
        self.duration = duration
        self.bitRate = bitRate
        self.streams = streams
    }

    /// The stream the player decodes for video, if any.
    public var videoStream: StreamInfo? { streams.first { $0.isSelected && $0.kind == .video } }
    /// The stream the player decodes for audio, if any.
    public var audioStream: StreamInfo? { streams.first { $0.isSelected && $0.kind == .audio } }
    /// Why that audio stream was chosen (``AudioSelection/Choice/reason``), when there is one.
    public var audioChoice: String?
    /// The audio tracks Reel's segment scheduler offers for the item as renditions of their own
    /// (an HLS master's `EXT-X-MEDIA TYPE=AUDIO`, a DASH manifest's audio AdaptationSets), the
    /// one it reads marked: ``audioTracks`` lists these in place of the streams. `nil` otherwise.
    public var renditionAudioTracks: [AudioTrack]?
}

/// One stream of a media file.
public struct StreamInfo: Sendable, Codable, Hashable {
    /// What a stream carries, as FFmpeg's media type says.
    public enum Kind: String, Sendable, Codable, Hashable {
        /// Pictures: video, or a cover picture (see ``StreamInfo/isAttachedPicture``).
        case video
        /// Sound.
        case audio
        /// Captions or subtitles, text or bitmap.
        case subtitle
        /// Timed data no decoder plays (timecode tracks, timed metadata, MP4 text tracks FFmpeg
        /// reads as data).
        case data
        /// A file carried beside the streams (a Matroska font or image), not timed.
        case attachment
        /// Anything else FFmpeg reports.
        case unknown
    }

    /// The stream's index in the container, as FFmpeg numbers it (`ffprobe`'s `index`, and the
    /// `s:N` of a caption track).
    public var index: Int
    /// What the stream carries.
    public var kind: Kind
    /// FFmpeg's codec name (`h264`, `hevc`, `aac`).
    public var codec: String
    /// The codec profile as FFmpeg names it (`High`, `Main 10`, `LC`), when it has one.
    public var profile: String?
    /// Coded width in pixels, before rotation; `nil` for a stream without pictures.
    public var width: Int?
    /// Coded height in pixels, before rotation; `nil` for a stream without pictures.
    public var height: Int?
    /// Clockwise rotation applied for display: 0, 90, 180 or 270 (FFmpeg's
    /// autorotate turns the frame the same way).
    public var rotation: Int?
    /// The display matrix's own angle, counterclockwise, as `ffprobe` prints it
    /// (`rotation=90` in its side data is `rotation` 270 here).
    public var displayMatrixRotation: Int?
    /// FFmpeg's name for a video stream's pixel format (`yuv420p`, `yuv420p10le`), when known.
    public var pixelFormat: String?
    /// A video stream's colour: its tags (with the fallbacks for what it leaves untagged),
    /// HDR metadata and Dolby Vision configuration.
    public var color: ColorDescription?
    /// Average frame rate, when known.
    public var frameRate: MediaTime?
    /// An audio stream's sample rate in hertz (samples per second per channel).
    public var sampleRate: Int?
    /// An audio stream's channel count.
    public var channels: Int?
    /// An audio stream's channel layout as FFmpeg describes it (`mono`, `stereo`, `5.1(side)`),
    /// when the stream says.
    public var channelLayout: String?
    /// The stream's time base, as `1/90000`.
    public var timeBase: String
    /// The stream's own duration, when the container gives one (it may differ from the file's).
    public var duration: MediaTime?
    /// The stream's bit rate in bits per second, when known.
    public var bitRate: Int?
    /// The stream's language tag as the container writes it (an ISO 639-2 code such as `eng`),
    /// when it has one.
    public var language: String?
    /// The stream's own name (Matroska's and MP4's `title`), if it has one.
    public var title: String?
    /// The container marks this stream as forced (subtitles shown even with captions off:
    /// signs, foreign-language lines).
    public var isForced = false
    /// What the stream is for, from its disposition (see `AudioTrack.roles` in ReelCore).
    public var roles: [String] = []
    /// The container marks this stream as the default of its kind.
    public var isDefault: Bool
    /// The stream is a cover picture, not video.
    public var isAttachedPicture: Bool
    /// The player decodes this stream.
    public var isSelected: Bool

    /// Stream `index` of `kind`, with everything else unknown, unmarked and not selected.
    public init(index: Int, kind: Kind, codec: String, timeBase: String) {
        self.index = index
        self.kind = kind
        self.codec = codec
        self.timeBase = timeBase
        self.isDefault = false
        self.isAttachedPicture = false
        self.isSelected = false
    }
}
