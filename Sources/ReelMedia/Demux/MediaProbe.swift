import Foundation
import ReelCore
import ReelThreads

/// Reads what a media file holds, through a loader.
public enum MediaProbe {
    /// Opens `url` through `loader`, probes every stream fully, and describes it.
    public static func probe(_ url: URL, loader: any ResourceLoader) async throws -> MediaInfo {
        try await onOwnThread(named: "reel.probe") {
            let demuxer = try Demuxer(url: url, loader: loader, fastStart: false)
            defer { demuxer.close() }
            return demuxer.info
        }
    }
}

extension MediaProbe {
    /// How many bytes from the start of `url` hold its first `seconds` of media,
    /// from the container's index (the MP4 sample tables, a Matroska cue list
    /// already read): the end of the last sample, of any stream, that starts before
    /// `seconds`. `nil` when the index does not say (no index in the header, a
    /// stream format). Opening reads the header through `loader`, which a caching
    /// loader keeps.
    public static func byteCount(forSeconds seconds: Double, of url: URL, loader: any ResourceLoader) async -> Int64? {
        guard seconds > 0 else { return 0 }
        return try? await onOwnThread(named: "reel.estimate") { () -> Int64? in
            let demuxer = try Demuxer(url: url, loader: loader, fastStart: true)
            defer { demuxer.close() }
            var end: Int64?
            for index in [demuxer.videoStreamIndex, demuxer.audioStreamIndex].compactMap({ $0 }) {
                let base = demuxer.timeBase(of: index)
                let timestamp = Int64((seconds * Double(base.den) / Double(base.num)).rounded(.up))
                guard let position = demuxer.bytePosition(streamIndex: index, timestamp: timestamp), position > 0 else { continue }
                end = max(end ?? 0, position)
            }
            return end
        }
    }
}

extension MediaProbe {
    /// Why `url` (`size` bytes) is not a playable video, or `nil` when it is: FFmpeg cannot open
    /// it, it has no video stream, its first video frame does not decode, or it is cut short
    /// (its index — MP4 sample tables, Matroska cues — refers to bytes past its end). The
    /// accounts server refuses uploads with it. A reason may name `url`'s path.
    public static func playabilityProblem(of url: URL, size: Int64, loader: any ResourceLoader) async -> String? {
        let info: MediaInfo
        do {
            info = try await probe(url, loader: loader)
        } catch {
            return "\(error)"
        }
        guard info.videoStream != nil else { return "it has no video stream" }
        let frames: Int
        do {
            frames = try await onOwnThread(named: "reel.playable") {
                try SequentialDecoder.decodeVideo(url, loader: loader) { _ in false }
            }
        } catch {
            return "\(error)"
        }
        guard frames > 0 else { return "no video frame decodes" }
        if let seconds = info.duration?.seconds, seconds > 0,
           let end = await byteCount(forSeconds: seconds + 1, of: url, loader: loader), end > size {
            return "it is cut short (its index needs \(end) bytes, it has \(size))"
        }
        return nil
    }
}
