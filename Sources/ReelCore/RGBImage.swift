/// A packed 8-bit RGB image: `width × height` pixels, three bytes each, rows
/// without padding. The plain-data currency between decoders and renderers that
/// want pixels (the terminal, thumbnails, tests).
public struct RGBImage: Sendable, Hashable {
    public let width: Int
    public let height: Int
    /// `width * height * 3` bytes, row by row.
    public var bytes: [UInt8]

    public init(width: Int, height: Int, bytes: [UInt8]) {
        precondition(width >= 0 && height >= 0 && bytes.count == width * height * 3, "RGBImage needs width*height*3 bytes")
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    /// A `width × height` image of one colour.
    public init(width: Int, height: Int, fill: (r: UInt8, g: UInt8, b: UInt8) = (0, 0, 0)) {
        self.width = width
        self.height = height
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        if fill != (0, 0, 0) {
            for i in stride(from: 0, to: bytes.count, by: 3) {
                bytes[i] = fill.r
                bytes[i + 1] = fill.g
                bytes[i + 2] = fill.b
            }
        }
        self.bytes = bytes
    }

    /// The pixel at column `x`, row `y`.
    public subscript(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        get {
            let i = (y * width + x) * 3
            return (bytes[i], bytes[i + 1], bytes[i + 2])
        }
        set {
            let i = (y * width + x) * 3
            bytes[i] = newValue.r
            bytes[i + 1] = newValue.g
            bytes[i + 2] = newValue.b
        }
    }

    /// The image turned clockwise by `degrees` (0, 90, 180 or 270).
    public func rotated(clockwise degrees: Int) -> RGBImage {
        let turns = ((degrees / 90) % 4 + 4) % 4
        guard turns != 0 else { return self }
        let w = turns % 2 == 0 ? width : height
        let h = turns % 2 == 0 ? height : width
        var out = RGBImage(width: w, height: h)
        for y in 0..<height {
            for x in 0..<width {
                let (nx, ny): (Int, Int)
                switch turns {
                case 1: (nx, ny) = (height - 1 - y, x)
                case 2: (nx, ny) = (width - 1 - x, height - 1 - y)
                default: (nx, ny) = (y, width - 1 - x)
                }
                out[nx, ny] = self[x, y]
            }
        }
        return out
    }
}
