import Foundation
import ReelCore
import Synchronization

/// Reel's segment scheduler as the engine meets it: a loader in front of the item's loader
/// that takes over every HLS stream over HTTP the engine opens (``StreamSchedulingLoader``).
/// The engine reads the playlist through it (a master comes back from ``VariantSelectingLoader``
/// naming the variant the estimate chose), offers it, and plays what a ``LiveSegmentReader``
/// reads in its place: every variant of the master as published, starting on the chosen one and
/// switching as ``AdaptiveVariantRule`` (or a fixed plan) says, live or not. Seeks, the
/// duration, later sections and the playback position go to the reader under the playlist's
/// own URL. Everything else passes through to `upstream` untouched.
///
/// A master whose variants carry video alone beside one audio rendition (the `DEFAULT` of the
/// `AUDIO` group they all name) is read as one stream when both are fragmented MP4, and both
/// have an end or both are live with sequence numbers that line up (``LiveSegmentReader/audio``): the engine first reads the rendition's playlist and the
/// starting variant's for it (``playlistsToRead(_:document:)``).
///
/// A master whose played audio is the variants' own (the group's `DEFAULT` rendition has no
/// `URI`) is read like one without renditions: the alternative ones are not played.
///
/// Left to FFmpeg's HLS demuxer (``schedule(_:document:playlists:startTime:)`` answers `nil`): a
/// master with a video rendition or a separate audio rendition that is MPEG-TS or packed audio
/// or does not line up with the video, a playlist that is not over HTTP(S) (a local one), and anything that is not a playlist. A master's subtitle renditions are read by the
/// engine beside the reader, as beside FFmpeg's demuxer.
///
/// One stream per playlist URL at a time: scheduling a URL again (a replay, a swipe back)
/// stops the reading of its previous run; the last ``keptStreams`` URLs are kept.
public final class HLSSchedulingLoader: StreamSchedulingLoader, StoringResourceLoader, PlaybackPositionListener, Sendable {
    /// How the streams it schedules switch.
    public struct Configuration: Sendable {
        /// Switch a master's variants by the rule (else hold the one it started on).
        public var adaptive = true
        public var rule = AdaptiveVariantRule()
        /// The estimate the rule reads; without one, variants hold.
        public var estimate: (any BandwidthEstimating)?
        /// A fixed plan of switches instead (``LiveSegmentReader/Switching/plan(_:)``).
        public var plan: [Int: Int]?
        /// Told what every reader does (traces).
        public var observer: (@Sendable (LiveSegmentReader.Event) -> Void)?

        public init(adaptive: Bool = true, estimate: (any BandwidthEstimating)? = nil, plan: [Int: Int]? = nil,
                    observer: (@Sendable (LiveSegmentReader.Event) -> Void)? = nil) {
            self.adaptive = adaptive
            self.estimate = estimate
            self.plan = plan
            self.observer = observer
        }
    }

    public static let keptStreams = 16

    public let upstream: any ResourceLoader
    public let configuration: Configuration
    let live: LiveMediaLoader
    /// The master as its origin published it (the variant choice rewrote the served copy).
    let published: (@Sendable (URL) -> Data?)?
    /// Playlist URL → the reader's stream URL, oldest first.
    private let streams = Mutex<[(playlist: String, stream: URL)]>([])

    /// `variants`: the variant choice `upstream` answers masters through (or reads through),
    /// whose copy of each master as published gives the whole ladder.
    public init(upstream: any ResourceLoader, variants: VariantSelectingLoader? = nil,
                tracker: LivePlaylistTracker = LivePlaylistTracker(), configuration: Configuration = Configuration()) {
        self.upstream = upstream
        self.configuration = configuration
        self.live = LiveMediaLoader(upstream: upstream, tracker: tracker)
        if let variants {
            self.published = { url in variants.published(url) }
        } else {
            self.published = nil
        }
    }

