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
    public enum Kind: String, Sendable, Codable, Hashable {
        case video, audio, subtitle, data, attachment, unknown
    }

    public var index: Int
    public var kind: Kind
    /// FFmpeg's codec name (`h264`, `hevc`, `aac`).
    public var codec: String
    public var profile: String?
    /// Coded width and height (before rotation).
    public var width: Int?
    public var height: Int?
    /// Clockwise rotation applied for display: 0, 90, 180 or 270 (FFmpeg's
    /// autorotate turns the frame the same way).
    public var rotation: Int?
    /// The display matrix's own angle, counterclockwise, as `ffprobe` prints it
    /// (`rotation=90` in its side data is `rotation` 270 here).
    public var displayMatrixRotation: Int?
    public var pixelFormat: String?
    /// A video stream's colour: its tags (with the fallbacks for what it leaves untagged),
    /// HDR metadata and Dolby Vision configuration.
    public var color: ColorDescription?
    /// Average frame rate, when known.
    public var frameRate: MediaTime?
    public var sampleRate: Int?
    public var channels: Int?
    public var channelLayout: String?
    /// The stream's time base, as `1/90000`.
    public var timeBase: String
    public var duration: MediaTime?
    public var bitRate: Int?
    public var language: String?
    /// The stream's own name (Matroska's and MP4's `title`), if it has one.
    public var title: String?
    /// The container marks this stream as forced (subtitles shown even with captions off:
    /// signs, foreign-language lines).
    public var isForced = false
    /// What the stream is for, from its disposition (see ``AudioTrack/roles``).
    public var roles: [String] = []
    /// The container marks this stream as the default of its kind.
    public var isDefault: Bool
    /// The stream is a cover picture, not video.
    public var isAttachedPicture: Bool
    /// The player decodes this stream.
    public var isSelected: Bool

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
