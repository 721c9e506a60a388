import Foundation
import ReelCore
import Synchronization
internal import CFFmpeg

/// A later section of a sectioned resource (see ``SectionedResourceLoader``): its own format
/// context and bridge, and how its streams map onto the item's.
///
/// `@unchecked`: it wraps an `AVFormatContext`, used by the demux thread alone.
final class DemuxerSection: @unchecked Sendable {
    let url: URL
    let bridge: AVIOBridge
    var format: UnsafeMutablePointer<AVFormatContext>?
    /// The item's stream index for each of this section's streams that plays (by kind).
    var mapping: [Int32: Int32] = [:]
    /// Whether the first packet of each mapped stream was read (it carries new parameters).
    var started: Set<Int32> = []
    let restartsTimeline: Bool
    /// Where its first timestamp goes on the item's timeline (`AV_TIME_BASE`), when the loader
    /// said (see ``ResourceSection/startsAt``).
    let startsAt: Int64?
    /// Added to every timestamp (`AV_TIME_BASE`) when the timeline restarts or the section
    /// was placed: known at the section's first packet.
    var offset: Int64?

    init(url: URL, bridge: AVIOBridge, format: UnsafeMutablePointer<AVFormatContext>, restartsTimeline: Bool, startsAt: Double?) {
        self.url = url
        self.bridge = bridge
        self.format = format
        self.restartsTimeline = restartsTimeline
        self.startsAt = startsAt.flatMap { $0.isFinite ? Int64(($0 * Double(AV_TIME_BASE)).rounded()) : nil }
    }

    /// Whether its timestamps are shifted onto the item's timeline.
    var isShifted: Bool { restartsTimeline || startsAt != nil }

    func close() {
        bridge.interrupt()
        if format != nil { avformat_close_input(&format) }
        bridge.close()
    }
}

extension Demuxer {
    /// Opens the section after the one that just ended; `false` when the resource ended.
    /// The section is opened with the same input format as the item (mov for fMP4, mpegts),
    /// without probing: its streams are matched to the item's by kind.
    func openNextSection() throws -> Bool {
        guard let sections, let next = sections.section(after: sectionURL) else { return false }
        try openSection(next)
        return true
    }

    /// Opens `next` in place of the section being read.
    private func openSection(_ next: ResourceSection) throws {
        guard let sections else { return }
        section?.close()
        section = nil
        sectionBridge.withTrackedLock { $0 = nil }
        let bridge = try AVIOBridge(url: next.url, loader: sections, hooks: AVIOBridge.Hooks(io: io))
        sectionBridge.withTrackedLock { $0 = bridge }
        let context = try Self.formatContext(reading: bridge, url: next.url)
        var options: OpaquePointer?
        av_dict_set(&options, "protocol_whitelist", "none", 0)
        av_dict_set(&options, "format_whitelist", Self.formatWhitelist, 0)
        defer { av_dict_free(&options) }
        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        let code = avformat_open_input(&opened, next.url.absoluteString, format?.pointee.iformat, &options)
        guard code >= 0, let opened else {
            let loaderError = bridge.lastLoaderError
            let interrupted = bridge.isInterrupted
            bridge.close()
            if let loaderError { throw MediaError.loading(loaderError) }
            if interrupted || code == AVERROR_EXIT_CODE { throw MediaError.cancelled }
            throw MediaError.ffmpeg(operation: "avformat_open_input (section)", code: code, message: ffmpegErrorString(code), url: next.url)
        }
        let section = DemuxerSection(url: next.url, bridge: bridge, format: opened, restartsTimeline: next.restartsTimeline,
                                     startsAt: next.startsAt)
        mapStreams(section)
        self.section = section
        sectionURL = next.url
    }

    /// Seeks a sectioned resource: the loader starts it again from the segment holding `time`
    /// and this reads on from there (the engine then drops what comes before `time`).
    /// `false` when the item is not sectioned or cannot seek.
    func restartSections(at time: MediaTime) throws -> Bool {
        guard let sections, sections.isSectioned(url) else { return false }
        // A start position the scheduler was given up front: nothing read yet, and reading
        // on lands where starting again would.
        if packetsReturned == 0, section == nil, sections.startsWhere(url, restartAt: time.seconds) { return true }
        guard let from = sections.restart(url, at: max(0, time.seconds)) else { return false }
        // What follows on after a discontinuity follows on from where this run gets to.
        timelineEnd = nil
        try openSection(from)
        return true
    }

