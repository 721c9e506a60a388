import ReelCore
import Testing

@testable import ReelTerminal

private let red: (r: UInt8, g: UInt8, b: UInt8) = (255, 0, 0)
private let green: (r: UInt8, g: UInt8, b: UInt8) = (0, 255, 0)
private let blue: (r: UInt8, g: UInt8, b: UInt8) = (0, 0, 255)
private let white: (r: UInt8, g: UInt8, b: UInt8) = (255, 255, 255)
private let black: (r: UInt8, g: UInt8, b: UInt8) = (0, 0, 0)
private let grey: (r: UInt8, g: UInt8, b: UInt8) = (128, 128, 128)

/// Rows of pixels → an image.
private func image(_ rows: [[(r: UInt8, g: UInt8, b: UInt8)]]) -> RGBImage {
    var out = RGBImage(width: rows[0].count, height: rows.count)
    for (y, row) in rows.enumerated() {
        for (x, p) in row.enumerated() { out[x, y] = p }
    }
    return out
}

/// The encoder's output as text, for readable comparisons.
private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

private let e = "\u{1B}["

/// 2×4 pixels = 2×2 half-block cells:
/// (0,0) red over green, (1,0) solid blue, (0,1) solid white, (1,1) black over red.
private let tiny = image([
    [red, blue],
    [green, blue],
    [white, black],
    [white, red],
])

@Suite struct TerminalEncoderTests {
    @Test func trueColorGolden() {
        var encoder = TerminalEncoder(configuration: .init(synchronizedOutput: false))
        let out = text(encoder.encode(tiny))
        #expect(out == "\(e)H\(e)38;2;255;0;0;48;2;0;255;0m▀\(e)48;2;0;0;255m \r\n\(e)48;2;255;255;255m \(e)38;2;0;0;0;48;2;255;0;0m▀\(e)0m")
        #expect(encoder.lastFrame.cellsDrawn == 4 && encoder.lastFrame.fullRedraw)
        #expect(encoder.lastFrame.byteCount == out.utf8.count)
    }

    @Test func palette256Golden() {
        var encoder = TerminalEncoder(configuration: .init(colors: .palette256, synchronizedOutput: false))
        let out = text(encoder.encode(tiny))
        #expect(out == "\(e)H\(e)38;5;196;48;5;46m▀\(e)48;5;21m \r\n\(e)48;5;231m \(e)38;5;16;48;5;196m▀\(e)0m")
    }

    @Test func synchronizedOutputWrapsTheFrameAndOriginOffsetsMoves() {
        var encoder = TerminalEncoder()
        let out = text(encoder.encode(tiny, column: 3, row: 2))
        #expect(out.hasPrefix("\(e)?2026h\(e)3;4H\(e)38;2;255;0;0;48;2;0;255;0m▀"))
        // Next row: ESC[4;4H (6 bytes) ties with CR LF ESC[3C; the absolute move wins ties.
        #expect(out.contains(" \(e)4;4H\(e)48;2;255;255;255m "))
        #expect(out.hasSuffix("\(e)0m\(e)?2026l"))
        #expect(encoder.lastFrame.byteCount == out.utf8.count)
    }

