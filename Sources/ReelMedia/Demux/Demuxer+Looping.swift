import ReelCore
internal import CFFmpeg

// What a seamless loop needs from the demux layer (ReelCore's `LoopMachine` decides; the
// engine's demux thread carries it out): the item's start, and packets of a later pass timed
// on and trimmed to the item's duration. State stays in the engine.

extension Demuxer {
    /// Where the item's timeline starts (the container's start time), `.zero` when it does not say.
    var itemStart: MediaTime {
        guard let format, format.pointee.start_time != AV_NOPTS else { return .zero }
        return MediaTime(value: format.pointee.start_time, timescale: Int32(AV_TIME_BASE))
    }

    /// Seeks back to the item's very beginning for its next pass: every selected stream reads
    /// from its first packet again. A seek to the start time alone is not that: MP4 puts an AAC
    /// stream's priming packet before 0, and a seek to 0 (by video) lands after it, so the
    /// decoder would run its first frame on without it and FFmpeg's `skip_samples` would trim
    /// nothing. So the seek goes by the stream whose first indexed packet is earliest, to that
    /// packet (the others, asked for a time before their first, start at theirs); without an
    /// index, to `start`.
    func seekToBeginning(start: MediaTime) throws {
        var earliest: (index: Int32, timestamp: Int64, time: MediaTime)?
        for index in [videoStreamIndex, audioStreamIndex].compactMap({ $0 }) {
            guard let stream = stream(index), avformat_index_get_entries_count(stream) > 0,
                  let entry = avformat_index_get_entry(stream, 0) else { continue }
            let time = timeBase(of: index).time(entry.pointee.timestamp)
            if earliest.map({ time < $0.time }) ?? true { earliest = (index, entry.pointee.timestamp, time) }
        }
        if let earliest, earliest.time <= start {
            try seek(streamIndex: earliest.index, timestamp: earliest.timestamp)
        } else if let index = videoStreamIndex ?? audioStreamIndex {
            try seek(streamIndex: index, timestamp: timeBase(of: index).timestamp(start))
        }
    }

    /// The sample rate of stream `index`, when it is audio.
    func sampleRate(of index: Int32) -> Int? {
        guard let rate = stream(index)?.pointee.codecpar?.pointee.sample_rate, rate > 0 else { return nil }
        return Int(rate)
    }
}

extension Demuxer {
    /// What one packet of audio stream `index` decodes to, when its codec's frames have one
    /// size (`frame_size`: AAC's 1024 samples); `nil` when they vary.
    func audioFrameDuration(of index: Int32) -> MediaTime? {
        guard let parameters = stream(index)?.pointee.codecpar?.pointee, parameters.frame_size > 0,
              parameters.sample_rate > 0 else { return nil }
        return MediaTime(value: Int64(parameters.frame_size), timescale: parameters.sample_rate)
    }
}

extension Packet {
    /// Times the packet `ticks` later (pts and dts, in its stream's time base).
    func shift(by ticks: Int64) {
        guard ticks != 0 else { return }
        if pointer.pointee.pts != AV_NOPTS { pointer.pointee.pts += ticks }
        if pointer.pointee.dts != AV_NOPTS { pointer.pointee.dts += ticks }
    }

    /// Has the decoder drop `samples` from the end of what this packet decodes to (the
    /// `AV_PKT_DATA_SKIP_SAMPLES` side data's discard padding, which libavcodec applies), keeping
    /// a skip at the start the demuxer put there and a larger padding it already asked for.
    func discardAtEnd(samples: Int) {
        guard samples > 0 else { return }
        let padding = UInt32(clamping: samples)
        if let data = skipSamplesData() {
            let current = readLE32(data + 4)
            if current < padding { writeLE32(padding, to: data + 4) }
            return
        }
        guard let data = av_packet_new_side_data(pointer, AV_PKT_DATA_SKIP_SAMPLES, 10) else { return }
        for i in 0..<10 { data[i] = 0 }
        writeLE32(padding, to: data + 4)
    }

    private func skipSamplesData() -> UnsafeMutablePointer<UInt8>? {
        let count = Int(pointer.pointee.side_data_elems)
        guard count > 0, let entries = pointer.pointee.side_data else { return nil }
        for i in 0..<count where entries[i].type == AV_PKT_DATA_SKIP_SAMPLES && Int(entries[i].size) >= 10 {
            return entries[i].data
        }
        return nil
    }

    private func readLE32(_ p: UnsafeMutablePointer<UInt8>) -> UInt32 {
        UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24
    }

    private func writeLE32(_ value: UInt32, to p: UnsafeMutablePointer<UInt8>) {
        for i in 0..<4 { p[i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }
}
