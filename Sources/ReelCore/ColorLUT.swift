import Foundation
import Synchronization

/// A ``ColorMapping`` made fast enough for every pixel: its smooth part
/// (``ColorMapping/converted(_:)``: linearise, primaries to BT.709) sampled on a cube of
/// `size`³ points of the source's encoded R'G'B' and read back by trilinear interpolation, then
/// per pixel `finish`: the tone mapping, the gamut mapping and the display's transfer
/// through 1D tables. The window uploads ``values`` as a 3D texture (the GPU interpolates the
/// same way) and runs the same finish in GLSL; the CPU path runs ``map(rgb48:stride:width:height:into:)``.
///
/// The cube holds light as signed PQ code values (PQ of |nits|, negative for a component below
/// zero): the source's own perceptual scale, so a grey comes out of the cube exactly.
public struct ColorLUT: Sendable, Hashable {
    /// Points along each axis.
    public let size: Int
    /// Signed PQ of BT.709 light in nits, red fastest, then green, then blue:
    /// `(r + g·size + b·size²)·3`.
    public let values: [Float]
    /// The mapping sampled.
    public let mapping: ColorMapping
    /// Light relative to the display's peak for cube codes `i / (count − 1)`.
    let lightTable: [Float]
    /// The same light tone-mapped (``ToneMappingCurve/map(_:sourcePeak:targetPeak:)``).
    let toneTable: [Float]
    /// The display's code for relative light `(i / (count − 1))²` (a square-root index keeps the
    /// steep start of the display's transfer fine-grained).
    let encodeTable: [Float]

    /// 33 points an axis: a mean ΔE of about 1 from the exact maths over BT.709 colours carried
    /// in BT.2020 (ColorMappingTests), built in a few milliseconds (release).
    public static let defaultSize = 33
    static let tableCount = 4097

    /// What the cube depends on: the tone mapping, the peaks and the display do not enter it.
    public struct CubeKey: Sendable, Hashable {
        public var transfer: ColorTransfer
        public var primaries: ColorPrimaries
        public var size: Int
    }

    /// The cube's key.
    public var cubeKey: CubeKey { CubeKey(transfer: mapping.transfer, primaries: mapping.primaries, size: size) }

    /// Cubes made so far, by what they depend on: each is computed once per process, so a new
    /// scene peak or another output's table costs only the 1D tables (a few thousand points).
    private static let cubes = Mutex<[CubeKey: [Float]]>([:])

    public init(_ mapping: ColorMapping, size: Int = ColorLUT.defaultSize) {
        precondition(size >= 2)
        self.size = size
        self.mapping = mapping
        let key = CubeKey(transfer: mapping.transfer, primaries: mapping.primaries, size: size)
        if let cached = Self.cubes.withLock({ $0[key] }) {
            values = cached
        } else {
            let made = Self.cube(mapping, size: size)
            values = Self.cubes.withLock { cubes in
                if let first = cubes[key] { return first }
                cubes[key] = made
                return made
            }
        }
        let last = Double(Self.tableCount - 1)
        lightTable = (0..<Self.tableCount).map { Float(PQ.eotf(Double($0) / last) / mapping.targetPeak) }
        toneTable = (0..<Self.tableCount).map { i in
            let nits = PQ.eotf(Double(i) / last)
            return Float(mapping.curve.map(nits, sourcePeak: max(mapping.sourcePeak, 1), targetPeak: mapping.targetPeak) / mapping.targetPeak)
        }
        encodeTable = (0..<Self.tableCount).map { i in
            let s = Double(i) / last
            return Float(mapping.display.encode(s * s))
        }
    }

    /// The cube of `mapping`'s smooth part (see ``values``).
    static func cube(_ mapping: ColorMapping, size: Int) -> [Float] {
        var values = [Float](repeating: 0, count: size * size * size * 3)
        let step = 1 / Double(size - 1)
        var index = 0
        for b in 0..<size {
            for g in 0..<size {
                for r in 0..<size {
                    let light = mapping.converted(SIMD3(Double(r) * step, Double(g) * step, Double(b) * step))
                    for c in [light.x, light.y, light.z] {
                        values[index] = Float(PQ.inverseEOTF(abs(c))) * (c < 0 ? -1 : 1)
                        index += 1
                    }
                }
            }
        }
        return values
    }

    /// The cube's and the three 1D tables' storage, for a loop over many points
    /// (``FoldedColorLUT`` folds them into one cube).
    struct Tables {
        let cube: UnsafeBufferPointer<Float>
        let light: UnsafeBufferPointer<Float>
        let tone: UnsafeBufferPointer<Float>
        let encode: UnsafeBufferPointer<Float>
        let size: Int
    }

    /// Runs `body` with the tables' storage.
    func withTables<R>(_ body: (Tables) -> R) -> R {
        values.withUnsafeBufferPointer { cube in
            lightTable.withUnsafeBufferPointer { light in
                toneTable.withUnsafeBufferPointer { tone in
                    encodeTable.withUnsafeBufferPointer { encode in
                        body(Tables(cube: cube, light: light, tone: tone, encode: encode, size: size))
                    }
                }
            }
        }
    }

    /// Display R'G'B' (0…1) for source R'G'B' (clamped to 0…1).
    public func apply(_ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        withTables { Self.apply($0, r, g, b) }
    }

