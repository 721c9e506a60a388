import Foundation
import ReelCore
import ReelCaptions

/// What to play: a URL and the loader every byte of it comes through.
public struct PlayerItem: Sendable {
    /// The item's address: what the loader is asked for, and what a playlist's or manifest's
    /// relative URLs resolve against. Any scheme the loader answers (`file:`, `https:`, a
    /// test's own); its path's extension is no more than a hint to FFmpeg's probe.
    public var url: URL
    /// Where every byte of the item comes from: the container, and for a stream its playlists,
    /// segments and keys, and the sideloaded ``captions``. Read from the player's threads, so
    /// it must be safe to call from any thread (the protocol is `Sendable`).
    public var loader: any ResourceLoader
    /// Where playback starts (an exact seek before the first frame), if not at the beginning.
    public var startTime: MediaTime?
    /// Caption files to show beside the item's own captions, read through `loader` when the
    /// item is set (so a pre-rendered page has its first cue before it plays).
    public var captions: [CaptionSource]
    /// The item's loudness as its source measured it (a feed's `loudness`/`truePeak`): with
    /// levelling on, the gain comes from it instead of from Reel's meter.
    public var loudness: ItemLoudness?

    /// An item playing `url` through `loader`, from the beginning unless `startTime` says.
    /// Nothing is read until it is handed to ``Player/replaceCurrentItem(with:)``.
    public init(url: URL, loader: any ResourceLoader, startTime: MediaTime? = nil, captions: [CaptionSource] = [],
                loudness: ItemLoudness? = nil) {
        self.url = url
        self.loader = loader
        self.startTime = startTime
        self.captions = captions
        self.loudness = loudness
    }
}

/// Something that happened in a ``Player``.
public enum PlayerEvent: Sendable {
    /// ``Player/status`` changed: the item became ready to play (its streams opened), or failed.
    case statusChanged(PlayerStateMachine.Status)
    /// ``Player/timeControlStatus`` changed: time started or stopped running, or the player
    /// began waiting (the item opening, buffers run dry) with a reason.
    case timeControlStatusChanged(PlayerStateMachine.TimeControlStatus)
    /// ``Player/rate`` changed to this (0 paused, else 0.25 to 4).
    case rateChanged(Double)
    /// The item's first frame is on screen; the phases of getting there.
    case firstFrame(FirstFrameReport)
    /// A seek ended: `finished` is `false` when a newer seek replaced it.
    case seekCompleted(target: MediaTime, landed: MediaTime?, finished: Bool)
    /// Playback stalled waiting for data (`true`), or recovered (`false`).
    case stall(Bool)
    /// The item reached its end (and looped, when ``Player/actionAtItemEnd`` is `.loop`).
    case ended(looping: Bool)
    /// The item failed.
    case failed(MediaError)
    /// A frame became current.
    case framePresented(pts: MediaTime, presentation: Presentation)
    /// The cues on screen changed (a cue began or ended, a track was chosen, a seek).
    case captionsChanged(CaptionFrame)
    /// The item's caption tracks changed (opened, a sideloaded file was read).
    case captionTracksChanged([CaptionTrack])
    /// A caption file could not be read or parsed; the item plays on without it.
    case captionSourceFailed(CaptionSourceFailure)
    /// Loudness levelling decided the item's gain (before its first sound), or refined it.
    case loudness(LoudnessReport)
}

/// Counters for the HUD, the benchmark and tests.
public struct PlayerStatistics: Sendable, Hashable {
    /// Frames handed to the video sink since the item was set.
    public var presentedFrames: Int
    /// Frames decoded but skipped because they were late by the time they were due (not the
    /// frames a seek decodes and passes over).
    public var droppedFrames: Int
    /// Frames the video decoders queued for presentation (a seek's passed-over frames are
    /// not counted). An item that never played holds its first picture only: 1.
    public var decodedVideoFrames: Int = 0
    /// Bytes the item's reads took from the loader, with those of the playlists and segments a
    /// stream opened through it (not the sideloaded caption files).
    public var bytesRead: Int64
    /// Reads asked of the loader for those bytes (each open and each seek within a resource is one).
    public var requests: Int
    /// How long the first frame took, phase by phase; `nil` until it is presented.
    public var firstFrame: FirstFrameReport?
    /// How far presented frames were from the audio clock (95th percentile and largest,
    /// milliseconds), when audio was heard.
    public var avOffsetP95Ms: Double?
    /// The largest distance of a presented frame from the audio clock, in milliseconds, when
    /// audio was heard (see ``avOffsetP95Ms``).
    public var avOffsetMaxMs: Double?
    /// Times the audio device found nothing to play while the player was running.
    public var audioUnderruns: Int = 0
    /// How long each rate change took to be heard (milliseconds), in order: from when time runs
    /// at the new rate (at once while playing; on resuming, for a change asked in a stall or a
    /// pause) until the device takes the first sample rendered at it.
    public var rateChangeLatenciesMs: [Double] = []
}

/// A handle for removing an observer.
public final class ObserverToken: Hashable, Sendable {
    let id: Int
    init(id: Int) { self.id = id }
    /// Whether both tokens name the same observer.
    public static func == (a: ObserverToken, b: ObserverToken) -> Bool { a.id == b.id }
    /// Hashes the observer the token names.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
