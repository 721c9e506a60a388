import ReelCore

/// Turns already-scaled video frames into the bytes that draw them in a terminal,
/// sending only the cells that changed since the previous frame.
///
/// Each frame becomes one `[UInt8]` meant for a single `write()`:
///
/// - cells equal to what the terminal already shows are skipped; the cursor jumps over
///   them with whichever is shortest — `ESC[row;colH`, `ESC[nC` on the same row, `CR LF`
///   onto the next row, or simply rewriting one or two unchanged cells when that costs
///   fewer bytes;
/// - SGR colour codes are sent only when the cell's colours differ from the pen the
///   terminal currently has;
/// - with ``Configuration/synchronizedOutput`` the frame is wrapped in
///   `ESC[?2026h … ESC[?2026l` so the terminal shows it at once, never half drawn.
///
/// A frame with no changed cell produces no bytes at all. At the start of every frame the
/// encoder assumes nothing about the cursor or the pen (other writers, such as the chrome,
/// may have moved them), and a frame that set colours ends with `ESC[0m`. `CR LF` is used
/// only to reach the next row of the picture, so the screen never scrolls as long as no
/// scroll margins (DECSTBM) cut through the picture.
///
/// The image must already have the size ``TerminalLayout`` computed (scaling is
/// libswscale's job): each cell covers ``TerminalGlyphMode/pixelsPerCellHorizontally`` ×
/// ``TerminalGlyphMode/pixelsPerCellVertically`` pixels; a partial cell at the right or
/// bottom edge is padded with black.
public struct TerminalEncoder: Sendable {
    /// What the encoder draws with.
    public struct Configuration: Sendable, Hashable {
        /// Pixels → glyphs.
        public var glyphs: TerminalGlyphMode
        /// Truecolor or the 256-colour palette.
        public var colors: TerminalColorDepth
        /// Wrap each frame in synchronized-output mode 2026.
        public var synchronizedOutput: Bool
        /// Send only changed cells. Turned off, every frame is drawn in full, as mpv's
        /// `vo_tct` does: the baseline that bytes-per-frame comparisons measure against.
        public var diffing: Bool
        /// In truecolor, how far (per channel, 0…255) a cell's colours may move before it is
        /// redrawn, and how far they may be from the current pen and still be drawn with it
        /// (saving an SGR). Video noise then costs no bytes; comparisons are with what the
        /// screen shows, so small changes cannot add up unseen. 0 means exact colours.
        public var tolerance: Int

        /// Creates a configuration; the defaults are half blocks, truecolor, synchronized,
        /// diffing.
        public init(
            glyphs: TerminalGlyphMode = .halfBlock, colors: TerminalColorDepth = .trueColor,
            synchronizedOutput: Bool = true, diffing: Bool = true, tolerance: Int = 0
        ) {
            self.tolerance = max(0, tolerance)
            self.glyphs = glyphs
            self.colors = colors
            self.synchronizedOutput = synchronizedOutput
            self.diffing = diffing
        }
    }

    /// What one call to ``encode(_:column:row:)`` produced.
    public struct FrameStatistics: Sendable, Hashable {
        /// The length of the returned buffer.
        public var byteCount: Int
        /// Cells drawn (changed cells, or all of them on a full redraw).
        public var cellsDrawn: Int
        /// Cells in the frame's grid.
        public var cellCount: Int
        /// Whether every cell was drawn because there was no usable previous frame.
        public var fullRedraw: Bool

        /// Creates statistics.
        public init(byteCount: Int = 0, cellsDrawn: Int = 0, cellCount: Int = 0, fullRedraw: Bool = false) {
            self.byteCount = byteCount
            self.cellsDrawn = cellsDrawn
            self.cellCount = cellCount
            self.fullRedraw = fullRedraw
        }
    }

    /// The current configuration. Changing it forces a full redraw.
    public var configuration: Configuration {
        didSet { if configuration != oldValue { invalidate() } }
    }

    /// Statistics of the most recent frame.
    public private(set) var lastFrame = FrameStatistics()

