import Foundation
import ReelCore
import ReelStreaming

/// What an item may open besides itself: the closed door for HLS playlists, DASH manifests
/// and everything they name (variant playlists, init segments, media segments, keys).
///
/// - An item opened from `http`/`https` may open only `http`/`https` URLs. `file:`, `data:`,
///   `pipe:`, `subfile:`, `concat:`, `crypto:` and every other protocol are refused.
/// - A local (`file:`) item may open only files under its own directory: `..` may not leave
///   it, and symbolic links are resolved before the check.
/// - An item with another scheme (a test's fake loader) may open only that scheme.
/// - The segment reader's stream (`reel-live:`) may open nothing: its segments are media.
///
/// The ``Limits`` stop documents that would make the demuxer open without end.
/// Pure value code: no I/O except resolving symbolic links of local paths.
public struct NestedAccessPolicy: Sendable, Hashable {
    /// Limits against hostile documents.
    public struct Limits: Sendable, Hashable {
        /// How deep documents may name documents (the item is 0; a master playlist's
        /// variant is 1; its segments are 2).
        public var maxDepth: Int
        /// How many different playlists or manifests one item may open.
        public var maxRenditions: Int
        /// How many entries (segments, variants, keys) one playlist may list.
        public var maxPlaylistEntries: Int
        /// How many bytes one playlist or manifest may have.
        public var maxDocumentBytes: Int64

        /// Limits with these values. The defaults (depth 4, 32 renditions, 20 000 entries,
        /// 4 MiB a document) leave room for real HLS and DASH items and still stop a playlist
        /// that names playlists without end, or one that never ends.
        public init(maxDepth: Int = 4, maxRenditions: Int = 32, maxPlaylistEntries: Int = 20_000,
                    maxDocumentBytes: Int64 = 4 << 20) {
            self.maxDepth = maxDepth
            self.maxRenditions = maxRenditions
            self.maxPlaylistEntries = maxPlaylistEntries
            self.maxDocumentBytes = maxDocumentBytes
        }

        /// The initializer's defaults: what every item is held to unless its opener passes
        /// other limits.
        public static let `default` = Limits()
    }

    /// The item's URL.
    public let item: URL
    /// The limits the nested opens are held to (depth and renditions, checked when a document
    /// is opened; entries and bytes, checked as one is read): past one, the item fails with
    /// ``MediaError/streamLimit(what:limit:url:)``.
    public let limits: Limits
    /// For a local item: its directory with symbolic links resolved.
    private let localRoot: String?

    /// The policy for an item opened from `item`: the item's scheme (for a local item, its
    /// directory, symbolic links resolved now) decides what ``admit(_:)`` lets through.
    public init(item: URL, limits: Limits = .default) {
        self.item = item
        self.limits = limits
        if item.isFileURL {
            localRoot = Self.resolvedPath(item.deletingLastPathComponent().path)
        } else {
            localRoot = nil
        }
    }

    /// The URL to read for `raw` (an absolute URL the demuxer or a playlist names), or why not.
    public func admit(_ raw: String) -> Result<URL, MediaError> {
        let scheme = Self.scheme(of: raw)
        let itemScheme = (item.scheme ?? "").lowercased()
        if let localRoot {
            let path: String
            if let scheme {
                guard scheme == "file", let url = URL(string: raw), url.isFileURL else {
                    return .failure(refuse(raw, "a local item may open only files in its own directory"))
                }
                path = url.path
            } else if raw.hasPrefix("/") {
                path = raw
            } else {
                path = (localRoot as NSString).appendingPathComponent(raw)
            }
            let resolved = Self.resolvedPath(path)
            guard resolved == localRoot || resolved.hasPrefix(localRoot.hasSuffix("/") ? localRoot : localRoot + "/") else {
                return .failure(refuse(raw, "outside the item's directory \(localRoot)"))
            }
            return .success(URL(fileURLWithPath: resolved))
        }
        guard let scheme else {
            return .failure(refuse(raw, "not an absolute URL"))
        }
        // The segment reader's own stream already holds everything it fetched: a segment that
        // names more (a playlist in place of media) opens nothing.
        if itemScheme == LiveMediaLoader.scheme {
            return .failure(refuse(raw, "a segment of a stream Reel schedules may not open anything else"))
        }
        let remote = ["http", "https"]
        let allowed = remote.contains(itemScheme) ? remote : [itemScheme]
        guard allowed.contains(scheme), let url = URL(string: raw), url.host?.isEmpty == false else {
            return .failure(refuse(raw, "an \(allowed.joined(separator: "/")) item may open only \(allowed.joined(separator: "/")) URLs"))
        }
        return .success(url)
    }

    private func refuse(_ raw: String, _ reason: String) -> MediaError {
        let shown = raw.count > 200 ? String(raw.prefix(200)) + "…" : raw
        return .refusedURL(url: shown, item: item, reason: reason)
    }

