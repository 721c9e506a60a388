import ReelCore
import Testing

@testable import ReelTerminal

@Suite struct TerminalLayoutTests {
    @Test func portraitVideoInALandscapeTerminalIsPillarboxed() throws {
        let layout = try #require(TerminalLayout.fit(frameWidth: 1080, frameHeight: 1920, columns: 80, rows: 24))
        // 24 rows × 2 = 48 px tall; 48 × 9/16 = 27 px wide; one cell is 1×2 px.
        #expect(layout == TerminalLayout(pixelWidth: 27, pixelHeight: 48, columns: 27, rows: 24, column: 26, row: 0))
    }

    @Test func rotationSwapsWidthAndHeight() {
        let turned = TerminalLayout.fit(frameWidth: 1920, frameHeight: 1080, rotation: 90, columns: 80, rows: 24)
        #expect(turned == TerminalLayout.fit(frameWidth: 1080, frameHeight: 1920, columns: 80, rows: 24))
        let upsideDown = TerminalLayout.fit(frameWidth: 1920, frameHeight: 1080, rotation: 180, columns: 80, rows: 24)
        #expect(upsideDown == TerminalLayout.fit(frameWidth: 1920, frameHeight: 1080, columns: 80, rows: 24))
        #expect(TerminalLayout.fit(frameWidth: 1920, frameHeight: 1080, rotation: 270, columns: 80, rows: 24) == turned)
    }

    @Test func fourByThreeFillsTheHeight() throws {
        let layout = try #require(TerminalLayout.fit(frameWidth: 640, frameHeight: 480, columns: 100, rows: 30))
        #expect(layout.rows == 30 && layout.columns == 80 && layout.column == 10 && layout.row == 0)
        #expect(layout.pixelWidth == 80 && layout.pixelHeight == 60)
    }

    @Test func wideVideoIsLetterboxed() throws {
        let layout = try #require(TerminalLayout.fit(frameWidth: 1000, frameHeight: 100, columns: 40, rows: 40))
        #expect(layout == TerminalLayout(pixelWidth: 40, pixelHeight: 4, columns: 40, rows: 2, column: 0, row: 19))
    }

    @Test func glyphModesScaleThePixelSize() throws {
        let quadrant = try #require(TerminalLayout.fit(frameWidth: 1080, frameHeight: 1920, columns: 80, rows: 24, glyphs: .quadrant))
        #expect(quadrant.columns == 27 && quadrant.pixelWidth == 54 && quadrant.pixelHeight == 48)
        let sextant = try #require(TerminalLayout.fit(frameWidth: 1080, frameHeight: 1920, columns: 80, rows: 24, glyphs: .sextant))
        #expect(sextant.columns == 27 && sextant.pixelWidth == 54 && sextant.pixelHeight == 72)
    }

    @Test func anamorphicPixelsAndCellShapeCount() throws {
        // 720×576 with 16:11 pixels shows 1.818:1, not 1.25:1.
        let layout = try #require(TerminalLayout.fit(frameWidth: 720, frameHeight: 576, sampleAspectRatio: 16.0 / 11, columns: 90, rows: 100))
        #expect(layout.columns == 90 && layout.rows == 25)  // 90 / 1.818 / 2 = 24.75
        // A square picture takes as many rows as columns in square cells, half as many in 1:2 cells.
        let square = try #require(TerminalLayout.fit(frameWidth: 100, frameHeight: 100, columns: 50, rows: 50, cellAspectRatio: 1))
        #expect(square.columns == 50 && square.rows == 50)
        let tall = try #require(TerminalLayout.fit(frameWidth: 100, frameHeight: 100, columns: 50, rows: 50))
        #expect(tall.columns == 50 && tall.rows == 25 && tall.row == 12)
    }

    @Test(arguments: TerminalGlyphMode.allCases)
    func theEncoderFillsExactlyTheLaidOutCells(_ glyphs: TerminalGlyphMode) throws {
        let layout = try #require(TerminalLayout.fit(frameWidth: 720, frameHeight: 1280, columns: 61, rows: 17, glyphs: glyphs))
        var encoder = TerminalEncoder(configuration: .init(glyphs: glyphs))
        let out = encoder.encode(RGBImage(width: layout.pixelWidth, height: layout.pixelHeight, fill: (9, 9, 9)), column: layout.column, row: layout.row)
        #expect(encoder.lastFrame.cellCount == layout.columns * layout.rows)
        #expect(layout.column + layout.columns <= 61 && layout.row + layout.rows <= 17)
        let firstMove = "\u{1B}[\(layout.row + 1);\(layout.column + 1)H"
        #expect(String(decoding: out, as: UTF8.self).contains(firstMove))
    }

    @Test func emptyInputsGiveNoLayout() {
        #expect(TerminalLayout.fit(frameWidth: 0, frameHeight: 10, columns: 80, rows: 24) == nil)
        #expect(TerminalLayout.fit(frameWidth: 10, frameHeight: 10, columns: 0, rows: 24) == nil)
        let tiny = TerminalLayout.fit(frameWidth: 10_000, frameHeight: 1, columns: 3, rows: 3)
        #expect(tiny?.rows == 1 && tiny?.columns == 3, "never less than one cell")
    }
}
