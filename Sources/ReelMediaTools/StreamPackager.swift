import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import ReelCore
import ReelStreaming
import ReelMedia
internal import CFFmpeg

/// Packages a clip as an HLS or DASH stream in a directory, with FFmpeg's `hls` and `dash`
/// muxers and no re-encoding (packets are copied), so a stream plays exactly the frames of
/// the clip it came from. For test fixtures, the demo feed and `reel serve`.
///
/// The clip is read through `loader`, like everything Reel reads; the muxers write the
/// playlist, init segment and segments as files in `directory`.
public enum StreamPackager {
    public enum Format: String, Sendable, CaseIterable {
        /// HLS with fragmented-MP4 segments (`init.mp4`, `seg-N.m4s`).
        case hlsFMP4 = "hls-fmp4"
        /// HLS with MPEG-TS segments (`seg-N.ts`).
        case hlsTS = "hls-ts"
        /// DASH with fragmented-MP4 segments.
        case dash

        /// The name of the playlist or manifest the packager writes.
        public var manifestName: String { self == .dash ? "manifest.mpd" : "index.m3u8" }
    }

    /// Writes `clip` as a `format` stream into `directory` and returns the playlist's or
    /// manifest's file URL. `segmentSeconds` is a target: segments cut at keyframes.
    /// `fragmentSeconds` (DASH only): each segment in fragments of about that length (CMAF
    /// chunks, the parts of low-latency HLS), and an HLS media playlist beside the manifest
    /// (`media_0.m3u8` for the first stream).
    /// Which of a clip's streams a rendition carries.
    public enum Tracks: Sendable, Hashable {
        case videoAndAudio, video, audio
    }

    @discardableResult
    public static func package(_ clip: URL, loader: any ResourceLoader, format: Format, into directory: URL,
                               segmentSeconds: Double = 1, fragmentSeconds: Double? = nil,
                               tracks: Tracks = .videoAndAudio) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let demuxer = try Demuxer(forTool: clip, loader: loader, fastStart: false)
        defer { demuxer.close() }
        guard let input = demuxer.format else { throw MediaError.cancelled }
        let manifest = directory.appendingPathComponent(format.manifestName)
        var output: UnsafeMutablePointer<AVFormatContext>?
        let muxer = format == .dash ? "dash" : "hls"
        try ffcall("avformat_alloc_output_context2", url: manifest) {
            avformat_alloc_output_context2(&output, nil, muxer, manifest.path)
        }
        guard let output else { throw MediaError.encoding("no \(muxer) muxer") }
        defer { avformat_free_context(output) }

