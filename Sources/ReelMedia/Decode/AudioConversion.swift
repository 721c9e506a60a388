import Foundation
import ReelCore
internal import CFFmpeg

/// Decoded audio in the sinks' format: interleaved float samples starting at `pts`.
struct AudioChunk: Sendable {
    var samples: [Float]
    var pts: MediaTime
    var serial: Int
    var channels: Int
    var sampleRate: Int

    var frameCount: Int { samples.count / channels }
    var duration: MediaTime { MediaTime(value: Int64(frameCount), timescale: Int32(sampleRate)) }
}

/// Converts decoded frames of any layout, rate and sample format to the output
/// format with libswresample.
final class Resampler {
    fileprivate var context: OpaquePointer?
    fileprivate var inputKey: (Int32, Int32, UInt64, Int32)?
    /// Frames given to and taken from the current context (for the tail at the end).
    fileprivate var inputFrames: Int64 = 0
    fileprivate var outputFrames: Int64 = 0
    let output: AudioFormat

    init(output: AudioFormat) {
        self.output = output
    }

    deinit { swr_free(&context) }

    /// `frame` converted; the result's first sample is `delay` behind the input's
    /// first sample (the resampler's own latency).
    func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws -> (samples: [Float], delay: MediaTime) {
        let f = frame.pointee
        let key = (f.format, f.sample_rate, f.ch_layout.u.mask, f.ch_layout.nb_channels)
        if context == nil || inputKey.map({ $0 != key }) ?? true {
            swr_free(&context)
            var outLayout = AVChannelLayout()
            av_channel_layout_default(&outLayout, Int32(output.channels))
            defer { av_channel_layout_uninit(&outLayout) }
            var inLayout = AVChannelLayout()
            if av_channel_layout_copy(&inLayout, &frame.pointee.ch_layout) < 0 || inLayout.nb_channels == 0 || inLayout.order == AV_CHANNEL_ORDER_UNSPEC {
                av_channel_layout_uninit(&inLayout)
                av_channel_layout_default(&inLayout, max(1, f.ch_layout.nb_channels))
            }
            defer { av_channel_layout_uninit(&inLayout) }
            try ffcall("swr_alloc_set_opts2") {
                swr_alloc_set_opts2(&context, &outLayout, AV_SAMPLE_FMT_FLT, Int32(output.sampleRate),
                                    &inLayout, AVSampleFormat(rawValue: f.format), f.sample_rate, 0, nil)
            }
            try ffcall("swr_init") { swr_init(context) }
            inputKey = key
            inputFrames = 0
            outputFrames = 0
        }
        let delayFrames = swr_get_delay(context, Int64(output.sampleRate))
        let capacity = Int(swr_get_out_samples(context, f.nb_samples)) + 32
        var samples = [Float](repeating: 0, count: capacity * output.channels)
        let produced = samples.withUnsafeMutableBytes { raw -> Int32 in
            var out: UnsafeMutablePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return withUnsafeMutablePointer(to: &out) { outPointer in
                let input = UnsafeMutablePointer<UnsafePointer<UInt8>?>(OpaquePointer(frame.pointee.extended_data))
                return swr_convert(context, outPointer, Int32(capacity), input, f.nb_samples)
            }
        }
        if produced < 0 {
            throw MediaError.ffmpeg(operation: "swr_convert", code: produced, message: ffmpegErrorString(produced), url: nil)
        }
        samples.removeSubrange(Int(produced) * output.channels..<samples.count)
        inputFrames += Int64(f.nb_samples)
        outputFrames += Int64(produced)
        return (samples, MediaTime(value: delayFrames, timescale: Int32(output.sampleRate)))
    }
}

extension Resampler {
    /// What the resampler still holds at the end of the input (its filter's delay: a few
    /// milliseconds, or all of an input shorter than the filter), converted; empty when it holds
    /// nothing. libswresample releases held input only once it has produced output, so silence
    /// is pushed in behind it, and the output is cut where the input's own samples end.
    func flush() -> [Float] {
        guard let context, let inputRate = inputKey?.1, inputRate > 0, inputFrames > 0 else { return [] }
        let expected = (inputFrames * Int64(output.sampleRate) + Int64(inputRate) / 2) / Int64(inputRate)
        let missing = Int(expected - outputFrames)
        guard missing > 0 else { return [] }
        swr_inject_silence(context, Int32(swr_get_delay(context, Int64(inputRate))) + inputRate / 100 + 64)
        let capacity = Int(swr_get_out_samples(context, 0)) + 32
        var samples = [Float](repeating: 0, count: capacity * output.channels)
        let produced = samples.withUnsafeMutableBytes { raw -> Int32 in
            var out: UnsafeMutablePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return withUnsafeMutablePointer(to: &out) { swr_convert(context, $0, Int32(capacity), nil, 0) }
        }
        inputFrames = 0
        outputFrames = 0
        guard produced > 0 else { return [] }
        return Array(samples.prefix(min(Int(produced), missing) * output.channels))
    }

    /// Forgets what the resampler holds (a seek: the next input does not follow on).
    func reset() {
        swr_free(&context)
        inputKey = nil
        inputFrames = 0
        outputFrames = 0
    }
}

