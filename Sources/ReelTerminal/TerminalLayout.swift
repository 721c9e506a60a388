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
}
