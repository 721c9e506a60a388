import Foundation
import ReelCore
import Synchronization

/// A loader that serves an HLS stream read by ``LiveSegmentReader`` as a resource of its own
/// (`reel-live://N/media`), in sections (`reel-live://N/section/K`: see
/// ``SectionedResourceLoader``), and passes every other URL to the loader below. What lets the
/// engine play a stream with FFmpeg's mov or mpegts demuxer while Reel decides what is fetched,
/// from which variant and when.
///
/// A read of `media` from offset 0 starts a reader (at the live edge of a live stream); a
/// read from elsewhere fails. A seek goes through ``restart(_:at:)``: a new reader from the
/// segment holding the target (within the window of a live stream, ``seekableRange(of:)``).
/// Reads of the segments and playlists go through `upstream`.
public final class LiveMediaLoader: StoringResourceLoader, SectionedResourceLoader, PlaybackPositionListener, Sendable {
    public static let scheme = "reel-live"

    /// Why a read was refused.
    public struct Refused: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    private struct Registered: Sendable {
        var reader: LiveSegmentReader
        /// The sections of the latest read of `media`.
        var sections: StreamSections?
        /// The first and the latest presented frame's time, in seconds (the playhead the
        /// reader keeps its forward buffer against).
        var firstPresented: Double?
        var lastPresented: Double?
    }

    public let upstream: any ResourceLoader
    private let registry: Mutex<[String: Registered]>
    /// The last key handed out (keys are never reused).
    private let lastKey = Mutex(0)
    private let tracker: LivePlaylistTracker

    public init(upstream: any ResourceLoader, tracker: LivePlaylistTracker = LivePlaylistTracker()) {
        self.upstream = upstream
        self.registry = Mutex([:])
        self.tracker = tracker
    }

    /// The URL at which `playlist`'s media is served.
    public func register(playlist: URL, observer: (@Sendable (LiveSegmentReader.Event) -> Void)? = nil) -> URL {
        var reader = LiveSegmentReader(playlist: playlist, loader: upstream, tracker: tracker, observer: observer)
        reader.arrivalDeadlines = true
        return register(reader)
    }

    /// The URL at which `variants`' media is served, starting on `startRank` and switching as
    /// `switching` says.
    /// `startTime`: where a stream with an end starts (a live one joins at its edge); `audio`: a
    /// separate audio rendition read beside (``LiveSegmentReader/audio``); `loader`: what the
    /// reader reads through instead of `upstream` (playlists held in memory in front of it).
    public func register(variants: [LiveSegmentReader.Variant], startRank: Int, switching: LiveSegmentReader.Switching,
                         startTime: Double? = nil, audio: URL? = nil, through loader: (any ResourceLoader)? = nil,
                         observer: (@Sendable (LiveSegmentReader.Event) -> Void)? = nil) -> URL {
        var reader = LiveSegmentReader(variants: variants, startRank: startRank, switching: switching, loader: loader ?? upstream,
                                       tracker: tracker, observer: observer)
        reader.startTime = startTime
        reader.audio = audio
        reader.arrivalDeadlines = true
        return register(reader)
    }

    /// The URL at which `reader`'s media is served, the reader as it is configured.
    public func register(_ reader: LiveSegmentReader) -> URL {
        let key = String(lastKey.withTrackedLock { last in last += 1; return last })
        registry.withTrackedLock { $0[key] = Registered(reader: reader) }
        return URL(string: "\(Self.scheme)://\(key)/media")!
    }

    /// Forgets the stream at `url` (a URL ``register(variants:startRank:switching:startTime:observer:)``
    /// returned), stopping its reading.
    public func unregister(_ url: URL) {
        guard url.scheme == Self.scheme, let key = url.host else { return }
        registry.withTrackedLock { $0.removeValue(forKey: key) }?.sections?.cancel()
    }

