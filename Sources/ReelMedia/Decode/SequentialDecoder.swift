import Foundation
import ReelCore
internal import CFFmpeg

/// Decodes a file's video stream start to end on the calling thread: no queues,
/// no clock, no presentation. The plain `av_read_frame` → `avcodec_send_packet`
/// → `avcodec_receive_frame` loop — the reference the player's output is checked
/// against, and the decode-only baseline of `reel bench playback`.
public enum SequentialDecoder {
    /// Calls `body` with every decoded video frame in presentation order; stop
    /// early by returning `false`. Returns the number of frames decoded.
    @discardableResult
    public static func decodeVideo(_ url: URL, loader: any ResourceLoader, threads: Int = 0,
                                   _ body: (VideoFrame) -> Bool) throws -> Int {
        let demuxer = try Demuxer(url: url, loader: loader, fastStart: false)
        defer { demuxer.close() }
        guard let index = demuxer.videoStreamIndex, let stream = demuxer.stream(index) else { return 0 }
        let decoder = try Decoder(parameters: stream.pointee.codecpar, timeBase: stream.pointee.time_base, url: url, threads: Int32(threads))
        let timeBase = TimeBase(stream.pointee.time_base)
        let rotation = demuxer.rotation(of: index)
        var count = 0
        var keepGoing = true

        func drain() throws {
            while keepGoing {
                switch try decoder.receive() {
                case .frame(let box):
                    let f = box.pointer.pointee
                    let pts = f.best_effort_timestamp != AV_NOPTS ? timeBase.time(f.best_effort_timestamp) : .zero
                    let frameDuration = reel_frame_duration(box.pointer)
                    let duration = frameDuration > 0 ? timeBase.time(frameDuration) : nil
                    count += 1
                    keepGoing = body(VideoFrame(box: box, pts: pts, duration: duration, rotation: rotation, serial: 0))
                case .damaged:
                    continue
                case .needsInput, .endOfStream:
                    return
                }
            }
        }

        while keepGoing, let packet = try demuxer.readPacket() {
            guard packet.streamIndex == index else { continue }
            while try !decoder.send(packet) { try drain() }
            try drain()
        }
        if keepGoing {
            _ = try decoder.send(nil)
            try drain()
        }
        return count
    }
}
