import Foundation
import ReelCore
import ReelCaptions
import ReelStreaming
internal import CFFmpeg

/// Captions in the pipeline. Threads and ownership:
///
/// - A container's subtitle streams are read by the demux thread beside the video and audio and
///   decoded there (text decoding takes microseconds; no thread of their own). Their packets never
///   enter the packet queues and never count toward the read-ahead budget, so a sparse stream
///   cannot stall the demuxer.
/// - Each sideloaded caption file is read whole (at most ``captionFileLimit`` bytes) through the
///   item's loader on a short-lived thread of its own, a settle-monitor worker like the others.
/// - The cues, tracks and selection live in ``EngineState/captions`` (a ``CaptionPresentation``)
///   under the monitor. The owner looks the cues up at each presented frame's timestamp and hands
///   a changed screen to the caption sink and the delegate after the mutex, as it does frames.
extension PlaybackEngine {
    /// The largest caption file read; a larger one is refused with one warning.
    static let captionFileLimit = 4 << 20

    /// A decoder per subtitle stream the demuxer reads; a stream this FFmpeg cannot open is left out.
    func openCaptionDecoders(_ demuxer: Demuxer) -> [Int32: CaptionDecoder] {
        var canvas = (width: 0, height: 0)
        if let index = demuxer.videoStreamIndex, let parameters = demuxer.stream(index)?.pointee.codecpar {
            canvas = (Int(parameters.pointee.width), Int(parameters.pointee.height))
        }
        var decoders: [Int32: CaptionDecoder] = [:]
        for index in demuxer.captionStreamIndices {
            guard let stream = demuxer.stream(index) else { continue }
            let info = demuxer.info.streams.first { $0.index == Int(index) }
            let decoder = CaptionDecoder(
                parameters: stream.pointee.codecpar, timeBase: stream.pointee.time_base, id: .stream(Int(index)),
                origin: .inBand(stream: Int(index)), language: info?.language, label: info?.title,
                disposition: stream.pointee.disposition, canvas: canvas)
            if let decoder {
                decoders[index] = decoder
            } else {
                logger.warning("captions: cannot decode subtitle stream \(index) (\(info?.codec ?? "unknown")) of \(url.lastPathComponent)")
            }
        }
        return decoders
    }

    /// Decodes a caption packet on the demux thread and files its cues.
    func handleCaptionPacket(_ packet: Packet, decoder: CaptionDecoder) {
        let wasGivenUp = decoder.isGivenUp
        let output = decoder.decode(packet)
        if decoder.isGivenUp, !wasGivenUp {
            logger.warning("captions: track \(decoder.track.id) of \(url.lastPathComponent) keeps failing to decode; it is given up")
        }
        file(output, track: decoder.track.id)
    }

    /// Files what a caption decoder gave for `track` (any thread).
    func file(_ output: CaptionDecoder.Output, track: CaptionTrackID) {
        guard !output.events.isEmpty || output.closesOpenCuesAt != nil else { return }
        monitor.update { state in
            if let time = output.closesOpenCuesAt { state.captions.close(track, at: time) }
            state.captions.insert(output.events)
            if state.captions.needsRefresh { scheduleStepLocked(&state, at: clock.now) }
        }
    }

    /// A track found while playing (CEA-608 in the video): offered from the next step.
    func addCaptionTrack(_ track: CaptionTrack) {
        monitor.update { state in
            state.captions.add(track)
            scheduleStepLocked(&state, at: clock.now)
        }
    }

    /// Starts reading the item's sideloaded caption files, each on a thread of its own.
    func startCaptionLoaders() {
        for (index, source) in captionSources.enumerated() {
            startCaptionLoader(source, id: .sideloaded(index))
        }
    }