        var mapping: [Int32: Int32] = [:]
        let kept = [tracks == .audio ? nil : demuxer.videoStreamIndex, tracks == .video ? nil : demuxer.audioStreamIndex]
        for index in kept.compactMap({ $0 }) {
            guard let source = demuxer.stream(index), let stream = avformat_new_stream(output, nil) else {
                throw MediaError.encoding("avformat_new_stream failed")
            }
            try ffcall("avcodec_parameters_copy", url: manifest) { avcodec_parameters_copy(stream.pointee.codecpar, source.pointee.codecpar) }
            stream.pointee.codecpar.pointee.codec_tag = 0
            stream.pointee.time_base = source.pointee.time_base
            mapping[index] = stream.pointee.index
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let seconds = String(format: "%.3f", segmentSeconds)
        switch format {
        case .hlsFMP4, .hlsTS:
            av_dict_set(&options, "hls_time", seconds, 0)
            av_dict_set(&options, "hls_playlist_type", "vod", 0)
            av_dict_set(&options, "hls_list_size", "0", 0)
            let ext = format == .hlsTS ? "ts" : "m4s"
            av_dict_set(&options, "hls_segment_filename", directory.appendingPathComponent("seg-%d.\(ext)").path, 0)
            if format == .hlsFMP4 {
                av_dict_set(&options, "hls_segment_type", "fmp4", 0)
                av_dict_set(&options, "hls_fmp4_init_filename", "init.mp4", 0)
            }
        case .dash:
            av_dict_set(&options, "seg_duration", seconds, 0)
            av_dict_set(&options, "use_template", "1", 0)
            av_dict_set(&options, "use_timeline", fragmentSeconds == nil ? "1" : "0", 0)
            av_dict_set(&options, "init_seg_name", "init-$RepresentationID$.m4s", 0)
            av_dict_set(&options, "media_seg_name", "chunk-$RepresentationID$-$Number%05d$.m4s", 0)
            if let fragmentSeconds {
                av_dict_set(&options, "frag_type", "duration", 0)
                av_dict_set(&options, "frag_duration", String(format: "%.3f", fragmentSeconds), 0)
                av_dict_set(&options, "hls_playlist", "1", 0)
            }
        }
        try ffcall("avformat_write_header", url: manifest) { avformat_write_header(output, &options) }
        var trailerWritten = false
        defer { if !trailerWritten { av_write_trailer(output) } }
        while let packet = try demuxer.readPacket() {
            guard let target = mapping[packet.streamIndex], let source = demuxer.stream(packet.streamIndex),
                  let stream = output.pointee.streams[Int(target)] else { continue }
            packet.pointer.pointee.stream_index = target
            av_packet_rescale_ts(packet.pointer, source.pointee.time_base, stream.pointee.time_base)
            packet.pointer.pointee.pos = -1
            try ffcall("av_interleaved_write_frame", url: manifest) { av_interleaved_write_frame(output, packet.pointer) }
        }
        trailerWritten = true
        try ffcall("av_write_trailer", url: manifest) { av_write_trailer(output) }
        return manifest
    }

    /// One rendition of a multi-variant stream, as written in its master playlist.
    public struct Rendition: Sendable, Hashable {
        /// Its directory under the stream's (`v0`, `v1`…) and its playlist there.
        public var directory: String
        /// The peak bit rate of its segments (init segment included with the first), bits per second.
        public var bandwidth: Int64
        public var averageBandwidth: Int64
        public var width: Int?
        public var height: Int?

        public var playlist: String { directory + "/index.m3u8" }
    }

