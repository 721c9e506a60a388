import Foundation
import ReelCore
import ReelStreaming
import Synchronization
// `package`: the stream packager (ReelMediaTools) remuxes what this reads.
package import CFFmpeg

/// An open container: libavformat reading through an ``AVIOBridge``.
///
/// `@unchecked`: it wraps an `AVFormatContext`, used by the demux thread alone; other threads
/// only interrupt its bridge (whose shared state is in a `Mutex`).
package final class Demuxer: @unchecked Sendable {
    let url: URL
    let bridge: AVIOBridge
    /// The item's nested opens (HLS/DASH playlists, segments, keys).
    let nested: NestedIO
    /// A DASH item's manifest, read by Reel and handed to the HLS demuxer.
    let dash: DASHAsHLS?
    /// The subtitle renditions of a master a scheduler took (FFmpeg's HLS demuxer did not read
    /// it), admitted by the master's closed door.
    private let scheduledSubtitles: [(rendition: HLSMasterPlaylist.SubtitleRendition, url: URL)]
    /// The caption Representations of a DASH manifest a scheduler took.
    private let scheduledTexts: [DASHManifest.Representation]
    /// A DASH item's caption Representations (read by DASH as HLS, or beside a scheduler).
    var dashTextRepresentations: [DASHManifest.Representation] { dash?.textRepresentations ?? scheduledTexts }
    /// The item's HLS subtitle renditions: of the master FFmpeg's HLS demuxer read, or of the
    /// one a scheduler took. What the engine reads captions from.
    var subtitleRenditions: [(rendition: HLSMasterPlaylist.SubtitleRendition, url: URL)] {
        scheduledSubtitles.isEmpty ? nested.subtitleRenditions : scheduledSubtitles
    }
    /// What the item was found to be (its Content-Type and first bytes; see ``StreamingFormat``).
    let streamingFormat: StreamingFormat
    package private(set) var format: UnsafeMutablePointer<AVFormatContext>?
    package private(set) var videoStreamIndex: Int32?
    package private(set) var audioStreamIndex: Int32?
    /// The subtitle streams this FFmpeg can decode, read beside the video and audio when the
    /// demuxer was opened with `captions` (the engine's); empty otherwise.
    package private(set) var captionStreamIndices: [Int32] = []
    /// Whether subtitle streams are read (see ``captionStreamIndices``).
    let readsCaptions: Bool
    /// Which audio stream plays (`Demuxer+Streams`).
    let audioSelection: AudioSelection
    /// Why it was chosen.
    var audioChoice: String?
    /// The audio tracks a scheduler offers for the item it took (its renditions; empty: none).
    let scheduledAudioTracks: [AudioTrack]
    /// Whether `avformat_find_stream_info` was needed (the header did not say enough).
    private(set) var usedStreamInfoProbe = false
    package private(set) var info: MediaInfo
    /// Where a sectioned resource's next section comes from (see ``SectionedResourceLoader``).
    let sections: (any SectionedResourceLoader)?
    let io: IOActivity?
    /// The section being read after the first one's end, if any (the demux thread's).
    var section: DemuxerSection?
    /// The URL of the section being read (the item's URL for the first).
    var sectionURL: URL
    /// The reading section's bridge, for ``interrupt()`` from other threads.
    let sectionBridge = Mutex<AVIOBridge?>(nil)
    /// Per selected stream: the codec parameters its decoder now has (after a seam), and the
    /// latest end of its packets in `AV_TIME_BASE` (where a restarted timeline follows on).
    var currentParameters: [Int32: CodecParameters] = [:]
    var timelineEnd: Int64?
    /// Packets handed out so far.
    var packetsReturned = 0

    /// Opens `url` through `loader` for a media tool (the packager): no IO hooks, default limits.
    package convenience init(forTool url: URL, loader: any ResourceLoader, fastStart: Bool) throws {
        try self.init(url: url, loader: loader, fastStart: fastStart)
    }

    /// Opens `url` through `loader`.
    ///
    /// With `fastStart`, probing is kept small and `avformat_find_stream_info` is
    /// skipped when the container header already gives what decoding needs (MP4,
    /// MOV, Matroska and WebM usually do); otherwise it runs with a small budget.
    /// Without it (for `reel probe`), streams are probed fully so every field is known.
    ///
    /// With `schedules`, an HLS playlist is first offered to a ``StreamSchedulingLoader``
    /// (Reel's segment scheduler): when it takes it, the media it reads in the playlist's place
    /// is opened instead, from `startTime` seconds (the engine does this; tools do not).
    init(url: URL, loader: any ResourceLoader, fastStart: Bool = true, captions: Bool = false,
         audio: AudioSelection = AudioSelection(), io: IOActivity? = nil,
         limits: NestedAccessPolicy.Limits = .default, schedules: Bool = false, startTime: Double? = nil,
         onContentInformation: (@Sendable () -> Void)? = nil, onFirstByte: (@Sendable () -> Void)? = nil,
         onBridge: ((AVIOBridge) -> Void)? = nil) throws {
        FFmpegLog.applyDefault()
        self.url = url
        self.sectionURL = url
        self.readsCaptions = captions
        self.audioSelection = audio
        self.sections = loader as? any SectionedResourceLoader
        self.io = io
        let hooks = AVIOBridge.Hooks(io: io, onContentInformation: onContentInformation, onFirstByte: onFirstByte)
        // What the resource is — HLS, DASH or anything else — is decided by what the loader says
        // (Content-Type) and its first bytes, the name only as a last hint (StreamingFormat). The
        // first read is looked at before anything is opened, then handed on unconsumed.
        let scheduling = schedules ? loader as? any StreamSchedulingLoader : nil
        let (streamingFormat, started, taken) = try Self.detectFormat(url: url, loader: loader, hooks: hooks, onBridge: onBridge,
                                                                      scheduling: scheduling, startTime: startTime, audio: audio)
        self.streamingFormat = streamingFormat
        // What is read: the item, or the first section of what the scheduler reads in its place.
        let scheduled = taken?.section
        self.scheduledAudioTracks = taken?.audioTracks ?? []
        if let reason = taken?.audioChoice { self.audioChoice = reason }
        let source = scheduled ?? url
        (scheduledSubtitles, scheduledTexts) = Self.captionRenditions(of: taken?.document, url: url, limits: limits)
        self.sectionURL = source
        // Streaming documents open what they name through `nested`, behind the closed door.
        let policy = NestedAccessPolicy(item: source, limits: limits)
        // A DASH manifest is read by Reel and played as HLS (see DASHAsHLS).
        let dash = streamingFormat == .dash ? DASHAsHLS(upstream: loader, manifest: url, policy: policy, started: started) : nil
        let loader: any ResourceLoader = dash ?? loader
        self.dash = dash
        let nested = NestedIO(policy: policy, loader: loader, io: io, dash: dash)
        self.nested = nested
        // The content information was reported when the format was looked at.
        let itemHooks = AVIOBridge.Hooks(io: io, onFirstByte: onFirstByte)
        let bridge: AVIOBridge
        do {
            bridge = try AVIOBridge(url: source, loader: loader, hooks: itemHooks, nested: nested, started: dash == nil ? started : nil)
        } catch {
            if dash == nil { started?.cancel() }
            dash?.close()
            throw error
        }
        // The owner can interrupt the open from now on (a close while the network stalls).
        onBridge?(bridge)
        self.bridge = bridge
        self.info = MediaInfo(container: "", containerLongName: "", duration: nil, bitRate: nil, streams: [])

        let context = try Self.formatContext(reading: bridge, url: url)
        nested.install(on: context)

        var options = Self.openOptions(fastStart: fastStart)
        defer { av_dict_free(&options) }
        // The item's URL is the base the HLS demuxer resolves relative names against; FFmpeg
        // opens nothing by it. HLS (and DASH, played as HLS) is opened as HLS whatever the name
        // (the HLS probe wants an .m3u8 name or type on newer FFmpeg); anything else is probed,
        // never by FFmpeg's DASH demuxer (`format_whitelist`).
        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        let name = url.absoluteString.isEmpty ? "input" : url.absoluteString
        let forced = streamingFormat == .other ? nil : av_find_input_format("hls")
        let code = avformat_open_input(&opened, name, forced, &options)
        if code < 0 {
            // avformat_open_input frees the context on failure.
            if let failure = dash?.failure {
                bridge.close()
                throw failure
            }
            throw Self.openFailure(code, bridge: bridge, nested: nested, url: url)
        }
        format = opened
        try selectAndProbeStreams(fastStart: fastStart)
    }

    /// The caption renditions of a playlist or manifest a scheduler took (its `document`), which
    /// the engine reads beside the scheduled media: an HLS master's subtitle renditions, behind
    /// the master's own closed door (the section's admits nothing), or a DASH manifest's text
    /// Representations.
    private static func captionRenditions(of document: Data?, url: URL, limits: NestedAccessPolicy.Limits)
        -> ([(rendition: HLSMasterPlaylist.SubtitleRendition, url: URL)], [DASHManifest.Representation]) {
        guard let document else { return ([], []) }
        let subtitles = HLSMasterPlaylist(document).map {
            NestedIO.subtitleRenditions(of: $0, base: url, policy: NestedAccessPolicy(item: url, limits: limits))
        } ?? []
        let texts = DASHManifest.looksLikeManifest(document) ? (try? DASHManifest(document, url: url))?.texts ?? [] : []
        return (subtitles, texts)
    }

    /// A format context reading through `bridge` (custom I/O, interruptible by it); the bridge
    /// is closed when there is no memory for one.
    static func formatContext(reading bridge: AVIOBridge, url: URL) throws -> UnsafeMutablePointer<AVFormatContext> {
        guard let context = avformat_alloc_context() else {
            bridge.close()
            throw MediaError.ffmpeg(operation: "avformat_alloc_context", code: -12, message: "out of memory", url: url)
        }
        context.pointee.pb = bridge.context
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        context.pointee.interrupt_callback.callback = avioInterrupt
        context.pointee.interrupt_callback.opaque = Unmanaged.passUnretained(bridge).toOpaque()
        return context
    }

    /// Picks the streams to play (probing them first when the header is not enough, or
    /// always without `fastStart`), discards the others, and describes the result.
    private func selectAndProbeStreams(fastStart: Bool) throws {
        guard let opened = format else { throw MediaError.cancelled }
        selectStreams()
        let needsProbe = !fastStart || !headerIsEnough()
        if needsProbe {
            usedStreamInfoProbe = true
            let probeCode = avformat_find_stream_info(opened, nil)
            if let failure = nested.failure { throw failure }
            if probeCode < 0 {
                if let loaderError = bridge.lastLoaderError { throw MediaError.loading(loaderError) }
                if bridge.isInterrupted { throw MediaError.cancelled }
                throw MediaError.ffmpeg(operation: "avformat_find_stream_info", code: probeCode, message: ffmpegErrorString(probeCode), url: url)
            }
            selectStreams()
        }
        if let failure = nested.failure { throw failure }
        guard videoStreamIndex != nil || audioStreamIndex != nil else {
            throw MediaError.noPlayableStreams(url: url)
        }
        // Only the selected streams are demuxed.
        for i in 0..<Int(opened.pointee.nb_streams) {
            let stream = opened.pointee.streams[i]!
            let index = Int32(i)
            if index != videoStreamIndex && index != audioStreamIndex && !captionStreamIndices.contains(index) {
                stream.pointee.discard = AVDISCARD_ALL
            }
        }
        info = describe()
        info.audioChoice = audioChoice
        if !scheduledAudioTracks.isEmpty { info.renditionAudioTracks = scheduledAudioTracks }
        // A sectioned stream (Reel's segment scheduler) knows its duration from its playlist.
        if info.duration == nil, let seconds = sections?.duration(of: url), seconds > 0 {
            info.duration = MediaTime(seconds: seconds, preferredTimescale: 1000)
        }
        // A stream Reel's scheduler reads without an end is live (its playlist was read first).
        if let sections, sections.isSectioned(url), info.duration == nil { info.isLive = true }
    }

    deinit {
        close()
    }

    package func close() {
        interrupt()
        section?.close()
        section = nil
        if format != nil {
            avformat_close_input(&format)
        }
        bridge.close()
    }

    /// Makes every read return at once (from any thread): the item's and the section's.
    package func interrupt() {
        bridge.interrupt()
        sectionBridge.withTrackedLock { $0 }?.interrupt()
    }

    // MARK: Streams

    package func stream(_ index: Int32) -> UnsafeMutablePointer<AVStream>? {
        guard let format, index >= 0, index < Int32(format.pointee.nb_streams) else { return nil }
        return format.pointee.streams[Int(index)]
    }

    func timeBase(of index: Int32) -> TimeBase {
        TimeBase(stream(index)?.pointee.time_base ?? AVRational(num: 1, den: 1))
    }

    /// The container's duration, or `nil` when unknown.
    var duration: MediaTime? { info.duration }

    private func selectStreams() {
        guard let format else { return }
        let chosen = chooseStreams(format)
        videoStreamIndex = chosen.video
        audioStreamIndex = chosen.audio
        captionStreamIndices = chosen.captions
        audioChoice = chosen.audioChoice
    }

    /// Whether the header gave everything decoding needs, so probing can be skipped.
    ///
    /// MP4, MOV, Matroska and WebM headers usually do. So does HLS (and DASH, played as HLS)
    /// with fMP4 segments: the HLS demuxer's header is its first playlist's init section and
    /// the start of its first segment, read by a `mov` demuxer of its own, and the streams
    /// carry its codec parameters; `avformat_find_stream_info` would read on for up to
    /// `analyzeduration` (most of the first segment) before the first frame. MPEG-TS segments
    /// leave the size and sample rate unknown until packets are parsed, so they are probed.
    private func headerIsEnough() -> Bool {
        guard let format, let iformat = format.pointee.iformat else { return false }
        let name = String(cString: iformat.pointee.name)
        guard name.contains("mov") || name.contains("matroska") || name == "hls" else { return false }
        if let index = videoStreamIndex, let parameters = stream(index)?.pointee.codecpar {
            if parameters.pointee.width <= 0 || parameters.pointee.height <= 0 { return false }
            if parameters.pointee.codec_id == AV_CODEC_ID_NONE { return false }
        }
        if let index = audioStreamIndex, let parameters = stream(index)?.pointee.codecpar {
            if parameters.pointee.sample_rate <= 0 || parameters.pointee.ch_layout.nb_channels <= 0 { return false }
        }
        // A file whose only decodable streams are missing is not enough either.
        return videoStreamIndex != nil || audioStreamIndex != nil
    }

    /// Clockwise degrees (0, 90, 180, 270) the stream's display matrix asks for,
    /// computed as FFmpeg's own autorotate does.
    func rotation(of index: Int32) -> Int {
        guard let counterClockwise = displayMatrixAngle(of: index) else { return 0 }
        var theta = -counterClockwise.rounded()
        theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
        let quarter = Int((theta / 90).rounded()) % 4
        return quarter * 90
    }

    /// The display matrix's counterclockwise angle in degrees, if the stream has one.
    func displayMatrixAngle(of index: Int32) -> Double? {
        guard let stream = stream(index) else { return nil }
        var size: Int = 0
        guard let data = reel_stream_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else { return nil }
        let matrix = UnsafeRawPointer(data).assumingMemoryBound(to: Int32.self)
        let angle = av_display_rotation_get(matrix)
        return angle.isFinite ? angle : nil
    }

    private func describe() -> MediaInfo {
        guard let format else { return info }
        let iformat = format.pointee.iformat
        var result = MediaInfo(
            container: iformat.map { String(cString: $0.pointee.name) } ?? "unknown",
            containerLongName: iformat.flatMap { $0.pointee.long_name.map { String(cString: $0) } } ?? "",
            duration: format.pointee.duration != AV_NOPTS && format.pointee.duration > 0
                ? MediaTime(value: format.pointee.duration, timescale: reel_av_time_base()) : nil,
            bitRate: format.pointee.bit_rate > 0 ? Int(format.pointee.bit_rate) : nil,
            streams: []
        )
        for i in 0..<Int(format.pointee.nb_streams) {
            guard let stream = format.pointee.streams[i], let parameters = stream.pointee.codecpar else { continue }
            let p = parameters.pointee
            let kind: StreamInfo.Kind
            switch p.codec_type {
            case AVMEDIA_TYPE_VIDEO: kind = .video
            case AVMEDIA_TYPE_AUDIO: kind = .audio
            case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
            case AVMEDIA_TYPE_DATA: kind = .data
            case AVMEDIA_TYPE_ATTACHMENT: kind = .attachment
            default: kind = .unknown
            }
            let tb = TimeBase(stream.pointee.time_base)
            var s = StreamInfo(index: i, kind: kind, codec: String(cString: avcodec_get_name(p.codec_id)), timeBase: tb.description)
            if let profile = avcodec_profile_name(p.codec_id, p.profile) { s.profile = String(cString: profile) }
            s.isDefault = stream.pointee.disposition & AV_DISPOSITION_DEFAULT != 0
            s.isAttachedPicture = stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
            s.isSelected = Int32(i) == videoStreamIndex || Int32(i) == audioStreamIndex
            if stream.pointee.duration != AV_NOPTS && stream.pointee.duration > 0 {
                s.duration = tb.time(stream.pointee.duration)
            }
            if p.bit_rate > 0 { s.bitRate = Int(p.bit_rate) }
            if let entry = av_dict_get(stream.pointee.metadata, "language", nil, 0), let value = entry.pointee.value {
                s.language = String(cString: value)
            }
            if let entry = av_dict_get(stream.pointee.metadata, "title", nil, 0), let value = entry.pointee.value {
                s.title = String(cString: value)
            } else if result.container == "hls", let entry = av_dict_get(stream.pointee.metadata, "comment", nil, 0),
                      let value = entry.pointee.value {
                // FFmpeg's HLS demuxer keeps a rendition's NAME as the stream's comment.
                s.title = String(cString: value)
            }
            s.isForced = stream.pointee.disposition & AV_DISPOSITION_FORCED != 0
            s.roles = Self.roles(stream.pointee.disposition)
            if kind == .video {
                s.width = Int(p.width)
                s.height = Int(p.height)
                s.rotation = rotation(of: Int32(i))
                s.displayMatrixRotation = displayMatrixAngle(of: Int32(i)).map { Int($0.rounded()) }
                if p.format >= 0, let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: p.format)) {
                    s.pixelFormat = String(cString: name)
                }
                s.color = ColorDescription(stream: stream)
                let rate = stream.pointee.avg_frame_rate
                if rate.num > 0 && rate.den > 0 {
                    s.frameRate = MediaTime(value: Int64(rate.num), timescale: rate.den)
                }
            } else if kind == .audio {
                s.sampleRate = Int(p.sample_rate)
                s.channels = Int(p.ch_layout.nb_channels)
                var layout = parameters.pointee.ch_layout
                var buffer = [CChar](repeating: 0, count: 128)
                if av_channel_layout_describe(&layout, &buffer, buffer.count) > 0 {
                    s.channelLayout = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                }
            }
            result.streams.append(s)
        }
        return result
    }

    // MARK: Reading

    /// The next packet of a selected stream; `nil` at the end of the input.
    package func readPacket() throws -> Packet? {
        while true {
            let packet = section != nil ? try readSectionPacket() : try readFirstSectionPacket()
            if let packet {
                noteTimeline(packet)
                packetsReturned += 1
                return packet
            }
            // This section ended: the next one, if the resource goes on.
            guard try openNextSection() else { return nil }
        }
    }

    /// The next packet of the first section (the item as opened); `nil` at its end.
    private func readFirstSectionPacket() throws -> Packet? {
        guard let format else { throw MediaError.cancelled }
        return try readFrame(from: format, bridge: bridge, url: url) { packet in
            packet.streamIndex == videoStreamIndex || packet.streamIndex == audioStreamIndex
                || captionStreamIndices.contains(packet.streamIndex)
        }
    }

    /// The next packet `format` reads through `bridge` that `accepts` takes (the others are
    /// skipped); `nil` at the end of the input.
    func readFrame(from format: UnsafeMutablePointer<AVFormatContext>, bridge: AVIOBridge, url: URL,
                   accepts: (Packet) -> Bool) throws -> Packet? {
        var damaged = 0
        while true {
            guard let packet = Packet() else {
                throw MediaError.ffmpeg(operation: "av_packet_alloc", code: -12, message: "out of memory", url: url)
            }
            let code = av_read_frame(format, packet.pointer)
            // A refused or failed nested resource fails the item (the demuxer would skip it).
            if let failure = nested.failure { throw failure }
            if code == AVERROR_EOF_CODE { return nil }
            if code < 0 {
                if let loaderError = bridge.lastLoaderError { throw MediaError.loading(loaderError) }
                if bridge.isInterrupted || code == AVERROR_EXIT_CODE { throw MediaError.cancelled }
                // A damaged or truncated file plays what is readable: skip what the
                // container can't read, and end when it keeps failing.
                if code == reel_averror_invaliddata() || code == reel_averror(EIO) {
                    damaged += 1
                    if damaged > 64 { return nil }
                    continue
                }
                throw MediaError.ffmpeg(operation: "av_read_frame", code: code, message: ffmpegErrorString(code), url: url)
            }
            if accepts(packet) { return packet }
        }
    }

    /// Seeks so the next packet of `streamIndex` is the keyframe at or before `timestamp`
    /// (in the stream's time base).
    func seek(streamIndex: Int32, timestamp: Int64) throws {
        guard let format else { throw MediaError.cancelled }
        // A sectioned resource seeks by starting again from there (see `restartSections`).
        if try restartSections(at: timeBase(of: streamIndex).time(timestamp)) { return }
        var code = av_seek_frame(format, streamIndex, timestamp, AVSEEK_FLAG_BACKWARD)
        if code < 0 {
            // Some demuxers can only seek by byte or from the start; try the generic path.
            code = avformat_seek_file(format, streamIndex, Int64.min, timestamp, timestamp, 0)
        }
        if code < 0 {
            if let failure = nested.failure { throw failure }
            if let loaderError = bridge.lastLoaderError { throw MediaError.loading(loaderError) }
            if bridge.isInterrupted { throw MediaError.cancelled }
            throw MediaError.ffmpeg(operation: "av_seek_frame", code: code, message: ffmpegErrorString(code), url: url)
        }
    }

    /// Keyframe timestamps the container's index knows for `streamIndex`, ascending.
    func keyframeTimestamps(streamIndex: Int32) -> [Int64] {
        guard let stream = stream(streamIndex) else { return [] }
        let count = avformat_index_get_entries_count(stream)
        var result: [Int64] = []
        result.reserveCapacity(Int(count))
        for i in 0..<count {
            guard let entry = avformat_index_get_entry(stream, i) else { continue }
            if entry.pointee.flags & AVINDEX_KEYFRAME != 0 {
                result.append(entry.pointee.timestamp)
            }
        }
        return result.sorted()
    }

    /// The byte position the index gives for the first sample at or after `timestamp`,
    /// for converting seconds of media to bytes (the preloader's estimate).
    func bytePosition(streamIndex: Int32, timestamp: Int64) -> Int64? {
        guard let stream = stream(streamIndex) else { return nil }
        let count = avformat_index_get_entries_count(stream)
        guard count > 0 else { return nil }
        var best: Int64?
        for i in 0..<count {
            guard let entry = avformat_index_get_entry(stream, i) else { continue }
            if entry.pointee.timestamp >= timestamp {
                return entry.pointee.pos
            }
            best = entry.pointee.pos + Int64(entry.pointee.size)
        }
        return best
    }
}
