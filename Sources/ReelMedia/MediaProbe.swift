import Foundation
import ReelCore

/// Reads what a media file holds, through a loader.
public enum MediaProbe {
    /// Opens `url` through `loader`, probes every stream fully, and describes it.
    public static func probe(_ url: URL, loader: any ResourceLoader) async throws -> MediaInfo {
        try await runOnDedicatedThread(name: "reel.probe") {
            let demuxer = try Demuxer(url: url, loader: loader, fastStart: false)
            defer { demuxer.close() }
            return demuxer.info
        }
    }
}
