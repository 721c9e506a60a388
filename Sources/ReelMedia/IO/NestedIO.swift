import Foundation
import ReelCore
import ReelStreaming
import Synchronization
internal import CFFmpeg

/// The nested opens of one item: every playlist, manifest, init segment, media segment and
/// key that libavformat's HLS and DASH demuxers open arrives here through `io_open`, is
/// checked against the item's ``NestedAccessPolicy``, and is read through the item's
/// ``ResourceLoader`` by its own ``AVIOBridge``. FFmpeg never opens a URL or a file itself.
///
/// Relative references are resolved against the document that names them: FFmpeg resolves
/// them against the URL it asked for, and when that document came from elsewhere (a
/// redirect) the bridge that read it maps FFmpeg's name to the one resolved against where
/// the bytes really came from.
///
/// Threads: `io_open`/`io_close` and the bridges' reads run on the demux thread; `interruptAll`,
/// `failure` and `closeAll` come from any thread. Everything mutable is in `state`.
final class NestedIO: Sendable {
    let policy: NestedAccessPolicy
    let loader: any ResourceLoader
    let io: IOActivity?

    private struct State {
        /// Open nested bridges by their AVIOContext's address (FFmpeg holds only the pointer).
        var children: [UInt: AVIOBridge] = [:]
        var interrupted = false
        /// The first refusal, limit or nested loading error: it fails the item.
        var failure: MediaError?
        /// FFmpeg's absolute name of a reference → the URL to read and its depth.
        var references: [String: (url: String, depth: Int)] = [:]
        /// Playlists and manifests read so far.
        var documents: Set<String> = []
        /// Live playlists: reloads are read past the cache.
        var live: Set<String> = []
        var opens = 0
        /// The master's subtitle renditions (nil until a master was read).
        var subtitleRenditions: [(rendition: HLSMasterPlaylist.SubtitleRendition, url: URL)]?
        /// What closed nested bridges read.
        var closedBytes: Int64 = 0
        var closedRequests = 0
        /// A master named more than ``maxStartedPlaylists`` playlists: no head start for the item.
        var noHeadStart = false
        var closed = false
    }

    /// A master naming more playlists than this gets no head start, nor do its playlists (the
    /// variant chooser's copy names one variant and its renditions; a hostile one thousands).
    static let maxStartedPlaylists = 8

    private let state = Mutex(State())

    /// A DASH item's manifest reader: what it read counts with the nested reads.
    let dash: DASHAsHLS?
    /// The item's head start: reads started before the demuxer opens them (by
    /// ``headStart(_:by:)`` here, or by the DASH translation), taken by ``open``.
    let readsAhead: ReadsAhead

    init(policy: NestedAccessPolicy, loader: any ResourceLoader, io: IOActivity?, dash: DASHAsHLS? = nil) {
        self.policy = policy
        self.loader = loader
        self.io = io
        self.dash = dash
        readsAhead = dash?.readsAhead ?? ReadsAhead()
    }

    /// The error that fails the item, if a nested open or read was refused or failed (or a
    /// DASH manifest was refused).
    var failure: MediaError? { state.withTrackedLock { $0.failure } ?? dash?.failure }

    /// Bytes read and requests made by every nested bridge, open or closed.
    var statistics: (bytesRead: Int64, requests: Int) {
        let (closed, open) = state.withTrackedLock { state in
            ((state.closedBytes, state.closedRequests), Array(state.children.values))
        }
        var total = closed
        if let manifest = dash?.manifestStatistics {
            total.0 += manifest.bytesRead
            total.1 += manifest.requests
        }
        for child in open {
            let own = child.ownStatistics
            total.0 += own.bytesRead
            total.1 += own.requests
        }
        return (total.0, total.1)
    }

    /// How many nested resources were opened.
    var openCount: Int { state.withTrackedLock { $0.opens } }

    /// Records `error` (the first one wins) and returns the one recorded.
    @discardableResult
    func fail(_ error: MediaError) -> MediaError {
        state.withTrackedLock { state in
            if state.failure == nil { state.failure = error }
            return state.failure!
        }
    }

