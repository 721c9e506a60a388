import Foundation
import Synchronization

/// SMPTE HD bars (FFmpeg's `smptehdbars`) as an SDR BT.709 clip and carried as HDR the way a
/// colourist would: FFmpeg's `zscale` (libzimg) from the SDR bars to BT.2020 primaries and
/// matrix with the HLG or PQ transfer, SDR white at 203 nits (BT.2408), 10-bit HEVC. Made with
/// the `ffmpeg` command (Reel's own encoder has no zscale), once per process.
///
/// zscale is told `agamma=0`: with its default (`agamma=1`, "allow approximate gamma") zimg
/// 3.0 skips its BT.2100 HLG path (the OOTF scaling all three components by the luminance,
/// `AribB67Operation`) for a per-component 1.2 power (`arib_b67_inverse_eotf`), which is not
/// BT.2100's HLG. `approximateGamma: true` makes those bars, to measure the difference.
public enum HDRBars {
    public enum Kind: String, Sendable, CaseIterable {
        case sdr, hlg, pq
    }

    public static let width = 640
    public static let height = 360

    /// `nil` when the `ffmpeg` command is missing or has no zscale filter.
    public static var isAvailable: Bool { available }

    private static let available: Bool = {
        guard let filters = try? run(["ffmpeg", "-hide_banner", "-filters"]) else { return false }
        return filters.contains(" zscale ")
    }()

    private static let made = Mutex<[String: URL]>([:])

    /// The clip of `kind`, `frames` frames long (made the first time).
    public static func clip(_ kind: Kind, frames: Int = 3, pixelFormat: String = "yuv420p10le",
                            approximateGamma: Bool = false) throws -> URL {
        let key = "\(kind.rawValue)-\(frames)-\(pixelFormat)\(approximateGamma ? "-agamma" : "")"
        if let url = made.withLock({ $0[key] }) { return url }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hdr-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("bars-\(key)-\(UUID().uuidString.prefix(8)).mp4")
        let source = "smptehdbars=size=\(width)x\(height):rate=25"
        var arguments = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-frames:v", "\(frames)"]
        switch kind {
        case .sdr:
            arguments += ["-vf", "format=\(pixelFormat)", "-c:v", "libx265", "-x265-params", "log-level=error:lossless=0:qp=4",
                          "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"]
        case .hlg, .pq:
            let transfer = kind == .pq ? "smpte2084" : "arib-std-b67"
            arguments += ["-vf", "zscale=tin=bt709:min=bt709:pin=bt709:rin=limited:t=\(transfer):p=bt2020:m=bt2020nc:r=limited:npl=203:agamma=\(approximateGamma ? 1 : 0),format=\(pixelFormat)",
                          "-c:v", "libx265", "-x265-params", "log-level=error:qp=4",
                          "-color_primaries", "bt2020", "-color_trc", transfer, "-colorspace", "bt2020nc"]
        }
        arguments += ["-tag:v", "hvc1", url.path]
        _ = try run(arguments)
        return made.withLock { made in
            if let first = made[key] { return first }
            made[key] = url
            return url
        }
    }

    /// A 10-bit PQ grey ramp across the picture (`steps` levels, left to right, from PQ code
    /// `from` to `to` of 1023), lossless 4:4:4 HEVC.
    public static func pqRamp(from: Int = 64, to: Int = 640) throws -> URL {
        let key = "ramp-\(from)-\(to)"
        if let url = made.withLock({ $0[key] }) { return url }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hdr-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("\(key)-\(UUID().uuidString.prefix(8)).mp4")
        let span = to - from
        // Y' = from + x·span/width (in 10-bit codes), chroma neutral.
        let expression = "geq=lum='(\(from)+X*\(span)/W)*64':cb=512*64:cr=512*64"
        _ = try run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=black:size=\(width)x64:rate=25,format=yuv444p16le",
                     "-frames:v", "1", "-vf", "\(expression),format=yuv444p10le", "-c:v", "libx265", "-x265-params", "log-level=error:lossless=1",
                     "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-color_range", "pc", url.path])
        return made.withLock { made in
            if let first = made[key] { return first }
            made[key] = url
            return url
        }
    }

    /// Runs a command (through `/usr/bin/env`, so by name) to its end with no standard input and
    /// returns its output, standard output and error together; a non-zero exit throws with it.
    @discardableResult
    public static func run(_ command: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw CommandFailed(command: command.joined(separator: " "), output: text)
        }
        return text
    }

    struct CommandFailed: Error, CustomStringConvertible {
        let command: String
        let output: String
        var description: String { "\(command) failed: \(output)" }
    }
}

extension HDRBars {
    /// The first frame of `url` as FFmpeg converts it to packed RGB: with zscale, which upsamples
    /// the chroma (bicubic) from where the stream says its samples sit, as Reel does. (`-pix_fmt
    /// rgb24` alone goes through swscale's default, which takes every chroma sample as centred.)
    public static func rgb24(_ url: URL) throws -> [UInt8] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("reel-rgb-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: file) }
        try run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", url.path, "-frames:v", "1",
                 "-vf", "zscale=m=gbr:r=full:f=bicubic,format=gbrp,format=rgb24", "-f", "rawvideo", "-pix_fmt", "rgb24", file.path])
        return [UInt8](try Data(contentsOf: file))
    }
}
