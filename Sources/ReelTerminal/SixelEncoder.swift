import ReelCore

/// Turns already-scaled `RGBImage`s into sixel images (DEC's six-pixel-high bands), one
/// write per frame, rewriting only the text rows whose pixels changed.
///
/// Each frame's palette is a median cut of the frame's pixels (``SixelPalette``, at most
/// ``Configuration/colors`` entries, only the ones used written out), mapped with ordered
/// (Bayer 4×4) dithering; runs of one sixel are run-length encoded (`!n`).
///
/// Diffing by text rows: a sixel image starts at the cursor's cell, so an update can only
/// start at a text row. The picture is cut in stripes one text row (`cellHeight` pixels)
/// high; a stripe whose pixels moved by more than ``Configuration/tolerance`` is sent
/// again, consecutive changed stripes as one image placed at the first one's row (and the
/// whole picture as one image when three quarters of it changed). A stripe
/// need not be a whole number of bands: images are sent with a transparent background
/// (`P2=1`), so the rows of the last band below the stripe, which no colour sets, leave what
/// is on screen. Terminals keep each image's colour registers (xterm's
/// `privateColorRegisters`, the default), so stripes drawn with an earlier palette keep
/// their colours.
public struct SixelEncoder: Sendable {
    /// How frames are encoded.
    public struct Configuration: Sendable, Hashable {
        /// Palette entries per frame (2…256).
        public var colors: Int
        /// Ordered dithering's amplitude in 0…255 levels (0: nearest colour, no dithering).
        public var dither: Int
        /// Send only the text rows that changed (false: every frame whole).
        public var diffing: Bool
        /// How far (per channel) a pixel may move before its row is sent again. 8 by
        /// default: under the palette's own steps, so a still picture's coding noise (a
        /// re-encoded still moves by a few levels each frame) sends nothing.
        public var tolerance: Int

        public init(colors: Int = 64, dither: Int = 8, diffing: Bool = true, tolerance: Int = 8) {
            self.colors = colors
            self.dither = dither
            self.diffing = diffing
            self.tolerance = tolerance
        }
    }

    /// What the last ``encode(_:column:row:)`` did.
    public struct FrameInfo: Sendable, Hashable {
        /// Bytes written for the frame.
        public var bytes = 0
        /// Text rows of the picture sent, of ``totalRows``.
        public var rowsSent = 0
        public var totalRows = 0
        /// Whether the frame was sent whole (the first, or after ``invalidate()``).
        public var fullRedraw = false
    }

    public let configuration: Configuration
    /// A cell's height in pixels: stripes are this high.
    public let cellHeight: Int
    /// The last frame sent and where (what the screen shows), nil after ``invalidate()``.
    private var shown: (image: RGBImage, column: Int, row: Int)?
    public private(set) var lastFrame = FrameInfo()
    /// Bytes of all frames so far.
    public private(set) var totalByteCount = 0

    public init(configuration: Configuration = .init(), cellHeight: Int) {
        precondition(cellHeight > 0)
        self.configuration = configuration
        self.cellHeight = cellHeight
    }

    /// Forget what the screen shows (after a clear or a resize): the next frame goes whole.
    public mutating func invalidate() { shown = nil }

    /// The bytes that draw `image` with its top-left corner at 0-based cell `column`, `row`
    /// (empty when nothing changed).
    public mutating func encode(_ image: RGBImage, column: Int = 0, row: Int = 0) -> [UInt8] {
        let stripes = (image.height + cellHeight - 1) / cellHeight
        var changed = [Bool](repeating: true, count: stripes)
        let full: Bool
        if configuration.diffing, let shown, shown.column == column, shown.row == row,
           shown.image.width == image.width, shown.image.height == image.height {
            full = false
            for s in 0..<stripes {
                changed[s] = Self.differ(shown.image, image, rows: stripeRows(s, height: image.height),
                                         tolerance: configuration.tolerance)
            }
            // Most of the picture changed: one image with one palette costs less than
            // several runs each with its own.
            if changed.filter({ $0 }).count * 4 >= stripes * 3 { changed = [Bool](repeating: true, count: stripes) }
        } else {
            full = true
        }
        var out: [UInt8] = []
        var s = 0
        var sent = 0
        // One palette for the frame, from the whole picture: the runs sent share it, so each
        // band uses no more colours than it would in the whole frame.
        var palette: SixelPalette?
        while s < stripes {
            guard changed[s] else { s += 1; continue }
            var end = s
            while end + 1 < stripes && changed[end + 1] { end += 1 }
            let rows = (s * cellHeight)..<min(image.height, (end + 1) * cellHeight)
            out += TerminalControl.moveCursor(column: column, row: row + s)
            if palette == nil { palette = SixelPalette(image: image, rows: 0..<image.height, maximum: configuration.colors) }
            out += Self.image(image, rows: rows, palette: palette!, dither: configuration.dither)
            sent += end - s + 1
            s = end + 1
        }
        shown = (image, column, row)
        lastFrame = FrameInfo(bytes: out.count, rowsSent: sent, totalRows: stripes, fullRedraw: full)
        totalByteCount += out.count
        return out
    }

