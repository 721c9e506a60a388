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
/// Which documents it looks at: what ``StreamingFormat`` finds HLS or DASH — by the server's
/// `Content-Type` and the first bytes, the name only as a hint. A read from offset 0 of a URL
/// named like a playlist or manifest (`.m3u8`, `.m3u`, `.mpd`) is one; a whole read of a URL
/// with no such name and no media extension (`/play/123`, `/manifest`) is looked at first: its
/// content information and first bytes decide, and media passes on through (the URL is then
/// remembered as media, and later reads go straight upstream). A URL named like media (`.mp4`)
/// passes straight through; the player still tells its format by its bytes, and plays it, but
/// without a variant choice. A document is read whole (at most `maxDocumentBytes`; a longer one passes through and
/// the demuxer's own limits refuse it), then served from memory. Reads of one document that
/// overlap — the player's header probe and the demuxer's read, the preloader and the player —
/// share one upstream request and one choice; the probe (``contentInformation(for:)``) waits
/// for the whole document, so the read after it is served from the choice. A master's choice
/// is kept (the last 64 masters) so every later read of it — a seek in the AVIO buffer, a replay, the preloader and the player — sees the same bytes and
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
        /// The document as the origin published it, before the choice rewrote it.
        var published: Data
    }

    /// What reading a document whole found.
    private enum Inspection: Sendable {
        /// The document to serve: a master's rewritten copy, or a media playlist as it came.
        case document(Data, ContentInformation)
        /// Longer than `maxDocumentBytes`: readers go to the upstream themselves.
        case tooLong
    }

    /// One read of a document shared by every reader that asks for it meanwhile (the
    /// header probe, the demuxer, the preloader): one upstream request, one choice.
    private struct InFlight {
        var task: Task<Inspection, any Error>
        /// Readers still waiting for it; when the last one leaves, it is cancelled.
        var waiters: Int
    }

    private struct State {
        var chosen: [String: Chosen] = [:]
        var order: [String] = []
        var inFlight: [String: InFlight] = [:]
        var observers: [@Sendable (VariantChoice) -> Void] = []
        /// URLs whose content said media (the last ``keptMedia``): read straight upstream.
        var media: Set<String> = []
        var mediaOrder: [String] = []
    }

    private let state = Mutex(State())
    private static let keptMasters = 64
    private static let keptMedia = 256

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

    /// The master or manifest `url` as its origin published it (every variant), once a read of
    /// it chose: a reader that schedules segments itself needs the whole ladder without a
    /// second request.
    public func published(_ url: URL) -> Data? {
        state.withTrackedLock { $0.chosen[url.absoluteString]?.published }
    }

    /// Forgets the choices: the next read of a master chooses again.
    public func forgetChoices() {
        state.withTrackedLock { $0.chosen = [:]; $0.order = [] }
    }

    /// The upstream without its stored copies. Live media playlists are reloaded through it;
    /// a master is never reloaded.
    public var unstored: any ResourceLoader { upstream.unstoredLoader }

    /// Whether `url` is named like an HLS playlist or a DASH manifest (``StreamingFormat/fromName(_:)``).
    public static func mayBePlaylist(_ url: URL) -> Bool {
        let named = StreamingFormat.fromName(url)
        return named == .hls || named == .dash
    }

    public func read(_ url: URL, range: ByteRange) -> ByteStream {
        if let chosen = state.withTrackedLock({ $0.chosen[url.absoluteString] }) {
            return Self.serve(chosen.data, information: chosen.information, url: url, range: range)
        }
        guard range.offset == 0 else { return upstream.read(url, range: range) }
        switch StreamingFormat.fromName(url) {
        case .hls, .dash:
            return document(url, range: range, started: nil)
        case .other:
            return upstream.read(url, range: range)
        case nil:
            let known = state.withTrackedLock { $0.media.contains(url.absoluteString) }
            guard range == .all, !known else { return upstream.read(url, range: range) }
            return sniffed(url)
        }
    }

    /// A whole read of a URL whose name says nothing: its content information and first bytes
    /// say whether it is a playlist or manifest (read whole and chosen from, like a named one,
    /// from this same read) or media (passed on as it comes).
    private func sniffed(_ url: URL) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream()
        let task = Task {
            let source = self.upstream.read(url, range: .all)
            let format: StreamingFormat
            do {
                let information = try await source.contentInformation()
                format = try await StreamingFormat.detect(contentType: information.contentType, name: information.finalURL ?? url) {
                    try await source.prefix(atLeast: $0, atMost: StreamingFormat.sniffLimit)
                }
            } catch {
                source.cancel()
                continuation.finish(throwing: error)
                return
            }
            do {
                if format == .other {
                    self.rememberMedia(url)
                    try await Self.relay(source, to: continuation)
                } else {
                    // The read is the document's now (shared with anyone who joins it).
                    try await Self.relay(self.document(url, range: .all, started: source), to: continuation)
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onCancel { task.cancel() }
        return stream
    }

    private func rememberMedia(_ url: URL) {
        let key = url.absoluteString
        state.withTrackedLock { state in
            guard state.media.insert(key).inserted else { return }
            state.mediaOrder.append(key)
            if state.mediaOrder.count > Self.keptMedia { state.media.remove(state.mediaOrder.removeFirst()) }
        }
    }

    /// A read of the playlist or manifest at `url`: read whole once (from `started`, a whole
    /// read under way, when given) and served from the choice.
    private func document(_ url: URL, range: ByteRange, started: ByteStream?) -> ByteStream {
        let (stream, continuation) = ByteStream.makeStream()
        let inspection = join(url, started: started)
        let departure = Departure { self.leave(url, inspection) }
        let task = Task {
            defer { departure.run() }
            do {
                switch try await inspection.value {
                case .document(let data, let information):
                    Self.deliver(data, information: information, url: url, range: range, to: continuation)
                case .tooLong:
                    // Passed on as it is: the demuxer's own limits say what is wrong with it.
                    try await Self.relay(self.upstream.read(url, range: range), to: continuation)
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onCancel {
            task.cancel()
            departure.run()
        }
        return stream
    }

    /// A playlist's information is that of what ``read(_:range:)`` serves, so the probe waits
    /// for the whole document (and the choice) instead of leaving after the headers: the
    /// demuxer's read that follows is then served from the choice, with no second request.
    public func contentInformation(for url: URL) async throws -> ContentInformation {
        if let chosen = state.withTrackedLock({ $0.chosen[url.absoluteString] }) {
            var information = chosen.information
            information.length = Int64(chosen.data.count)
            return information
        }
        guard Self.mayBePlaylist(url) else { return try await upstream.contentInformation(for: url) }
        let inspection = join(url, started: nil)
        let departure = Departure { self.leave(url, inspection) }
        defer { departure.run() }
        let found = try await withTaskCancellationHandler {
            try await inspection.value
        } onCancel: {
            departure.run()
        }
        switch found {
        case .document(let data, var information):
            information.length = Int64(data.count)
            return information
        case .tooLong:
            return try await upstream.contentInformation(for: url)
        }
    }

    /// The read of `url` under way, joined (`started` is then not needed), or a new one.
    private func join(_ url: URL, started: ByteStream?) -> Task<Inspection, any Error> {
        let key = url.absoluteString
        let (task, unused) = state.withTrackedLock { state -> (Task<Inspection, any Error>, ByteStream?) in
            if var running = state.inFlight[key] {
                running.waiters += 1
                state.inFlight[key] = running
                return (running.task, started)
            }
            let task = Task { try await self.inspect(url, started: started) }
            state.inFlight[key] = InFlight(task: task, waiters: 1)
            return (task, nil)
        }
        unused?.cancel()
        return task
    }

    /// A reader is done with `task`: the last one to leave ends it (finished or not), so a
    /// later read starts afresh (a live media playlist reloads).
    private func leave(_ url: URL, _ task: Task<Inspection, any Error>) {
        let key = url.absoluteString
        let abandoned: Task<Inspection, any Error>? = state.withTrackedLock { state in
            guard var running = state.inFlight[key], running.task == task else { return nil }
            running.waiters -= 1
            if running.waiters > 0 {
                state.inFlight[key] = running
                return nil
            }
            state.inFlight[key] = nil
            return running.task
        }
        abandoned?.cancel()
    }

    /// Reads the playlist whole and chooses when it is a master.
    private func inspect(_ url: URL, started: ByteStream?) async throws -> Inspection {
        let source = started ?? upstream.read(url, range: .all)
        defer { source.cancel() }
        let information = try await source.contentInformation()
        var data = Data()
        if (information.length ?? 0) > Int64(maxDocumentBytes) { return .tooLong }
        for try await chunk in source {
            data.append(chunk)
            if data.count > maxDocumentBytes { return .tooLong }
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
        } else if StreamingFormat.decide(contentType: information.contentType, head: data, name: url) == .dash,
                  let (manifest, representation, chosen) = Self.dash(data, url: url, base: base, policy: policy, estimate: estimate),
                  let kept = try? DASHManifest.keeping(data, video: representation.index, audio: manifest.preferredAudio?.index) {
            rewritten = kept
            choice = chosen
            tag = "representation-\(representation.index)"
        } else {
            return .document(data, information)
        }
        var served = information
        served.length = Int64(rewritten.count)
        served.entityTag = information.entityTag.map { "\($0)-\(tag)" }
        let (kept, observers) = state.withTrackedLock { state -> (Chosen, [@Sendable (VariantChoice) -> Void]) in
            let key = url.absoluteString
            // A read that raced this one chose first: everyone sees that choice.
            if let earlier = state.chosen[key] { return (earlier, []) }
            let chosen = Chosen(data: rewritten, information: served, choice: choice, published: data)
            state.chosen[key] = chosen
            state.order.append(key)
            if state.order.count > Self.keptMasters {
                state.chosen[state.order.removeFirst()] = nil
            }
            return (chosen, state.observers)
        }
        for observer in observers { observer(kept.choice) }
        return .document(kept.data, kept.information)
    }

    /// A DASH manifest's parse and its video Representation's choice, when `data` is one
    /// with video. One the parser refuses passes through: the player's own reading of it
    /// says what is wrong with it.
    private static func dash(_ data: Data, url: URL, base: URL, policy: VariantPolicy, estimate: BandwidthEstimate)
        -> (DASHManifest, DASHManifest.Representation, VariantChoice)? {
        guard let manifest = try? DASHManifest(data, url: base),
              let (representation, choice) = policy.choose(from: manifest, url: url, estimate: estimate) else { return nil }
        return (manifest, representation, choice)
    }

    /// Passes `source` on to `continuation`, headers and bytes, at the reader's pace.
    private static func relay(_ source: ByteStream, to continuation: ByteStream.Continuation) async throws {
        defer { source.cancel() }
        continuation.respond(with: try await source.contentInformation())
        for try await chunk in source {
            try await continuation.send(chunk)
        }
        continuation.finish()
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

/// Runs its action once, from whichever path gets there first (a reader's end or its cancel).
private final class Departure: Sendable {
    private let action: Mutex<(@Sendable () -> Void)?>

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = Mutex(action)
    }

    func run() {
        let action = self.action.withTrackedLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }
}