    // MARK: Loading

    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        url.scheme == LiveMediaLoader.scheme ? live.read(url, range: range) : upstream.read(url, range: range)
    }

    public func contentInformation(for url: URL) async throws -> ContentInformation {
        url.scheme == LiveMediaLoader.scheme ? try await live.contentInformation(for: url)
            : try await upstream.contentInformation(for: url)
    }

    public var unstored: any ResourceLoader { upstream.unstoredLoader }

    // MARK: Scheduling

    /// For a master with a separate audio rendition: that rendition's playlist (the one at
    /// `audio` among ``audioTracks(_:document:)``, else the `DEFAULT`) and the first variant's.
    public func playlistsToRead(_ url: URL, document: Data, audio: Int?) -> [URL] {
        guard let served = HLSMasterPlaylist(document), let audio = Self.separateAudio(of: served, base: url, audio: audio),
              let chosen = served.variants.first.flatMap({ URL(string: $0.uri, relativeTo: url)?.absoluteURL }) else { return [] }
        return [audio, chosen]
    }

    /// Takes a playlist or manifest over HTTP(S) as the class comment says, reading the audio
    /// track `track` of ``audioTracks(_:document:)`` (else the default) beside the video.
    public func schedule(_ url: URL, document: Data, playlists: [URL: Data], startTime: Double?, audio track: Int?) -> ResourceSection? {
        guard ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { return nil }
        if DASHManifest.looksLikeManifest(document) { return scheduleDASH(url, document: document, startTime: startTime, audio: track) }
        let variants: [LiveSegmentReader.Variant]
        let startRank: Int
        let switching: LiveSegmentReader.Switching
        var audio: URL?
        if let served = HLSMasterPlaylist(document) {
            guard let chosen = served.variants.first,
                  let chosenURL = URL(string: chosen.uri, relativeTo: url)?.absoluteURL else { return nil }
            guard served.videoRenditions.isEmpty else { return nil }
            let ownAudio = served.videoVariants.allSatisfy { $0.audioGroup == nil }
                || served.playedAudioRendition.map { $0.uri == nil } == true
            if !ownAudio {
                // A separate audio rendition is read beside the variants when both it and the
                // variant it starts on are fragmented MP4 with an end; anything else (a live
                // one, MPEG-TS or packed audio) is FFmpeg's. (Alternative renditions beside
                // audio the variants carry, as Apple's examples list them, are not played.)
                guard let separate = Self.separateAudio(of: served, base: url, audio: track),
                      Self.joinable(audio: playlists[separate], video: playlists[chosenURL]) else { return nil }
                audio = separate
            }
            // Every variant, from the master as published (the served copy names one).
            var master = served
            if let original = published?(url).flatMap(HLSMasterPlaylist.init), original.videoRenditions.isEmpty,
               Self.separateAudio(of: original, base: url, audio: track) == audio { master = original }
            let ladder = master.videoVariants.compactMap { variant -> LiveSegmentReader.Variant? in
                guard let playlist = URL(string: variant.uri, relativeTo: url)?.absoluteURL else { return nil }
                return LiveSegmentReader.Variant(playlist: playlist, bandwidth: variant.bandwidth, resolution: variant.resolution)
            }.sorted { $0.bandwidth < $1.bandwidth }
            variants = ladder.isEmpty ? [.init(playlist: chosenURL, bandwidth: chosen.bandwidth)] : ladder
            startRank = variants.firstIndex { $0.playlist == chosenURL } ?? 0
            switching = self.switching(among: variants.count)
        } else if HLSMediaPlaylist(document) != nil {
            (variants, startRank, switching) = ([.init(playlist: url, bandwidth: 0)], 0, .fixed)
        } else {
            return nil
        }
        let stream = live.register(variants: variants, startRank: startRank, switching: switching, startTime: startTime,
                                   audio: audio, observer: configuration.observer)
        return take(url, stream: stream)
    }

    /// A static DASH manifest, said as HLS in memory (``DASHManifest/hlsDocuments(manifest:)``):
    /// every video Representation of the manifest as published is a variant, starting on the
    /// one the choice served, the audio track `audio` (``audioTracks(_:document:)``; else the
    /// `main` AdaptationSet's, else the preferred audio Representation) read beside them. Taken only
    /// when every URL it names is HTTP(S) and no manifest or playlist, and every Representation
    /// played is fMP4 with an initialization segment and segments; anything else
    /// is left to the demuxer (DASH as HLS through FFmpeg's HLS demuxer, which says what it
    /// refuses).
    private func scheduleDASH(_ url: URL, document: Data, startTime: Double?, audio track: Int?) -> ResourceSection? {
        guard let served = try? DASHManifest(document, url: url) else { return nil }
        let manifest = asPublished(served, url: url)
        let chosenAudio = Self.audioRepresentation(of: manifest, audio: track)
        let played = manifest.playedRepresentations(audio: chosenAudio)
        // Segmented fMP4 only (one file per Representation is read whole by FFmpeg, seeking).
        guard !manifest.videos.isEmpty, played.count <= 32, played.allSatisfy({ $0.initialization != nil }) else { return nil }
        for representation in played {
            for segment in [representation.initialization].compactMap({ $0 }) + representation.segments {
                let address = segment.url
                guard ["http", "https"].contains(address.scheme?.lowercased() ?? ""), address != url,
                      !["mpd", "m3u8", "m3u"].contains(address.pathExtension.lowercased()) else { return nil }
            }
        }
        let documents = manifest.hlsDocuments(manifest: url, audio: chosenAudio)
        func playlist(_ representation: DASHManifest.Representation) -> URL {
            DASHManifest.hlsPlaylistURL(for: url, index: representation.index)
        }
        let chosenID = served.videos.first?.id
        let chosen = manifest.videos.first { $0.id == chosenID } ?? manifest.videos[0]
        var audio: URL?
        if let preferred = chosenAudio {
            audio = playlist(preferred)
            guard Self.joinable(audio: documents[audio!.absoluteString], video: documents[playlist(chosen).absoluteString]) else {
                return nil
            }
        }
        let variants = manifest.videos.map {
            LiveSegmentReader.Variant(playlist: playlist($0), bandwidth: max(1, $0.bandwidth), resolution: $0.resolution,
                                      representation: $0.id)
        }.sorted { $0.bandwidth < $1.bandwidth }
        let startRank = variants.firstIndex { $0.playlist == playlist(chosen) } ?? 0
        let switching = self.switching(among: variants.count)
        let stream = live.register(variants: variants, startRank: startRank, switching: switching, startTime: startTime,
                                   audio: audio, through: PlaylistsInMemory(documents: documents, upstream: upstream),
                                   observer: configuration.observer)
        return take(url, stream: stream)
    }

    /// How a stream of `count` variants switches: the plan, else the rule over the estimate.
    private func switching(among count: Int) -> LiveSegmentReader.Switching {
        if let plan = configuration.plan { return .plan(plan) }
        if configuration.adaptive, count > 1, let estimate = configuration.estimate {
            return .adaptive(configuration.rule, estimate: estimate)
        }
        return .fixed
    }

    /// Keeps `stream` as what `url` is read as, dropping its previous run and the oldest beyond
    /// ``keptStreams``; its first section.
    private func take(_ url: URL, stream: URL) -> ResourceSection {
        let dropped = streams.withTrackedLock { streams -> [URL] in
            var dropped = streams.filter { $0.playlist == url.absoluteString }.map(\.stream)
            streams.removeAll { $0.playlist == url.absoluteString }
            streams.append((url.absoluteString, stream))
            while streams.count > Self.keptStreams { dropped.append(streams.removeFirst().stream) }
            return dropped
        }
        dropped.forEach(live.unregister)
        return ResourceSection(url: stream, restartsTimeline: false)
    }

    /// Whether an audio rendition's media playlist can be joined with a video variant's: every
    /// segment of both is fragmented MP4 (an init section), with no discontinuity, and either
    /// both have an end or both are live with media sequence numbers that line up (they list
    /// some of the same numbers, and the segments of each number last about as long: within
    /// half a second, as audio frames and video frames rarely end together).
    private static func joinable(audio: Data?, video: Data?) -> Bool {
        guard let audio, let video, let audioList = try? HLSMediaPlaylist.parse(audio),
              let videoList = try? HLSMediaPlaylist.parse(video) else { return false }
        for list in [audioList, videoList] {
            guard !list.segments.isEmpty, list.segments.allSatisfy({ $0.initSection != nil && !$0.discontinuity }) else { return false }
        }
        if audioList.isFinal && videoList.isFinal { return true }
        guard !audioList.isFinal, !videoList.isFinal else { return false }
        let audioDurations = Dictionary(audioList.segments.map { ($0.sequence, $0.duration) }, uniquingKeysWith: { $1 })
        let shared = videoList.segments.filter { audioDurations[$0.sequence] != nil }
        return !shared.isEmpty && shared.allSatisfy { abs(audioDurations[$0.sequence]! - $0.duration) < 0.5 }
    }

    /// The reader's URL for `url`: itself when it is one, the stream scheduled for a playlist.
    func stream(_ url: URL) -> URL? {
        if url.scheme == LiveMediaLoader.scheme { return url }
        let key = url.absoluteString
        return streams.withTrackedLock { streams in streams.last { $0.playlist == key }?.stream }
    }

    // MARK: Sections

    public func section(after url: URL) -> ResourceSection? { stream(url).flatMap(live.section(after:)) }

    public func restart(_ url: URL, at seconds: Double) -> ResourceSection? {
        stream(url).flatMap { live.restart($0, at: seconds) }
    }

    public func duration(of url: URL) -> Double? { stream(url).flatMap(live.duration(of:)) }

    public func seekableRange(of url: URL) -> ClosedRange<Double>? { stream(url).flatMap(live.seekableRange(of:)) }

    public func startsWhere(_ url: URL, restartAt seconds: Double) -> Bool {
        stream(url).map { live.startsWhere($0, restartAt: seconds) } ?? false
    }

    public func isSectioned(_ url: URL) -> Bool { stream(url).map(live.isSectioned) ?? false }

    public func presented(_ time: MediaTime, of url: URL) {
        if let stream = stream(url) { live.presented(time, of: stream) }
    }
}

/// Playlists held in memory (a DASH manifest said as HLS) in front of the loader that reads
/// everything else: what the reader of a DASH stream reads through. Its unstored side serves
/// the same playlists (they never change) in front of the upstream's unstored side.
final class PlaylistsInMemory: StoringResourceLoader, Sendable {
    let documents: [String: Data]
    let upstream: any ResourceLoader

    init(documents: [String: Data], upstream: any ResourceLoader) {
        self.documents = documents
        self.upstream = upstream
    }

    func read(_ url: URL, range: ByteRange) -> ByteStream {
        guard let document = documents[url.absoluteString] else { return upstream.read(url, range: range) }
        return ByteStream.serving(document, url: url, range: range, contentType: "application/vnd.apple.mpegurl")
    }

    var unstored: any ResourceLoader {
        upstream is any StoringResourceLoader ? PlaylistsInMemory(documents: documents, upstream: upstream.unstoredLoader) : self
    }
}