    /// `origin`: the track's, when a manifest names the file (else it is sideloaded).
    private func startCaptionLoader(_ source: CaptionSource, id: CaptionTrackID, origin: CaptionTrack.Origin? = nil) {
        let worker = monitor.register("captions-\(id.raw)")
        spawn("reel.captions") { [self] in
            defer { monitor.exit(worker) }
            loadCaptionSource(source, id: id, origin: origin, io: IOActivity(monitor: monitor, worker: worker))
        }
    }

    /// A DASH item's text Representations: one that is a single WebVTT or TTML file is read as a
    /// caption file the manifest names (behind the item's door); segmented fMP4 text (`wvtt`,
    /// `stpp`) is read segment by segment on a thread of its own.
    func startDASHCaptionReaders(_ representations: [DASHManifest.Representation]) {
        var segmented: [DASHManifest.Representation] = []
        for representation in representations.prefix(NestedAccessPolicy.Limits.default.maxRenditions) {
            let mime = representation.mimeType?.lowercased() ?? ""
            if representation.initialization == nil, representation.segments.count == 1, mime != "application/mp4",
               let file = representation.segments.first, file.range == nil {
                startCaptionLoader(CaptionSource(url: file.url, language: representation.language, label: representation.label,
                                                 isNamedByDocument: true),
                                   id: CaptionTrackID("dash:\(representation.id)"),
                                   origin: .manifest(file.url, position: representation.index))
            } else {
                segmented.append(representation)
            }
        }
        guard !segmented.isEmpty else { return }
        let worker = monitor.register("captions-dash")
        let representations = segmented
        spawn("reel.captions") { [self] in
            defer { monitor.exit(worker) }
            let io = IOActivity(monitor: monitor, worker: worker)
            for representation in representations {
                if monitor.read({ $0.closing }) { return }
                let name = representation.initialization?.url ?? representation.segments.first?.url ?? url
                guard let initialization = representation.initialization else {
                    reportCaptionFailure(name, MediaError.unrecognizedFormat(url: name, message: "segmented text with no initialization segment"))
                    continue
                }
                let isTTML = representation.codecs?.lowercased().hasPrefix("stpp") == true
                let track = CaptionTrack(id: CaptionTrackID("dash:\(representation.id)"),
                                         origin: .manifest(name, position: representation.index),
                                         format: isTTML ? .ttml : .webvtt, language: representation.language,
                                         label: representation.label)
                readTextSegments(representation.segments.map { TextSegment(url: $0.url, range: $0.range) },
                                 initialization: TextSegment(url: initialization.url, range: initialization.range),
                                 track: track, name: name, reference: nil, io: io)
            }
        }
    }

    private func loadCaptionSource(_ source: CaptionSource, id: CaptionTrackID, origin: CaptionTrack.Origin?, io: IOActivity) {
        let result: Result<SubtitleFileDecoder.Result, any Error>
        do {
            if source.isNamedByDocument, case .failure(let refusal) = NestedAccessPolicy(item: url).admit(source.url.absoluteString) {
                throw refusal
            }
            let (data, contentType) = try readCaptionFile(source.url, io: io)
            let format = CaptionFormat.sniff(data, contentType: contentType, pathExtension: source.url.pathExtension)
            if format == .ttml {
                // FFmpeg has no TTML decoder: Reel reads it (no DTD, no entities; capped).
                let document = try TTMLDocument(data)
                let events = document.events(track: id)
                guard !events.isEmpty else { throw MediaError.unrecognizedFormat(url: source.url, message: "a TTML document with no cue") }
                let track = CaptionTrack(id: id, origin: .sideloaded(source.url), format: .ttml,
                                         language: source.language ?? document.language, label: source.label)
                result = .success(SubtitleFileDecoder.Result(track: track, events: events))
            } else {
                result = .success(try SubtitleFileDecoder.decode(data, url: source.url, id: id, language: source.language,
                                                                 label: source.label ?? (source.language == nil ? source.url.lastPathComponent : nil)))
            }
        } catch {
            result = .failure(error)
        }
        if monitor.read({ $0.closing }) { return }
        switch result {
        case .success(var decoded):
            if let origin { decoded.track.origin = origin }
            if let encoding = decoded.recodedFrom {
                logger.warning("captions: \(source.url.lastPathComponent) is not UTF-8; read as \(encoding)")
            }
            monitor.update { state in
                state.captions.add(decoded.track)
                state.captions.insert(decoded.events)
                scheduleStepLocked(&state, at: clock.now)
            }
        case .failure(let error):
            reportCaptionFailure(source.url, error)
        }
    }

