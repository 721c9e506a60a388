import Foundation
import ReelCore
import ReelStreaming
import Synchronization

/// How a DASH item is played through the loader: libavformat's `dash` demuxer opens every
/// segment with `ffio_open_whitelist` (its own protocols), never through `io_open`, so it
/// cannot read through a ``ResourceLoader`` in any FFmpeg version. Reel reads the manifest
/// itself instead, and hands FFmpeg's `hls` demuxer — whose every open comes through
/// ``NestedIO`` — the same Representations as HLS: a master naming one media playlist per
/// video Representation (and the preferred audio one as an `#EXT-X-MEDIA` rendition), each
/// listing its initialization segment (`#EXT-X-MAP`) and segments by absolute URL, with the
/// durations of the manifest. The packets are the manifest's segments, unchanged.
///
/// The playlists live in memory under names beside the manifest (`<name>.reel-dash-<n>.m3u8`)
/// and are never requested from the origin. Every URL the manifest names is checked against
/// the item's ``NestedAccessPolicy`` before anything is read, and a segment that is the
/// manifest itself or another manifest or playlist is refused.
///
/// Threads: `read` is called on the demux thread (the item's bridge and its nested opens);
/// the manifest is read on a task; everything mutable is in `state`.
final class DASHAsHLS: ResourceLoader, Sendable {
    let upstream: any ResourceLoader
    let manifest: URL
    let policy: NestedAccessPolicy

    private struct State {
        /// The master (at `manifest`) and the media playlists, by absolute URL string.
        var documents: [String: Data]?
        /// Why the manifest cannot be played.
        var failure: MediaError?
        var manifestBytes: Int64 = 0
        var manifestRequests = 0
        /// The manifest's read the item started to tell its format, until the manifest is read.
        var manifestRead: ByteStream?
        /// The manifest's text Representations, once read (Reel reads them for captions).
        var texts: [DASHManifest.Representation] = []
        var closed = false
    }

    private let state = Mutex(State())
    /// The item's head start, which the item's ``NestedIO`` takes from: the first segments'
    /// reads start here as soon as the manifest is translated.
    let readsAhead = ReadsAhead()

    /// `started`: a read of the whole manifest already under way (the one the item's format was
    /// told by, none of it consumed); the manifest is read from it, not requested again.
    /// The manifest's caption Representations (empty until it was read).
    var textRepresentations: [DASHManifest.Representation] { state.withTrackedLock { $0.texts } }

    init(upstream: any ResourceLoader, manifest: URL, policy: NestedAccessPolicy, started: ByteStream? = nil) {
        self.upstream = upstream
        self.manifest = manifest
        self.policy = policy
        state.withTrackedLock { $0.manifestRead = started }
    }

    /// The refusal, limit or parse failure that stopped the manifest, if any.
    var failure: MediaError? { state.withTrackedLock { $0.failure } }

    /// What reading the manifest itself cost (the demuxer reads the HLS copy from memory).
    var manifestStatistics: (bytesRead: Int64, requests: Int) {
        state.withTrackedLock { ($0.manifestBytes, $0.manifestRequests) }
    }

