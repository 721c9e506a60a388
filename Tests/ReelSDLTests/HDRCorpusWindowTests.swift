import Foundation
import Testing
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
@testable import ReelSDL

extension XvfbWindowSuites {
    /// Real HDR clips from other projects' test assets (corpus/files, sources and licences in
    /// corpus/MANIFEST.tsv) in the window, with each renderer, against FFmpeg's zscale + tonemap
    /// of the same frame: the stream's tags are read, the colours stay near FFmpeg's, and no
    /// highlight FFmpeg keeps is clipped. FFmpeg has no BT.2390 curve (its `tonemap` filter offers
    /// Möbius, Hable, Reinhard…), so the bounds are those of two different tone curves, not of one.
    @Suite(.enabled(if: HDRCorpusClip.canCompare, "ffmpeg with zscale and tonemap is needed for the reference"))
    struct HDRCorpusWindowTests {
        @Test(arguments: HDRCorpusClip.all)
        func readsTheTagsAndKeepsNearFFmpegsToneMapping(_ clip: HDRCorpusClip) async throws {
            let frame = try HDRWindowTests.firstFrame(clip.url)
            #expect(frame.color.transfer == clip.transfer, "\(clip.name): transfer")
            #expect(frame.color.primaries == .bt2020, "\(clip.name): primaries")
            let (width, height) = clip.windowSize(frame)
            let reference = try HDRCorpusClip.reference(clip.url, width: width, height: height)
            let drawn = try await WindowThread.run { () -> [(RendererKind, RGBImage)] in
                try RendererKind.allCases.map { kind in (kind, try Self.draw(frame, renderer: kind, width: width, height: height)) }
            }
            for (kind, image) in drawn {
                HDRCorpusClip.writeShot(image, named: "hdr-\(clip.name)-\(kind)")
                try #require(image.bytes.count == reference.count)
                let difference = ColorDifference.meanDeltaE76(image.bytes, reference)
                let clipped = HDRCorpusClip.clippedDetail(image.bytes, reference: reference, width: width, height: height)
                print("HDR corpus \(clip.name), \(kind) renderer: mean ΔE \(difference) from FFmpeg's zscale+tonemap; "
                      + "of \(clipped.blocks) 8×8 blocks, \(clipped.lost) flat at 255 and \(clipped.half) half at 255 where FFmpeg keeps detail")
                #expect(difference < clip.deltaEBound, "\(clip.name), \(kind)")
                #expect(clipped.lost == 0, "\(clip.name), \(kind): highlights clipped where FFmpeg keeps detail")
                #expect(clipped.half * 100 <= clipped.blocks, "\(clip.name), \(kind): highlights mostly at 255 where FFmpeg keeps detail")
            }
        }

        /// `frame` drawn by `renderer` filling a window of `width` × `height`, read back.
        static func draw(_ frame: VideoFrame, renderer: RendererKind, width: Int, height: Int) throws -> RGBImage {
            #expect(XvfbDisplay.display != nil)
            let host = try SDLWindowHost(title: "hdr", width: width, height: height, renderer: renderer, allowFallback: false)
            let rect = UIRect(x: 0, y: 0, width: Double(width), height: Double(height))
            host.renderer.draw([.picture(source: .frame(frame), rect: rect)])
            let image = host.renderer.readPixels()
            host.renderer.present()
            return image
        }
    }
}

/// One real HDR clip of the corpus and what it is held to.
struct HDRCorpusClip: Sendable, CustomTestStringConvertible {
    let name: String
    let path: String
    let transfer: ColorTransfer
    /// The mean CIE76 ΔE allowed from FFmpeg's tone mapping (see the suite: two curves). Measured
    /// 1.5 (HLG), 2.1-2.4 (the phone's PQ) and 2.6-2.7 (Tears of Steel) with either renderer.
    let deltaEBound: Double

    var testDescription: String { name }

