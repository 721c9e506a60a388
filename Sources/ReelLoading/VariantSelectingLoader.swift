import Foundation
import ReelCore
import Synchronization

/// Starts HLS items on the variant the network can carry: a loader in front of another that
/// answers a master playlist with a copy listing only the chosen variant (and the renditions
/// of its groups), every URI made absolute against where the playlist came from. FFmpeg's HLS
/// demuxer then opens — through `io_open`, the item's loader and the closed door — only that
/// variant's playlist, init segment and segments, instead of every variant's playlist and
/// first segment. Everything else passes through untouched.
///
/// DASH manifests the same way: a manifest is answered with a copy keeping only the chosen video
/// Representation (by the same ``VariantPolicy`` rule over the video Representations'
/// `@bandwidth`) and the lowest-bandwidth audio Representation; every other video and audio
/// Representation (and an AdaptationSet left empty) is removed, the rest kept as written.
///
/// Which documents it looks at: URLs whose path ends in `.m3u8`, `.m3u` or `.mpd`, read from offset 0.
/// Such a document is read whole (at most `maxDocumentBytes`; a longer one passes through and
/// the demuxer's own limits refuse it), then served from memory: one upstream request, as
/// before. A master's choice is kept (the last 64 masters) so every later read of it — a
/// seek in the AVIO buffer, a replay, the preloader and the player — sees the same bytes and
/// the same variant. Media playlists are not kept: a live one must reach the origin at every
/// reload.
///
/// The choice (``VariantPolicy``): the highest `BANDWIDTH` that fits the safety fraction of the
/// ``BandwidthEstimating`` estimate, the lowest when nothing is known. Each choice is told to
/// the observers (the trace's `variant` event).
public final class VariantSelectingLoader: StoringResourceLoader, Sendable {
    public let upstream: any ResourceLoader
    public let bandwidth: (any BandwidthEstimating)?
    public let policy: VariantPolicy
    public let maxDocumentBytes: Int

    private struct Chosen: Sendable {
        var data: Data
        var information: ContentInformation
        var choice: VariantChoice
    }

    private struct State {
        var chosen: [String: Chosen] = [:]
        var order: [String] = []
        var observers: [@Sendable (VariantChoice) -> Void] = []
    }

    private let state = Mutex(State())
    private static let keptMasters = 64

    public init(upstream: any ResourceLoader, bandwidth: (any BandwidthEstimating)?, policy: VariantPolicy = VariantPolicy(),
                maxDocumentBytes: Int = 4 << 20) {
        self.upstream = upstream
        self.bandwidth = bandwidth
        self.policy = policy
        self.maxDocumentBytes = maxDocumentBytes
    }

    /// Calls `observer` with every new choice (on the thread of the read that made it).
    public func addObserver(_ observer: @escaping @Sendable (VariantChoice) -> Void) {
        state.withTrackedLock { $0.observers.append(observer) }
    }

    /// The choice made for `master`, if one was.
    public func choice(for master: URL) -> VariantChoice? {
        state.withTrackedLock { $0.chosen[master.absoluteString]?.choice }
    }

    /// Forgets the choices: the next read of a master chooses again.
    public func forgetChoices() {
        state.withTrackedLock { $0.chosen = [:]; $0.order = [] }
    }

    /// The upstream without its stored copies. Live media playlists are reloaded through it;
    /// a master is never reloaded.
    public var unstored: any ResourceLoader { upstream.unstoredLoader }

