/// One dialogue line in ASS form, as libavcodec's text decoders write it in `AVSubtitleRect.ass`
/// (the Matroska chunk form): `ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text`.
/// The text keeps its override tags (`{\i1}`, `{\an8}`), so a renderer can draw it styled.
public struct ASSDialogue: Hashable, Sendable {
    /// The drawing layer: a line on a higher layer is drawn over one on a lower layer, and
    /// lines on different layers do not push each other aside. 0 for every format but ASS.
    public var layer: Int
    /// The name of the style in the track's ASS header (``CaptionTrack/assHeader``) that sets
    /// the font, colours, outline and alignment; `Default` is the style libavcodec's text
    /// decoders define.
    public var style: String
    /// The speaker's name, as the script gives it: informational only, never drawn.
    public var name: String
    /// The left margin in the script's pixels (its `PlayResX`); 0 keeps the style's margin.
    public var marginL: Int
    /// The right margin in the script's pixels (its `PlayResX`); 0 keeps the style's margin.
    public var marginR: Int
    /// The vertical margin in the script's pixels (its `PlayResY`): the distance from the bottom
    /// for bottom-aligned lines, from the top for top-aligned ones; 0 keeps the style's margin.
    public var marginV: Int
    /// An ASS transition effect (`Banner;…`, `Scroll up;…`), or empty for none.
    public var effect: String
    /// The text with its override tags and `\N` line breaks.
    public var text: String

    /// A dialogue line with the given text (override tags and `\N` breaks as ASS writes them;
    /// plain words go through ``escaped(_:)`` first) and, by default, the `Default` style with
    /// the style's own margins.
    public init(text: String, style: String = "Default", layer: Int = 0, name: String = "",
                marginL: Int = 0, marginR: Int = 0, marginV: Int = 0, effect: String = "") {
        self.layer = layer
        self.style = style
        self.name = name
        self.marginL = marginL
        self.marginR = marginR
        self.marginV = marginV
        self.effect = effect
        self.text = text
    }

    /// Reads a chunk line; `nil` when it has fewer than the nine fields. The text (the last
    /// field) may itself hold commas.
    public init?(chunk: String) {
        let fields = chunk.split(separator: ",", maxSplits: 8, omittingEmptySubsequences: false)
        guard fields.count == 9 else { return nil }
        func number(_ field: Substring) -> Int { Int(field.trimmingCharacters(in: .whitespaces)) ?? 0 }
        self.init(text: String(fields[8]), style: String(fields[2]), layer: number(fields[1]), name: String(fields[3]),
                  marginL: number(fields[4]), marginR: number(fields[5]), marginV: number(fields[6]),
                  effect: String(fields[7]))
    }

    /// The chunk line with `readOrder` in front, as `ass_process_chunk` takes it.
    public func chunk(readOrder: Int) -> String {
        "\(readOrder),\(layer),\(style),\(name),\(marginL),\(marginR),\(marginV),\(effect),\(text)"
    }

    /// The words alone, as a terminal or a trace shows them: override blocks `{…}` removed,
    /// `\N` and `\n` as line breaks, `\h` as a space.
    public var plainText: String { Self.plainText(of: text) }

    /// Plain words as ASS dialogue text: `\\`, `{` and `}` escaped so they stay words (and
    /// ``plainText(of:)`` reads them back as written).
    public static func escaped(_ words: String) -> String {
        var result = ""
        for character in words {
            switch character {
            case "\\", "{", "}": result.append("\\"); result.append(character)
            default: result.append(character)
            }
        }
        return result
    }

    /// The words of ASS dialogue text `text` (see ``plainText``).
    public static func plainText(of text: String) -> String {
        var result = ""
        var inBlock = false
        var escape = false
        for character in text {
            if inBlock {
                if character == "}" { inBlock = false }
                continue
            }
            if escape {
                escape = false
                switch character {
                case "N", "n": result.append("\n")
                case "h": result.append(" ")
                case "{", "}", "\\": result.append(character)
                default:
                    result.append("\\")
                    result.append(character)
                }
                continue
            }
            switch character {
            case "{": inBlock = true
            case "\\": escape = true
            default: result.append(character)
            }
        }
        if escape { result.append("\\") }
        return result
    }
}

import Foundation