    static let all = [
        HDRCorpusClip(name: "lego-hlg", path: "files/hdr-explorer/lego_hlg-0.5s.mp4", transfer: .hlg, deltaEBound: 5),
        HDRCorpusClip(name: "outdoor-pq", path: "files/hdr-explorer/outdoor_av1_hdr10p.mp4", transfer: .pq, deltaEBound: 5),
        HDRCorpusClip(name: "tears-of-steel-pq", path: "files/hdr10plus_tool/ToS-s01.h265", transfer: .pq, deltaEBound: 5),
    ]

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("corpus")

    var url: URL { Self.corpus.appendingPathComponent(path) }

    /// The window: the frame scaled to fit 960 × 960, even sizes.
    func windowSize(_ frame: VideoFrame) -> (Int, Int) {
        let scale = min(1, 960 / Double(max(frame.width, frame.height)))
        func even(_ value: Double) -> Int { max(2, Int((value / 2).rounded()) * 2) }
        return (even(Double(frame.width) * scale), even(Double(frame.height) * scale))
    }

    static let canCompare: Bool = {
        guard let filters = try? HDRBars.run(["ffmpeg", "-hide_banner", "-filters"]) else { return false }
        return filters.contains(" zscale ") && filters.contains(" tonemap ")
    }()

    /// FFmpeg's SDR picture of `url`'s first frame at `width` × `height`: zscale to linear light
    /// with SDR white (203 nits, BT.2408) at 1.0, BT.709 primaries, `tonemap=mobius` (linear below
    /// its knee, as BT.2390 is, the highlights rolled off), BT.709's transfer, full-range RGB.
    static func reference(_ url: URL, width: Int, height: Int) throws -> [UInt8] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hdr-ref-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: file) }
        let filter = "zscale=w=\(width):h=\(height):f=bicubic:t=linear:npl=203:agamma=0,format=gbrpf32le,zscale=p=bt709,"
            + "tonemap=mobius:desat=0,zscale=t=bt709:m=bt709:r=full,format=rgb24"
        try HDRBars.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", url.path, "-frames:v", "1", "-vf", filter,
                 "-f", "rawvideo", "-pix_fmt", "rgb24", file.path])
        return [UInt8](try Data(contentsOf: file))
    }

    /// Highlights clipped where FFmpeg keeps detail, counted in 8×8 blocks of each channel in
    /// which FFmpeg's picture has detail (below 250, at least 4 levels between its darkest and
    /// brightest): `lost`, blocks `image` has at 255 throughout; `half`, blocks it has at 255 in
    /// half their pixels or more (highlights a little brighter than FFmpeg's curve makes them, the
    /// detail still there); `blocks`, all blocks.
    static func clippedDetail(_ image: [UInt8], reference: [UInt8], width: Int, height: Int)
        -> (lost: Int, half: Int, blocks: Int) {
        let n = 8
        var lost = 0, half = 0, blocks = 0
        for by in stride(from: 0, through: height - n, by: n) {
            for bx in stride(from: 0, through: width - n, by: n) {
                blocks += 1
                for c in 0..<3 {
                    var low = 255, high = 0, saturated = 0
                    for y in by..<(by + n) {
                        for x in bx..<(bx + n) {
                            let i = (y * width + x) * 3 + c
                            low = min(low, Int(reference[i]))
                            high = max(high, Int(reference[i]))
                            if image[i] == 255 { saturated += 1 }
                        }
                    }
                    guard high < 250, high - low >= 4 else { continue }
                    if saturated == n * n {
                        lost += 1
                        break
                    }
                    if saturated >= n * n / 2 {
                        half += 1
                        break
                    }
                }
            }
        }
        return (lost, half, blocks)
    }

    /// With REEL_SHOTS=DIR, writes `image` to DIR/NAME.ppm (to look at it).
    static func writeShot(_ image: RGBImage, named name: String) {
        guard let directory = ProcessInfo.processInfo.environment["REEL_SHOTS"] else { return }
        var data = Data("P6\n\(image.width) \(image.height)\n255\n".utf8)
        data.append(contentsOf: image.bytes)
        try? data.write(to: URL(fileURLWithPath: directory).appendingPathComponent(name + ".ppm"))
    }
}
