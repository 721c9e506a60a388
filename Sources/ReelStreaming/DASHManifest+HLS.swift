import Foundation

/// A DASH manifest said as HLS: a master naming one media playlist per video Representation
/// (and the preferred audio one as an `#EXT-X-MEDIA` rendition every variant names), each
/// listing its initialization segment (`#EXT-X-MAP`) and segments by absolute URL, with the
/// manifest's durations. What FFmpeg's HLS demuxer plays a DASH item from (ReelMedia's
/// `DASHAsHLS`) and what Reel's scheduler reads one from (``HLSSchedulingLoader``); the
/// playlists live in memory under names beside the manifest and are never requested.
extension DASHManifest {
    /// Where the media playlist of the Representation at `index` lives (in memory): beside the
    /// manifest, named after it (`manifest.mpd` → `manifest.reel-dash-0.m3u8`; a manifest with
    /// no name or no extension, or a query, gets a plain name in its directory).
    public static func hlsPlaylistURL(for manifest: URL, index: Int) -> URL {
        var stem = (manifest.lastPathComponent as NSString).deletingPathExtension
        if stem.isEmpty || stem == "/" { stem = "manifest" }
        stem = stem.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }
        if stem.isEmpty { stem = "manifest" }
        let name = "\(stem).reel-dash-\(index).m3u8"
        if manifest.hasDirectoryPath {
            return manifest.appendingPathComponent(name)
        }
        return URL(string: name, relativeTo: manifest)?.absoluteURL ?? manifest.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Whether `url` names one of those playlists.
    public static func isHLSPlaylist(_ url: URL) -> Bool { url.lastPathComponent.contains(".reel-dash-") }

    /// The Representations played: every video one and the preferred audio one.
    public var playedRepresentations: [Representation] { playedRepresentations(audio: preferredAudio) }

    /// Every video Representation and `audio`.
    public func playedRepresentations(audio: Representation?) -> [Representation] {
        videos + (audio.map { [$0] } ?? [])
    }

    /// The master (at `manifest`) and the media playlists of ``playedRepresentations``, by
    /// absolute URL string. Without a video Representation, the master names the audio alone.
    public func hlsDocuments(manifest: URL) -> [String: Data] { hlsDocuments(manifest: manifest, audio: preferredAudio) }

    /// The same with `audio` played in place of the preferred audio Representation.
    public func hlsDocuments(manifest: URL, audio: Representation?) -> [String: Data] {
        let videos = self.videos
        func name(_ representation: Representation) -> URL { Self.hlsPlaylistURL(for: manifest, index: representation.index) }
        var documents: [String: Data] = [:]
        for representation in playedRepresentations(audio: audio) {
            documents[name(representation).absoluteString] = Self.hlsMediaPlaylist(representation)
        }
        var master = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        if let audio, !videos.isEmpty {
            master.append("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"\(Self.quoted(audio.id))\",DEFAULT=YES,AUTOSELECT=YES,URI=\"\(name(audio).absoluteString)\"")
        }
        for representation in videos.isEmpty ? [audio].compactMap({ $0 }) : videos {
            var attributes = "BANDWIDTH=\(max(1, representation.bandwidth))"
            if let resolution = representation.resolution { attributes += ",RESOLUTION=\(resolution)" }
            if audio != nil, !videos.isEmpty { attributes += ",AUDIO=\"audio\"" }
            master.append("#EXT-X-STREAM-INF:" + attributes)
            master.append(name(representation).absoluteString)
        }
        documents[manifest.absoluteString] = Data((master.joined(separator: "\n") + "\n").utf8)
        return documents
    }

    /// One Representation's media playlist (with an end: Reel plays static manifests).
    public static func hlsMediaPlaylist(_ representation: Representation) -> Data {
        let target = max(1, Int((representation.segments.map(\.duration).max() ?? 1).rounded(.up)))
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(target)", "#EXT-X-MEDIA-SEQUENCE:0",
                     "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-INDEPENDENT-SEGMENTS"]
        if let initialization = representation.initialization {
            var map = "#EXT-X-MAP:URI=\"\(initialization.url.absoluteString)\""
            if let range = initialization.range, let length = range.length { map += ",BYTERANGE=\"\(length)@\(range.offset)\"" }
            lines.append(map)
        }
        for segment in representation.segments {
            lines.append("#EXTINF:\(String(format: "%.6f", segment.duration)),")
            if let range = segment.range, let length = range.length { lines.append("#EXT-X-BYTERANGE:\(length)@\(range.offset)") }
            lines.append(segment.url.absoluteString)
        }
        lines.append("#EXT-X-ENDLIST")
        return Data((lines.joined(separator: "\n") + "\n").utf8)
    }

    private static func quoted(_ text: String) -> String {
        String(text.filter { $0 != "\"" && $0 != "\n" && $0 != "\r" }.prefix(64))
    }
}
