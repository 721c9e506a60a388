import Foundation
import ReelCore
import ReelMedia
import Synchronization

/// Fixture clips made on demand by Reel's own encoder (libavfilter sources,
/// libavcodec encoders): no media in git, no `ffmpeg` command at test time.
/// Each spec is encoded once per process and reused.
public enum Fixtures {
    /// The clips made so far and a counter for file names, guarded by the mutex. It is
    /// never held while encoding: two tests asking for the same new clip at once each
    /// encode it (to their own file) and the first to finish is kept, instead of one
    /// blocking a thread of the concurrency pool while the other encodes.
    private static let made = Mutex<(clips: [ClipSpec: URL], count: Int)>(([:], 0))
    private static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-fixtures-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// The file for `spec`, encoding it the first time.
    public static func clip(_ spec: ClipSpec) throws -> URL {
        let number = made.withTrackedLock { made -> Int? in
            if made.clips[spec] != nil { return nil }
            made.count += 1
            return made.count
        }
        guard let number else { return made.withTrackedLock { $0.clips[spec]! } }
        let ext: String
        switch spec.container {
        case .mp4, .mp4MoovAtEnd, .fragmentedMP4: ext = "mp4"
        case .mkv: ext = "mkv"
        case .webm: ext = "webm"
        case .avi: ext = "avi"
        case .mov: ext = "mov"
        }
        let url = directory.appendingPathComponent("clip-\(number)-\(spec.videoCodec?.rawValue ?? "none")-\(spec.audioCodec?.rawValue ?? "none").\(ext)")
        try ClipEncoder.encode(spec, to: url)
        let kept = made.withTrackedLock { made -> URL in
            if let first = made.clips[spec] { return first }
            made.clips[spec] = url
            return url
        }
        if kept != url { try? FileManager.default.removeItem(at: url) }
        return kept
    }

    /// The bytes of the clip for `spec`.
    public static func data(_ spec: ClipSpec) throws -> Data {
        try Data(contentsOf: clip(spec))
    }

    /// A file of this many random bytes, which no demuxer accepts.
    public static func garbage(count: Int = 64 * 1024, seed: UInt32 = 99) -> Data {
        LoaderContract.pattern(count: count, seed: seed)
    }
}
