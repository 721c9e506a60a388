import ReelMedia

/// The affine map from sampled YUV texture values to RGB for one frame's colour
/// metadata: `rgb = matrix · sample + offset`, where `sample` is what a normalised
/// texture returns (code / 255 for 8-bit planes, code / 65535 for 16-bit words).
/// The shader and the tests use the same numbers.
public struct YUVToRGB: Sendable, Hashable {
    /// Column-major 3×3 (as `glUniformMatrix3fv` takes it).
    public let matrix: [Float]
    public let offset: [Float]

    /// Luma weights (Kr, Kb) of a matrix.
    public static func weights(_ matrix: ColorMatrix) -> (kr: Double, kb: Double) {
        switch matrix {
        case .bt601: (0.299, 0.114)
        case .bt709: (0.2126, 0.0722)
        case .bt2020: (0.2627, 0.0593)
        }
    }

    /// - Parameters:
    ///   - bitDepth: bits per code value (8, 10, 12, or 16 for MSB-aligned formats such as P010).
    ///   - storageBits: bits of the texel the codes are stored in (8 or 16).
    public init(matrix: ColorMatrix, range: ColorRange, bitDepth: Int, storageBits: Int) {
        let (kr, kb) = Self.weights(matrix)
        let kg = 1 - kr - kb
        // Y'CbCr → R'G'B' for Y' in 0…1, Cb/Cr in -0.5…0.5 (rows: r, g, b; columns: y, cb, cr).
        let m: [[Double]] = [
            [1, 0, 2 * (1 - kr)],
            [1, -2 * kb * (1 - kb) / kg, -2 * kr * (1 - kr) / kg],
            [1, 2 * (1 - kb), 0],
        ]
        let storageMax = Double((1 << storageBits) - 1)
        let codeMax = Double((1 << bitDepth) - 1)
        let k = Double(1 << (bitDepth - 8))
        // sample·storageMax = code; y' = (code − black) / span.
        let yScale, yBias, cScale, cBias: Double
        switch range {
        case .limited:
            yScale = storageMax / (219 * k); yBias = -16 * k / (219 * k)
            cScale = storageMax / (224 * k); cBias = -128 * k / (224 * k)
        case .full:
            yScale = storageMax / codeMax; yBias = 0
            cScale = storageMax / codeMax; cBias = -Double(1 << (bitDepth - 1)) / codeMax
        }
        let scale = [yScale, cScale, cScale]
        let bias = [yBias, cBias, cBias]
        var columnMajor = [Float](repeating: 0, count: 9)
        var offset = [Float](repeating: 0, count: 3)
        for row in 0..<3 {
            var o = 0.0
            for column in 0..<3 {
                columnMajor[column * 3 + row] = Float(m[row][column] * scale[column])
                o += m[row][column] * bias[column]
            }
            offset[row] = Float(o)
        }
        self.matrix = columnMajor
        self.offset = offset
    }

    /// What to add to the picture's texture coordinate to sample its chroma planes (`planeWidth`
    /// × `planeHeight` texels, subsampled by 2^`shiftX`, 2^`shiftY`) where `location` puts the
    /// chroma samples. A texture sampled at the luma's coordinate puts each chroma texel's centre
    /// halfway across the luma samples it covers (the centre); a sample `p` luma samples from its
    /// first instead is `½ − (½ + p) / 2^shift` texels away: +¼ for left-sited 4:2:0 across.
    public static func chromaOffset(_ location: ChromaLocation, shiftX: Int, shiftY: Int,
                                    planeWidth: Int, planeHeight: Int) -> (x: Float, y: Float) {
        let position = location.position(shiftX: shiftX, shiftY: shiftY)
        let x = 0.5 - (0.5 + position.x) / Double(1 << shiftX)
        let y = 0.5 - (0.5 + position.y) / Double(1 << shiftY)
        return (Float(x / Double(max(planeWidth, 1))), Float(y / Double(max(planeHeight, 1))))
    }

    /// RGB (0…1, clamped) for code values `y`, `u`, `v` stored in `storageBits` texels.
    public func rgb(y: Double, u: Double, v: Double, storageBits: Int) -> (r: Double, g: Double, b: Double) {
        let storageMax = Double((1 << storageBits) - 1)
        let s = [y / storageMax, u / storageMax, v / storageMax]
        var out = [0.0, 0.0, 0.0]
        for row in 0..<3 {
            var value = Double(offset[row])
            for column in 0..<3 { value += Double(matrix[column * 3 + row]) * s[column] }
            out[row] = min(1, max(0, value))
        }
        return (out[0], out[1], out[2])
    }
}