    /// Display R'G'B' for source R'G'B', on the tables' storage (the CPU path's inner loop).
    static func apply(_ tables: Tables, _ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        let pq = sample(tables.cube, size: tables.size, r, g, b)
        return finish(tables, pq.0, pq.1, pq.2)
    }

    /// The cube's signed PQ light at source R'G'B', interpolated trilinearly.
    static func sample(_ table: UnsafeBufferPointer<Float>, size: Int, _ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        let scale = Float(size - 1)
        let x = min(max(r, 0), 1) * scale, y = min(max(g, 0), 1) * scale, z = min(max(b, 0), 1) * scale
        let x0 = min(Int(x), size - 2), y0 = min(Int(y), size - 2), z0 = min(Int(z), size - 2)
        let fx = x - Float(x0), fy = y - Float(y0), fz = z - Float(z0)
        let sy = size * 3, sz = size * size * 3
        let base = x0 * 3 + y0 * sy + z0 * sz
        @inline(__always) func channel(_ i: Int) -> Float {
            let c00 = table[i] + (table[i + 3] - table[i]) * fx
            let c10 = table[i + sy] + (table[i + sy + 3] - table[i + sy]) * fx
            let c01 = table[i + sz] + (table[i + sz + 3] - table[i + sz]) * fx
            let c11 = table[i + sy + sz] + (table[i + sy + sz + 3] - table[i + sy + sz]) * fx
            let c0 = c00 + (c10 - c00) * fy, c1 = c01 + (c11 - c01) * fy
            return c0 + (c1 - c0) * fz
        }
        return (channel(base), channel(base + 1), channel(base + 2))
    }

    /// `table` at `v` (0…1), interpolated.
    @inline(__always)
    static func lookup(_ table: UnsafeBufferPointer<Float>, _ v: Float) -> Float {
        let x = min(max(v, 0), 1) * Float(table.count - 1)
        let i = min(Int(x), table.count - 2)
        return table[i] + (table[i + 1] - table[i]) * (x - Float(i))
    }

    /// How far (0…1) `c` may move from grey `y` toward itself and stay in 0…1.
    @inline(__always)
    static func reach(_ c: Float, _ y: Float) -> Float {
        if c > 1 { return (1 - y) / (c - y) }
        if c < 0 { return y / (y - c) }
        return 1
    }

    /// Display R'G'B' (0…1) for the cube's signed PQ light: the tone curve on the largest
    /// component (the others scaled alike), ``GamutMapping``, the display's transfer.
    static func finish(_ t: Tables, _ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        @inline(__always) func linear(_ v: Float) -> Float { v < 0 ? -lookup(t.light, -v) : lookup(t.light, v) }
        var lr = linear(r), lg = linear(g), lb = linear(b)
        let top = max(r, max(g, b))
        if top > 0 {
            let scale = lookup(t.tone, top) / max(lookup(t.light, top), 1e-12)
            lr *= scale; lg *= scale; lb *= scale
        }
        if min(lr, min(lg, lb)) < 0 || max(lr, max(lg, lb)) > 1 {
            let y = 0.2126 * lr + 0.7152 * lg + 0.0722 * lb
            if y >= 1 {
                lr = 1; lg = 1; lb = 1
            } else if y <= 0 {
                lr = 0; lg = 0; lb = 0
            } else {
                let k = min(reach(lr, y), min(reach(lg, y), reach(lb, y)))
                lr = y + (lr - y) * k; lg = y + (lg - y) * k; lb = y + (lb - y) * k
            }
        }
        return (lookup(t.encode, max(lr, 0).squareRoot()), lookup(t.encode, max(lg, 0).squareRoot()),
                lookup(t.encode, max(lb, 0).squareRoot()))
    }

    /// Rows of packed 16-bit little-endian source R'G'B' (`source`, `stride` bytes a row) mapped
    /// into packed 8-bit display RGB with ``dither(x:y:)`` (`width` × `height`; `output` is
    /// resized to fit): ``apply(_:_:_:)`` for every pixel, the CPU path's loop.
    public func map(rgb48 source: [UInt8], stride: Int, width: Int, height: Int, into output: inout [UInt8]) {
        precondition(width >= 0 && height >= 0 && stride >= width * 6 && source.count >= stride * max(height - 1, 0) + width * 6)
        if output.count != width * height * 3 { output = [UInt8](repeating: 0, count: width * height * 3) }
        let unit = Float(1) / 65535
        source.withUnsafeBytes { raw in
            output.withUnsafeMutableBufferPointer { out in
                withTables { tables in
                    for y in 0..<height {
                        let row = raw.baseAddress! + y * stride
                        var o = y * width * 3
                        for x in 0..<width {
                            let p = row + x * 6
                            let r = Float(UInt16(littleEndian: p.loadUnaligned(as: UInt16.self))) * unit
                            let g = Float(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 2, as: UInt16.self))) * unit
                            let b = Float(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt16.self))) * unit
                            let v = Self.apply(tables, r, g, b)
                            let d = Self.dither(x: x, y: y)
                            out[o] = UInt8(min(max(v.0 * 255 + d, 0), 255).rounded())
                            out[o + 1] = UInt8(min(max(v.1 * 255 + d, 0), 255).rounded())
                            out[o + 2] = UInt8(min(max(v.2 * 255 + d, 0), 255).rounded())
                            o += 3
                        }
                    }
                }
            }
        }
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
