import Foundation
import Testing
import ReelCore
import ReelLoading
import ReelMedia
import ReelTestSupport
@testable import ReelSDL

/// Where a stream's chroma samples sit is applied in the upsampling: the same 4:2:0 pictures,
/// subsampled by zscale with the chroma sited left, centre or top-left, come back closer to the
/// picture before subsampling when tagged with their own siting than when tagged with another.
@Suite struct ChromaOffsetTests {
    @Test func offsetsFollowTheSiting() {
        // 4:2:0 in a 160×90 chroma plane: the centre is the texture's own; left is a quarter of
        // a chroma texel to the right; top-left the same down; bottom a quarter up.
        let centre = YUVToRGB.chromaOffset(.center, shiftX: 1, shiftY: 1, planeWidth: 160, planeHeight: 90)
        #expect(centre.x == 0 && centre.y == 0)
        let left = YUVToRGB.chromaOffset(.left, shiftX: 1, shiftY: 1, planeWidth: 160, planeHeight: 90)
        #expect(abs(left.x - 0.25 / 160) < 1e-9 && left.y == 0)
        let topLeft = YUVToRGB.chromaOffset(.topLeft, shiftX: 1, shiftY: 1, planeWidth: 160, planeHeight: 90)
        #expect(abs(topLeft.x - 0.25 / 160) < 1e-9 && abs(topLeft.y - 0.25 / 90) < 1e-9)
        let bottom = YUVToRGB.chromaOffset(.bottom, shiftX: 1, shiftY: 1, planeWidth: 160, planeHeight: 90)
        #expect(bottom.x == 0 && abs(bottom.y + 0.25 / 90) < 1e-9)
        // A side that is not subsampled (4:2:2 down, 4:4:4) has nothing to move.
        let fourTwoTwo = YUVToRGB.chromaOffset(.topLeft, shiftX: 1, shiftY: 0, planeWidth: 160, planeHeight: 180)
        #expect(fourTwoTwo.y == 0)
        #expect(ChromaLocation.left.position(shiftX: 1, shiftY: 1) == (0, 0.5))
        #expect(ChromaLocation.bottom.position(shiftX: 0, shiftY: 1) == (0, 1))
    }
}

extension XvfbWindowSuites {
    @Suite(.enabled(if: HDRBars.isAvailable, "ffmpeg with zscale is needed to site the chroma"))
    struct ChromaLocationTests {
        /// Each siting, and a wrong tag for the same data (left and centre differ across,
        /// top-left and left down).
        static let cases: [(ChromaSitingClips.Site, ChromaSitingClips.Site)] = [(.left, .center), (.center, .left), (.topLeft, .left)]

        static func firstFrame(_ url: URL) throws -> VideoFrame {
            var first: VideoFrame?
            try SequentialDecoder.decodeVideo(url, loader: FileLoader(), threads: 1) { frame in
                first = frame
                return false
            }
            return try #require(first)
        }

        @Test(arguments: RendererKind.allCases)
        func chromaIsUpsampledWhereTheTagSays(renderer: RendererKind) async throws {
            let original = try await offThePool { try ChromaSitingClips.original() }
            let results = try await WindowThread.run { () -> [(ChromaSitingClips.Site, Double, Double)] in
                try Self.cases.map { data, wrong in
                    let right = try Self.firstFrame(ChromaSitingClips.clip(data: data, tag: data))
                    let mistagged = try Self.firstFrame(ChromaSitingClips.clip(data: data, tag: wrong))
                    #expect(right.color.chromaLocation.rawValue == data.rawValue)
                    #expect(mistagged.color.chromaLocation.rawValue == wrong.rawValue)
                    let shown = try HDRWindowTests.draw(right, renderer: renderer)
                    let misplaced = try HDRWindowTests.draw(mistagged, renderer: renderer)
                    return (data, ColorDifference.meanDeltaE76(shown.bytes, original), ColorDifference.meanDeltaE76(misplaced.bytes, original))
                }
            }
            for (site, right, wrong) in results {
                print("Chroma sited \(site), \(renderer) renderer: mean ΔE \(right) from the 4:4:4 picture as tagged, \(wrong) tagged otherwise")
                #expect(right < wrong * 0.9, "\(site) with the \(renderer) renderer")
            }
        }
    }
}