    /// Bytes produced by all frames so far.
    public private(set) var totalByteCount = 0

    /// Frames encoded so far.
    public private(set) var frameCount = 0

    private var previous: Grid?

    /// Creates an encoder with nothing on screen yet.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Forgets what is on screen, so the next frame is drawn in full. Call it after a
    /// resize, a screen clear, or anything else that overwrote the video area.
    public mutating func invalidate() {
        previous = nil
    }

    /// The bytes that draw `image` with its top-left cell at 0-based screen `column`, `row`.
    ///
    /// The first frame, a frame whose grid size or position differs from the previous
    /// one, and the frame after ``invalidate()`` are drawn in full; otherwise only the
    /// cells that changed.
    public mutating func encode(_ image: RGBImage, column: Int = 0, row: Int = 0) -> [UInt8] {
        var grid = Grid(image: image, origin: (column, row), configuration: configuration)
        let reference = configuration.diffing ? previous.flatMap { $0.hasSameGeometry(as: grid) ? $0 : nil } : nil
        let tolerance = configuration.colors == .trueColor ? configuration.tolerance : 0
        var writer = Writer(colors: configuration.colors)
        writer.bytes.reserveCapacity(reference == nil ? grid.cells.count * 40 : 256)
        var drawn = 0
        for y in 0..<grid.rows {
            for x in 0..<grid.columns {
                let index = y * grid.columns + x
                var cell = grid.cells[index]
                if let reference {
                    let shown = reference.cells[index]
                    if shown == cell { continue }
                    if tolerance > 0, shown.isClose(to: cell, tolerance: tolerance) {
                        grid.cells[index] = shown  // remember what the screen shows, so drift cannot build up
                        continue
                    }
                }
                if tolerance > 0 {
                    cell = writer.snappedToPen(cell, tolerance: tolerance)
                    grid.cells[index] = cell
                }
                writer.moveCursor(toColumn: grid.column + x, row: grid.row + y, grid: grid, gridX: x, gridY: y)
                writer.draw(cell)
                drawn += 1
            }
        }
        var bytes: [UInt8] = []
        if drawn > 0 {
            if writer.usedColors { writer.bytes.append(contentsOf: Self.resetAttributes) }
            if configuration.synchronizedOutput {
                bytes.reserveCapacity(writer.bytes.count + 16)
                bytes.append(contentsOf: TerminalControl.beginSynchronizedUpdate)
                bytes.append(contentsOf: writer.bytes)
                bytes.append(contentsOf: TerminalControl.endSynchronizedUpdate)
            } else {
                bytes = writer.bytes
            }
        }
        previous = grid
        lastFrame = FrameStatistics(
            byteCount: bytes.count, cellsDrawn: drawn, cellCount: grid.cells.count, fullRedraw: reference == nil)
        totalByteCount += bytes.count
        frameCount += 1
        return bytes
    }

    private static let resetAttributes: [UInt8] = Array("\u{1B}[0m".utf8)
}

// MARK: - Cells

/// One character cell: a glyph and its colours. Colours are `0xRRGGBB` in truecolor and a
/// palette index in 256-colour mode; a space has no foreground.
struct Cell: Hashable, Sendable {
    static let noColor = UInt32.max

    var glyph: Unicode.Scalar
    var foreground: UInt32
    var background: UInt32

    /// A cell that shows only the background colour.
    init(solid color: UInt32) {
        glyph = " "
        foreground = Cell.noColor
        background = color
    }

    init(glyph: Unicode.Scalar, foreground: UInt32, background: UInt32) {
        self.glyph = glyph
        self.foreground = foreground
        self.background = background
    }

    var needsForeground: Bool { glyph != " " }

    /// Same glyph, and truecolor colours each within `tolerance` per channel.
    func isClose(to other: Cell, tolerance: Int) -> Bool {
        glyph == other.glyph && Cell.isClose(foreground, other.foreground, tolerance)
            && Cell.isClose(background, other.background, tolerance)
    }