    func interruptAll() {
        let children = state.withTrackedLock { state -> [AVIOBridge] in
            state.interrupted = true
            return Array(state.children.values)
        }
        for child in children { child.interrupt() }
    }

    func resumeAll() {
        let children = state.withTrackedLock { state -> [AVIOBridge] in
            state.interrupted = false
            return Array(state.children.values)
        }
        for child in children { child.resume() }
    }

    /// Closes what the demuxer left open (after the format context is closed), and cancels the
    /// reads started ahead that it never took.
    func closeAll() {
        dash?.close()
        let unused = readsAhead.close()
        let children = state.withTrackedLock { state -> [AVIOBridge] in
            defer {
                state.children = [:]
                state.closed = true
            }
            // An unused read ahead was still a request.
            state.closedRequests += unused
            return Array(state.children.values)
        }
        for child in children {
            let own = child.ownStatistics
            state.withTrackedLock { state in
                state.closedBytes += own.bytesRead
                state.closedRequests += own.requests
            }
            child.close()
        }
    }

    /// Marks a playlist as live: its next reads go to the origin, not to stored copies.
    func noteLive(_ url: URL) {
        state.withTrackedLock { _ = $0.live.insert(Self.key(url.absoluteString)) }
    }

    /// Counts a playlist or manifest; `nil` while within the renditions limit.
    func countDocument(_ url: URL) -> MediaError? {
        let limit = policy.limits.maxRenditions
        let count = state.withTrackedLock { state -> Int in
            state.documents.insert(Self.key(url.absoluteString))
            return state.documents.count
        }
        // The item's own document is not a rendition.
        return count > limit + 1 ? fail(.streamLimit(what: "number of playlists", limit: limit, url: policy.item)) : nil
    }

    /// Checks the references a playlist read by `bridge` names, and remembers where each leads.
    func scanned(_ references: [String], by bridge: AVIOBridge) -> MediaError? {
        guard !references.isEmpty else { return nil }
        let requested = bridge.url
        let final = bridge.finalURL
        let depth = bridge.depth + 1
        var mapped: [(String, String)] = []
        for reference in references {
            guard let name = Self.name(of: reference, in: final) else {
                return fail(.refusedURL(url: reference, item: policy.item, reason: "not a URL"))
            }
            if case .failure(let refusal) = policy.admit(name) { return fail(refusal) }
            let asked = URL(string: reference, relativeTo: requested)?.absoluteURL.absoluteString ?? name
            mapped.append((Self.key(asked), name))
        }
        if depth > policy.limits.maxDepth {
            return fail(.streamLimit(what: "nesting depth", limit: policy.limits.maxDepth, url: requested))
        }
        state.withTrackedLock { state in
            for (asked, name) in mapped { state.references[asked] = (name, depth) }
        }
        return nil
    }

