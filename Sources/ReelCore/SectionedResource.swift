import Foundation

/// One section of a resource read in sections (see ``SectionedResourceLoader``).
public struct ResourceSection: Sendable, Hashable {
    /// Where the section is read (from offset 0, once).
    public var url: URL
    /// Whether its timestamps start again (a discontinuity) instead of following on.
    public var restartsTimeline: Bool
    /// Where on the item's timeline its first timestamp goes, in seconds, when its own
    /// timestamps cannot say (a restart into a stretch after a discontinuity, whose timestamps
    /// started again): every timestamp is shifted by the same amount. `nil`: its own
    /// timestamps, or, with ``restartsTimeline``, following on from what came before.
    public var startsAt: Double?

    public init(url: URL, restartsTimeline: Bool, startsAt: Double? = nil) {
        self.url = url
        self.restartsTimeline = restartsTimeline
        self.startsAt = startsAt
    }
}

/// A loader whose resources may come in consecutive sections, each a stream a demuxer opens
/// afresh: a segmented stream whose init section changes (a switch of variant) or whose
/// timestamps start again (a discontinuity) cannot be one container stream, so its reader
/// ends a section there and the next begins with the new init section. The demuxer reads a
/// section to its end, then asks for the one after it.
public protocol SectionedResourceLoader: ResourceLoader {
    /// The section after `url`'s, announced before `url`'s stream ended; `nil` when the
    /// resource ended with `url`'s (or `url` is not a section of this loader).
    func section(after url: URL) -> ResourceSection?

    /// Starts the resource again from `seconds` (a seek): the section to read from there, whose
    /// timestamps are the resource's own (not restarted); `nil` when it cannot seek.
    func restart(_ url: URL, at seconds: Double) -> ResourceSection?

    /// The resource's duration in seconds, once known (`nil`: unknown, or live).
    func duration(of url: URL) -> Double?

    /// A live resource's window on its own clock, in seconds: what ``restart(_:at:)`` can
    /// start from (`nil`: none, or not known yet). A resource with an end seeks anywhere
    /// within its duration instead.
    func seekableRange(of url: URL) -> ClosedRange<Double>?

    /// Whether reading on from the resource's start as it is now lands where ``restart(_:at:)``
    /// would start (a start position given up front): a demuxer that has returned nothing yet
    /// then need not start again.
    func startsWhere(_ url: URL, restartAt seconds: Double) -> Bool
    /// Whether `url` is read in sections by this loader (a demuxer opened on anything else
    /// reads it as one stream).
    func isSectioned(_ url: URL) -> Bool
}

/// A loader that schedules segmented streams itself (Reel's HLS segment scheduler): a demuxer
/// that finds it opened a playlist offers it here first and, when the loader takes it, opens
/// the first section of the media the loader reads in its place; every later section, seek,
/// duration and playback position goes through ``SectionedResourceLoader`` under the
/// playlist's own URL.
public protocol StreamSchedulingLoader: SectionedResourceLoader {
    /// The audio tracks the playlist or manifest at `url` (its bytes `document`) offers as
    /// renditions of their own that this loader can read beside the video (an HLS master's
    /// `EXT-X-MEDIA TYPE=AUDIO` renditions, a DASH manifest's audio AdaptationSets), each
    /// `id` its place in this list; empty when it offers none (the video carries its own audio,
    /// or it is not a playlist). The caller chooses among them and passes the `id` on to
    /// ``playlistsToRead(_:document:audio:)`` and ``schedule(_:document:playlists:startTime:audio:)``.
    /// Pure: must not block.
    func audioTracks(_ url: URL, document: Data) -> [AudioTrack]

    /// The playlists besides `document` that ``schedule(_:document:playlists:startTime:audio:)``
    /// needs to decide whether it takes the playlist at `url` (a master's separate audio
    /// rendition `audio`, else its default, and the variant it would start on): the caller
    /// reads them through the loader, where it can interrupt the reads, and passes them in.
    /// Must not block.
    func playlistsToRead(_ url: URL, document: Data, audio: Int?) -> [URL]

    /// The first section of the media read in place of the HLS playlist at `url`, whose bytes
    /// (as the loader served them) are `document`, starting at `startTime` seconds (`nil`: its
    /// start, or a live stream's edge), with the audio track `audio` of ``audioTracks(_:document:)``
    /// (`nil`: the document's default); `nil` to leave the playlist to the demuxer as it is.
    /// `playlists`: what ``playlistsToRead(_:document:audio:)`` asked for, by URL (one that could
    /// not be read is missing). Called on a thread that may block; it must not block itself.
    func schedule(_ url: URL, document: Data, playlists: [URL: Data], startTime: Double?, audio: Int?) -> ResourceSection?
}

/// A loader that wants to know where playback of its resources is (a segment scheduler that
/// keeps a forward buffer): the engine tells it the time of every frame it presents.
/// Called on the engine's presenting thread: keep it short and never block.
public protocol PlaybackPositionListener: Sendable {
    func presented(_ time: MediaTime, of url: URL)
}

extension StreamSchedulingLoader {
    /// ``playlistsToRead(_:document:audio:)`` with the document's default audio.
    public func playlistsToRead(_ url: URL, document: Data) -> [URL] { playlistsToRead(url, document: document, audio: nil) }

    /// ``schedule(_:document:playlists:startTime:audio:)`` with the document's default audio.
    public func schedule(_ url: URL, document: Data, playlists: [URL: Data], startTime: Double?) -> ResourceSection? {
        schedule(url, document: document, playlists: playlists, startTime: startTime, audio: nil)
    }
}
