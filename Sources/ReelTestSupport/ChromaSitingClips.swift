import Foundation
import Synchronization

/// A picture whose colour changes every few pixels, subsampled to 4:2:0 by FFmpeg's zscale with
/// its chroma sited one way (`data`) and tagged in the HEVC stream (VUI `chroma_loc_info`) as
/// sited `tag`, losslessly: for testing that a renderer puts chroma samples where the tag says.
/// Made with the `ffmpeg` command (zscale and libx265), once per process.
public enum ChromaSitingClips {
    /// The sitings FFmpeg's zscale writes and x265 tags (H.273 `ChromaSampleLocType` 0, 1, 2).
    public enum Site: String, Sendable, CaseIterable {
        case left, center, topLeft

        var zscaleName: String { rawValue.lowercased() }
        var h273: Int { Site.allCases.firstIndex(of: self)! }
    }

    public static let width = 320
    public static let height = 180

    /// The pattern before subsampling, in R'G'B' (BT.709): red along x, green along y, blue
    /// along the diagonal, each a sinusoid of a few pixels' period.
    static let pattern = "color=c=black:size=\(width)x\(height):rate=25,format=gbrp,"
        + "geq=r='128+100*sin(2*PI*X/16)':g='128+60*sin(2*PI*Y/16)':b='128+100*cos(2*PI*(X+Y)/16)'"

    private static let made = Mutex<[String: URL]>([:])

    /// The pattern sited `data` and tagged `tag`, as 8-bit 4:2:0 lossless HEVC, BT.709 limited.
    public static func clip(data: Site, tag: Site) throws -> URL {
        let key = "\(data.rawValue)-\(tag.rawValue)"
        if let url = made.withLock({ $0[key] }) { return url }
        let url = try directory().appendingPathComponent("chroma-\(key)-\(UUID().uuidString.prefix(8)).mp4")
        let filter = pattern + ",zscale=min=gbr:tin=bt709:pin=bt709:rin=full:m=bt709:t=bt709:p=bt709:r=limited:chromal=\(data.zscaleName),format=yuv420p"
        _ = try HDRBars.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "nullsrc=size=16x16", "-frames:v", "1",
                             "-filter_complex", filter, "-c:v", "libx265", "-x265-params", "log-level=error:lossless=1:chromaloc=\(tag.h273)",
                             "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", url.path])
        return made.withLock { made in
            if let first = made[key] { return first }
            made[key] = url
            return url
        }
    }

    /// The pattern itself as packed RGB (what a perfect upsampling would give back).
    public static func original() throws -> [UInt8] {
        let file = try directory().appendingPathComponent("chroma-original-\(UUID().uuidString.prefix(8)).raw")
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try HDRBars.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "nullsrc=size=16x16", "-frames:v", "1",
                             "-filter_complex", pattern + ",format=rgb24", "-f", "rawvideo", "-pix_fmt", "rgb24", file.path])
        return [UInt8](try Data(contentsOf: file))
    }

    private static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hdr-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
