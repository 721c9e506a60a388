import Foundation
import Testing
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
@testable import ReelSDL

extension XvfbWindowSuites {
    /// HDR in the window, with each renderer drawing the frame alone into a window the
    /// picture's size: SMPTE bars carried as PQ and HLG by FFmpeg's zscale against the SDR bars;
    /// the GL path against the CPU path (the same ColorLUT, interpolated by the GPU and by
    /// Swift); a 10-bit PQ ramp through the shader without steps.
    @Suite(.enabled(if: HDRBars.isAvailable, "ffmpeg with zscale is needed to make the HDR bars"))
    struct HDRWindowTests {
        static func firstFrame(_ url: URL) throws -> VideoFrame {
            var first: VideoFrame?
            try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
                first = frame
                return false
            }
            return try #require(first)
        }

        /// `frame` drawn by `renderer` into a window of its size, read back.
        static func draw(_ frame: VideoFrame, renderer: RendererKind) throws -> RGBImage {
            #expect(XvfbDisplay.display != nil)
            let host = try SDLWindowHost(title: "hdr", width: frame.width, height: frame.height, renderer: renderer, allowFallback: false)
            let rect = UIRect(x: 0, y: 0, width: Double(frame.width), height: Double(frame.height))
            host.renderer.draw([.picture(source: .frame(frame), rect: rect)])
            let image = host.renderer.readPixels()
            host.renderer.present()
            return image
        }

        @Test(arguments: RendererKind.allCases)
        func barsComeBackWithinDeltaE4(renderer: RendererKind) async throws {
            let results = try await WindowThread.run { () -> [(HDRBars.Kind, Double)] in
                let sdr = try Self.draw(Self.firstFrame(HDRBars.clip(.sdr)), renderer: renderer)
                #expect(sdr.width == HDRBars.width && sdr.height == HDRBars.height)
                return try [HDRBars.Kind.pq, .hlg].map { kind in
                    let hdr = try Self.draw(Self.firstFrame(HDRBars.clip(kind)), renderer: renderer)
                    return (kind, ColorDifference.meanDeltaE76(hdr.bytes, sdr.bytes))
                }
            }
            for (kind, difference) in results {
                print("HDR bars \(kind), \(renderer) renderer: mean ΔE \(difference)")
                #expect(difference < 4, "\(kind) with the \(renderer) renderer")
            }
        }

        @Test func sdrIsDrawnAsBefore() async throws {
            // SDR takes the unmapped path (uMapped 0: the shader's arithmetic as before), its
            // chroma sampled where the stream sites it (left), as zscale upsamples it: a mean ΔE of
            // 0.15 (1.05 when the shader took every chroma sample as centred).
            let (drawn, theirs) = try await WindowThread.run {
                let url = try HDRBars.clip(.sdr)
                return (try Self.draw(Self.firstFrame(url), renderer: .gl), try HDRBars.rgb24(url))
            }
            let difference = ColorDifference.meanDeltaE76(drawn.bytes, theirs)
            print("SDR bars, gl renderer: mean ΔE \(difference) from FFmpeg's rgb24")
            #expect(difference < 1)
        }

        @Test func theShaderAndTheCPUPathAgree() async throws {
            // SDR shows how far the two paths' chroma upsampling and scaling alone put them
            // apart (at the bars' edges); HDR may add little to that.
            let pairs = try await WindowThread.run { () -> [(HDRBars.Kind, RGBImage, RGBImage)] in
                try [HDRBars.Kind.sdr, .pq, .hlg].map { kind in
                    let frame = try Self.firstFrame(HDRBars.clip(kind))
                    let cpu = try FrameScaler(smooth: false).rgb(frame, width: frame.width, height: frame.height)
                    return (kind, try Self.draw(frame, renderer: .gl), cpu)
                }
            }
            var baseline = 0.0
            for (kind, gl, cpu) in pairs {
                try #require(gl.bytes.count == cpu.bytes.count)
                let difference = ColorDifference.meanDeltaE76(gl.bytes, cpu.bytes)
                var total = 0
                for i in gl.bytes.indices { total += abs(Int(gl.bytes[i]) - Int(cpu.bytes[i])) }
                print("GL against CPU, \(kind): mean ΔE \(difference), mean difference \(Double(total) / Double(gl.bytes.count)) levels")
                if kind == .sdr {
                    baseline = difference
                } else {
                    #expect(difference < baseline + 0.5, "\(kind)")
                }
            }
        }

        @Test func aTenBitPQRampHasNoStepOverTwoLevels() async throws {
            let image = try await WindowThread.run { try Self.draw(Self.firstFrame(HDRBars.pqRamp()), renderer: .gl) }
            var means = [Double](repeating: 0, count: image.width)
            for y in 20..<28 {
                for x in 0..<image.width { means[x] += Double(image.bytes[(y * image.width + x) * 3 + 1]) / 8 }
            }
            var largest = 0.0
            for x in 1..<image.width { largest = max(largest, abs(means[x] - means[x - 1])) }
            print("PQ ramp (GL): largest step \(largest), \(Set(means.map { Int($0.rounded()) }).count) levels")
            #expect(largest <= 2)
        }
    }
}
