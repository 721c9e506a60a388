import ReelCore
import ReelTerminal

/// A picture with gradients, edges and fine detail, deterministic.
func testPicture(width: Int, height: Int, phase: Int = 0) -> RGBImage {
    var image = RGBImage(width: width, height: height)
    var seed: UInt32 = 12345
    for y in 0..<height {
        for x in 0..<width {
            seed = seed &* 1_103_515_245 &+ 12345
            let noise = Int(seed >> 28) - 8
            let r = (x + phase) * 255 / max(1, width - 1)
            let g = y * 255 / max(1, height - 1)
            let b = ((x + phase) / 8 + y / 8) % 2 == 0 ? 200 : 40
            image[x, y] = (UInt8(clamping: r + noise), UInt8(clamping: g + noise), UInt8(clamping: b))
        }
    }
    return image
}