    /// Whether reads of `url` are looked at (an HLS playlist or a DASH manifest by its name).
    public static func mayBePlaylist(_ url: URL) -> Bool {
        let ext = url.pathExtension.lowercased()
        return ext == "m3u8" || ext == "m3u" || ext == "mpd"
    }

    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        guard Self.mayBePlaylist(url) else { return upstream.read(url, range: range) }
        if let chosen = state.withTrackedLock({ $0.chosen[url.absoluteString] }) {
            return Self.serve(chosen.data, information: chosen.information, url: url, range: range)
        }
        guard range.offset == 0 else { return upstream.read(url, range: range) }
        let (stream, continuation) = ByteStream.makeStream()
        let task = Task { await self.inspect(url, range: range, continuation: continuation) }
        continuation.onCancel { task.cancel() }
        return stream
    }

    public func contentInformation(for url: URL) async throws -> ContentInformation {
        guard Self.mayBePlaylist(url) else { return try await upstream.contentInformation(for: url) }
        let stream = read(url, range: .all)
        defer { stream.cancel() }
        return try await stream.contentInformation()
    }

    /// Reads the playlist whole, chooses when it is a master, and serves `range` of the result.
    private func inspect(_ url: URL, range: ByteRange, continuation: ByteStream.Continuation) async {
        let source = upstream.read(url, range: .all)
        defer { source.cancel() }
        do {
            let information = try await source.contentInformation()
            var data = Data()
            var iterator = source.makeAsyncIterator()
            var tooLong = (information.length ?? 0) > Int64(maxDocumentBytes)
            while !tooLong, let chunk = try await iterator.next() {
                data.append(chunk)
                tooLong = data.count > maxDocumentBytes
            }
            if tooLong {
                // Passed on as it is: the demuxer's limits say what is wrong with it.
                continuation.respond(with: information)
                var sent = 0
                func send(_ chunk: Data) async throws -> Bool {
                    var chunk = chunk
                    if let length = range.length {
                        let room = Int(length) - sent
                        if room <= 0 { return false }
                        if chunk.count > room { chunk = chunk.prefix(room) }
                    }
                    sent += chunk.count
                    try await continuation.send(chunk)
                    return true
                }
                if try await send(data) {
                    while let chunk = try await iterator.next(), try await send(chunk) {}
                }
                continuation.finish()
                return
            }
            let base = information.finalURL ?? url
            let estimate = bandwidth?.bandwidthEstimate ?? .unknown
            let rewritten: Data
            let choice: VariantChoice
            let tag: String
            if let master = HLSMasterPlaylist(data) {
                let (variant, chosen) = policy.choose(from: master, url: url, base: base, estimate: estimate)
                rewritten = master.keeping(variant, base: base)
                choice = chosen
                tag = "variant-\(variant.index)"
            } else if let (manifest, representation, chosen) = Self.dash(data, url: url, base: base, policy: policy, estimate: estimate),
                      let kept = try? DASHManifest.keeping(data, video: representation.index, audio: manifest.preferredAudio?.index) {
                rewritten = kept
                choice = chosen
                tag = "representation-\(representation.index)"
            } else {
                Self.deliver(data, information: information, url: url, range: range, to: continuation)
                return
            }
            var served = information
            served.length = Int64(rewritten.count)
            served.entityTag = information.entityTag.map { "\($0)-\(tag)" }
            let (kept, observers) = state.withTrackedLock { state -> (Chosen, [@Sendable (VariantChoice) -> Void]) in
                let key = url.absoluteString
                // A read that raced this one chose first: everyone sees that choice.
                if let earlier = state.chosen[key] { return (earlier, []) }
                let chosen = Chosen(data: rewritten, information: served, choice: choice)
                state.chosen[key] = chosen
                state.order.append(key)
                if state.order.count > Self.keptMasters {
                    state.chosen[state.order.removeFirst()] = nil
                }
                return (chosen, state.observers)
            }
            for observer in observers { observer(kept.choice) }
            Self.deliver(kept.data, information: kept.information, url: url, range: range, to: continuation)
        } catch {
            continuation.finish(throwing: error)
        }
    }

    /// A DASH manifest's parse and its video Representation's choice, when `data` is one
    /// with video. One the parser refuses passes through: the player's own reading of it
    /// says what is wrong with it.
    private static func dash(_ data: Data, url: URL, base: URL, policy: VariantPolicy, estimate: BandwidthEstimate)
        -> (DASHManifest, DASHManifest.Representation, VariantChoice)? {
        guard url.pathExtension.lowercased() == "mpd", DASHManifest.looksLikeManifest(data),
              let manifest = try? DASHManifest(data, url: base),
              let (representation, choice) = policy.choose(from: manifest, url: url, estimate: estimate) else { return nil }
        return (manifest, representation, choice)
    }

    private static func serve(_ data: Data, information: ContentInformation, url: URL, range: ByteRange) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream(highWaterMark: max(1 << 20, data.count))
        deliver(data, information: information, url: url, range: range, to: continuation)
        return stream
    }

    private static func deliver(_ data: Data, information: ContentInformation, url: URL, range: ByteRange,
                                to continuation: ByteStream.Continuation) {
        var information = information
        information.length = Int64(data.count)
        continuation.respond(with: information)
        let length = Int64(data.count)
        guard range.offset <= length else {
            continuation.finish(throwing: ResourceLoaderError.rangeNotSatisfiable(url: url, range: range, length: length))
            return
        }
        let end = min(range.end ?? length, length)
        if end > range.offset {
            continuation.yield(data.subdata(in: Int(range.offset)..<Int(end)))
        }
        continuation.finish()
    }
}
