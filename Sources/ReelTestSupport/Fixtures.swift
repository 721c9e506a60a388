import Foundation
import ReelCore
import ReelMedia

/// Fixture clips made on demand by Reel's own encoder (libavfilter sources,
/// libavcodec encoders): no media in git, no `ffmpeg` command at test time.
/// Each spec is encoded once per process and reused.
public enum Fixtures {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var made: [ClipSpec: URL] = [:]
    private static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-fixtures-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// The file for `spec`, encoding it the first time.
    public static func clip(_ spec: ClipSpec) throws -> URL {
        lock.lock()
        defer { lock.unlock() }
        if let url = made[spec] { return url }
        let ext: String
        switch spec.container {
        case .mp4, .mp4MoovAtEnd, .fragmentedMP4: ext = "mp4"
        case .mkv: ext = "mkv"
        case .webm: ext = "webm"
        case .avi: ext = "avi"
        case .mov: ext = "mov"
        }
        let url = directory.appendingPathComponent("clip-\(made.count)-\(spec.videoCodec?.rawValue ?? "none")-\(spec.audioCodec?.rawValue ?? "none").\(ext)")
        try ClipEncoder.encode(spec, to: url)
        made[spec] = url
        return url
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
