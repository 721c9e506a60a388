/// Text for the terminal: making feed text harmless, and measuring it in columns.
public enum TerminalText {
    /// `text` with everything a terminal would act on removed, so titles and names from a
    /// feed can be printed as they are.
    ///
    /// - Escape sequences are removed whole: CSI (`ESC[` or U+009B, up to its final byte),
    ///   OSC (`ESC]` or U+009D, up to BEL or ST), DCS, SOS, PM and APC (`ESC P`, `ESC X`,
    ///   `ESC ^`, `ESC _` or their C1 forms, up to ST or BEL), and two- or more-byte `ESC`
    ///   sequences (`ESC c`, `ESC ( B`, …). An unterminated string sequence swallows the rest.
    /// - Tab, newline, carriage return, vertical tab and form feed become a space.
    /// - Every other C0 control, DEL and C1 control (U+0080…U+009F) is dropped.
    /// - Bidirectional overrides and isolates (U+202A…U+202E, U+2066…U+2069), which can
    ///   make text display as something else, are dropped.
    /// - Everything else, CJK and emoji included, is kept.
    public static func sanitize(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        var lookahead: Unicode.Scalar?

        func next() -> Unicode.Scalar? {
            if let l = lookahead { lookahead = nil; return l }
            return scalars.next()
        }
        /// Skips a control string up to ST (`ESC \` or U+009C) or BEL.
        func skipString() {
            while let s = next() {
                switch s.value {
                case 0x07, 0x9C: return
                case 0x1B:
                    guard let t = next() else { return }
                    if t == "\\" { return }
                    lookahead = t  // an ESC inside ends the string too (as terminals do)
                    return
                default: continue
                }
            }
        }
        /// Skips CSI parameters and intermediates up to the final byte.
        func skipCSI() {
            while let s = next() {
                switch s.value {
                case 0x20...0x3F: continue
                case 0x40...0x7E: return
                default: lookahead = s; return  // malformed: the sequence ends here
                }
            }
        }

        while let s = next() {
            switch s.value {
            case 0x09, 0x0A, 0x0B, 0x0C, 0x0D:
                out.append(" ")
            case 0x1B:
                guard let t = next() else { break }
                switch t.value {
                case 0x5B: skipCSI()  // [
                case 0x5D, 0x50, 0x58, 0x5E, 0x5F: skipString()  // ] P X ^ _
                case 0x20...0x2F:
                    // nF: intermediates, then one final byte.
                    while let u = next() {
                        if (0x20...0x2F).contains(u.value) { continue }
                        if !(0x30...0x7E).contains(u.value) { lookahead = u }
                        break
                    }
                case 0x30...0x7E: break  // two-byte sequence
                default: lookahead = t  // ESC before something else: drop the ESC alone
                }
            case 0x9B: skipCSI()
            case 0x9D, 0x90, 0x98, 0x9E, 0x9F: skipString()
            case 0x00...0x1F, 0x7F...0x9F: break
            case 0x202A...0x202E, 0x2066...0x2069: break
            default: out.append(s)
            }
        }
        return String(out)
    }

    /// The columns `text` takes in a terminal: East Asian wide and fullwidth characters and
    /// emoji take two, combining marks and other zero-width characters none, the rest one.
    /// A grapheme cluster (such as an emoji sequence) takes at most two.
    public static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + displayWidth(of: $1) }
    }

    /// The columns one character (grapheme cluster) takes; see ``displayWidth(_:)``.
    public static func displayWidth(of character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars {
            width += displayWidth(of: scalar)
        }
        return min(width, 2)
    }

    /// The columns one scalar takes on its own: 0, 1 or 2.
    public static func displayWidth(of scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x20 || (0x7F...0x9F).contains(v) { return 0 }
        if v < 0x300 { return 1 }  // Latin; combining marks start at U+0300
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format:
            return 0
        default:
            break
        }
        if (0x1160...0x11FF).contains(v) || v == 0x200B { return 0 }  // Hangul medial jamo, ZWSP
        if scalar.properties.isEmojiPresentation { return 2 }
        for range in wideRanges where range.contains(v) { return 2 }
        return 1
    }

    /// `text` cut to at most `width` columns, ending with `ellipsis` when something was cut.
    /// Never splits a character; a wide character that would straddle the limit is left
    /// out. When even the ellipsis does not fit, as much of the text as fits is returned.
    public static func truncate(_ text: String, toWidth width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if displayWidth(text) <= width { return text }
        let ellipsisWidth = displayWidth(ellipsis)
        let room = ellipsisWidth <= width ? width - ellipsisWidth : width
        var out = ""
        var used = 0
        for c in text {
            let w = displayWidth(of: c)
            if used + w > room { break }
            out.append(c)
            used += w
        }
        return ellipsisWidth <= width ? out + ellipsis : out
    }

    /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth W/F, by block).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo initial consonants
        0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
        0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility jamo, Kanbun, CJK strokes, enclosed
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,  // fullwidth signs
        0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF,  // Tangut, Kana supplements
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK extensions B…F, compatibility supplement
        0x30000...0x3FFFD,  // CJK extensions G…
    ]
}
