import ReelCore

/// A palette of at most 256 colours for one sixel frame, from a median cut over a subsample
/// of the pixels to be sent, and the mapping of pixels to it with ordered (Bayer 4×4)
/// dithering through a 15-bit lookup (5 bits a channel, filled on first use), so each pixel
/// costs one table read after its first neighbours.
public struct SixelPalette: Sendable {
    /// The colours, `r, g, b` for each entry.
    public private(set) var colors: [UInt8]
    /// Entries.
    public var count: Int { colors.count / 3 }

    /// The median cut of `image`'s rows `rows` into at most `maximum` colours, from at most
    /// `samples` pixels spread evenly over them.
    public init(image: RGBImage, rows: Range<Int>, maximum: Int = 256, samples: Int = 16_384) {
        let maximum = max(2, min(256, maximum))
        var pixels: [UInt32] = []
        let total = image.width * rows.count
        let step = max(1, total / max(1, samples))
        pixels.reserveCapacity(total / step + 1)
        image.bytes.withUnsafeBufferPointer { b in
            var i = 0
            let start = rows.lowerBound * image.width
            while i < total {
                let p = (start + i) * 3
                pixels.append(UInt32(b[p]) << 16 | UInt32(b[p + 1]) << 8 | UInt32(b[p + 2]))
                i += step
            }
        }
        colors = Self.medianCut(pixels, maximum: maximum)
    }

    /// A palette of exactly these `r, g, b` entries.
    public init(colors: [UInt8]) {
        precondition(colors.count % 3 == 0 && colors.count / 3 <= 256)
        self.colors = colors
    }

    private struct Box {
        var range: Range<Int>
        /// The channel (16, 8 or 0: the shift) with the widest spread, and that spread.
        var channel: UInt32 = 16
        var spread: Int = 0
    }

    private static func measure(_ box: inout Box, _ pixels: [UInt32]) {
        var lo: [Int] = [255, 255, 255], hi: [Int] = [0, 0, 0]
        for p in pixels[box.range] {
            for (k, shift) in [16, 8, 0].enumerated() {
                let v = Int((p >> UInt32(shift)) & 0xFF)
                lo[k] = min(lo[k], v)
                hi[k] = max(hi[k], v)
            }
        }
        let spreads = (0..<3).map { hi[$0] - lo[$0] }
        // Green counts most to the eye, red next (the usual luma weights, roughly).
        let weighted = [spreads[0] * 3, spreads[1] * 4, spreads[2] * 2]
        let k = weighted.firstIndex(of: weighted.max()!)!
        box.channel = UInt32([16, 8, 0][k])
        box.spread = weighted[k]
    }

    /// Splits the box that most needs it (widest weighted spread times the log of its
    /// population) at its median until there are `maximum` boxes or none can split; each
    /// box's mean is an entry.
    private static func medianCut(_ input: [UInt32], maximum: Int) -> [UInt8] {
        guard !input.isEmpty else { return [0, 0, 0] }
        var pixels = input
        var first = Box(range: 0..<pixels.count)
        measure(&first, pixels)
        var boxes = [first]
        while boxes.count < maximum {
            var best = -1, bestScore = 0
            for (i, box) in boxes.enumerated() where box.range.count > 1 && box.spread > 0 {
                let score = box.spread * (Int.bitWidth - box.range.count.leadingZeroBitCount)
                if score > bestScore { best = i; bestScore = score }
            }
            guard best >= 0 else { break }
            let box = boxes[best]
            let shift = box.channel
            pixels[box.range].sort { ($0 >> shift) & 0xFF < ($1 >> shift) & 0xFF }
            // Split at the median's value, not its index: a few pixels of a distinct colour
            // beside many of another part at once (the many would need halving again and again).
            let middle = split(pixels, box.range, shift: shift)
            var low = Box(range: box.range.lowerBound..<middle), high = Box(range: middle..<box.range.upperBound)
            measure(&low, pixels)
            measure(&high, pixels)
            boxes[best] = low
            boxes.append(high)
        }
        var colors: [UInt8] = []
        for box in boxes {
            var sum = (0, 0, 0)
            for p in pixels[box.range] {
                sum.0 += Int(p >> 16 & 0xFF); sum.1 += Int(p >> 8 & 0xFF); sum.2 += Int(p & 0xFF)
            }
            let n = box.range.count
            colors += [UInt8((sum.0 + n / 2) / n), UInt8((sum.1 + n / 2) / n), UInt8((sum.2 + n / 2) / n)]
        }
        return colors
    }