    static func isClose(_ a: UInt32, _ b: UInt32, _ tolerance: Int) -> Bool {
        if a == b { return true }
        if a == noColor || b == noColor { return false }
        for shift in [16, 8, 0] as [UInt32] {
            let d = Int(a >> shift & 0xFF) - Int(b >> shift & 0xFF)
            if abs(d) > tolerance { return false }
        }
        return true
    }
}

/// A frame as cells, with where it sits on screen.
struct Grid: Sendable {
    var column: Int
    var row: Int
    var columns: Int
    var rows: Int
    var configuration: TerminalEncoder.Configuration
    var cells: [Cell]

    func hasSameGeometry(as other: Grid) -> Bool {
        column == other.column && row == other.row && columns == other.columns && rows == other.rows
            && configuration == other.configuration
    }

    init(image: RGBImage, origin: (column: Int, row: Int), configuration: TerminalEncoder.Configuration) {
        let mode = configuration.glyphs
        let pw = mode.pixelsPerCellHorizontally, ph = mode.pixelsPerCellVertically
        self.column = max(0, origin.column)
        self.row = max(0, origin.row)
        self.columns = (image.width + pw - 1) / pw
        self.rows = (image.height + ph - 1) / ph
        self.configuration = configuration
        var cells: [Cell] = []
        cells.reserveCapacity(columns * rows)
        let quantize: (SIMDColor) -> UInt32
        switch configuration.colors {
        case .trueColor: quantize = { $0.packed }
        case .palette256: quantize = { UInt32(XtermPalette.nearestIndex(r: $0.r, g: $0.g, b: $0.b)) }
        }
        let tolerance = configuration.colors == .trueColor ? configuration.tolerance : 0
        var pixels = [SIMDColor](repeating: SIMDColor(r: 0, g: 0, b: 0), count: pw * ph)
        for cy in 0..<rows {
            for cx in 0..<columns {
                for sy in 0..<ph {
                    for sx in 0..<pw {
                        let x = cx * pw + sx, y = cy * ph + sy
                        if x < image.width && y < image.height {
                            let i = (y * image.width + x) * 3
                            pixels[sy * pw + sx] = SIMDColor(r: image.bytes[i], g: image.bytes[i + 1], b: image.bytes[i + 2])
                        } else {
                            pixels[sy * pw + sx] = SIMDColor(r: 0, g: 0, b: 0)
                        }
                    }
                }
                cells.append(Grid.cell(for: pixels, mode: mode, quantize: quantize, tolerance: tolerance))
            }
        }
        self.cells = cells
    }

    /// Splits the cell's pixels into two colours and picks the glyph whose set sub-pixels
    /// are those of the cluster holding the first (top-left) pixel. Two colours within
    /// `tolerance` of each other make one solid cell of their mean.
    static func cell(for pixels: [SIMDColor], mode: TerminalGlyphMode, quantize: (SIMDColor) -> UInt32, tolerance: Int) -> Cell {
        // Seeds: the two pixels farthest apart.
        var seedA = 0, seedB = 0, widest = 0
        for i in 0..<pixels.count {
            for j in (i + 1)..<pixels.count {
                let d = pixels[i].distance(to: pixels[j])
                if d > widest { widest = d; seedA = i; seedB = j }
            }
        }
        if widest == 0 { return Cell(solid: quantize(pixels[0])) }

        // Assign each pixel to the nearer seed (ties go to the first).
        var mask = 0
        var sumA = (0, 0, 0, 0), sumB = (0, 0, 0, 0)
        for (i, p) in pixels.enumerated() {
            if p.distance(to: pixels[seedA]) <= p.distance(to: pixels[seedB]) {
                mask |= 1 << i
                sumA = (sumA.0 + Int(p.r), sumA.1 + Int(p.g), sumA.2 + Int(p.b), sumA.3 + 1)
            } else {
                sumB = (sumB.0 + Int(p.r), sumB.1 + Int(p.g), sumB.2 + Int(p.b), sumB.3 + 1)
            }
        }
        let colorA = quantize(SIMDColor.mean(sumA))
        let colorB = quantize(SIMDColor.mean(sumB))
        if colorA == colorB { return Cell(solid: colorA) }
        if tolerance > 0, Cell.isClose(colorA, colorB, tolerance) {
            let all = (sumA.0 + sumB.0, sumA.1 + sumB.1, sumA.2 + sumB.2, sumA.3 + sumB.3)
            return Cell(solid: quantize(SIMDColor.mean(all)))
        }
        // Make the first pixel's cluster the foreground.
        let full = (1 << pixels.count) - 1
        if mask & 1 == 0 {
            return Cell(glyph: TerminalGlyphMode.glyph(mask: full & ~mask, mode: mode), foreground: colorB, background: colorA)
        }
        return Cell(glyph: TerminalGlyphMode.glyph(mask: mask, mode: mode), foreground: colorA, background: colorB)
    }
}

