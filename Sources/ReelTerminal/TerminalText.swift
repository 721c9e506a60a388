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
    ///
    /// East Asian *ambiguous* characters (`·`, `…`, `—`, arrows, box drawing, `▶`, …) take one
    /// column in most terminals and two in one configured for CJK (a CJK locale, or the
    /// terminal's "ambiguous width: wide" setting). With `ambiguousAsWide`, they count two:
    /// a width measured so fits on either kind of terminal (text that must line up should
    /// not contain them; see ``isAmbiguousWidth(_:)``).
    public static func displayWidth(_ text: String, ambiguousAsWide: Bool = false) -> Int {
        text.reduce(0) { $0 + displayWidth(of: $1, ambiguousAsWide: ambiguousAsWide) }
    }

    /// The columns one character (grapheme cluster) takes; see ``displayWidth(_:ambiguousAsWide:)``.
    public static func displayWidth(of character: Character, ambiguousAsWide: Bool = false) -> Int {
        var width = 0
        for scalar in character.unicodeScalars {
            width += displayWidth(of: scalar, ambiguousAsWide: ambiguousAsWide)
        }
        return min(width, 2)
    }

    /// Whether a terminal may draw `scalar` one or two columns wide depending on its CJK
    /// setting (Unicode's East Asian Width "A", UAX #11).
    public static func isAmbiguousWidth(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        var low = 0, high = ambiguousRanges.count
        while low < high {
            let mid = (low + high) / 2
            if ambiguousRanges[mid].upperBound < v { low = mid + 1 } else { high = mid }
        }
        return low < ambiguousRanges.count && ambiguousRanges[low].contains(v)
    }

    /// The columns one scalar takes on its own: 0, 1 or 2.
    public static func displayWidth(of scalar: Unicode.Scalar, ambiguousAsWide: Bool) -> Int {
        let width = displayWidth(of: scalar)
        return ambiguousAsWide && width == 1 && isAmbiguousWidth(scalar) ? 2 : width
    }

    /// The columns one scalar takes on its own: 0, 1 or 2 (ambiguous ones one).
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
    /// With `ambiguousAsWide`, widths are measured as ``displayWidth(_:ambiguousAsWide:)`` says,
    /// so the result fits on a CJK-configured terminal too.
    public static func truncate(_ text: String, toWidth width: Int, ellipsis: String = "…", ambiguousAsWide: Bool = false) -> String {
        guard width > 0 else { return "" }
        if displayWidth(text, ambiguousAsWide: ambiguousAsWide) <= width { return text }
        let ellipsisWidth = displayWidth(ellipsis, ambiguousAsWide: ambiguousAsWide)
        let room = ellipsisWidth <= width ? width - ellipsisWidth : width
        var out = ""
        var used = 0
        for c in text {
            let w = displayWidth(of: c, ambiguousAsWide: ambiguousAsWide)
            if used + w > room { break }
            out.append(c)
            used += w
        }
        return ellipsisWidth <= width ? out + ellipsis : out
    }

    /// East Asian Width "A" (ambiguous), from Unicode 14's EastAsianWidth.txt, sorted.
    private static let ambiguousRanges: [ClosedRange<UInt32>] = [
        0xA1...0xA1, 0xA4...0xA4, 0xA7...0xA8, 0xAA...0xAA, 0xAD...0xAE, 0xB0...0xB4, 0xB6...0xBA,
        0xBC...0xBF, 0xC6...0xC6, 0xD0...0xD0, 0xD7...0xD8, 0xDE...0xE1, 0xE6...0xE6, 0xE8...0xEA,
        0xEC...0xED, 0xF0...0xF0, 0xF2...0xF3, 0xF7...0xFA, 0xFC...0xFC, 0xFE...0xFE,
        0x101...0x101, 0x111...0x111, 0x113...0x113, 0x11B...0x11B, 0x126...0x127, 0x12B...0x12B,
        0x131...0x133, 0x138...0x138, 0x13F...0x142, 0x144...0x144, 0x148...0x14B, 0x14D...0x14D,
        0x152...0x153, 0x166...0x167, 0x16B...0x16B, 0x1CE...0x1CE, 0x1D0...0x1D0, 0x1D2...0x1D2,
        0x1D4...0x1D4, 0x1D6...0x1D6, 0x1D8...0x1D8, 0x1DA...0x1DA, 0x1DC...0x1DC, 0x251...0x251,
        0x261...0x261, 0x2C4...0x2C4, 0x2C7...0x2C7, 0x2C9...0x2CB, 0x2CD...0x2CD, 0x2D0...0x2D0,
        0x2D8...0x2DB, 0x2DD...0x2DD, 0x2DF...0x2DF, 0x300...0x36F, 0x391...0x3A1, 0x3A3...0x3A9,
        0x3B1...0x3C1, 0x3C3...0x3C9, 0x401...0x401, 0x410...0x44F, 0x451...0x451, 0x2010...0x2010,
        0x2013...0x2016, 0x2018...0x2019, 0x201C...0x201D, 0x2020...0x2022, 0x2024...0x2027,
        0x2030...0x2030, 0x2032...0x2033, 0x2035...0x2035, 0x203B...0x203B, 0x203E...0x203E,
        0x2074...0x2074, 0x207F...0x207F, 0x2081...0x2084, 0x20AC...0x20AC, 0x2103...0x2103,
        0x2105...0x2105, 0x2109...0x2109, 0x2113...0x2113, 0x2116...0x2116, 0x2121...0x2122,
        0x2126...0x2126, 0x212B...0x212B, 0x2153...0x2154, 0x215B...0x215E, 0x2160...0x216B,
        0x2170...0x2179, 0x2189...0x2189, 0x2190...0x2199, 0x21B8...0x21B9, 0x21D2...0x21D2,
        0x21D4...0x21D4, 0x21E7...0x21E7, 0x2200...0x2200, 0x2202...0x2203, 0x2207...0x2208,
        0x220B...0x220B, 0x220F...0x220F, 0x2211...0x2211, 0x2215...0x2215, 0x221A...0x221A,
        0x221D...0x2220, 0x2223...0x2223, 0x2225...0x2225, 0x2227...0x222C, 0x222E...0x222E,
        0x2234...0x2237, 0x223C...0x223D, 0x2248...0x2248, 0x224C...0x224C, 0x2252...0x2252,
        0x2260...0x2261, 0x2264...0x2267, 0x226A...0x226B, 0x226E...0x226F, 0x2282...0x2283,
        0x2286...0x2287, 0x2295...0x2295, 0x2299...0x2299, 0x22A5...0x22A5, 0x22BF...0x22BF,
        0x2312...0x2312, 0x2460...0x24E9, 0x24EB...0x254B, 0x2550...0x2573, 0x2580...0x258F,
        0x2592...0x2595, 0x25A0...0x25A1, 0x25A3...0x25A9, 0x25B2...0x25B3, 0x25B6...0x25B7,
        0x25BC...0x25BD, 0x25C0...0x25C1, 0x25C6...0x25C8, 0x25CB...0x25CB, 0x25CE...0x25D1,
        0x25E2...0x25E5, 0x25EF...0x25EF, 0x2605...0x2606, 0x2609...0x2609, 0x260E...0x260F,
        0x261C...0x261C, 0x261E...0x261E, 0x2640...0x2640, 0x2642...0x2642, 0x2660...0x2661,
        0x2663...0x2665, 0x2667...0x266A, 0x266C...0x266D, 0x266F...0x266F, 0x269E...0x269F,
        0x26BF...0x26BF, 0x26C6...0x26CD, 0x26CF...0x26D3, 0x26D5...0x26E1, 0x26E3...0x26E3,
        0x26E8...0x26E9, 0x26EB...0x26F1, 0x26F4...0x26F4, 0x26F6...0x26F9, 0x26FB...0x26FC,
        0x26FE...0x26FF, 0x273D...0x273D, 0x2776...0x277F, 0x2B56...0x2B59, 0x3248...0x324F,
        0xE000...0xF8FF, 0xFE00...0xFE0F, 0xFFFD...0xFFFD, 0x1F100...0x1F10A, 0x1F110...0x1F12D,
        0x1F130...0x1F169, 0x1F170...0x1F18D, 0x1F18F...0x1F190, 0x1F19B...0x1F1AC,
        0xE0100...0xE01EF, 0xF0000...0xFFFFD, 0x100000...0x10FFFD,
    ]

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