    /// The scheme (lowercased) when `raw` starts with one (`x:` before any `/`), the way
    /// FFmpeg finds a protocol: `crypto+http:`, `subfile,,…:` and `pipe:` all count.
    static func scheme(of raw: String) -> String? {
        guard let colon = raw.firstIndex(of: ":") else { return nil }
        let head = raw[..<colon]
        if head.contains("/") { return nil }
        return head.lowercased()
    }

    /// `path` with `.`/`..` removed and symbolic links resolved (as far as the path exists).
    static func resolvedPath(_ path: String) -> String {
        let standard = (path as NSString).standardizingPath
        if let real = realpath(standard, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        // A missing file: resolve its directory, keep its name.
        let parent = (standard as NSString).deletingLastPathComponent
        guard parent != standard, !parent.isEmpty else { return standard }
        return (resolvedPath(parent) as NSString).appendingPathComponent((standard as NSString).lastPathComponent)
    }
}

/// Reads a streaming document as it arrives and reports what it names: for an HLS playlist,
/// every URI line and every `URI="…"` attribute; for a DASH manifest only its size is checked
/// (FFmpeg expands its templates). Fed in order; a gap (a seek) stops the scan.
struct DocumentScanner {
    enum Kind { case unknown, hls, dash, media }

    private(set) var kind: Kind = .unknown
    private var head = Data()
    private var pending = Data()
    private(set) var scanned: Int64 = 0
    private(set) var entries = 0
    /// An HLS media playlist that ends (`#EXT-X-ENDLIST`) or says it is VOD: it never changes.
    private(set) var isFinal = false
    /// An HLS media playlist (it lists segments) rather than a master playlist.
    private(set) var listsSegments = false
    private var stopped = false
    /// An HLS playlist's bytes so far (it is at most `maxDocumentBytes`, or the item fails).
    private var document = Data()

    /// An HLS media playlist that may still grow: reloads must reach the origin.
    var isLive: Bool { kind == .hls && listsSegments && !isFinal }

    /// The whole HLS playlist, once, after it was read to its end in order (`nil` for anything
    /// else, for a playlist read with a gap, and after the first call).
    mutating func takeDocument() -> Data? {
        defer { document = Data() }
        guard kind == .hls, !stopped, !document.isEmpty else { return nil }
        return document
    }

    /// Feeds `bytes` read at `offset`; returns the references completed by them.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> [String] {
        guard !stopped, kind != .media else { return [] }
        let end = offset + Int64(bytes.count)
        guard end > scanned else { return [] }
        guard offset <= scanned else { stopped = true; return [] }
        let fresh = UnsafeRawBufferPointer(rebasing: bytes[Int(scanned - offset)...])
        scanned = end
        if kind == .unknown {
            head.append(contentsOf: fresh)
            let text = String(decoding: head.prefix(64), as: UTF8.self).drop { $0 == "\u{FEFF}" || $0.isWhitespace }
            if text.hasPrefix("#EXTM3U") {
                kind = .hls
            } else if text.hasPrefix("<") {
                kind = .dash
            } else if text.count >= 8 || head.count >= 64 {
                kind = .media
                return []
            } else {
                return []
            }
            let buffered = head
            head = Data()
            if kind == .hls { document = buffered }
            return kind == .hls ? lines(buffered) : []
        }
        guard kind == .hls else { return [] }
        let data = Data(fresh)
        document.append(data)
        return lines(data)
    }

    /// The references of a document that ended without a final newline.
    mutating func finish() -> [String] {
        guard kind == .hls, !pending.isEmpty else { return [] }
        let last = pending
        pending = Data()
        return references(in: last)
    }

    private mutating func lines(_ data: Data) -> [String] {
        var found: [String] = []
        var start = data.startIndex
        for index in data.indices where data[index] == UInt8(ascii: "\n") {
            var line = pending
            line.append(data[start..<index])
            pending = Data()
            found += references(in: line)
            start = data.index(after: index)
        }
        pending.append(data[start...])
        // A line without end is no line: keep it bounded.
        if pending.count > 64 * 1024 { pending = Data() }
        return found
    }

    private mutating func references(in line: Data) -> [String] {
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return [] }
        if text.hasPrefix("#EXT-X-ENDLIST") || text.hasPrefix("#EXT-X-PLAYLIST-TYPE:VOD") { isFinal = true }
        if text.hasPrefix("#EXTINF") { listsSegments = true }
        if text.hasPrefix("#") {
            guard let range = text.range(of: "URI=\"") else { return [] }
            let rest = text[range.upperBound...]
            guard let close = rest.firstIndex(of: "\"") else { return [] }
            entries += 1
            return [String(rest[..<close])]
        }
        entries += 1
        return [text]
    }
}
