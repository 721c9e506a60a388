/// Where a video frame goes in a grid of character cells, and at what pixel size to scale
/// it so it keeps its shape.
public struct TerminalLayout: Sendable, Hashable {
    /// Width in pixels to scale the frame to (a whole number of cells).
    public var pixelWidth: Int
    /// Height in pixels to scale the frame to (a whole number of cells).
    public var pixelHeight: Int
    /// Cells across the picture takes.
    public var columns: Int
    /// Cells down the picture takes.
    public var rows: Int
    /// Cells left blank to the left of the picture (the letterbox), the picture's origin column.
    public var column: Int
    /// Cells left blank above the picture, the picture's origin row.
    public var row: Int

    /// Creates a layout from its parts.
    public init(pixelWidth: Int, pixelHeight: Int, columns: Int, rows: Int, column: Int, row: Int) {
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.columns = columns
        self.rows = rows
        self.column = column
        self.row = row
    }

    /// Fits a `frameWidth × frameHeight` frame into `columns × rows` cells, as large as
    /// it goes while keeping its aspect, centred.
    ///
    /// - Parameters:
    ///   - rotation: clockwise degrees the frame is shown turned by; 90 and 270 swap its
    ///     width and height (scale first, then rotate the scaled image with
    ///     `RGBImage.rotated(clockwise:)` — so scale to the *unrotated* size, which is
    ///     ``pixelHeight`` × ``pixelWidth`` for those two).
    ///   - sampleAspectRatio: the width of one of the frame's pixels relative to its
    ///     height (1 for square pixels).
    ///   - cellAspectRatio: a cell's height relative to its width; about 2 in most fonts.
    ///   - glyphs: how many pixels a cell holds.
    /// - Returns: `nil` when the frame or the grid is empty.
    public static func fit(
        frameWidth: Int, frameHeight: Int, rotation: Int = 0, sampleAspectRatio: Double = 1,
        columns: Int, rows: Int, cellAspectRatio: Double = 2, glyphs: TerminalGlyphMode = .halfBlock
    ) -> TerminalLayout? {
        guard frameWidth > 0, frameHeight > 0, columns > 0, rows > 0, cellAspectRatio > 0, sampleAspectRatio > 0 else {
            return nil
        }
        let turned = ((rotation / 90) % 2 + 2) % 2 == 1
        let width = Double(turned ? frameHeight : frameWidth) * (turned ? 1 : sampleAspectRatio)
        let height = Double(turned ? frameWidth : frameHeight) * (turned ? sampleAspectRatio : 1)
        let aspect = width / height  // picture width / height, in physical units

        // A cell is 1 wide and cellAspectRatio tall.
        let gridAspect = Double(columns) / (Double(rows) * cellAspectRatio)
        var usedColumns: Int, usedRows: Int
        if aspect >= gridAspect {
            usedColumns = columns
            usedRows = Int((Double(columns) / aspect / cellAspectRatio).rounded())
        } else {
            usedRows = rows
            usedColumns = Int((Double(rows) * cellAspectRatio * aspect).rounded())
        }
        usedColumns = min(columns, max(1, usedColumns))
        usedRows = min(rows, max(1, usedRows))
        return TerminalLayout(
            pixelWidth: usedColumns * glyphs.pixelsPerCellHorizontally,
            pixelHeight: usedRows * glyphs.pixelsPerCellVertically,
            columns: usedColumns, rows: usedRows,
            column: (columns - usedColumns) / 2, row: (rows - usedRows) / 2)
    }

    /// Fits a frame into `columns × rows` cells of `cellWidth × cellHeight` pixels, at
    /// the pixels themselves (sixel, kitty graphics): as large as it goes keeping its aspect
    /// (and within `limit`, the terminal's largest image), centred by whole cells. The
    /// picture's pixel size need not fill its cells; ``columns`` and ``rows`` are the cells
    /// it touches. Rotation and sample aspect as in ``fit(frameWidth:frameHeight:rotation:sampleAspectRatio:columns:rows:cellAspectRatio:glyphs:)``.
    public static func fitPixels(
        frameWidth: Int, frameHeight: Int, rotation: Int = 0, sampleAspectRatio: Double = 1,
        columns: Int, rows: Int, cellWidth: Int, cellHeight: Int, limit: (width: Int, height: Int)? = nil
    ) -> TerminalLayout? {
        guard frameWidth > 0, frameHeight > 0, columns > 0, rows > 0, cellWidth > 0, cellHeight > 0, sampleAspectRatio > 0 else {
            return nil
        }
        let turned = ((rotation / 90) % 2 + 2) % 2 == 1
        let width = Double(turned ? frameHeight : frameWidth) * (turned ? 1 : sampleAspectRatio)
        let height = Double(turned ? frameWidth : frameHeight) * (turned ? sampleAspectRatio : 1)
        var boxWidth = Double(columns * cellWidth), boxHeight = Double(rows * cellHeight)
        if let limit, limit.width > 0, limit.height > 0 {
            boxWidth = min(boxWidth, Double(limit.width))
            boxHeight = min(boxHeight, Double(limit.height))
        }
        let scale = min(boxWidth / width, boxHeight / height)
        let pixelWidth = max(1, min(Int(boxWidth), Int((width * scale).rounded())))
        let pixelHeight = max(1, min(Int(boxHeight), Int((height * scale).rounded())))
        let usedColumns = (pixelWidth + cellWidth - 1) / cellWidth
        let usedRows = (pixelHeight + cellHeight - 1) / cellHeight
        return TerminalLayout(pixelWidth: pixelWidth, pixelHeight: pixelHeight, columns: usedColumns, rows: usedRows,
                              column: (columns - usedColumns) / 2, row: (rows - usedRows) / 2)
    }

    /// The row a terminal puts the cursor on after a sixel image `height` pixels high drawn
    /// at `row` (sixel scrolling on, as it is by default): the row below the image, with its
    /// last six-pixel band counted whole — the most any terminal counts (the VT340 and mlterm
    /// count whole bands; xterm 379 moves below an image that ends on a row's last pixel).
    /// When that row is past the screen's last, the terminal scrolls the screen.
    public static func rowBelowSixel(row: Int, height: Int, cellHeight: Int) -> Int {
        let banded = (height + 5) / 6 * 6
        return row + (banded + cellHeight - 1) / cellHeight
    }

    /// What a sixel picture may take of `area` (from `row`, `rows` high) on a screen
    /// `screenRows` high with cells `cellHeight` pixels high: the area's rows without the
    /// screen's last one, and the tallest picture that leaves the cursor on the screen, last
    /// band counted whole, whether it is sent whole or from any of its text rows down
    /// (``SixelEncoder`` sends the rows that changed as images starting at a text row). Then
    /// ``rowBelowSixel(row:height:cellHeight:)`` of every image is on the screen, and nothing
    /// scrolls. Only a picture that reaches the screen's second-last row can be shortened, by at
    /// most 5 pixels (a last band reaching into the rows below the area is harmless: Reel's
    /// images leave what no colour sets as it was).
    public static func sixelArea(row: Int, rows: Int, screenRows: Int, cellHeight: Int) -> (rows: Int, maxHeight: Int) {
        let room = screenRows - 1 - row  // the last row the cursor may go to, from the area's top
        let usable = max(1, min(rows, room))
        var height = usable * cellHeight
        func fits(_ height: Int) -> Bool {
            stride(from: 0, to: height, by: cellHeight).allSatisfy { top in
                rowBelowSixel(row: top / cellHeight, height: height - top, cellHeight: cellHeight) <= room
            }
        }
        while height > 1, !fits(height) { height -= 1 }
        return (usable, height)
    }
}