    /// Interrupts the read in progress, whichever section it is in (a seek's).
    package func interruptRead() {
        if let current = sectionBridge.withTrackedLock({ $0 }) {
            current.interrupt()
        } else {
            bridge.interrupt()
        }
    }

    /// Matches the section's streams to the item's selected ones by kind (the first of each).
    private func mapStreams(_ section: DemuxerSection) {
        guard let format = section.format else { return }
        for i in 0..<Int(format.pointee.nb_streams) {
            let index = Int32(i)
            guard !section.mapping.keys.contains(index), let stream = format.pointee.streams[i],
                  let parameters = stream.pointee.codecpar else { continue }
            let target: Int32?
            switch parameters.pointee.codec_type {
            case AVMEDIA_TYPE_VIDEO where stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0:
                target = videoStreamIndex
            case AVMEDIA_TYPE_AUDIO: target = audioStreamIndex
            default: target = nil
            }
            if let target, !section.mapping.values.contains(target) {
                section.mapping[index] = target
            } else {
                stream.pointee.discard = AVDISCARD_ALL
            }
        }
    }

    /// The next packet of the current later section, mapped onto the item's streams and time
    /// bases; `nil` at the section's end.
    func readSectionPacket() throws -> Packet? {
        guard let section, let format = section.format else { throw MediaError.cancelled }
        let read = try readFrame(from: format, bridge: section.bridge, url: section.url) { packet in
            // MPEG-TS may find a stream only once its packets come.
            if section.mapping[packet.streamIndex] == nil { mapStreams(section) }
            guard let target = section.mapping[packet.streamIndex] else { return false }
            return format.pointee.streams[Int(packet.streamIndex)] != nil && stream(target) != nil
        }
        guard let packet = read else { return nil }
        let own = packet.streamIndex
        // What `accepts` checked.
        guard let target = section.mapping[own], let from = format.pointee.streams[Int(own)],
              let to = stream(target) else { throw MediaError.cancelled }
        av_packet_rescale_ts(packet.pointer, from.pointee.time_base, to.pointee.time_base)
        packet.pointer.pointee.stream_index = target
        if section.isShifted {
            if section.offset == nil, let first = packet.dts != AV_NOPTS ? packet.dts : packet.timestamp {
                let firstTime = av_rescale_q(first, to.pointee.time_base, reel_av_time_base_q())
                section.offset = (section.startsAt ?? timelineEnd ?? firstTime) - firstTime
            }
            if let offset = section.offset, offset != 0 {
                let shift = av_rescale_q(offset, reel_av_time_base_q(), to.pointee.time_base)
                if packet.pointer.pointee.pts != AV_NOPTS { packet.pointer.pointee.pts += shift }
                if packet.pointer.pointee.dts != AV_NOPTS { packet.pointer.pointee.dts += shift }
            }
        }
        if !section.started.contains(own) {
            section.started.insert(own)
            packet.newParameters = changedParameters(from.pointee.codecpar, for: target, timeBase: to.pointee.time_base)
        }
        return packet
    }

    /// The section's parameters for stream `target` when they differ from what its decoder has.
    private func changedParameters(_ parameters: UnsafeMutablePointer<AVCodecParameters>, for target: Int32,
                                   timeBase: AVRational) -> CodecParameters? {
        guard let now = currentParameters[target]?.pointer ?? stream(target)?.pointee.codecpar else { return nil }
        let a = parameters.pointee, b = now.pointee
        var same = a.codec_id == b.codec_id && a.extradata_size == b.extradata_size
            && (a.width == 0 || a.width == b.width) && (a.height == 0 || a.height == b.height)
            && (a.sample_rate == 0 || a.sample_rate == b.sample_rate)
        if same, a.extradata_size > 0, let x = a.extradata, let y = b.extradata {
            same = memcmp(x, y, Int(a.extradata_size)) == 0
        }
        guard !same, let copy = CodecParameters(copying: parameters, timeBase: timeBase) else { return nil }
        currentParameters[target] = copy
        return copy
    }

    /// Keeps where the timeline has got to (a restarted one follows on from there).
    func noteTimeline(_ packet: Packet) {
        guard let time = packet.timestamp, let stream = stream(packet.streamIndex) else { return }
        let end = av_rescale_q(time + max(0, packet.duration), stream.pointee.time_base, reel_av_time_base_q())
        timelineEnd = max(timelineEnd ?? end, end)
    }
}