    /// What `reference`, named by a document that came from `final`, is checked and opened
    /// as: the resolved URL, or the reference itself when it has a scheme (a local item's
    /// playlist may name a path; the policy checks the resolved URL).
    private static func name(of reference: String, in final: URL) -> String? {
        guard let target = URL(string: reference, relativeTo: final)?.absoluteURL
                ?? URL(string: reference.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed) ?? "", relativeTo: final)?.absoluteURL else {
            return nil
        }
        return NestedAccessPolicy.scheme(of: reference) == nil ? target.absoluteString : reference
    }

    // MARK: Head start

    /// A playlist `bridge` read to its end: what the HLS demuxer opens next, one round trip after
    /// another, starts now, side by side, through the same loader and behind the same door, and
    /// waits for the demuxer's open of the same URL and range (handed over whole, so nothing is
    /// read twice; cancelled at close if never taken).
    ///
    /// - A master: every variant's playlist and every audio or video rendition's (the demuxer
    ///   reads them all before anything else). One naming more than ``maxStartedPlaylists``
    ///   turns the head start off for the item.
    /// - A media playlist that will not change (`#EXT-X-ENDLIST` or VOD): its first segment's
    ///   init section (`#EXT-X-MAP`) and the first segment, byte ranges exactly as the demuxer
    ///   will ask for them. A live playlist gets none: the demuxer starts near its live edge.
    ///
    /// Nothing the policy refuses, nothing deeper than the depth limit, nothing after a failure
    /// or the close, and nothing twice (``ReadsAhead``). A DASH item's are started by ``DASHAsHLS``,
    /// into the same ``ReadsAhead``.
    func headStart(_ document: Data, by bridge: AVIOBridge) {
        guard dash == nil else { return }
        let depth = bridge.depth + 1
        guard depth <= policy.limits.maxDepth,
              !state.withTrackedLock({ $0.closed || $0.noHeadStart || $0.failure != nil }) else { return }
        var parts: [(reference: String, range: ByteRange)] = []
        if let master = HLSMasterPlaylist(document) {
            noteSubtitleRenditions(master, base: bridge.finalURL)
            let playlists = master.variants.map(\.uri) + master.audioVideoRenditions
            guard playlists.count <= Self.maxStartedPlaylists else {
                state.withTrackedLock { $0.noHeadStart = true }
                return
            }
            parts = playlists.map { ($0, ByteRange.all) }
        } else if let media = HLSMediaPlaylist(document), media.isFinal {
            parts = [media.initSection, media.segments.first?.resource].compactMap { $0 }.map { ($0.uri, $0.range ?? .all) }
        }
        let final = bridge.finalURL
        for part in parts {
            guard let name = Self.name(of: part.reference, in: final),
                  case .success(let url) = policy.admit(name) else { continue }
            let wanted = state.withTrackedLock { state -> Bool in
                !state.closed && !state.noHeadStart && state.failure == nil
                    && !state.live.contains(Self.key(url.absoluteString))
            }
            guard wanted else { continue }
            readsAhead.start(url, range: part.range, through: loader)
        }
    }

    /// The master's subtitle renditions, their playlists resolved and admitted by the policy:
    /// what the engine reads captions from. The first master seen counts.
    private func noteSubtitleRenditions(_ master: HLSMasterPlaylist, base: URL) {
        let found = Self.subtitleRenditions(of: master, base: base, policy: policy)
        state.withTrackedLock { state in
            if state.subtitleRenditions == nil { state.subtitleRenditions = found }
        }
    }

    /// `master`'s subtitle renditions (at most the policy's renditions limit), their playlists
    /// resolved against `base` and admitted by `policy`.
    static func subtitleRenditions(of master: HLSMasterPlaylist, base: URL,
                                   policy: NestedAccessPolicy) -> [(rendition: HLSMasterPlaylist.SubtitleRendition, url: URL)] {
        master.subtitleRenditions.prefix(policy.limits.maxRenditions).compactMap { rendition in
            guard let name = name(of: rendition.uri, in: base), case .success(let url) = policy.admit(name) else { return nil }
            return (rendition, url)
        }
    }

    /// The item's HLS subtitle renditions (empty for anything else), once its master was read.
    var subtitleRenditions: [(rendition: HLSMasterPlaylist.SubtitleRendition, url: URL)] {
        state.withTrackedLock { $0.subtitleRenditions ?? [] }
    }

    // MARK: io_open / io_close

    fileprivate func open(_ raw: String, options: UnsafeMutablePointer<OpaquePointer?>?,
                          into pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>) -> Int32 {
        let (interrupted, known, failed) = state.withTrackedLock { state in
            (state.interrupted, state.references[Self.key(raw)], state.failure != nil)
        }
        let isLive = state.withTrackedLock { $0.live.contains(Self.key(known?.url ?? raw)) }
        if interrupted { return AVERROR_EXIT_CODE }
        if failed { return reel_averror(EACCES) }
        let name = known?.url ?? raw
        let depth = known?.depth ?? 1
        if depth > policy.limits.maxDepth {
            fail(.streamLimit(what: "nesting depth", limit: policy.limits.maxDepth, url: policy.item))
            return reel_averror(EACCES)
        }
        let url: URL
        switch policy.admit(name) {
        case .success(let admitted): url = admitted
        case .failure(let refusal):
            fail(refusal)
            return reel_averror(EACCES)
        }
        var start: Int64 = 0
        var end: Int64?
        if let options, let dictionary = options.pointee {
            if let entry = av_dict_get(dictionary, "offset", nil, 0), let value = entry.pointee.value {
                start = max(0, Int64(String(cString: value)) ?? 0)
            }
            if let entry = av_dict_get(dictionary, "end_offset", nil, 0), let value = entry.pointee.value,
               let parsed = Int64(String(cString: value)), parsed > start {
                end = parsed
            }
        }
        // A live playlist's reload is never one read ahead.
        let started = isLive ? nil : readsAhead.take(url, offset: start, end: end)
        let child: AVIOBridge
        do {
            child = try AVIOBridge(url: url, loader: isLive ? loader.unstoredLoader : loader, hooks: .init(io: io), nested: self, depth: depth,
                                   isNested: true, startOffset: start, rangeEnd: end, started: started)
        } catch {
            return reel_averror(ENOMEM)
        }
        guard let context = child.context else { return reel_averror(ENOMEM) }
        let key = UInt(bitPattern: context)
        let stillOpen = state.withTrackedLock { state -> Bool in
            guard !state.interrupted else { return false }
            state.children[key] = child
            state.opens += 1
            return true
        }
        guard stillOpen else {
            child.close()
            return AVERROR_EXIT_CODE
        }
        let code = child.openNow()
        if code < 0 {
            let own = child.ownStatistics
            state.withTrackedLock { state in
                state.children.removeValue(forKey: key)
                state.closedBytes += own.bytesRead
                state.closedRequests += own.requests
            }
            child.close()
            return code
        }
        pb.pointee = context
        return 0
    }

    fileprivate func close(_ context: UnsafeMutablePointer<AVIOContext>) -> Int32 {
        let child = state.withTrackedLock { $0.children.removeValue(forKey: UInt(bitPattern: context)) }
        // A context that is not ours is never expected; it is left alone rather than freed wrongly.
        guard let child else { return 0 }
        let own = child.ownStatistics
        state.withTrackedLock { state in
            state.closedBytes += own.bytesRead
            state.closedRequests += own.requests
        }
        child.close()
        return 0
    }

    /// Installs the nested-open callbacks on `format`.
    func install(on format: UnsafeMutablePointer<AVFormatContext>) {
        format.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        reel_set_io_callbacks(format, nestedOpen, nestedClose)
    }

    /// The name a URL is looked up by (FFmpeg and Foundation resolve `./` and `..` alike).
    static func key(_ raw: String) -> String {
        URL(string: raw)?.standardized.absoluteString ?? raw
    }
}

private func nestedOpen(_ s: UnsafeMutablePointer<AVFormatContext>, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>,
                        _ url: UnsafePointer<CChar>, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let opaque = s.pointee.opaque else { return reel_averror(EACCES) }
    let nested = Unmanaged<NestedIO>.fromOpaque(opaque).takeUnretainedValue()
    // Nothing is ever written.
    if flags & AVIO_FLAG_WRITE != 0 {
        nested.fail(.refusedURL(url: String(cString: url), item: nested.policy.item, reason: "writing is not allowed"))
        return reel_averror(EACCES)
    }
    return nested.open(String(cString: url), options: options, into: pb)
}

private func nestedClose(_ s: UnsafeMutablePointer<AVFormatContext>, _ pb: UnsafeMutablePointer<AVIOContext>?) -> Int32 {
    guard let pb else { return 0 }
    guard let opaque = s.pointee.opaque else { return 0 }
    let nested = Unmanaged<NestedIO>.fromOpaque(opaque).takeUnretainedValue()
    return nested.close(pb)
}
