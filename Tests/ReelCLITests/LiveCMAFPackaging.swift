import Foundation
import ReelOrigin
import ReelStreaming
import ReelTestSupport

/// A live stream for the tests' origin: `seconds` of 160×120 testsrc2 at 30 fps with a keyframe
/// every `keyframeInterval` frames, packaged by FFmpeg's DASH muxer as CMAF (2 s segments of
/// four 0.5 s fragments, and an HLS playlist beside the manifest), each segment with its parts;
/// and the whole stream as one file, what every frame is checked against.
func packagedLiveCMAF(_ scratch: Scratch, seconds: Int, keyframeInterval: Int) async throws
    -> (segments: [LiveHLSStream.Segment], initSection: String?, whole: URL) {
    let env = URL(fileURLWithPath: "/usr/bin/env")
    let made = try await runSeparately(env, [
        "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=\(seconds)",
        "-c:v", "libx264", "-g", "\(keyframeInterval)", "-keyint_min", "\(keyframeInterval)", "-sc_threshold", "0", "-bf", "0",
        "-pix_fmt", "yuv420p",
        "-f", "dash", "-seg_duration", "2", "-frag_type", "duration", "-frag_duration", "0.5", "-hls_playlist", "1",
        "-use_template", "1", "-use_timeline", "0", scratch.file("manifest.mpd"),
    ])
    guard made.status == 0 else { throw PackagingFailed(message: "ffmpeg: \(made.stderr)") }
    let vod = try HLSMediaPlaylist.parse(try Data(contentsOf: scratch.url.appendingPathComponent("media_0.m3u8")))
    let segments = try vod.segments.map { segment -> LiveHLSStream.Segment in
        let bytes = try Data(contentsOf: scratch.url.appendingPathComponent(segment.uri))
        return .init(uri: "/" + segment.uri, duration: segment.duration,
                     parts: LiveHLSStream.fragmentParts([UInt8](bytes), duration: segment.duration))
    }
    guard let initSection = vod.initSection else { throw PackagingFailed(message: "no init section in media_0.m3u8") }
    var whole = try Data(contentsOf: scratch.url.appendingPathComponent(initSection.uri))
    for segment in vod.segments { whole += try Data(contentsOf: scratch.url.appendingPathComponent(segment.uri)) }
    let wholeFile = scratch.url.appendingPathComponent("whole.mp4")
    try whole.write(to: wholeFile)
    return (segments, "/" + initSection.uri, wholeFile)
}

/// Packaging a live test stream failed: what FFmpeg said, or what its output lacked.
struct PackagingFailed: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
