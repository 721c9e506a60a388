import Foundation
import Testing
import ReelCore
import ReelLoading
@testable import ReelMedia
import ReelTestSupport

/// HDR frames on the CPU path (software renderer, terminal, covers): SMPTE bars carried as
/// PQ and HLG by FFmpeg's zscale come back within ΔE 4 of the SDR bars; SDR frames come out
/// as FFmpeg converts them; a 10-bit PQ ramp has no step larger than 2 levels.
@Suite(.enabled(if: HDRBars.isAvailable, "ffmpeg with zscale is needed to make the HDR bars"))
struct HDRColorTests {
    static func firstFrame(_ url: URL) throws -> VideoFrame {
        var first: VideoFrame?
        try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
            first = frame
            return false
        }
        return try #require(first)
    }

    @Test func tagsAreReadFromTheStream() async throws {
        let (pq, hlg, sdr) = try await offThePool {
            (try Self.firstFrame(HDRBars.clip(.pq)).color, try Self.firstFrame(HDRBars.clip(.hlg)).color,
             try Self.firstFrame(HDRBars.clip(.sdr)).color)
        }
        #expect(pq.transfer == .pq && pq.primaries == .bt2020 && pq.matrix == .bt2020 && pq.range == .limited)
        #expect(pq.assumed.isEmpty && pq.needsMapping)
        #expect(hlg.transfer == .hlg && hlg.primaries == .bt2020)
        #expect(sdr.transfer == .bt709 && sdr.primaries == .bt709 && !sdr.needsMapping)
    }

    @Test(arguments: [HDRBars.Kind.hlg, .pq])
    func barsComeBackWithinDeltaE4(kind: HDRBars.Kind) async throws {
        let (window, cells, before) = try await offThePool {
            let sdr = try Self.firstFrame(HDRBars.clip(.sdr))
            let hdr = try Self.firstFrame(HDRBars.clip(kind))
            // The software renderer's scaler (bilinear, at the picture's size).
            let window = ColorDifference.meanDeltaE76(try FrameScaler(smooth: false).rgb(hdr, width: 640, height: 360).bytes,
                                                      try FrameScaler(smooth: false).rgb(sdr, width: 640, height: 360).bytes)
            // The terminal's (area averaging, a few cells).
            let cells = ColorDifference.meanDeltaE76(try FrameScaler(smooth: true).rgb(hdr, width: 160, height: 90).bytes,
                                                     try FrameScaler(smooth: true).rgb(sdr, width: 160, height: 90).bytes)
            // Without the mapping (as before): far off.
            let before = ColorDifference.meanDeltaE76(Self.unmapped(hdr), try FrameScaler(smooth: false).rgb(sdr, width: 640, height: 360).bytes)
            return (window, cells, before)
        }
        print("HDR bars \(kind): CPU path mean ΔE \(window), terminal cells \(cells), shown as BT.709 \(before)")
        #expect(window < 4)
        #expect(cells < 8)
        #expect(before > 10)
    }

    /// Reel's HLG is BT.2100's (the OOTF scales the three components by the luminance's), not
    /// zscale's default approximation (`agamma=1`: the 1.2 system gamma on each component):
    /// bars written the BT.2100 way come back close, bars written the approximate way come back
    /// measurably farther (their saturated bars desaturated; greys agree either way).
    @Test func hlgIsBT2100sNotZscalesApproximation() async throws {
        let (exact, approximate) = try await offThePool {
            let sdr = try FrameScaler(smooth: false).rgb(Self.firstFrame(HDRBars.clip(.sdr)), width: 640, height: 360).bytes
            let exact = try FrameScaler(smooth: false).rgb(Self.firstFrame(HDRBars.clip(.hlg)), width: 640, height: 360).bytes
            let approximate = try FrameScaler(smooth: false).rgb(Self.firstFrame(HDRBars.clip(.hlg, approximateGamma: true)),
                                                                 width: 640, height: 360).bytes
            return (ColorDifference.meanDeltaE76(exact, sdr), ColorDifference.meanDeltaE76(approximate, sdr))
        }
        print("HLG bars: mean ΔE \(exact) (zscale agamma=0, BT.2100), \(approximate) (agamma=1, per-component gamma)")
        #expect(exact < 4)
        #expect(approximate > exact + 2)
    }

    /// The frame shown as BT.709 video, as Reel did before it read the transfer.
    static func unmapped(_ frame: VideoFrame) -> [UInt8] {
        var out = [UInt8]()
        let reader = SampleReader(frame)
        frame.withPlanes { planes in
            for y in 0..<frame.height {
                for x in 0..<frame.width {
                    let rgb = reader.rgb(planes, x: x, y: y)
                    out += [rgb.x, rgb.y, rgb.z].map { UInt8(($0 * 255).rounded()) }
                }
            }
        }
        return out
    }

    @Test func sdrIsConvertedAsFFmpegConvertsIt() async throws {
        let (ours, theirs) = try await offThePool {
            let url = try HDRBars.clip(.sdr)
            return (try Self.firstFrame(url).rgbImage().bytes, try HDRBars.rgb24(url))
        }
        try #require(ours.count == theirs.count)
        let difference = ColorDifference.meanDeltaE76(ours, theirs)
        print("SDR bars: mean ΔE \(difference) from FFmpeg's rgb24")
        #expect(difference < 1)
    }

    @Test func aTenBitPQRampHasNoStepOverTwoLevels() async throws {
        let (depth, transfer, image) = try await offThePool {
            let frame = try Self.firstFrame(HDRBars.pqRamp())
            return (frame.pixelFormat.bitDepth, frame.color.transfer, try FrameScaler(smooth: false).rgb(frame, width: frame.width, height: frame.height))
        }
        #expect(depth == 10 && transfer == .pq)
        let (largest, levels) = Self.steps(image, row: 20)
        print("PQ ramp (CPU): largest step \(largest), \(levels) distinct levels")
        #expect(largest <= 2)
        #expect(levels > 100)
    }

    /// The largest difference between neighbouring pixels of `row` (any channel), over the
    /// mean of 8 rows to see past the dither, and how many grey levels the row has.
    static func steps(_ image: RGBImage, row: Int) -> (Int, Int) {
        var means = [Double](repeating: 0, count: image.width)
        for y in row..<(row + 8) {
            for x in 0..<image.width { means[x] += Double(image.bytes[(y * image.width + x) * 3 + 1]) / 8 }
        }
        var largest = 0.0
        for x in 1..<image.width { largest = max(largest, abs(means[x] - means[x - 1])) }
        return (Int(largest.rounded(.up)), Set(means.map { Int($0.rounded()) }).count)
    }
}

@Suite struct DolbyVisionPolicyTests {
    static func record(profile: Int, compatibility: Int) -> DolbyVisionConfiguration {
        DolbyVisionConfiguration(profile: profile, level: 6, compatibilityID: compatibility,
                                 hasBaseLayer: true, hasEnhancementLayer: false, hasRPU: true)
    }

    @Test func profilesWithAShowableBasePlay() {
        // iPhone HLG (8.4), HDR10-compatible (8.1), SDR-compatible (8.2), dual layer (7.6).
        for (profile, compatibility) in [(8, 4), (8, 1), (8, 2), (7, 6), (9, 2)] {
            #expect(Self.record(profile: profile, compatibility: compatibility).hasCompatibleBase)
        }
        #expect(Self.record(profile: 8, compatibility: 4).name == "8.4")
    }

    @Test func profileFiveIsRefused() {
        let five = Self.record(profile: 5, compatibility: 0)
        #expect(!five.hasCompatibleBase)
        #expect(five.name == "5")
    }
}