    /// One warning line and a `captionSourceFailed` event at the owner's next step; the item plays on.
    private func reportCaptionFailure(_ url: URL, _ error: any Error) {
        let reason = Self.captionFailureReason(error)
        logger.warning("captions: \(url.absoluteString): \(reason); playing without them")
        monitor.update { state in
            state.captionFailures.append(CaptionSourceFailure(url: url, reason: reason))
            scheduleStepLocked(&state, at: clock.now)
        }
    }

    /// Reads an HLS item's subtitle renditions (WebVTT segments) on a thread of their own, every
    /// byte through the item's loader behind the item's door, each segment's cues moved by its
    /// `X-TIMESTAMP-MAP` onto the video's timeline. A VOD rendition only: a live one is named in
    /// one warning and left alone.
    func startHLSCaptionReader(_ renditions: [(rendition: HLSMasterPlaylist.SubtitleRendition, url: URL)]) {
        guard !renditions.isEmpty else { return }
        let worker = monitor.register("captions-hls")
        spawn("reel.captions") { [self] in
            defer { monitor.exit(worker) }
            let io = IOActivity(monitor: monitor, worker: worker)
            // The video's first timestamp, in 90 kHz, to unwrap a map's 33-bit MPEGTS near.
            let reference = monitor.read { $0.streams?.videoStart }.map { $0.convertScale(90_000).value }
            for (number, entry) in renditions.enumerated() {
                if monitor.read({ $0.closing }) { return }
                readHLSRendition(entry.rendition, url: entry.url, id: CaptionTrackID("hls:\(number)"), position: number,
                                 reference: reference, io: io)
            }
        }
    }

    /// At most this many segments of a subtitle rendition are read.
    static let maximumSubtitleSegments = 2000

    private func readHLSRendition(_ rendition: HLSMasterPlaylist.SubtitleRendition, url: URL, id: CaptionTrackID,
                                  position: Int, reference: Int64?, io: IOActivity) {
        do {
            let (document, _) = try readCaptionFile(url, io: io)
            guard let playlist = HLSMediaPlaylist(document) else {
                throw MediaError.unrecognizedFormat(url: url, message: "not an HLS media playlist")
            }
            guard playlist.isFinal else {
                throw MediaError.unrecognizedFormat(url: url, message: "a live subtitle playlist (not read yet)")
            }
            func resolve(_ part: HLSMediaPlaylist.Part) -> TextSegment? {
                URL(string: part.uri, relativeTo: url).map { TextSegment(url: $0.absoluteURL, range: part.range) }
            }
            let track = CaptionTrack(id: id, origin: .manifest(url, position: position), format: .webvtt, language: rendition.language,
                                     label: rendition.name.isEmpty ? nil : rendition.name,
                                     isDefault: rendition.isDefault, isForced: rendition.isForced)
            var initialization: TextSegment?
            if let map = playlist.initSection {
                guard let resolved = resolve(map) else {
                    throw MediaError.unrecognizedFormat(url: url, message: "an EXT-X-MAP that is not a URL")
                }
                initialization = resolved
            }
            // A segment whose URI is not a URL is kept, to be counted with the unreadable ones.
            let segments = playlist.segments.map { resolve($0.resource) ?? TextSegment(url: nil, range: nil) }
            readTextSegments(segments, initialization: initialization, track: track, name: url, reference: reference, io: io)
        } catch {
            if monitor.read({ $0.closing }) { return }
            reportCaptionFailure(url, error)
        }
    }