    private func stripeRows(_ stripe: Int, height: Int) -> Range<Int> {
        (stripe * cellHeight)..<min(height, (stripe + 1) * cellHeight)
    }

    /// Whether any pixel of `rows` moved by more than `tolerance` in a channel.
    static func differ(_ a: RGBImage, _ b: RGBImage, rows: Range<Int>, tolerance: Int) -> Bool {
        let start = rows.lowerBound * a.width * 3, end = rows.upperBound * a.width * 3
        return a.bytes.withUnsafeBufferPointer { x in
            b.bytes.withUnsafeBufferPointer { y in
                for i in start..<end where abs(Int(x[i]) - Int(y[i])) > tolerance { return true }
                return false
            }
        }
    }

    /// One sixel image (DCS … ST) of `rows` of `image` in `palette`.
    static func image(_ image: RGBImage, rows: Range<Int>, palette: SixelPalette, dither: Int) -> [UInt8] {
        let indices = palette.indices(of: image, rows: rows, dither: dither)
        return encode(indices: indices, width: image.width, height: rows.count, palette: palette)
    }

    /// The DCS sequence for palette `indices` (`width × height`, row-major): raster
    /// attributes (1:1 pixels), the entries used, then each band's colours, RLE'd.
    public static func encode(indices: [UInt8], width: Int, height: Int, palette: SixelPalette) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(width * height / 4)
        // P1 0, P2 1: pixels no colour sets stay as they were (transparent background).
        out += Array("\u{1B}P0;1;0q\"1;1;\(width);\(height)".utf8)
        var used = [Bool](repeating: false, count: 256)
        for i in indices { used[Int(i)] = true }
        for c in 0..<palette.count where used[c] {
            let (r, g, b) = (palette.colors[c * 3], palette.colors[c * 3 + 1], palette.colors[c * 3 + 2])
            out += Array("#\(c);2;\(percent(r));\(percent(g));\(percent(b))".utf8)
        }
        var bands = SixelBands(width: width)
        for top in stride(from: 0, to: height, by: 6) {
            if top > 0 { out.append(UInt8(ascii: "-")) }
            bands.encodeBand(indices, top: top, height: height, into: &out)
        }
        out += [0x1B, UInt8(ascii: "\\")]
        return out
    }

    private static func percent(_ v: UInt8) -> Int { (Int(v) * 100 + 127) / 255 }
}

/// The band encoder's scratch space (one per image): each colour's six-bit columns across
/// the band, cleared after use over the span the colour covered.
struct SixelBands {
    let width: Int
    var masks: [UInt8]
    var first = [Int](repeating: Int.max, count: 256)
    var last = [Int](repeating: -1, count: 256)

    init(width: Int) {
        self.width = width
        masks = [UInt8](repeating: 0, count: 256 * width)
    }

    /// Band `top…top+5`: for each colour present, `#c`, its sixels from its first to its
    /// last column (runs as `!n`), `$` (back to the band's start) between colours. The
    /// caller writes `-` (next band) between bands, none after the last.
    mutating func encodeBand(_ indices: [UInt8], top: Int, height: Int, into out: inout [UInt8]) {
        var colors: [Int] = []
        let width = self.width
        indices.withUnsafeBufferPointer { src in
            masks.withUnsafeMutableBufferPointer { m in
                for bit in 0..<min(6, height - top) {
                    let row = (top + bit) * width
                    let value = UInt8(1 << bit)
                    for x in 0..<width {
                        let c = Int(src[row + x])
                        if last[c] < 0 { colors.append(c); first[c] = x }
                        if x > last[c] { last[c] = x }
                        if x < first[c] { first[c] = x }
                        m[c * width + x] |= value
                    }
                }
            }
        }
        colors.sort { first[$0] < first[$1] }
        for (n, c) in colors.enumerated() {
            out += Array("#\(c)".utf8)
            if first[c] > 0 { Self.run(0, count: first[c], into: &out) }
            masks.withUnsafeMutableBufferPointer { m in
                let base = c * width
                var x = first[c]
                while x <= last[c] {
                    let v = m[base + x]
                    var n = 1
                    while x + n <= last[c] && m[base + x + n] == v { n += 1 }
                    Self.run(v, count: n, into: &out)
                    for k in x..<(x + n) { m[base + k] = 0 }
                    x += n
                }
            }
            first[c] = Int.max
            last[c] = -1
            if n < colors.count - 1 { out.append(UInt8(ascii: "$")) }
        }
    }

    /// `count` sixels of bits `value`: repeated (`!n`) when that is shorter.
    static func run(_ value: UInt8, count: Int, into out: inout [UInt8]) {
        let char = 63 + value
        if count > 3 {
            out.append(UInt8(ascii: "!"))
            out += Array(String(count).utf8)
            out.append(char)
        } else {
            for _ in 0..<count { out.append(char) }
        }
    }
}