    public var unstored: any ResourceLoader { upstream.unstoredLoader }

    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        guard url.scheme == Self.scheme else { return upstream.read(url, range: range) }
        let key = url.host ?? ""
        guard let registered = registry.withTrackedLock({ $0[key] }) else {
            return .failed(Refused(description: "\(url): not a stream of this loader"))
        }
        guard range.offset == 0 else {
            return .failed(Refused(description: "a live or adaptive stream cannot seek (a read from byte \(range.offset))"))
        }
        if let index = Self.sectionIndex(url) {
            guard let stream = registered.sections?.take(index) else {
                return .failed(Refused(description: "\(url): no such section"))
            }
            return stream
        }
        return start(registered.reader, key: key).take(0)!
    }

    /// Starts `reader` as the stream at `key` and keeps its sections. The playhead counts
    /// again from the first frame shown after this, as the new run's deliveries do.
    private func start(_ base: LiveSegmentReader, key: String) -> StreamSections {
        let playlist = base.playlist
        var reader = base
        registry.withTrackedLock { registry in
            registry[key]?.firstPresented = nil
            registry[key]?.lastPresented = nil
        }
        reader.playhead = { [weak self] in
            self?.registry.withTrackedLock { registry -> Double? in
                guard let first = registry[key]?.firstPresented, let last = registry[key]?.lastPresented else { return nil }
                return last - first
            }
        }
        // The reader's own failures (a stale playlist, …) reach the engine as the loader's
        // errors, which fail the item, rather than as a read that stopped.
        let sections = reader.sections(failingAs: { error in
            .invalidResponse(url: playlist, range: .all, reason: "\(error)")
        })
        registry.withTrackedLock { $0[key]?.sections = sections }
        return sections
    }

    /// How far before a seek's target a live stream's restart may land and still start at the
    /// segment before (the anchor is a frame's time, not the segment's own start).
    static let liveSeekMargin = 0.25

    public func restart(_ url: URL, at seconds: Double) -> ResourceSection? {
        guard url.scheme == Self.scheme, let key = url.host,
              let registered = registry.withTrackedLock({ $0[key] }), let old = registered.sections else { return nil }
        var reader = registered.reader
        reader.startRank = min(old.rank, reader.variants.count - 1)
        var placement: Double?
        if old.duration != nil {
            // A stream with an end: a new reader from the segment holding `seconds`, placed
            // on the item's timeline when a discontinuity before it started its timestamps again.
            reader.startTime = max(0, seconds)
            placement = old.placement(ofSegmentHolding: max(0, seconds))
        } else {
            // A live stream, within its window: a new reader from the segment holding
            // `seconds`, following the stream from there; past the join point, at the edge.
            let timeline = old.live
            guard timeline.window != nil else { return nil }
            reader.liveStart = (timeline.sequence(holding: seconds - Self.liveSeekMargin), timeline)
        }
        // On the variant the old one had reached.
        old.cancel()
        _ = start(reader, key: key)
        return ResourceSection(url: URL(string: "\(Self.scheme)://\(key)/section/0")!, restartsTimeline: false,
                               startsAt: placement)
    }

    /// A live stream's window on its own clock up to where a player joins, once a frame
    /// anchored it (see ``LiveTimeline/seekable``).
    public func seekableRange(of url: URL) -> ClosedRange<Double>? {
        guard url.scheme == Self.scheme, let key = url.host,
              let sections = registry.withTrackedLock({ $0[key]?.sections }), sections.duration == nil else { return nil }
        return sections.live.seekable
    }

    public func startsWhere(_ url: URL, restartAt seconds: Double) -> Bool {
        guard url.scheme == Self.scheme, let key = url.host,
              let sections = registry.withTrackedLock({ $0[key]?.sections }) else { return false }
        return sections.startsAtSegment(holding: max(0, seconds))
    }

    public func duration(of url: URL) -> Double? {
        guard url.scheme == Self.scheme, let key = url.host else { return nil }
        return registry.withTrackedLock { $0[key]?.sections }?.duration
    }

    public func section(after url: URL) -> ResourceSection? {
        guard url.scheme == Self.scheme, let host = url.host else { return nil }
        let index = Self.sectionIndex(url) ?? 0
        guard let sections = registry.withTrackedLock({ $0[host]?.sections }),
              let restarts = sections.restartsTimeline(after: index) else { return nil }
        return ResourceSection(url: URL(string: "\(Self.scheme)://\(host)/section/\(index + 1)")!, restartsTimeline: restarts)
    }

    public func isSectioned(_ url: URL) -> Bool {
        guard url.scheme == Self.scheme, let key = url.host else { return false }
        return registry.withTrackedLock { $0[key] != nil }
    }

    public func presented(_ time: MediaTime, of url: URL) {
        guard url.scheme == Self.scheme, let key = url.host, time.isNumeric else { return }
        let seconds = time.seconds
        let first = registry.withTrackedLock { registry -> StreamSections? in
            guard registry[key] != nil else { return nil }
            registry[key]?.lastPresented = seconds
            guard registry[key]?.firstPresented == nil else { return nil }
            registry[key]?.firstPresented = seconds
            return registry[key]?.sections
        }
        // The run's first frame: where its first segment starts on the stream's clock.
        first?.firstFrameShown(at: seconds)
    }

    /// The sections of the stream at `url`'s latest run, and its reader's clock.
    func running(_ url: URL) -> (StreamSections, @Sendable () -> Double)? {
        guard url.scheme == Self.scheme, let key = url.host else { return nil }
        return registry.withTrackedLock { registry in
            guard let registered = registry[key], let sections = registered.sections else { return nil }
            return (sections, registered.reader.now)
        }
    }

    private static func sectionIndex(_ url: URL) -> Int? {
        let components = url.pathComponents
        guard components.count == 3, components[1] == "section" else { return nil }
        return Int(components[2])
    }

    public func contentInformation(for url: URL) async throws -> ContentInformation {
        guard url.scheme == Self.scheme else { return try await upstream.contentInformation(for: url) }
        return ContentInformation(length: nil, isByteRangeAccessSupported: false, finalURL: url)
    }
}
