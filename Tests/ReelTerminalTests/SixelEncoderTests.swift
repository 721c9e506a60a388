import Testing
import ReelCore
import ReelTerminal

@Suite struct SixelEncoderTests {
    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Four flat colours in quarters: exactly representable.
    private func quarters(width: Int, height: Int) -> RGBImage {
        var image = RGBImage(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                image[x, y] = x < width / 2 ? (y < height / 2 ? (255, 0, 0) : (0, 255, 0)) : (y < height / 2 ? (0, 0, 255) : (255, 255, 255))
            }
        }
        return image
    }

    @Test func aFewColoursComeBackExactlyWithRunsAndOnlyTheUsedEntries() {
        var encoder = SixelEncoder(configuration: .init(colors: 16, dither: 0), cellHeight: 12)
        let image = quarters(width: 80, height: 48)
        let bytes = encoder.encode(image, column: 2, row: 1)
        let text = Self.text(bytes)
        #expect(text.hasPrefix("\u{1B}[2;3H\u{1B}P0;1;0q\"1;1;80;48"))
        #expect(text.hasSuffix("\u{1B}\\"))
        #expect(text.contains("!40~"))  // 40 columns of one colour, all six bits: one run
        #expect(text.components(separatedBy: ";2;").count - 1 == 4)  // four entries defined
        var screen = SixelScreen(columns: 20, rows: 8, cellWidth: 6, cellHeight: 12)
        screen.feed(bytes)
        #expect(screen.crop(column: 2, row: 1, width: 80, height: 48) == image)
        #expect(bytes.count < 400)
    }

    @Test func aPhotoLikePictureDecodesCloseToTheOriginal() {
        let image = testPicture(width: 120, height: 78)
        for dither in [0, 12] {
            var encoder = SixelEncoder(configuration: .init(colors: 256, dither: dither), cellHeight: 13)
            var screen = SixelScreen(columns: 20, rows: 6, cellWidth: 6, cellHeight: 13)
            screen.feed(encoder.encode(image))
            let quality = psnr(screen.crop(column: 0, row: 0, width: 120, height: 78), image)
            #expect(quality > 30, "dither \(dither): \(quality) dB")
        }
    }

    @Test func onlyChangedTextRowsAreSentAgainAndTheScreenMatches() {
        // Cells 13 px high: stripes are not whole bands; rows below a stripe must survive.
        var encoder = SixelEncoder(configuration: .init(colors: 16, dither: 0), cellHeight: 13)
        var screen = SixelScreen(columns: 20, rows: 6, cellWidth: 6, cellHeight: 13)
        var image = quarters(width: 60, height: 52)  // 4 text rows
        screen.feed(encoder.encode(image, column: 1, row: 1))
        #expect(encoder.lastFrame.fullRedraw && encoder.lastFrame.rowsSent == 4)
        #expect(encoder.encode(image, column: 1, row: 1).isEmpty)
        // A dot in the second text row (pixel rows 13…25).
        for y in 14...16 { for x in 3...5 { image[x, y] = (0, 0, 0) } }
        let update = encoder.encode(image, column: 1, row: 1)
        #expect(encoder.lastFrame.rowsSent == 1 && !encoder.lastFrame.fullRedraw)
        #expect(Self.text(update).hasPrefix("\u{1B}[3;2H\u{1B}P0;1;0q\"1;1;60;13"))
        screen.feed(update)
        #expect(screen.crop(column: 1, row: 1, width: 60, height: 52) == image)
        // Noise within the tolerance sends nothing.
        var noisy = image
        noisy[30, 40] = (254, 254, 254)
        #expect(encoder.encode(noisy, column: 1, row: 1).isEmpty)
    }

    @Test func consecutiveChangedRowsGoAsOneImageAndAMoveSendsAll() {
        var encoder = SixelEncoder(configuration: .init(colors: 16, dither: 0), cellHeight: 12)
        var image = quarters(width: 24, height: 96)  // 8 text rows
        _ = encoder.encode(image)
        for y in 10...30 { image[0, y] = (9, 9, 9) }  // rows 0, 1 and 2
        let update = Self.text(encoder.encode(image))
        #expect(update.components(separatedBy: "\u{1B}P").count - 1 == 1)
        #expect(update.contains("\"1;1;24;36"))
        // Six rows of eight changed: the picture goes as one image.
        for y in 10...70 { image[1, y] = (9, 9, 9) }
        let most = Self.text(encoder.encode(image))
        #expect(most.components(separatedBy: "\u{1B}P").count - 1 == 1 && most.contains("\"1;1;24;96"))
        _ = encoder.encode(image, column: 1, row: 0)
        #expect(encoder.lastFrame.fullRedraw)
        encoder.invalidate()
        _ = encoder.encode(image, column: 1, row: 0)
        #expect(encoder.lastFrame.rowsSent == 8)
    }

    @Test func withoutDiffingEveryFrameIsWhole() {
        var encoder = SixelEncoder(configuration: .init(diffing: false), cellHeight: 12)
        let image = quarters(width: 24, height: 24)
        let first = encoder.encode(image)
        #expect(encoder.encode(image) == first)
        #expect(encoder.totalByteCount == 2 * first.count)
    }

    @Test func thePaletteIsAMedianCutOfThePixels() {
        let image = quarters(width: 40, height: 40)
        let palette = SixelPalette(image: image, rows: 0..<40, maximum: 8)
        var colors = Set<[UInt8]>()
        for i in 0..<palette.count { colors.insert(Array(palette.colors[(i * 3)..<(i * 3 + 3)])) }
        #expect(colors == [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]])
        // Nine dark pixels among thousands of blue ones still get their own entry.
        var dot = RGBImage(width: 40, height: 40, fill: (0, 0, 255))
        for i in 0..<9 { dot[i, 0] = (0, 0, 0) }
        let few = SixelPalette(image: dot, rows: 0..<40, maximum: 4)
        #expect(few.count == 2 && Set([few.colors[2], few.colors[5]]) == [0, 255])
        let gradient = testPicture(width: 64, height: 64)
        #expect(SixelPalette(image: gradient, rows: 0..<64, maximum: 64).count == 64)
    }
}
