import Foundation

/// A ``ColorMapping`` made fast enough for every pixel: its smooth part
/// (``ColorMapping/toneMapped(_:)``: linearise, tone-map, primaries) sampled on a cube of
/// `size`³ points of the source's encoded R'G'B' and read back by trilinear interpolation, then
/// per pixel ``finish(_:_:_:)``: the gamut mapping and the display's transfer
/// (``ColorMapping/display(_:)``) through two 1D tables. The window uploads ``values`` as a 3D
/// texture (the GPU interpolates the same way) and runs the same finish in GLSL; the CPU path
/// calls ``sample(_:size:_:_:_:)`` and ``finish(_:_:_:)``.
///
/// The cube holds light as signed gamma-2.4 code values (of |light| / (4 × the display's peak),
/// negative for a component below zero): a perceptual scale close to the display's own, so
/// interpolating is close to exact.
public struct ColorLUT: Sendable, Hashable {
    /// Points along each axis.
    public let size: Int
    /// Signed gamma-encoded tone-mapped BT.709 light, red fastest, then green, then blue:
    /// `(r + g·size + b·size²)·3`.
    public let values: [Float]
    /// The mapping sampled.
    public let mapping: ColorMapping
    /// Light relative to the display's peak for cube codes `i / (count − 1)`.
    let lightTable: [Float]
    /// The display's code for relative light `(i / (count − 1))²` (a square-root index keeps the
    /// steep start of the display's transfer fine-grained).
    let encodeTable: [Float]

    public static let defaultSize = 33
    static let tableCount = 4097
    /// The cube holds light up to this many times the display's peak (the primaries' matrix
    /// takes a saturated colour past it; the gamut mapping brings it back).
    public static let headroom = 4.0

    public init(_ mapping: ColorMapping, size: Int = ColorLUT.defaultSize) {
        precondition(size >= 2)
        self.size = size
        self.mapping = mapping
        var values = [Float](repeating: 0, count: size * size * size * 3)
        let step = 1 / Double(size - 1)
        var index = 0
        for b in 0..<size {
            for g in 0..<size {
                for r in 0..<size {
                    let light = mapping.toneMapped(SIMD3(Double(r) * step, Double(g) * step, Double(b) * step))
                    for c in [light.x, light.y, light.z] {
                        values[index] = Float(pow(abs(c) / mapping.targetPeak / Self.headroom, 1 / 2.4)) * (c < 0 ? -1 : 1)
                        index += 1
                    }
                }
            }
        }
        self.values = values
        let last = Double(Self.tableCount - 1)
        lightTable = (0..<Self.tableCount).map { Float(pow(Double($0) / last, 2.4) * Self.headroom) }
        encodeTable = (0..<Self.tableCount).map { i in
            let s = Double(i) / last
            return Float(mapping.display.encode(s * s))
        }
    }

    /// Display R'G'B' (0…1) for source R'G'B' (clamped to 0…1).
    public func apply(_ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        let pq = values.withUnsafeBufferPointer { Self.sample($0, size: size, r, g, b) }
        return finish(pq.0, pq.1, pq.2)
    }

    /// The cube's signed encoded light at source R'G'B', interpolated trilinearly.
    @inlinable
    public static func sample(_ table: UnsafeBufferPointer<Float>, size: Int, _ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        let scale = Float(size - 1)
        let x = min(max(r, 0), 1) * scale, y = min(max(g, 0), 1) * scale, z = min(max(b, 0), 1) * scale
        let x0 = min(Int(x), size - 2), y0 = min(Int(y), size - 2), z0 = min(Int(z), size - 2)
        let fx = x - Float(x0), fy = y - Float(y0), fz = z - Float(z0)
        let sy = size * 3, sz = size * size * 3
        let base = x0 * 3 + y0 * sy + z0 * sz
        var out: (Float, Float, Float) = (0, 0, 0)
        for c in 0..<3 {
            let i = base + c
            let c00 = table[i] + (table[i + 3] - table[i]) * fx
            let c10 = table[i + sy] + (table[i + sy + 3] - table[i + sy]) * fx
            let c01 = table[i + sz] + (table[i + sz + 3] - table[i + sz]) * fx
            let c11 = table[i + sy + sz] + (table[i + sy + sz + 3] - table[i + sy + sz]) * fx
            let c0 = c00 + (c10 - c00) * fy, c1 = c01 + (c11 - c01) * fy
            let v = c0 + (c1 - c0) * fz
            if c == 0 { out.0 = v } else if c == 1 { out.1 = v } else { out.2 = v }
        }
        return out
    }