    func read(_ url: URL, range: ByteRange) -> ByteStream {
        let key = url.absoluteString
        let isManifest = key == manifest.absoluteString
        let (known, failure) = state.withTrackedLock { state in (state.documents?[key], state.failure) }
        if let known { return ByteStream.serving(known, url: url, range: range, contentType: Self.playlistType) }
        if isManifest, let failure {
            // Refused once is refused: the manifest is not read again.
            let (stream, continuation) = ByteStream.makeStream()
            continuation.finish(throwing: failure)
            return stream
        }
        guard isManifest else {
            if Self.isSynthetic(url) {
                let (stream, continuation) = ByteStream.makeStream()
                continuation.finish(throwing: ResourceLoaderError.notFound(url: url))
                return stream
            }
            return upstream.read(url, range: range)
        }
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: 4 << 20)
        let task = Task {
            do {
                let documents = try await self.translate()
                continuation.deliver(documents[key] ?? Data(), url: url, range: range, contentType: Self.playlistType)
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onCancel { task.cancel() }
        return stream
    }

    static func isSynthetic(_ url: URL) -> Bool { DASHManifest.isHLSPlaylist(url) }

    // MARK: Translating

    /// Reads, parses and checks the manifest, and writes its playlists (once).
    private func translate() async throws -> [String: Data] {
        if let done = state.withTrackedLock({ $0.documents }) { return done }
        let limits = policy.limits
        let started = state.withTrackedLock { state -> ByteStream? in
            defer { state.manifestRead = nil }
            return state.manifestRead
        }
        let source = started ?? upstream.read(manifest, range: .all)
        defer { source.cancel() }
        state.withTrackedLock { $0.manifestRequests += 1 }
        let information = try await source.contentInformation()
        var data = Data()
        func tooBig() -> MediaError {
            fail(.streamLimit(what: "manifest size in bytes", limit: Int(limits.maxDocumentBytes), url: manifest))
        }
        if let length = information.length, length > limits.maxDocumentBytes { throw tooBig() }
        var iterator = source.makeAsyncIterator()
        while let chunk = try await iterator.next() {
            data.append(chunk)
            state.withTrackedLock { $0.manifestBytes += Int64(chunk.count) }
            if data.count > limits.maxDocumentBytes { throw tooBig() }
        }
        let base = information.finalURL ?? manifest
        let parsed: DASHManifest
        do {
            parsed = try DASHManifest(data, url: base, maxSegments: limits.maxPlaylistEntries)
        } catch let failure as DASHManifest.Failure {
            switch failure {
            case .tooManySegments:
                throw fail(.streamLimit(what: "number of playlist entries", limit: limits.maxPlaylistEntries, url: manifest))
            case .invalidReference(let reference):
                throw fail(.refusedURL(url: reference, item: policy.item, reason: "not a URL"))
            case .notAManifest, .unsupported:
                throw fail(.unsupportedStream(url: manifest, reason: failure.description))
            }
        }
        let documents = try playlists(for: parsed)
        let (kept, first) = state.withTrackedLock { state -> ([String: Data], Bool) in
            if let earlier = state.documents { return (earlier, false) }
            state.documents = documents
            return (documents, true)
        }
        if first {
            startFirstReads(parsed)
            state.withTrackedLock { $0.texts = parsed.texts }
        }
        return kept
    }

    /// With one video Representation (the variant chooser kept one), its and the audio's
    /// initialization and first segments are what the demuxer opens next, one after another:
    /// their reads start now, side by side, in the item's ``ReadsAhead``, and each waits for
    /// the demuxer's open of its URL (handed over whole, so nothing is read twice). Parts with
    /// byte ranges are left to the demuxer.
    private func startFirstReads(_ parsed: DASHManifest) {
        guard parsed.videos.count <= 1 else { return }
        var urls: [URL] = []
        for representation in [parsed.videos.first, parsed.preferredAudio].compactMap({ $0 }) {
            for part in [representation.initialization, representation.segments.first].compactMap({ $0 }) where part.range == nil {
                if !urls.contains(part.url) { urls.append(part.url) }
            }
        }
        for url in urls where !state.withTrackedLock({ $0.closed }) {
            readsAhead.start(url, range: .all, through: upstream)
        }
    }

    /// Cancels the manifest's read if it is still under way (the item is closing); the
    /// reads started ahead are the item's ``NestedIO``'s to cancel.
    func close() {
        let manifestRead = state.withTrackedLock { state -> ByteStream? in
            state.closed = true
            defer { state.manifestRead = nil }
            return state.manifestRead
        }
        manifestRead?.cancel()
    }

    deinit { close() }

    @discardableResult
    private func fail(_ error: MediaError) -> MediaError {
        state.withTrackedLock { state in
            if state.failure == nil { state.failure = error }
            return state.failure!
        }
    }

    /// Checks one URL the manifest names.
    private func admit(_ url: URL) throws {
        let raw = url.absoluteString
        if case .failure(let refusal) = policy.admit(raw) { throw fail(refusal) }
        if NestedIO.key(raw) == NestedIO.key(manifest.absoluteString) {
            throw fail(.refusedURL(url: raw, item: policy.item, reason: "the manifest names itself as a segment"))
        }
        if ["mpd", "m3u8", "m3u"].contains(url.pathExtension.lowercased()) {
            throw fail(.refusedURL(url: raw, item: policy.item, reason: "a DASH segment may not be a manifest or a playlist"))
        }
    }

    /// The master and media playlists for `parsed`: every video Representation and the
    /// preferred audio one (``DASHManifest/hlsDocuments(manifest:)``), once every URL they name
    /// is admitted.
    private func playlists(for parsed: DASHManifest) throws -> [String: Data] {
        let chosen = parsed.playedRepresentations
        guard !chosen.isEmpty else {
            throw fail(.unsupportedStream(url: manifest, reason: "the DASH manifest has no video or audio Representation"))
        }
        guard chosen.count <= policy.limits.maxRenditions else {
            throw fail(.streamLimit(what: "number of playlists", limit: policy.limits.maxRenditions, url: manifest))
        }
        for representation in chosen {
            for segment in [representation.initialization].compactMap({ $0 }) + representation.segments { try admit(segment.url) }
        }
        return parsed.hlsDocuments(manifest: manifest)
    }

    // MARK: Serving from memory

    /// The translated playlists are HLS.
    private static let playlistType = "application/vnd.apple.mpegurl"
}
