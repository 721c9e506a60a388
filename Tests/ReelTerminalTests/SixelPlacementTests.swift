import ReelCore
import Testing

@testable import ReelTerminal

/// A terminal moves the cursor below a sixel image and scrolls the screen when that row is
/// past the last one: the whole screen moves up a line (the category row gone, the title
/// row showing the progress line, a stripe of the picture left at the top). No image Reel
/// draws may end there, whole or as the rows that changed, in any grid.
@Suite struct SixelPlacementTests {
    @Test func theRowBelowAnImageCountsItsLastBandWhole() {
        // 85 px from row 40 of 17 px rows end on row 44's last pixel (where xterm 379 moves the
        // cursor to row 45 and scrolls); counted in whole bands, 90 px reach into row 45.
        #expect(TerminalLayout.rowBelowSixel(row: 40, height: 85, cellHeight: 17) == 46)
        #expect(TerminalLayout.rowBelowSixel(row: 39, height: 84, cellHeight: 17) == 44)
        // 748 px are 125 bands, 750 px: 45 rows of 17.
        #expect(TerminalLayout.rowBelowSixel(row: 0, height: 748, cellHeight: 17) == 45)
        #expect(TerminalLayout.rowBelowSixel(row: 0, height: 744, cellHeight: 17) == 44)
    }

    @Test func theAreaKeepsOffTheLastRowAndEveryStripeFits() {
        for cellHeight in 6...30 {
            for screenRows in 2...60 {
                for row in [0, 1] where row < screenRows {
                    for rows in [screenRows - row, screenRows - row - 1, screenRows - row - 4] where rows > 0 {
                        let fit = TerminalLayout.sixelArea(row: row, rows: rows, screenRows: screenRows, cellHeight: cellHeight)
                        #expect(fit.rows <= rows && fit.rows >= 1)
                        guard row + fit.rows <= screenRows - 1 else { continue }  // a one-row screen has no room
                        // The whole picture and every run of rows from any stripe down.
                        for top in stride(from: 0, to: fit.maxHeight, by: cellHeight) {
                            let below = TerminalLayout.rowBelowSixel(row: row + top / cellHeight, height: fit.maxHeight - top,
                                                                     cellHeight: cellHeight)
                            #expect(below <= screenRows - 1, "\(screenRows) rows of \(cellHeight) px, area \(row)+\(rows)")
                        }
                        // Never more than 5 px given up, and none away from the bottom.
                        #expect(fit.maxHeight >= fit.rows * cellHeight - 5)
                        if row + rows <= screenRows - 3 { #expect(fit.maxHeight == rows * cellHeight) }
                    }
                }
            }
        }
    }

    @Test func xtermAtOneHundredTwentyByFortyFiveFullScreen() {
        // xterm -ti vt340 -fa Monospace -fs 10 -geometry 120x45: cells of 8×17, chrome hidden.
        let fit = TerminalLayout.sixelArea(row: 0, rows: 45, screenRows: 45, cellHeight: 17)
        #expect(fit.rows == 44 && fit.maxHeight == 743)
        // With the chrome: rows 1…41, the title, progress and help rows below; nothing given up.
        let chrome = TerminalLayout.sixelArea(row: 1, rows: 41, screenRows: 45, cellHeight: 17)
        #expect(chrome.rows == 41 && chrome.maxHeight == 697)
    }

    /// The painter itself, in small grids (narrow, so the debug build encodes fast): the
    /// first frame whole, then a frame whose last rows changed (sent from a stripe down).
    @Test func thePainterNeverDrawsAnImageThatScrolls() {
        var configuration = TerminalRenderer.Configuration()
        configuration.sixel.tolerance = 0
        for cellHeight in [10, 12, 13, 15, 16, 17, 18, 20, 24] {
            for screenRows in [6, 7, 9, 13, 17, 24, 31, 45] {
                for (visible, caption) in [(true, false), (false, false), (true, true), (false, true)] {
                    let graphics = TerminalGraphics(output: .sixel, cellWidth: 4, cellHeight: cellHeight, reason: "test")
                    var painter = TerminalRenderer.Painter(configuration: configuration, graphics: graphics)
                    let area = TerminalChrome.videoArea(columns: 6, rows: screenRows, chromeVisible: visible, captionRow: caption)
                    var picture = RGBImage(width: 8, height: 400, fill: (20, 40, 200))
                    var bytes = painter.paint(.picture(picture), area: area, screenRows: screenRows, full: true).bytes
                    for y in 300..<400 {
                        for x in 0..<8 { picture[x, y] = (250, 250, 10) }
                    }
                    bytes += painter.paint(.picture(picture), area: area, screenRows: screenRows, full: false).bytes
                    var screen = SixelScreen(columns: 6, rows: screenRows, cellWidth: 4, cellHeight: cellHeight)
                    screen.feed(bytes)
                    #expect(screen.images.count >= 2, "\(screenRows) rows of \(cellHeight) px")
                    for image in screen.images {
                        let below = TerminalLayout.rowBelowSixel(row: image.row, height: image.height, cellHeight: cellHeight)
                        #expect(below <= screenRows - 1,
                                "\(screenRows) rows of \(cellHeight) px, chrome \(visible), caption \(caption): \(image)")
                    }
                }
            }
        }
    }
}
