/// How many colours the encoder may use.
public enum TerminalColorDepth: Sendable, Hashable, CaseIterable {
    /// 24-bit colour: `ESC[38;2;r;g;bm` / `ESC[48;2;r;g;bm`.
    case trueColor
    /// The xterm 256-colour palette: `ESC[38;5;nm` / `ESC[48;5;nm`, using only the
    /// 6×6×6 cube (16…231) and the greyscale ramp (232…255), whose colours every xterm-like
    /// terminal agrees on (the first 16 follow the user's theme, so they are never used).
    case palette256

    /// The depth a terminal with `environment` supports, unless `override` says otherwise.
    ///
    /// `COLORTERM=truecolor` or `COLORTERM=24bit` (the de-facto convention) means
    /// ``trueColor``; anything else means ``palette256``.
    public static func detect(environment: [String: String], override: TerminalColorDepth? = nil) -> TerminalColorDepth {
        if let override { return override }
        switch environment["COLORTERM"]?.lowercased() {
        case "truecolor", "24bit": return .trueColor
        default: return .palette256
        }
    }
}

/// The xterm 256-colour palette, for the colours Reel uses from it.
public enum XtermPalette {
    /// The six channel levels of the 6×6×6 colour cube (indices 16…231).
    public static let cubeLevels: [UInt8] = [0, 95, 135, 175, 215, 255]

    /// The RGB value of palette entry `index` (16…255); entries below 16 are theme colours
    /// and have no fixed value, so they give `nil`.
    public static func rgb(ofIndex index: Int) -> (r: UInt8, g: UInt8, b: UInt8)? {
        switch index {
        case 16...231:
            let i = index - 16
            return (cubeLevels[i / 36], cubeLevels[(i / 6) % 6], cubeLevels[i % 6])
        case 232...255:
            let v = UInt8(8 + 10 * (index - 232))
            return (v, v, v)
        default:
            return nil
        }
    }

    /// The palette entry (16…255) nearest to `(r, g, b)` by squared RGB distance, looking
    /// at both the nearest cube colour and the nearest grey.
    public static func nearestIndex(r: UInt8, g: UInt8, b: UInt8) -> Int {
        let ri = nearestCubeLevel(r), gi = nearestCubeLevel(g), bi = nearestCubeLevel(b)
        let cube = 16 + 36 * ri + 6 * gi + bi
        let cubeDistance = distance(r, g, b, cubeLevels[ri], cubeLevels[gi], cubeLevels[bi])

        // Grey ramp: 8, 18, …, 238.
        let mean = (Int(r) + Int(g) + Int(b)) / 3
        let greyStep = min(23, max(0, (mean - 8 + 5) / 10))
        let grey = UInt8(8 + 10 * greyStep)
        let greyDistance = distance(r, g, b, grey, grey, grey)
        return greyDistance < cubeDistance ? 232 + greyStep : cube
    }

    private static func nearestCubeLevel(_ v: UInt8) -> Int {
        // Midpoints between 0,95,135,175,215,255.
        switch v {
        case ..<48: return 0
        case ..<115: return 1
        case ..<155: return 2
        case ..<195: return 3
        case ..<235: return 4
        default: return 5
        }
    }

    private static func distance(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ r2: UInt8, _ g2: UInt8, _ b2: UInt8) -> Int {
        let dr = Int(r) - Int(r2), dg = Int(g) - Int(g2), db = Int(b) - Int(b2)
        return dr * dr + dg * dg + db * db
    }
}