    /// Display R'G'B' (0…1) for the cube's signed encoded light: ``GamutMapping`` and the display's
    /// transfer, in single precision.
    public func finish(_ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        lightTable.withUnsafeBufferPointer { light in
            encodeTable.withUnsafeBufferPointer { encode in
                Self.finish(light: light, encode: encode, r, g, b)
            }
        }
    }

    /// ``finish(_:_:_:)`` on the tables' storage (the CPU path's inner loop).
    @inlinable
    public static func finish(light: UnsafeBufferPointer<Float>, encode: UnsafeBufferPointer<Float>,
                       _ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        let last = Float(light.count - 1)
        func lookup(_ table: UnsafeBufferPointer<Float>, _ v: Float) -> Float {
            let x = min(max(v, 0), 1) * last
            let i = min(Int(x), table.count - 2)
            return table[i] + (table[i + 1] - table[i]) * (x - Float(i))
        }
        func linear(_ v: Float) -> Float { v < 0 ? -lookup(light, -v) : lookup(light, v) }
        var (lr, lg, lb) = (linear(r), linear(g), linear(b))
        if min(lr, lg, lb) < 0 || max(lr, lg, lb) > 1 {
            let y = 0.2126 * lr + 0.7152 * lg + 0.0722 * lb
            if y >= 1 {
                (lr, lg, lb) = (1, 1, 1)
            } else if y <= 0 {
                (lr, lg, lb) = (0, 0, 0)
            } else {
                var t: Float = 1
                for c in [lr, lg, lb] {
                    if c > 1 { t = min(t, (1 - y) / (c - y)) }
                    if c < 0 { t = min(t, y / (y - c)) }
                }
                (lr, lg, lb) = (y + (lr - y) * t, y + (lg - y) * t, y + (lb - y) * t)
            }
        }
        return (lookup(encode, max(lr, 0).squareRoot()), lookup(encode, max(lg, 0).squareRoot()),
                lookup(encode, max(lb, 0).squareRoot()))
    }

    /// Runs `body` with the three tables' storage, for a loop over many pixels.
    public func withTables<R>(_ body: (_ cube: UnsafeBufferPointer<Float>, _ light: UnsafeBufferPointer<Float>,
                                       _ encode: UnsafeBufferPointer<Float>) -> R) -> R {
        values.withUnsafeBufferPointer { cube in
            lightTable.withUnsafeBufferPointer { light in
                encodeTable.withUnsafeBufferPointer { encode in body(cube, light, encode) }
            }
        }
    }

    /// Display R'G'B' for source R'G'B' on the tables' storage.
    @inlinable
    public static func apply(cube: UnsafeBufferPointer<Float>, light: UnsafeBufferPointer<Float>, encode: UnsafeBufferPointer<Float>,
                             size: Int, _ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        let pq = sample(cube, size: size, r, g, b)
        return finish(light: light, encode: encode, pq.0, pq.1, pq.2)
    }

    /// The ordered-dither offset (−0.5…0.5 of a code) for output pixel `x`, `y`: an 8×8
    /// Bayer matrix, the same the window's shader adds before the 8-bit framebuffer rounds.
    @inlinable
    public static func dither(x: Int, y: Int) -> Float {
        var v = 0
        var xx = x, yy = y
        for bit in 0..<3 {
            let xb = xx & 1, yb = yy & 1
            v |= ((xb ^ yb) << (2 * (2 - bit) + 1)) | (yb << (2 * (2 - bit)))
            xx >>= 1; yy >>= 1
        }
        return (Float(v) + 0.5) / 64 - 0.5
    }
}