    /// Where to split `range` (sorted on channel `shift`): before the first pixel of the
    /// median's value, or after its last when that is the start.
    private static func split(_ pixels: [UInt32], _ range: Range<Int>, shift: UInt32) -> Int {
        func value(_ i: Int) -> UInt32 { (pixels[i] >> shift) & 0xFF }
        let median = value(range.lowerBound + range.count / 2)
        var low = range.lowerBound + range.count / 2
        while low > range.lowerBound && value(low - 1) == median { low -= 1 }
        if low > range.lowerBound { return low }
        var high = range.lowerBound + range.count / 2
        while high < range.upperBound && value(high) == median { high += 1 }
        return high < range.upperBound ? high : range.lowerBound + range.count / 2
    }

    /// The 4×4 Bayer matrix, thresholds 0…15.
    private static let bayer: [Int] = [0, 8, 2, 10, 12, 4, 14, 6, 3, 11, 1, 9, 15, 7, 13, 5]

    /// Maps rows `rows` of `image` to palette indices (row-major, `width × rows.count`),
    /// offsetting each pixel by the Bayer threshold scaled to `dither` (0: nearest colour).
    /// A pixel already within about `dither / 2` of its nearest entry is not dithered: flat
    /// areas stay flat (long runs, few colours a band) and only gradients get the pattern.
    public func indices(of image: RGBImage, rows: Range<Int>, dither: Int) -> [UInt8] {
        let width = image.width
        var out = [UInt8](repeating: 0, count: width * rows.count)
        var lookup = [Int16](repeating: -1, count: 1 << 15)
        let offsets = Self.bayer.map { ($0 * 2 - 15) * dither / 32 }
        let close = 9 * (dither / 2) * (dither / 2)
        image.bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                lookup.withUnsafeMutableBufferPointer { table in
                    for y in rows {
                        let row = (y - rows.lowerBound) * width
                        let matrixRow = (y & 3) * 4
                        for x in 0..<width {
                            let p = (y * width + x) * 3
                            if dither > 0 {
                                let (r, g, b) = (Int(src[p]), Int(src[p + 1]), Int(src[p + 2]))
                                let plain = Int(entry(table: table, r: r, g: g, b: b))
                                let dr = r - Int(colors[plain * 3]), dg = g - Int(colors[plain * 3 + 1])
                                let db = b - Int(colors[plain * 3 + 2])
                                if 3 * dr * dr + 4 * dg * dg + 2 * db * db <= close {
                                    dst[row + x] = UInt8(plain)
                                    continue
                                }
                            }
                            let o = offsets[matrixRow + (x & 3)]
                            let r = min(255, max(0, Int(src[p]) + o))
                            let g = min(255, max(0, Int(src[p + 1]) + o))
                            let b = min(255, max(0, Int(src[p + 2]) + o))
                            dst[row + x] = UInt8(entry(table: table, r: r, g: g, b: b))
                        }
                    }
                }
            }
        }
        return out
    }

    /// The entry for `r, g, b` through the 15-bit lookup (found and kept on first use).
    @inline(__always)
    private func entry(table: UnsafeMutableBufferPointer<Int16>, r: Int, g: Int, b: Int) -> Int16 {
        let key = (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3)
        var index = table[key]
        if index < 0 {
            index = Int16(nearest(r: (r & ~7) | 4, g: (g & ~7) | 4, b: (b & ~7) | 4))
            table[key] = index
        }
        return index
    }

    /// The entry closest to `r, g, b` (weighted squared distance).
    public func nearest(r: Int, g: Int, b: Int) -> Int {
        var best = 0, bestDistance = Int.max
        colors.withUnsafeBufferPointer { c in
            var i = 0, entry = 0
            while i < c.count {
                let dr = Int(c[i]) - r, dg = Int(c[i + 1]) - g, db = Int(c[i + 2]) - b
                let d = 3 * dr * dr + 4 * dg * dg + 2 * db * db
                if d < bestDistance { bestDistance = d; best = entry }
                i += 3
                entry += 1
            }
        }
        return best
    }
}
