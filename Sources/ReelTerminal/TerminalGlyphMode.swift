/// How the encoder turns pixels into character cells.
public enum TerminalGlyphMode: Sendable, Hashable, CaseIterable {
    /// One pixel wide, two tall: `▀` with the top pixel as foreground and the bottom one as
    /// background. Works in every terminal with a Unicode font; the default.
    case halfBlock
    /// Two by two pixels, drawn with the quadrant blocks (`▘▝▀▖▌▞▛▗▚▐▜▄▙▟`) in two colours:
    /// the four pixels are split into two clusters. Twice the horizontal detail of
    /// ``halfBlock``, at the cost of colour accuracy in busy cells.
    case quadrant
    /// Two by three pixels, drawn with the Unicode 13 sextants (U+1FB00…U+1FB3B) in two
    /// colours. Needs a font that has them.
    case sextant

    /// Pixels per cell across.
    public var pixelsPerCellHorizontally: Int { self == .halfBlock ? 1 : 2 }

    /// Pixels per cell down.
    public var pixelsPerCellVertically: Int { self == .sextant ? 3 : 2 }
}

extension TerminalGlyphMode {
    /// The glyph that draws, in the foreground colour, the sub-pixels set in `mask`
    /// (bit `row * 2 + column`; for ``halfBlock`` bit 0 is the top pixel and bit 1 the
    /// bottom one). An empty mask is a space; a full mask is `█`.
    static func glyph(mask: Int, mode: TerminalGlyphMode) -> Unicode.Scalar {
        switch mode {
        case .halfBlock:
            return halfBlockGlyphs[mask & 3]
        case .quadrant:
            return quadrantGlyphs[mask & 15]
        case .sextant:
            return sextantGlyph(mask: mask & 63)
        }
    }

    private static let halfBlockGlyphs: [Unicode.Scalar] = [" ", "\u{2580}", "\u{2584}", "\u{2588}"]

    /// Indexed by TL=1, TR=2, BL=4, BR=8.
    private static let quadrantGlyphs: [Unicode.Scalar] = [
        " ", "\u{2598}", "\u{259D}", "\u{2580}", "\u{2596}", "\u{258C}", "\u{259E}", "\u{259B}",
        "\u{2597}", "\u{259A}", "\u{2590}", "\u{259C}", "\u{2584}", "\u{2599}", "\u{259F}", "\u{2588}",
    ]

    /// Sextant bits: row 0 left=1 right=2, row 1 left=4 right=8, row 2 left=16 right=32.
    /// Unicode encodes the 60 patterns that are not empty, full, or a half block in order
    /// of their bit value from U+1FB00.
    private static func sextantGlyph(mask: Int) -> Unicode.Scalar {
        switch mask {
        case 0: return " "
        case 63: return "\u{2588}"
        case 21: return "\u{258C}"  // left column
        case 42: return "\u{2590}"  // right column
        default:
            let skipped = (mask > 21 ? 1 : 0) + (mask > 42 ? 1 : 0)
            return Unicode.Scalar(UInt32(0x1FB00 + mask - 1 - skipped))!
        }
    }
}