/// Changes tempo without changing pitch, with libavfilter's `atempo`.
final class TimeStretcher {
    private let lavfi: ReelLavfi
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var source: UnsafeMutablePointer<AVFilterContext>?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    let format: AudioFormat
    private(set) var tempo: Double
    private var nextPts: Int64 = 0

    init(format: AudioFormat, tempo: Double) throws {
        self.format = format
        self.tempo = tempo
        lavfi = try Lavfi.functions()
        try build()
    }

    deinit { lavfi.avfilter_graph_free(&graph) }

    private func build() throws {
        lavfi.avfilter_graph_free(&graph)
        guard let graph = lavfi.avfilter_graph_alloc() else {
            throw MediaError.ffmpeg(operation: "avfilter_graph_alloc", code: -12, message: "out of memory", url: nil)
        }
        self.graph = graph
        graph.pointee.nb_threads = 1
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(format.channels))
        defer { av_channel_layout_uninit(&layout) }
        var layoutName = [CChar](repeating: 0, count: 64)
        av_channel_layout_describe(&layout, &layoutName, layoutName.count)
        let name = String(decoding: layoutName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let sourceArgs = "sample_rate=\(format.sampleRate):sample_fmt=flt:channel_layout=\(name):time_base=1/\(format.sampleRate)"
        try ffcall("avfilter_graph_create_filter (abuffer)") {
            lavfi.avfilter_graph_create_filter(&source, lavfi.avfilter_get_by_name("abuffer"), "in", sourceArgs, nil, graph)
        }
        var tempoFilter: UnsafeMutablePointer<AVFilterContext>?
        try ffcall("avfilter_graph_create_filter (atempo)") {
            lavfi.avfilter_graph_create_filter(&tempoFilter, lavfi.avfilter_get_by_name("atempo"), "tempo", "tempo=\(tempo)", nil, graph)
        }
        try ffcall("avfilter_graph_create_filter (abuffersink)") {
            lavfi.avfilter_graph_create_filter(&sink, lavfi.avfilter_get_by_name("abuffersink"), "out", nil, nil, graph)
        }
        try ffcall("avfilter_link") { lavfi.avfilter_link(source, 0, tempoFilter, 0) }
        try ffcall("avfilter_link") { lavfi.avfilter_link(tempoFilter, 0, sink, 0) }
        try ffcall("avfilter_graph_config") { lavfi.avfilter_graph_config(graph, nil) }
        nextPts = 0
    }

    /// Changes the tempo in place (the filter keeps its state, so there is no gap).
    func setTempo(_ newTempo: Double) throws {
        guard newTempo != tempo else { return }
        tempo = newTempo
        var response = [CChar](repeating: 0, count: 64)
        let code = lavfi.avfilter_graph_send_command(graph, "tempo", "tempo", String(newTempo), &response, Int32(response.count), 0)
        if code < 0 { try build() }
    }

    /// Feeds `samples` and returns what the filter has ready.
    func process(_ samples: [Float]) throws -> [Float] {
        guard !samples.isEmpty else { return try drainReady() }
        guard let frame = FrameBox() else { return [] }
        let frames = samples.count / format.channels
        frame.pointer.pointee.format = AV_SAMPLE_FMT_FLT.rawValue
        frame.pointer.pointee.sample_rate = Int32(format.sampleRate)
        av_channel_layout_default(&frame.pointer.pointee.ch_layout, Int32(format.channels))
        frame.pointer.pointee.nb_samples = Int32(frames)
        frame.pointer.pointee.pts = nextPts
        nextPts += Int64(frames)
        try ffcall("av_frame_get_buffer") { av_frame_get_buffer(frame.pointer, 0) }
        samples.withUnsafeBytes { raw in
            frame.pointer.pointee.data.0?.update(from: raw.bindMemory(to: UInt8.self).baseAddress!, count: raw.count)
        }
        try ffcall("av_buffersrc_add_frame") { lavfi.av_buffersrc_add_frame(source, frame.pointer) }
        return try drainReady()
    }

    private func drainReady() throws -> [Float] {
        var out: [Float] = []
        while true {
            guard let frame = FrameBox() else { break }
            let code = lavfi.av_buffersink_get_frame(sink, frame.pointer)
            if code == AVERROR_EAGAIN_CODE || code == AVERROR_EOF_CODE { break }
            if code < 0 {
                throw MediaError.ffmpeg(operation: "av_buffersink_get_frame", code: code, message: ffmpegErrorString(code), url: nil)
            }
            let count = Int(frame.pointer.pointee.nb_samples) * format.channels
            if let data = frame.pointer.pointee.data.0 {
                data.withMemoryRebound(to: Float.self, capacity: count) { floats in
                    out.append(contentsOf: UnsafeBufferPointer(start: floats, count: count))
                }
            }
        }
        return out
    }

    /// Ends the input and returns what the filter still holds (the end of the stream).
    func finish() throws -> [Float] {
        let code = lavfi.av_buffersrc_add_frame(source, nil)
        if code < 0, code != AVERROR_EOF_CODE {
            throw MediaError.ffmpeg(operation: "av_buffersrc_add_frame", code: code, message: ffmpegErrorString(code), url: nil)
        }
        return try drainReady()
    }

    /// Forgets buffered audio (after a seek).
    func reset() throws { try build() }
}
