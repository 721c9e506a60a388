import Foundation
import ReelCore

/// A terminal screen as sixel images leave it (for tests and `reel bench terminal`'s PSNR):
/// a pixel canvas of `columns × rows`
/// cells of `cellWidth × cellHeight`, fed the bytes an encoder writes. Understands cursor
/// positioning (`ESC[r;cH`), DCS sixel images (raster attributes, `#c;2;r;g;b` colours in
/// percent, `#c` selection, `!n` repeats, `$`, `-`) drawn at the cursor's cell with a
/// transparent background, and ignores other CSI sequences.
public struct SixelScreen: Sendable {
    public let cellWidth: Int, cellHeight: Int
    /// The screen's pixels.
    public private(set) var canvas: RGBImage
    private var cursor = (column: 0, row: 0)
    /// Images drawn so far, and the raster size each declared.
    public private(set) var images: [(column: Int, row: Int, width: Int, height: Int)] = []

    public init(columns: Int, rows: Int, cellWidth: Int, cellHeight: Int) {
        self.cellWidth = cellWidth
        self.cellHeight = cellHeight
        canvas = RGBImage(width: columns * cellWidth, height: rows * cellHeight)
    }

    /// Draws what `bytes` say.
    public mutating func feed(_ bytes: [UInt8]) {
        var i = 0
        while i < bytes.count {
            guard bytes[i] == 0x1B, i + 1 < bytes.count else { i += 1; continue }
            if bytes[i + 1] == UInt8(ascii: "[") {
                var j = i + 2
                while j < bytes.count, !(0x40...0x7E).contains(bytes[j]) { j += 1 }
                if j < bytes.count, bytes[j] == UInt8(ascii: "H") {
                    let fields = String(decoding: bytes[(i + 2)..<j], as: UTF8.self).split(separator: ";").map { Int($0) ?? 1 }
                    cursor = (max(1, fields.count > 1 ? fields[1] : 1) - 1, max(1, fields.first ?? 1) - 1)
                }
                i = j + 1
            } else if bytes[i + 1] == UInt8(ascii: "P") {
                var j = i + 2
                while j + 1 < bytes.count, !(bytes[j] == 0x1B && bytes[j + 1] == UInt8(ascii: "\\")) { j += 1 }
                draw(Array(bytes[(i + 2)..<j]))
                i = j + 2
            } else {
                i += 2
            }
        }
    }

    /// Reads a number at `i`, moving `i` past it.
    private static func number(_ b: [UInt8], _ i: inout Int) -> Int {
        var n = 0
        while i < b.count, (0x30...0x39).contains(b[i]) { n = n * 10 + Int(b[i] - 0x30); i += 1 }
        return n
    }

    private mutating func draw(_ body: [UInt8]) {
        guard let q = body.firstIndex(of: UInt8(ascii: "q")) else { return }
        var palette = [Int: (UInt8, UInt8, UInt8)]()
        var color = (UInt8(0), UInt8(0), UInt8(0))
        let originX = cursor.column * cellWidth, originY = cursor.row * cellHeight
        var x = 0, band = 0
        var i = q + 1
        while i < body.count {
            let c = body[i]
            switch c {
            case UInt8(ascii: "\""):
                i += 1
                var fields: [Int] = []
                while i < body.count, (0x30...0x39).contains(body[i]) || body[i] == UInt8(ascii: ";") {
                    if body[i] == UInt8(ascii: ";") { i += 1; continue }
                    fields.append(Self.number(body, &i))
                }
                if fields.count == 4 { images.append((cursor.column, cursor.row, fields[2], fields[3])) }
            case UInt8(ascii: "#"):
                i += 1
                let n = Self.number(body, &i)
                if i < body.count, body[i] == UInt8(ascii: ";") {
                    var f: [Int] = []
                    while i < body.count, body[i] == UInt8(ascii: ";") { i += 1; f.append(Self.number(body, &i)) }
                    func level(_ p: Int) -> UInt8 { UInt8((p * 255 + 50) / 100) }
                    if f.count == 4, f[0] == 2 { palette[n] = (level(f[1]), level(f[2]), level(f[3])) }
                }
                color = palette[n] ?? (0, 0, 0)
            case UInt8(ascii: "!"):
                i += 1
                let n = Self.number(body, &i)
                if i < body.count { paint(body[i], count: n, x: &x, band: band, origin: (originX, originY), color: color) }
                i += 1
            case UInt8(ascii: "$"): x = 0; i += 1
            case UInt8(ascii: "-"): x = 0; band += 1; i += 1
            case 63...126:
                paint(c, count: 1, x: &x, band: band, origin: (originX, originY), color: color)
                i += 1
            default: i += 1
            }
        }
    }

    private mutating func paint(_ sixel: UInt8, count: Int, x: inout Int, band: Int, origin: (Int, Int), color: (UInt8, UInt8, UInt8)) {
        let bits = Int(sixel) - 63
        for _ in 0..<count {
            for bit in 0..<6 where bits & (1 << bit) != 0 {
                let px = origin.0 + x, py = origin.1 + band * 6 + bit
                if px < canvas.width, py < canvas.height { canvas[px, py] = color }
            }
            x += 1
        }
    }

    /// The `width × height` pixels at cell `column`, `row`.
    public func crop(column: Int, row: Int, width: Int, height: Int) -> RGBImage {
        var out = RGBImage(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width { out[x, y] = canvas[column * cellWidth + x, row * cellHeight + y] }
        }
        return out
    }
}

/// Peak signal-to-noise ratio of `a` against `b` (same size), in dB; infinity when equal.
public func psnr(_ a: RGBImage, _ b: RGBImage) -> Double {
    precondition(a.width == b.width && a.height == b.height)
    var sum = 0.0
    for i in 0..<a.bytes.count {
        let d = Double(Int(a.bytes[i]) - Int(b.bytes[i]))
        sum += d * d
    }
    let mse = sum / Double(a.bytes.count)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