/// An 8-bit RGB colour (a tiny value type; no SIMD needed at these sizes).
struct SIMDColor: Sendable, Hashable {
    var r: UInt8, g: UInt8, b: UInt8

    var packed: UInt32 { UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b) }

    func distance(to other: SIMDColor) -> Int {
        let dr = Int(r) - Int(other.r), dg = Int(g) - Int(other.g), db = Int(b) - Int(other.b)
        return dr * dr + dg * dg + db * db
    }

    static func mean(_ sum: (Int, Int, Int, Int)) -> SIMDColor {
        let n = max(1, sum.3)
        return SIMDColor(r: UInt8((sum.0 + n / 2) / n), g: UInt8((sum.1 + n / 2) / n), b: UInt8((sum.2 + n / 2) / n))
    }
}

// MARK: - Writing

/// Builds one frame's bytes, tracking the terminal's cursor and pen.
struct Writer {
    var bytes: [UInt8] = []
    var usedColors = false
    /// Screen position of the cursor, or nil when unknown.
    private var cursor: (column: Int, row: Int)?
    private var penForeground: UInt32?
    private var penBackground: UInt32?
    private let colors: TerminalColorDepth

    init(colors: TerminalColorDepth) {
        self.colors = colors
    }

    /// Moves the cursor to screen (`column`, `row`), the grid's cell (`gridX`, `gridY`),
    /// by the cheapest of the available moves.
    mutating func moveCursor(toColumn column: Int, row: Int, grid: Grid, gridX: Int, gridY: Int) {
        if let cursor, cursor.row == row, cursor.column == column { return }
        var best = Self.cursorPosition(column: column, row: row)
        if let cursor {
            if cursor.row == row, cursor.column < column {
                let hop = Self.cursorForward(column - cursor.column)
                if hop.count < best.count { best = hop }
                // Rewriting the skipped cells, when they need no colour change.
                let gap = column - cursor.column
                if gap <= 2, let through = writeThrough(grid: grid, fromX: gridX - gap, toX: gridX, y: gridY),
                    through.count < best.count
                {
                    best = through
                }
            } else if cursor.row + 1 == row {
                let down = [0x0D, 0x0A] + (column > 0 ? Self.cursorForward(column) : [])
                if down.count < best.count { best = down }
            }
        }
        bytes.append(contentsOf: best)
        cursor = (column, row)
    }

    /// `cell` with each colour within `tolerance` of the pen replaced by the pen's, so it
    /// needs no colour change.
    func snappedToPen(_ cell: Cell, tolerance: Int) -> Cell {
        var snapped = cell
        if snapped.needsForeground, let pen = penForeground, Cell.isClose(pen, snapped.foreground, tolerance) {
            snapped.foreground = pen
        }
        if let pen = penBackground, Cell.isClose(pen, snapped.background, tolerance) {
            snapped.background = pen
        }
        if snapped.needsForeground && snapped.foreground == snapped.background {
            return Cell(solid: snapped.background)
        }
        return snapped
    }

