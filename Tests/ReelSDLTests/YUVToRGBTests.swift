import Testing
import ReelMedia
@testable import ReelSDL

@Suite struct YUVToRGBTests {
    func close(_ a: (r: Double, g: Double, b: Double), _ b: (Double, Double, Double), tolerance: Double = 0.006) -> Bool {
        abs(a.r - b.0) <= tolerance && abs(a.g - b.1) <= tolerance && abs(a.b - b.2) <= tolerance
    }

    @Test func limitedRangeBlackAndWhiteAt8And10Bits() {
        let eight = YUVToRGB(matrix: .bt709, range: .limited, bitDepth: 8, storageBits: 8)
        #expect(close(eight.rgb(y: 16, u: 128, v: 128, storageBits: 8), (0, 0, 0)))
        #expect(close(eight.rgb(y: 235, u: 128, v: 128, storageBits: 8), (1, 1, 1)))
        let ten = YUVToRGB(matrix: .bt601, range: .limited, bitDepth: 10, storageBits: 16)
        #expect(close(ten.rgb(y: 64, u: 512, v: 512, storageBits: 16), (0, 0, 0)))
        #expect(close(ten.rgb(y: 940, u: 512, v: 512, storageBits: 16), (1, 1, 1)))
    }

    @Test func fullRangeWhite() {
        let full = YUVToRGB(matrix: .bt601, range: .full, bitDepth: 8, storageBits: 8)
        #expect(close(full.rgb(y: 255, u: 128, v: 128, storageBits: 8), (1, 1, 1), tolerance: 0.01))
        #expect(close(full.rgb(y: 0, u: 128, v: 128, storageBits: 8), (0, 0, 0), tolerance: 0.01))
    }

    /// Pure red encoded per each standard decodes back to red with that standard only.
    @Test(arguments: [ColorMatrix.bt601, .bt709, .bt2020])
    func redRoundTrips(matrix: ColorMatrix) {
        let (kr, kb) = YUVToRGB.weights(matrix)
        // R'=1, G'=B'=0: Y = Kr, Cb = -Kr / (2(1-Kb)), Cr = 0.5.
        let y = kr, cb = -kr / (2 * (1 - kb)), cr = 0.5
        let codes = (16 + 219 * y, 128 + 224 * cb, 128 + 224 * cr)
        let conversion = YUVToRGB(matrix: matrix, range: .limited, bitDepth: 8, storageBits: 8)
        #expect(close(conversion.rgb(y: codes.0, u: codes.1, v: codes.2, storageBits: 8), (1, 0, 0)))
        let other: ColorMatrix = matrix == .bt601 ? .bt709 : .bt601
        let wrong = YUVToRGB(matrix: other, range: .limited, bitDepth: 8, storageBits: 8)
        #expect(!close(wrong.rgb(y: codes.0, u: codes.1, v: codes.2, storageBits: 8), (1, 0, 0), tolerance: 0.02))
    }

    @Test func p010CountsAsSixteenBitCodes() {
        // P010 stores 10-bit codes in the top bits of 16-bit words: limited white 940 << 6.
        let conversion = YUVToRGB(matrix: .bt709, range: .limited, bitDepth: 16, storageBits: 16)
        #expect(close(conversion.rgb(y: Double(940 << 6), u: Double(512 << 6), v: Double(512 << 6), storageBits: 16), (1, 1, 1)))
    }
}