    @Test func aFrameDifferingInTwoCellsDrawsOnlyThoseTwo() {
        var encoder = TerminalEncoder()
        var frame = RGBImage(width: 4, height: 8, fill: grey)  // 4×4 cells
        _ = encoder.encode(frame)
        frame[1, 2] = red  // cell (1,1), top pixel
        frame[3, 5] = blue  // cell (3,2), bottom pixel
        let out = text(encoder.encode(frame))
        #expect(
            out == "\(e)?2026h\(e)2;2H\(e)38;2;255;0;0;48;2;128;128;128m▀"
                + "\(e)3;4H\(e)38;2;128;128;128;48;2;0;0;255m▀\(e)0m\(e)?2026l")
        #expect(out.filter { $0 == "▀" }.count == 2)
        #expect(encoder.lastFrame.cellsDrawn == 2 && encoder.lastFrame.cellCount == 16 && !encoder.lastFrame.fullRedraw)
        #expect(encoder.totalByteCount > encoder.lastFrame.byteCount && encoder.frameCount == 2)
    }

    @Test func theNextRowIsReachedWithCarriageReturnLineFeedWhenShorter() {
        var encoder = TerminalEncoder(configuration: .init(synchronizedOutput: false))
        var frame = RGBImage(width: 12, height: 24, fill: grey)
        _ = encoder.encode(frame, column: 10, row: 10)
        frame[11, 2] = red  // cell (11,1): screen (21,11)
        frame[1, 4] = red  // cell (1,2): screen (11,12); CR LF ESC[11C (7 bytes) beats ESC[13;12H (8)
        let out = text(encoder.encode(frame, column: 10, row: 10))
        #expect(out == "\(e)12;22H\(e)38;2;255;0;0;48;2;128;128;128m▀\r\n\(e)11C▀\(e)0m")
    }

    @Test func distantCellsOnOtherRowsUseAnAbsoluteMove() {
        var encoder = TerminalEncoder(configuration: .init(synchronizedOutput: false))
        var frame = RGBImage(width: 12, height: 12, fill: grey)
        _ = encoder.encode(frame)
        frame[0, 0] = red
        frame[11, 8] = red
        let out = text(encoder.encode(frame))
        #expect(out == "\(e)H\(e)38;2;255;0;0;48;2;128;128;128m▀\(e)5;12H▀\(e)0m")
    }

    @Test func withoutDiffingEveryFrameIsDrawnInFull() {
        var full = TerminalEncoder(configuration: .init(diffing: false))
        var diffing = TerminalEncoder()
        var frame = RGBImage(width: 16, height: 16, fill: grey)  // 128 cells
        let first = full.encode(frame)
        #expect(diffing.encode(frame) == first)
        #expect(full.encode(frame) == first, "an unchanged frame is sent again")
        frame[2, 2] = red
        let redrawn = full.encode(frame)
        #expect(full.lastFrame.cellsDrawn == 128 && full.lastFrame.fullRedraw)
        #expect(text(redrawn).contains("▀"))
        let changed = diffing.encode(frame)
        #expect(diffing.lastFrame.cellsDrawn == 1)
        #expect(changed.count * 2 < redrawn.count)
    }

    @Test func changesInvisibleInThePaletteAreNotSent() {
        var palette = TerminalEncoder(configuration: .init(colors: .palette256))
        var trueColor = TerminalEncoder()
        var frame = RGBImage(width: 4, height: 4, fill: (100, 100, 100))
        _ = palette.encode(frame)
        _ = trueColor.encode(frame)
        frame[1, 1] = (101, 99, 100)  // still palette entry 241
        #expect(palette.encode(frame).isEmpty)
        #expect(trueColor.encode(frame).count > 0)
        #expect(trueColor.lastFrame.cellsDrawn == 1)
    }

    @Test func toleranceIgnoresNoiseButNotDrift() {
        var encoder = TerminalEncoder(configuration: .init(synchronizedOutput: false, tolerance: 4))
        var frame = RGBImage(width: 2, height: 2, fill: (100, 100, 100))
        _ = encoder.encode(frame)
        frame[0, 0] = (103, 97, 100)  // top of cell 0 within 4: the cell stays a solid 100 grey on screen
        #expect(encoder.encode(frame).isEmpty)
        frame[0, 1] = (103, 97, 100)  // now both pixels are equal again: a solid cell of a close colour
        #expect(encoder.encode(frame).isEmpty)
        for step in 1...3 {  // creep in steps of 2: measured against the screen, the third step is 6 away
            let v = UInt8(100 + 2 * step)
            frame = RGBImage(width: 2, height: 2, fill: (v, v, v))
            let out = text(encoder.encode(frame))
            #expect(out.isEmpty == (step < 3), "step \(step)")
            if step == 3 { #expect(out == "\(e)H\(e)48;2;106;106;106m  \(e)0m") }
        }
        // Palette mode is exact: the tolerance does not apply.
        var palette = TerminalEncoder(configuration: .init(colors: .palette256, tolerance: 50))
        _ = palette.encode(RGBImage(width: 1, height: 2, fill: (0, 0, 0)))
        #expect(!palette.encode(RGBImage(width: 1, height: 2, fill: (40, 40, 40))).isEmpty)
    }

    @Test func toleranceReusesAClosePen() {
        var encoder = TerminalEncoder(configuration: .init(synchronizedOutput: false, tolerance: 4))
        let frame = image([[(100, 100, 100), (102, 101, 100), (110, 100, 100)], [black, (2, 0, 1), black]])
        #expect(text(encoder.encode(frame)) == "\(e)H\(e)38;2;100;100;100;48;2;0;0;0m▀▀\(e)38;2;110;100;100m▀\(e)0m")
        #expect(encoder.encode(frame).isEmpty)
    }

    @Test func anEmptyImageDrawsNothing() {
        var encoder = TerminalEncoder()
        #expect(encoder.encode(RGBImage(width: 0, height: 0)).isEmpty)
        #expect(encoder.lastFrame == .init(byteCount: 0, cellsDrawn: 0, cellCount: 0, fullRedraw: true))
        #expect(!encoder.encode(tiny).isEmpty)
    }

    @Test func unchangedFrameEmitsNothing() {
        var encoder = TerminalEncoder()
        _ = encoder.encode(tiny)
        #expect(encoder.encode(tiny).isEmpty)
        #expect(encoder.lastFrame == .init(byteCount: 0, cellsDrawn: 0, cellCount: 4, fullRedraw: false))
    }

    @Test func invalidateMovingAndReconfiguringRedrawEverything() {
        var encoder = TerminalEncoder()
        let first = encoder.encode(tiny)
        encoder.invalidate()
        #expect(encoder.encode(tiny) == first)
        _ = encoder.encode(tiny, column: 1, row: 0)
        #expect(encoder.lastFrame.cellsDrawn == 4, "a moved picture is redrawn in full")
        encoder.configuration.colors = .palette256
        _ = encoder.encode(tiny, column: 1, row: 0)
        #expect(encoder.lastFrame.fullRedraw)
        encoder.configuration.colors = .palette256  // same value: no redraw
        #expect(encoder.encode(tiny, column: 1, row: 0).isEmpty)
    }

    @Test func colourCodesAreNotRepeatedForCellsOfTheSameColour() {
        var encoder = TerminalEncoder(configuration: .init(synchronizedOutput: false))
        let out = text(encoder.encode(image([[red, red, red, red], [green, green, green, green]])))
        #expect(out == "\(e)H\(e)38;2;255;0;0;48;2;0;255;0m▀▀▀▀\(e)0m")
        // A solid cell after a half block only needs the background to change.
        let mixed = text(encoder.encode(image([[red, blue, blue], [green, green, blue]])))
        #expect(mixed.hasSuffix("\(e)38;2;255;0;0;48;2;0;255;0m▀\(e)38;2;0;0;255m▀\(e)48;2;0;0;255m \(e)0m"))
    }

    @Test func shortGapsAreWrittenThroughOrHopped() {
        var encoder = TerminalEncoder(configuration: .init(synchronizedOutput: false))
        var frame = RGBImage(width: 10, height: 2, fill: grey)
        _ = encoder.encode(frame)
        frame[0, 0] = red
        frame[3, 0] = red  // two unchanged solid cells between: rewriting them (2 bytes) beats ESC[2C
        frame[9, 0] = red  // five between: ESC[5C
        let out = text(encoder.encode(frame))
        #expect(out == "\(e)H\(e)38;2;255;0;0;48;2;128;128;128m▀  ▀\(e)5C▀\(e)0m")

        // Rewriting one unchanged half block costs as much as ESC[C: the hop wins the tie.
        var halfBlocks = image([[white, red, white], [white, green, white]])
        _ = encoder.encode(halfBlocks)
        halfBlocks[0, 0] = red
        halfBlocks[0, 1] = green
        halfBlocks[2, 0] = red
        halfBlocks[2, 1] = green
        #expect(text(encoder.encode(halfBlocks)) == "\(e)H\(e)38;2;255;0;0;48;2;0;255;0m▀\(e)C▀\(e)0m")
    }

    @Test func oddHeightsArePaddedWithBlack() {
        var encoder = TerminalEncoder(configuration: .init(synchronizedOutput: false))
        let out = text(encoder.encode(image([[red]])))
        #expect(out == "\(e)H\(e)38;2;255;0;0;48;2;0;0;0m▀\(e)0m")
    }

    private func quadrantCell(_ tl: (r: UInt8, g: UInt8, b: UInt8), _ tr: (r: UInt8, g: UInt8, b: UInt8),
                              _ bl: (r: UInt8, g: UInt8, b: UInt8), _ br: (r: UInt8, g: UInt8, b: UInt8)) -> String {
        var encoder = TerminalEncoder(configuration: .init(glyphs: .quadrant, synchronizedOutput: false))
        return text(encoder.encode(image([[tl, tr], [bl, br]])))
    }

    @Test func quadrantGlyphs() {
        #expect(quadrantCell(red, red, blue, blue) == "\(e)H\(e)38;2;255;0;0;48;2;0;0;255m▀\(e)0m")
        #expect(quadrantCell(red, blue, blue, blue) == "\(e)H\(e)38;2;255;0;0;48;2;0;0;255m▘\(e)0m")
        // The top-left pixel's cluster is always the foreground.
        #expect(quadrantCell(blue, red, blue, blue) == "\(e)H\(e)38;2;0;0;255;48;2;255;0;0m▙\(e)0m")
        #expect(quadrantCell(red, blue, blue, red) == "\(e)H\(e)38;2;255;0;0;48;2;0;0;255m▚\(e)0m")
        #expect(quadrantCell(red, blue, red, blue) == "\(e)H\(e)38;2;255;0;0;48;2;0;0;255m▌\(e)0m")
        #expect(quadrantCell(green, green, green, green) == "\(e)H\(e)48;2;0;255;0m \(e)0m")
    }

    @Test func quadrantClustersAverageTheirPixels() {
        let out = quadrantCell((250, 0, 0), (240, 10, 0), (0, 0, 250), (0, 0, 240))
        #expect(out == "\(e)H\(e)38;2;245;5;0;48;2;0;0;245m▀\(e)0m")
    }

    @Test func sextantGlyphs() {
        func sextant(_ rows: [[(r: UInt8, g: UInt8, b: UInt8)]]) -> String {
            var encoder = TerminalEncoder(configuration: .init(glyphs: .sextant, synchronizedOutput: false))
            return text(encoder.encode(image(rows)))
        }
        let fgRedBgBlue = "\(e)H\(e)38;2;255;0;0;48;2;0;0;255m"
        #expect(sextant([[red, blue], [red, blue], [red, blue]]) == fgRedBgBlue + "▌\(e)0m")
        #expect(sextant([[red, red], [blue, blue], [blue, blue]]) == fgRedBgBlue + "\u{1FB02}\(e)0m")
        #expect(sextant([[red, blue], [blue, blue], [blue, blue]]) == fgRedBgBlue + "\u{1FB00}\(e)0m")
        #expect(sextant([[red, red], [red, blue], [red, blue]]) == fgRedBgBlue + "\u{1FB15}\(e)0m")  // 1235
        #expect(sextant([[red, blue], [blue, blue], [blue, red]]) == fgRedBgBlue + "\u{1FB1F}\(e)0m")  // 16
        #expect(sextant([[red, red], [red, red], [red, blue]]) == fgRedBgBlue + "\u{1FB1D}\(e)0m")  // 12345
    }

    @Test func sextantTableCoversEveryPattern() {
        var seen = Set<Unicode.Scalar>()
        for mask in 0..<64 { seen.insert(TerminalGlyphMode.glyph(mask: mask, mode: .sextant)) }
        #expect(seen.count == 64)
        #expect(TerminalGlyphMode.glyph(mask: 62, mode: .sextant) == "\u{1FB3B}")
        #expect(TerminalGlyphMode.glyph(mask: 20, mode: .sextant) == "\u{1FB13}")
        #expect(TerminalGlyphMode.glyph(mask: 22, mode: .sextant) == "\u{1FB14}")
    }

    @Test func paletteMapping() {
        #expect(XtermPalette.nearestIndex(r: 0, g: 0, b: 0) == 16)
        #expect(XtermPalette.nearestIndex(r: 255, g: 255, b: 255) == 231)
        #expect(XtermPalette.nearestIndex(r: 128, g: 128, b: 128) == 244)  // grey 128
        #expect(XtermPalette.nearestIndex(r: 100, g: 100, b: 100) == 241)  // grey 98 beats cube 95
        #expect(XtermPalette.nearestIndex(r: 95, g: 135, b: 175) == 67)
        for index in 16...255 {
            let c = XtermPalette.rgb(ofIndex: index)!
            #expect(XtermPalette.nearestIndex(r: c.r, g: c.g, b: c.b) == index)
        }
        #expect(XtermPalette.rgb(ofIndex: 7) == nil)
    }

    @Test func colourDepthFromTheEnvironment() {
        #expect(TerminalColorDepth.detect(environment: ["COLORTERM": "truecolor"]) == .trueColor)
        #expect(TerminalColorDepth.detect(environment: ["COLORTERM": "24bit"]) == .trueColor)
        #expect(TerminalColorDepth.detect(environment: ["TERM": "xterm-256color"]) == .palette256)
        #expect(TerminalColorDepth.detect(environment: ["COLORTERM": "truecolor"], override: .palette256) == .palette256)
    }
}
