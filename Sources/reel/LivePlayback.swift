import ArgumentParser
import Foundation
import ReelCore
import ReelStreaming

/// `reel play` of an HLS stream over HTTP goes through Reel's own segment scheduler
/// (ReelStreaming's `HLSSchedulingLoader`, which the engine offers every playlist it opens),
/// live or not: a master's variants switch as the adaptive rule says (`--no-adaptive` holds the
/// first, `--variant-plan` switches where the plan says). `--scheduler ffmpeg` leaves every
/// stream to FFmpeg's HLS demuxer, as before.
enum LivePlayback {
    /// Who fetches an HLS stream's segments.
    enum Scheduler: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Reel's `LiveSegmentReader` feeding FFmpeg's mov or mpegts demuxer.
        case reel
        /// FFmpeg's HLS demuxer, as before.
        case ffmpeg
    }

    /// Parses `--variant-plan` ("2:1,5:0": before segment 2 switch to rank 1, before 5 to rank 0).
    static func parsePlan(_ text: String) -> [Int: Int]? {
        var plan: [Int: Int] = [:]
        for entry in text.split(separator: ",") {
            let pair = entry.split(separator: ":")
            guard pair.count == 2, let segment = Int(pair[0]), let rank = Int(pair[1]), segment >= 0, rank >= 0 else { return nil }
            plan[segment] = rank
        }
        return plan.isEmpty ? nil : plan
    }
}