    /// Packages each of `clips` (the same content at different sizes or rates) as an HLS
    /// rendition in `directory/v<i>/` and writes `directory/master.m3u8` naming them, lowest
    /// bandwidth first, each with its `BANDWIDTH` (peak segment rate), `AVERAGE-BANDWIDTH` and
    /// `RESOLUTION`. Returns the master playlist's file URL and the renditions.
    /// With `.dash`: the same ladder as one `directory/manifest.mpd` whose video AdaptationSet
    /// has a Representation per clip (see `packageDASHVariants`); the renditions' `playlist` is
    /// then meaningless.
    /// With `separateAudio` (HLS): the variants carry video alone, and the first clip's audio is
    /// one audio rendition (`directory/a0/index.m3u8`, `GROUP-ID="audio"`) every variant names,
    /// as most packagers of a ladder write it; each variant's bandwidth includes the audio's.
    @discardableResult
    public static func packageVariants(_ clips: [URL], loader: any ResourceLoader, format: Format = .hlsFMP4, into directory: URL,
                                       segmentSeconds: Double = 1, separateAudio: Bool = false) throws -> (master: URL, renditions: [Rendition]) {
        if format == .dash {
            return try packageDASHVariants(clips, loader: loader, into: directory, segmentSeconds: segmentSeconds)
        }
        var audio: (peak: Int64, average: Int64)?
        if separateAudio, let first = clips.first {
            let playlist = try package(first, loader: loader, format: format, into: directory.appendingPathComponent("a0", isDirectory: true),
                                       segmentSeconds: segmentSeconds, tracks: .audio)
            audio = try bitRates(of: playlist)
        }
        var renditions: [Rendition] = []
        for (index, clip) in clips.enumerated() {
            let name = "v\(index)"
            let playlist = try package(clip, loader: loader, format: format, into: directory.appendingPathComponent(name, isDirectory: true),
                                       segmentSeconds: segmentSeconds, tracks: separateAudio ? .video : .videoAndAudio)
            var (peak, average) = try bitRates(of: playlist)
            if let audio { (peak, average) = (peak + audio.peak, average + audio.average) }
            let demuxer = try Demuxer(forTool: clip, loader: loader, fastStart: true)
            let video = demuxer.info.videoStream
            demuxer.close()
            renditions.append(Rendition(directory: name, bandwidth: peak, averageBandwidth: average,
                                        width: video?.width, height: video?.height))
        }
        renditions.sort { $0.bandwidth < $1.bandwidth }
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        if audio != nil {
            lines.append("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"main\",DEFAULT=YES,AUTOSELECT=YES,URI=\"a0/index.m3u8\"")
        }
        for rendition in renditions {
            var attributes = "BANDWIDTH=\(rendition.bandwidth),AVERAGE-BANDWIDTH=\(rendition.averageBandwidth)"
            if let width = rendition.width, let height = rendition.height { attributes += ",RESOLUTION=\(width)x\(height)" }
            if audio != nil { attributes += ",AUDIO=\"audio\"" }
            lines.append("#EXT-X-STREAM-INF:" + attributes)
            lines.append(rendition.playlist)
        }
        let master = directory.appendingPathComponent("master.m3u8")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: master)
        return (master, renditions)
    }

    /// DASH: each clip packaged in `directory/v<i>/` by the `dash` muxer, and
    /// `directory/manifest.mpd` naming their video Representations in one AdaptationSet
    /// (ids `v0`, `v1`…, lowest bandwidth first, each with a `BaseURL` of its directory and its
    /// `@bandwidth` the peak segment rate as for HLS) and the first clip's audio (id `a0`).
    private static func packageDASHVariants(_ clips: [URL], loader: any ResourceLoader, into directory: URL,
                                            segmentSeconds: Double) throws -> (master: URL, renditions: [Rendition]) {
        var packaged: [(manifest: URL, rendition: Rendition)] = []
        for (index, clip) in clips.enumerated() {
            let name = "v\(index)"
            let manifest = try package(clip, loader: loader, format: .dash, into: directory.appendingPathComponent(name, isDirectory: true),
                                       segmentSeconds: segmentSeconds)
            let (peak, average) = try dashBitRates(of: manifest)
            let demuxer = try Demuxer(forTool: clip, loader: loader, fastStart: true)
            let video = demuxer.info.videoStream
            demuxer.close()
            packaged.append((manifest, Rendition(directory: name, bandwidth: peak, averageBandwidth: average,
                                                 width: video?.width, height: video?.height)))
        }
        packaged.sort { $0.rendition.bandwidth < $1.rendition.bandwidth }
        guard let first = packaged.first else { throw MediaError.encoding("no clips to package") }
        let document = try XMLDocument(contentsOf: first.manifest, options: [])
        guard let root = document.rootElement(), let period = DASHManifest.children(root, "Period").first,
              let videoSet = DASHManifest.children(period, "AdaptationSet").first(where: { DASHManifest.attribute($0, "contentType") == "video" })
        else { throw MediaError.encoding("the dash muxer wrote no video AdaptationSet") }
        videoSet.attributes = videoSet.attributes?.filter { !["maxWidth", "maxHeight", "maxFrameRate"].contains($0.name ?? "") }
        for representation in DASHManifest.children(videoSet, "Representation") { representation.detach() }
        for (order, entry) in packaged.enumerated() {
            let source = try XMLDocument(contentsOf: entry.manifest, options: [])
            guard let sourcePeriod = source.rootElement().flatMap({ DASHManifest.children($0, "Period").first }) else { continue }
            for set in DASHManifest.children(sourcePeriod, "AdaptationSet") {
                let isVideo = DASHManifest.attribute(set, "contentType") == "video"
                for representation in DASHManifest.children(set, "Representation") {
                    let copy = representation.copy() as! XMLElement
                    let oldID = DASHManifest.attribute(copy, "id") ?? ""
                    for template in DASHManifest.children(copy, "SegmentTemplate") {
                        for key in ["initialization", "media"] {
                            if let value = DASHManifest.attribute(template, key) {
                                DASHManifest.attributeNode(template, key)?.stringValue = value.replacingOccurrences(of: "$RepresentationID$", with: oldID)
                            }
                        }
                    }
                    copy.insertChild(XMLElement(name: "BaseURL", stringValue: entry.rendition.directory + "/"), at: 0)
                    if isVideo {
                        DASHManifest.attributeNode(copy, "id")?.stringValue = "v\(order)"
                        DASHManifest.attributeNode(copy, "bandwidth")?.stringValue = String(entry.rendition.bandwidth)
                        videoSet.addChild(copy)
                    } else if order == 0, let audioSet = DASHManifest.children(period, "AdaptationSet").first(where: {
                        DASHManifest.attribute($0, "contentType") == "audio" }) {
                        for old in DASHManifest.children(audioSet, "Representation") { old.detach() }
                        DASHManifest.attributeNode(copy, "id")?.stringValue = "a0"
                        audioSet.addChild(copy)
                    }
                }
            }
        }
        let manifest = directory.appendingPathComponent("manifest.mpd")
        try document.xmlData(options: .nodePrettyPrint).write(to: manifest)
        return (manifest, packaged.map(\.rendition))
    }

    /// The peak and average bit rates of a packaged DASH manifest's video segments.
    static func dashBitRates(of manifest: URL) throws -> (peak: Int64, average: Int64) {
        let parsed = try DASHManifest(Data(contentsOf: manifest), url: manifest)
        guard let video = parsed.videos.first else { return (0, 0) }
        func size(_ url: URL) -> Int64 {
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        }
        var carried = video.initialization.map { size($0.url) } ?? 0
        var peak = 0.0
        var totalBytes: Int64 = 0
        var totalSeconds = 0.0
        for segment in video.segments where segment.duration > 0 {
            let bytes = size(segment.url) + carried
            carried = 0
            peak = max(peak, Double(bytes) * 8 / segment.duration)
            totalBytes += bytes
            totalSeconds += segment.duration
        }
        let average = totalSeconds > 0 ? Double(totalBytes) * 8 / totalSeconds : 0
        return (Int64(peak.rounded(.up)), Int64(average.rounded(.up)))
    }

    /// The peak and average bit rates of a packaged media playlist's segments.
    static func bitRates(of playlist: URL) throws -> (peak: Int64, average: Int64) {
        let text = try String(contentsOf: playlist, encoding: .utf8)
        let folder = playlist.deletingLastPathComponent()
        func size(_ name: String) -> Int64 {
            let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
            return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        }
        var carried: Int64 = 0
        var duration: Double?
        var peak = 0.0
        var totalBytes: Int64 = 0
        var totalSeconds = 0.0
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#EXT-X-MAP:"), let start = line.range(of: "URI=\""),
               let end = line[start.upperBound...].firstIndex(of: "\"") {
                carried += size(String(line[start.upperBound..<end]))
            } else if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst("#EXTINF:".count).split(separator: ",").first ?? "")
            } else if !line.isEmpty, !line.hasPrefix("#"), let seconds = duration, seconds > 0 {
                let bytes = size(line) + carried
                carried = 0
                peak = max(peak, Double(bytes) * 8 / seconds)
                totalBytes += bytes
                totalSeconds += seconds
                duration = nil
            }
        }
        let average = totalSeconds > 0 ? Double(totalBytes) * 8 / totalSeconds : 0
        return (Int64(peak.rounded(.up)), Int64(average.rounded(.up)))
    }
}