    /// A segment of a text rendition (`url` nil: a reference that is not a URL).
    struct TextSegment {
        var url: URL?
        var range: ByteRange?
    }

    /// Reads a text rendition's segments in order, each behind the item's door, and files their
    /// cues as they come: WebVTT files moved by their `X-TIMESTAMP-MAP` (`reference`: the video's
    /// first timestamp in 90 kHz), or, after an `initialization` segment, fragmented MP4 text
    /// (`wvtt` through the same WebVTT decoder as a file; `stpp` through ``TTMLDocument``) on the
    /// track's own timeline. A segment that cannot be read or decoded is counted, and the count
    /// is one warning line; an initialization segment that cannot be read fails the track.
    private func readTextSegments(_ segments: [TextSegment], initialization: TextSegment?, track: CaptionTrack, name: URL,
                                  reference: Int64?, io: IOActivity) {
        let policy = NestedAccessPolicy(item: self.url)
        func admitted(_ segment: TextSegment) -> URL? {
            guard let url = segment.url, case .success(let admitted) = policy.admit(url.absoluteString) else { return nil }
            return admitted
        }
        var fragmented: FragmentedTextTrack?
        var track = track
        if let initialization {
            do {
                guard let initURL = admitted(initialization) else {
                    throw MediaError.unrecognizedFormat(url: name, message: "its initialization segment is refused")
                }
                let (data, _) = try readCaptionFile(initURL, io: io, range: initialization.range)
                let parsed = try FragmentedTextTrack(initialization: data)
                track.format = parsed.format == .ttml ? .ttml : .webvtt
                fragmented = parsed
            } catch {
                if monitor.read({ $0.closing }) { return }
                reportCaptionFailure(name, error)
                return
            }
        }
        var added = false
        var failures = 0
        for segment in segments.prefix(Self.maximumSubtitleSegments) {
            if monitor.read({ $0.closing }) { return }
            guard let segmentURL = admitted(segment) else {
                failures += 1
                continue
            }
            do {
                let (data, _) = try readCaptionFile(segmentURL, io: io, range: segment.range)
                let events = try textSegmentEvents(data, url: segmentURL, track: track, fragmented: fragmented, reference: reference)
                monitor.update { state in
                    if !added { state.captions.add(track) }
                    state.captions.insert(events)
                    if state.captions.needsRefresh || !added { scheduleStepLocked(&state, at: clock.now) }
                }
                added = true
            } catch {
                if monitor.read({ $0.closing }) { return }
                failures += 1
            }
        }
        if failures > 0 {
            logger.warning("captions: \(failures) of \(segments.count) segments of \(name.lastPathComponent) could not be read or decoded")
        }
    }

    /// The cues of one text segment, on the video's timeline.
    private func textSegmentEvents(_ data: Data, url: URL, track: CaptionTrack, fragmented: FragmentedTextTrack?,
                                   reference: Int64?) throws -> [CaptionEvent] {
        guard let fragmented else {
            let header = try? WebVTTHeader(data)
            // A segment with a header and no cue is a quiet stretch, not a broken segment.
            if header != nil, data.firstRange(of: Data("-->".utf8)) == nil { return [] }
            let offset = header?.offset(nearPTS: reference) ?? .zero
            let decoded = try SubtitleFileDecoder.decode(data, url: url, id: track.id, language: track.language, label: track.label)
            return decoded.events.map { event -> CaptionEvent in
                var moved = event
                moved.start = event.start + offset
                if event.end.isNumeric { moved.end = event.end + offset }
                return moved
            }
        }
        let samples = try fragmented.samples(in: data)
        switch fragmented.format {
        case .webvtt:
            let cues = samples.flatMap(\.webVTTCues)
            guard !cues.isEmpty else { return [] }
            let document = WebVTTSampleCue.document(cues)
            return try SubtitleFileDecoder.decode(Data(document.utf8), url: url, id: track.id, language: track.language,
                                                  label: track.label).events
        case .ttml:
            // The documents' times are on the track's timeline (ISO/IEC 14496-30), not the sample's.
            return try samples.flatMap { sample in
                try TTMLDocument(Data(sample.bytes)).events(track: track.id).map { event in
                    var event = event
                    event.language = event.language ?? track.language
                    return event
                }
            }
        }
    }

