import Foundation
import ReelCore

/// Reads a live HLS media playlist the way Reel's segment scheduler does and gives its media
/// as one stream: the init section (fMP4) once, then every segment (or part) in order, each
/// fetched once, through the loader. What FFmpeg's mov or mpegts demuxer reads in place of
/// FFmpeg's HLS demuxer; `LivePlaylistTracker` makes every decision, this runs them.
///
/// The stream has no length and cannot seek. It ends after `EXT-X-ENDLIST` and everything
/// before it, and fails with a ``LivePlaylistTracker/Failure`` (stale playlist, media
/// sequence going backwards, window moved past it), a ``LiveSegmentReader/Failure`` (an init
/// section that changes or a discontinuity: timestamps that start again, which a single
/// demuxer cannot follow), or the loader's error.
/// Playlists are read through the loader's unstored side (a live playlist must reach the
/// origin at each reload); segments through the loader itself, so they are cached.
public struct LiveSegmentReader: Sendable {
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case initSectionChanged(String)
        case notAMediaPlaylist(String)
        case discontinuity(Int64)
        case tooLarge(what: String, url: URL, limit: Int)

        public var description: String {
            switch self {
            case .initSectionChanged(let uri): "the live stream's init section changed to \(uri) (not followed yet)"
            case .notAMediaPlaylist(let why): "the live playlist cannot be read: \(why)"
            case .discontinuity(let sequence): "the live stream has a discontinuity at segment \(sequence) (not followed yet)"
            case .tooLarge(let what, let url, let limit): "\(what) \(url.absoluteString) is larger than \(limit) bytes"
            }
        }
    }

    /// What the reader did, for traces and tests.
    public enum Event: Sendable, Hashable {
        /// A playlist arrived (`changed`: it listed something new) at `at` seconds.
        case playlist(url: URL, changed: Bool, at: Double)
        /// A segment or part was fetched: its URL and byte range (`nil`: whole), bytes, and
        /// how far behind the newest listed media the fetching then was, in seconds.
        case fetched(url: URL, range: ByteRange?, bytes: Int, behindEdge: Double)
    }

    public var playlist: URL
    public var loader: any ResourceLoader
    public var tracker: LivePlaylistTracker
    /// Monotonic seconds now.
    public var now: @Sendable () -> Double
    /// Waits `seconds` (a sleep; a test's clock can make it instant).
    public var sleep: @Sendable (Double) async throws -> Void
    public var observer: (@Sendable (Event) -> Void)?
    /// The largest playlist read (a live playlist that grows without bound stops here).
    public var maximumPlaylistBytes = 4 << 20
    /// The largest segment, part or init section read (a segment that never ends stops here).
    public var maximumSegmentBytes = 256 << 20

    public init(playlist: URL, loader: any ResourceLoader, tracker: LivePlaylistTracker = LivePlaylistTracker(),
                observer: (@Sendable (Event) -> Void)? = nil) {
        self.playlist = playlist
        self.loader = loader
        self.tracker = tracker
        let start = ContinuousClock.now
        self.now = { (ContinuousClock.now - start).inSeconds }
        self.sleep = { seconds in try await Task.sleep(for: .seconds(seconds)) }
        self.observer = observer
    }

    /// Starts reading; the returned stream carries the media. Cancelling it stops the reading.
    /// `failingAs` turns the reader's own failures (not the loader's, not a cancellation) into
    /// a loader error, for readers that only know those.
    public func stream(failingAs: (@Sendable (any Error) -> ResourceLoaderError)? = nil) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: 4 << 20)
        continuation.respond(with: ContentInformation(length: nil, contentType: nil, isByteRangeAccessSupported: false,
                                                      finalURL: playlist))
        let task = Task { [self] in
            do {
                try await run(continuation)
                continuation.finish()
            } catch let error as ResourceLoaderError {
                continuation.finish(throwing: error)
            } catch is CancellationError {
                continuation.finish(throwing: CancellationError())
            } catch {
                continuation.finish(throwing: failingAs?(error) ?? error)
            }
        }
        continuation.onCancel { task.cancel() }
        return stream
    }

    private func run(_ output: ByteStream.Continuation) async throws {
        var tracker = self.tracker
        var initSent: HLSMediaPlaylist.Part?
        var fetchedAny = false
        let playlistLoader = loader.unstoredLoader
        var reload = LivePlaylistTracker.Reload(at: now())
        while !Task.isCancelled {
            let wait = reload.at - now()
            if wait > 0 { try await sleep(wait) }
            let url = reload.url(for: playlist)
            let document = try await Self.read(url, range: .all, limit: maximumPlaylistBytes, what: "the live playlist",
                                               loader: playlistLoader)
            let parsed: HLSMediaPlaylist
            do { parsed = try HLSMediaPlaylist.parse(document) } catch {
                throw Failure.notAMediaPlaylist(error.description)
            }
            let changed = try tracker.received(parsed, at: now())
            observer?(.playlist(url: url, changed: changed, at: now()))
            while case let fetch = tracker.next(), fetch != .waitForReload {
                if case .ended = fetch { return }
                let resource: HLSMediaPlaylist.Part
                var section: HLSMediaPlaylist.Part?
                switch fetch {
                case .segment(let segment, let initSection):
                    // Timestamps start again after a discontinuity: one demuxer cannot follow.
                    if fetchedAny, segment.discontinuity { throw Failure.discontinuity(segment.sequence) }
                    (resource, section) = (segment.resource, initSection)
                case .part(_, _, let part, let initSection): (resource, section) = (part.resource, initSection)
                case .waitForReload, .ended: return
                }
                if let wanted = section, wanted != initSent {
                    guard initSent == nil else { throw Failure.initSectionChanged(wanted.uri) }
                    try await output.send(try await Self.read(resolve(wanted.uri), range: wanted.range ?? .all,
                                                              limit: maximumSegmentBytes, what: "the init section", loader: loader))
                    initSent = wanted
                }
                let bytes = try await Self.read(resolve(resource.uri), range: resource.range ?? .all,
                                                limit: maximumSegmentBytes, what: "the segment", loader: loader)
                tracker.fetched(fetch)
                fetchedAny = true
                observer?(.fetched(url: resolve(resource.uri), range: resource.range, bytes: bytes.count,
                                   behindEdge: tracker.behindEdge))
                try await output.send(bytes)
            }
            try tracker.checkStale(at: now())
            reload = tracker.nextReload()
            // A plain reload waits; a blocking one goes at once but must not spin on a server
            // that answers at once with nothing new: then it waits half a target duration.
            if reload.blockingSequence != nil, !changed {
                reload.at = max(reload.at, now() + tracker.targetDuration / 2)
            }
        }
    }

    /// Reads `range` of `url` whole, refusing more than `limit` bytes.
    private static func read(_ url: URL, range: ByteRange, limit: Int, what: String,
                             loader: any ResourceLoader) async throws -> Data {
        let stream = loader.read(url, range: range)
        defer { stream.cancel() }
        _ = try await stream.contentInformation()
        let data = try await stream.collect(limit: limit)
        if data.count > limit { throw Failure.tooLarge(what: what, url: url, limit: limit) }
        return data
    }

    private func resolve(_ uri: String) -> URL {
        URL(string: uri, relativeTo: playlist)?.absoluteURL ?? playlist
    }
}
