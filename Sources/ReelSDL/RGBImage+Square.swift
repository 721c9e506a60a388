import ReelCore

extension RGBImage {
    /// The largest centred square of the picture (an avatar drawn in a square, cropped
    /// rather than letterboxed). A square picture is returned as it is.
    func centredSquare() -> RGBImage {
        guard width != height, width > 0, height > 0 else { return self }
        let side = Swift.min(width, height)
        let x0 = (width - side) / 2, y0 = (height - side) / 2
        var out = [UInt8](repeating: 0, count: side * side * 3)
        for row in 0..<side {
            let from = ((y0 + row) * width + x0) * 3
            out.replaceSubrange(row * side * 3..<(row + 1) * side * 3, with: bytes[from..<from + side * 3])
        }
        return RGBImage(width: side, height: side, bytes: out)
    }
}