    /// Reads a caption file whole through the item's loader; `close()` cancels the read.
    private func readCaptionFile(_ url: URL, io: IOActivity, range: ByteRange? = nil) throws -> (Data, contentType: String?) {
        let limit = Self.captionFileLimit
        let wanted = range.map { ByteRange(offset: $0.offset, length: min($0.length ?? Int64(limit) + 1, Int64(limit) + 1)) }
        let stream = loader.read(url, range: wanted ?? ByteRange(offset: 0, length: Int64(limit) + 1))
        let closing = monitor.update { state -> Bool in
            if !state.closing { state.captionReads.append(stream) }
            return state.closing
        }
        defer { monitor.update { state in state.captionReads.removeAll { $0 === stream } } }
        if closing {
            stream.cancel()
            throw MediaError.cancelled
        }
        io.begin(stream)
        defer { io.end() }
        let information = try stream.waitForContentInformation()
        var data = Data()
        while let chunk = try stream.read(maxLength: 64 << 10) {
            data.append(chunk)
            if data.count > limit {
                stream.cancel()
                throw CaptionFileTooLarge(limit: limit)
            }
        }
        return (data, information.contentType)
    }

    struct CaptionFileTooLarge: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "larger than \(limit >> 20) MiB" }
    }

    static func captionFailureReason(_ error: any Error) -> String {
        switch error {
        case let error as MediaError:
            switch error {
            case .loading(let loaderError): "\(loaderError)"
            case .unrecognizedFormat(_, let message): message
            default: "\(error)"
            }
        case let error as ResourceLoaderError: "\(error)"
        case let error as TTMLError: "\(error)"
        default: "\(error)"
        }
    }

    /// The owner's caption part of a step: after a frame was presented at `presentedAt`, or when
    /// something changed what is on screen, what the sink should show.
    func captionStepLocked(_ state: inout EngineState, presentedAt: MediaTime?, into out: inout [EngineNotification]) {
        if state.captions.takeTracksChanged() { out.append(.captionTracks(state.captions.tracks)) }
        for failure in state.captionFailures { out.append(.captionSourceFailed(failure)) }
        state.captionFailures = []
        let frame: CaptionFrame?
        if let presentedAt {
            frame = state.captions.presented(at: presentedAt)
        } else if state.captions.needsRefresh {
            frame = state.captions.refresh()
        } else {
            frame = nil
        }
        if let frame { out.append(.captions(frame)) }
    }

    /// Changes which captions show; takes effect at once, paused or not.
    func selectCaptions(_ selection: CaptionSelection) {
        monitor.update { state in
            state.captions.select(selection)
            if state.captions.needsRefresh { scheduleStepLocked(&state, at: clock.now) }
        }
    }

    var captionTracksNow: [CaptionTrack] { monitor.read { $0.captions.tracks } }

    var shownCaptionsNow: [CaptionEvent] { monitor.read { $0.captions.shown } }

    func captionEventsNow(of track: CaptionTrackID) -> [CaptionEvent] { monitor.read { $0.captions.timeline.events(of: track) } }
}

/// A caption source that could not be read or parsed: the video plays on without it.
public struct CaptionSourceFailure: Sendable, Hashable {
    /// The caption file that failed: the URL of the item's caption source, as given.
    public var url: URL
    /// One line: why.
    public var reason: String
}