    /// Draws `cell` at the cursor, changing the pen only as needed.
    mutating func draw(_ cell: Cell) {
        let setForeground = cell.needsForeground && penForeground != cell.foreground
        let setBackground = penBackground != cell.background
        if setForeground || setBackground {
            usedColors = true
            bytes.append(0x1B)
            bytes.append(0x5B)
            if setForeground { appendColor(cell.foreground, selector: 38) }
            if setForeground && setBackground { bytes.append(0x3B) }
            if setBackground { appendColor(cell.background, selector: 48) }
            bytes.append(0x6D)
            if setForeground { penForeground = cell.foreground }
            penBackground = cell.background
        }
        appendUTF8(cell.glyph)
        if let c = cursor { cursor = (c.column + 1, c.row) }
    }

    private func writeThrough(grid: Grid, fromX: Int, toX: Int, y: Int) -> [UInt8]? {
        var out: [UInt8] = []
        for x in fromX..<toX {
            guard x >= 0 else { return nil }
            let cell = grid.cells[y * grid.columns + x]
            if cell.needsForeground && penForeground != cell.foreground { return nil }
            if penBackground != cell.background { return nil }
            var utf8: [UInt8] = []
            Self.appendUTF8(cell.glyph, to: &utf8)
            out += utf8
        }
        return out
    }

    private mutating func appendColor(_ color: UInt32, selector: Int) {
        Self.appendDecimal(selector, to: &bytes)
        bytes.append(0x3B)  // ;
        switch colors {
        case .trueColor:
            bytes.append(0x32)  // 2
            bytes.append(0x3B)
            Self.appendDecimal(Int(color >> 16 & 0xFF), to: &bytes)
            bytes.append(0x3B)
            Self.appendDecimal(Int(color >> 8 & 0xFF), to: &bytes)
            bytes.append(0x3B)
            Self.appendDecimal(Int(color & 0xFF), to: &bytes)
        case .palette256:
            bytes.append(0x35)  // 5
            bytes.append(0x3B)
            Self.appendDecimal(Int(color), to: &bytes)
        }
    }

    private mutating func appendUTF8(_ scalar: Unicode.Scalar) {
        Self.appendUTF8(scalar, to: &bytes)
    }

    static func appendUTF8(_ scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
        let v = scalar.value
        switch v {
        case ..<0x80:
            bytes.append(UInt8(v))
        case ..<0x800:
            bytes.append(UInt8(0xC0 | v >> 6))
            bytes.append(UInt8(0x80 | v & 0x3F))
        case ..<0x10000:
            bytes.append(UInt8(0xE0 | v >> 12))
            bytes.append(UInt8(0x80 | v >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | v & 0x3F))
        default:
            bytes.append(UInt8(0xF0 | v >> 18))
            bytes.append(UInt8(0x80 | v >> 12 & 0x3F))
            bytes.append(UInt8(0x80 | v >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | v & 0x3F))
        }
    }

    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: 0x30 + value))
        } else if value < 100 {
            bytes.append(UInt8(truncatingIfNeeded: 0x30 + value / 10))
            bytes.append(UInt8(truncatingIfNeeded: 0x30 + value % 10))
        } else if value < 1000 {
            bytes.append(UInt8(truncatingIfNeeded: 0x30 + value / 100))
            bytes.append(UInt8(truncatingIfNeeded: 0x30 + value / 10 % 10))
            bytes.append(UInt8(truncatingIfNeeded: 0x30 + value % 10))
        } else {
            appendDecimal(value / 10, to: &bytes)
            bytes.append(UInt8(truncatingIfNeeded: 0x30 + value % 10))
        }
    }

    /// `ESC[row;colH` with 1-based numbers, shortened when they are 1.
    static func cursorPosition(column: Int, row: Int) -> [UInt8] {
        var out: [UInt8] = [0x1B, 0x5B]
        if row > 0 || column > 0 { appendDecimal(row + 1, to: &out) }
        if column > 0 {
            out.append(0x3B)
            appendDecimal(column + 1, to: &out)
        }
        out.append(0x48)
        return out
    }

    /// `ESC[nC` (`ESC[C` for one column).
    static func cursorForward(_ n: Int) -> [UInt8] {
        var out: [UInt8] = [0x1B, 0x5B]
        if n != 1 { appendDecimal(n, to: &out) }
        out.append(0x43)
        return out
    }
}
