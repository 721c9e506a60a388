import ReelCore

/// The styling subset Reel draws, each `nil` until something specifies it.
struct TTMLStyle: Equatable {
    var italic: Bool?
    var bold: Bool?
    var underline: Bool?
    var color: TTMLColor?
    var textAlign: String?
    var displayAlign: String?

    /// `other`'s specified values over these.
    func overridden(by other: TTMLStyle) -> TTMLStyle {
        TTMLStyle(italic: other.italic ?? italic, bold: other.bold ?? bold, underline: other.underline ?? underline,
                  color: other.color ?? color, textAlign: other.textAlign ?? textAlign,
                  displayAlign: other.displayAlign ?? displayAlign)
    }

    /// The `tts:` attributes of an element.
    init(attributes: [String: String]) {
        if let value = attributes["tts:fontStyle"]?.trimmingCharacters(in: .whitespaces) {
            italic = value == "italic" || value == "oblique" ? true : value == "normal" ? false : nil
        }
        if let value = attributes["tts:fontWeight"]?.trimmingCharacters(in: .whitespaces) {
            bold = value == "bold" ? true : value == "normal" ? false : nil
        }
        if let value = attributes["tts:textDecoration"] {
            let words = value.split(whereSeparator: \.isWhitespace)
            underline = words.contains("underline") ? true : words.contains("noUnderline") || words.contains("none") ? false : nil
        }
        color = attributes["tts:color"].flatMap(TTMLColor.init)
        textAlign = attributes["tts:textAlign"]?.trimmingCharacters(in: .whitespaces)
        displayAlign = attributes["tts:displayAlign"]?.trimmingCharacters(in: .whitespaces)
    }

    init(italic: Bool? = nil, bold: Bool? = nil, underline: Bool? = nil, color: TTMLColor? = nil,
         textAlign: String? = nil, displayAlign: String? = nil) {
        self.italic = italic
        self.bold = bold
        self.underline = underline
        self.color = color
        self.textAlign = textAlign
        self.displayAlign = displayAlign
    }
}

/// A `tts:color` value: `#rrggbb`, `#rrggbbaa`, `rgb(r,g,b)`, `rgba(r,g,b,a)` or a TTML named colour.
struct TTMLColor: Equatable {
    var red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8

    init?(_ text: String) {
        let value = text.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("#") {
            let hex = value.dropFirst()
            guard hex.count == 6 || hex.count == 8, let number = UInt32(hex, radix: 16) else { return nil }
            let full = hex.count == 6 ? number << 8 | 0xFF : number
            (red, green, blue, alpha) = (UInt8(full >> 24), UInt8(full >> 16 & 0xFF), UInt8(full >> 8 & 0xFF), UInt8(full & 0xFF))
            return
        }
        let lower = value.lowercased()
        for (prefix, count) in [("rgba(", 4), ("rgb(", 3)] where lower.hasPrefix(prefix) && lower.hasSuffix(")") {
            let numbers = lower.dropFirst(prefix.count).dropLast().split(separator: ",")
                .compactMap { UInt8($0.trimmingCharacters(in: .whitespaces)) }
            guard numbers.count == count else { return nil }
            (red, green, blue, alpha) = (numbers[0], numbers[1], numbers[2], count == 4 ? numbers[3] : 0xFF)
            return
        }
        let named: [String: UInt32] = [
            "transparent": 0x0000_0000, "black": 0x0000_00FF, "silver": 0xC0C0_C0FF, "gray": 0x8080_80FF,
            "white": 0xFFFF_FFFF, "maroon": 0x8000_00FF, "red": 0xFF00_00FF, "purple": 0x8000_80FF,
            "fuchsia": 0xFF00_FFFF, "magenta": 0xFF00_FFFF, "green": 0x0080_00FF, "lime": 0x00FF_00FF,
            "olive": 0x8080_00FF, "yellow": 0xFFFF_00FF, "navy": 0x0000_80FF, "blue": 0x0000_FFFF,
            "teal": 0x0080_80FF, "aqua": 0x00FF_FFFF, "cyan": 0x00FF_FFFF,
        ]
        guard let full = named[lower] else { return nil }
        (red, green, blue, alpha) = (UInt8(full >> 24), UInt8(full >> 16 & 0xFF), UInt8(full >> 8 & 0xFF), UInt8(full & 0xFF))
    }

    /// `&HBBGGRR&`, ASS's colour order.
    var assColor: String { "&H" + hex(blue) + hex(green) + hex(red) + "&" }
    /// `&HAA&` with ASS's inverted alpha (00 opaque).
    var assAlpha: String { "&H" + hex(0xFF - alpha) + "&" }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}

/// Walks `body` and turns paragraphs into cues (see ``TTMLDocument``).
struct CueBuilder {
    let tree: TTMLTree
    let parameters: TTMLTimingParameters
    private(set) var cues: [TTMLCue] = []
    private var styles: [String: TTMLStyle] = [:]
    private var regions: [String: Region] = [:]

    /// The document is refused past this many boundary × piece checks over all its paragraphs
    /// (a paragraph of thousands of timed spans costs the square of their number).
    static let maximumWork = 20_000_000
    private var work = 0

    private struct Region {
        var style: TTMLStyle
        /// The bottom edge of the region in percent of the root container's height, when written in percent.
        var bottomPercent: Double?
    }

    private struct Piece {
        enum Kind { case text(String), lineBreak }
        var kind: Kind
        var style: TTMLStyle
        var preserve: Bool
        var begin: MediaTime
        var end: MediaTime
    }

    let maximumCues: Int

    init(tree: TTMLTree, parameters: TTMLTimingParameters, maximumCues: Int = TTMLDocument.maximumCues) {
        self.tree = tree
        self.parameters = parameters
        self.maximumCues = maximumCues
    }

    private func elements(_ index: Int, named name: String) -> [Int] {
        tree.nodes[index].children.compactMap {
            if case .element(let child) = $0, tree.nodes[child].name == name, !tree.nodes[child].isForeign { return child }
            return nil
        }
    }

    mutating func build() throws(TTMLError) {
        for head in elements(0, named: "head") {
            for styling in elements(head, named: "styling") {
                var definitions: [String: Int] = [:]
                for style in elements(styling, named: "style") {
                    if let id = tree.nodes[style].attributes["xml:id"] { definitions[id] = style }
                }
                var resolved: [Int: TTMLStyle] = [:]
                // In document order, so a reference cycle (an error in TTML) resolves the same way every time.
                for (id, index) in definitions.sorted(by: { $0.value < $1.value }) {
                    var visiting: Set<Int> = []
                    styles[id] = resolveStyle(index, definitions: definitions, resolved: &resolved, visiting: &visiting, depth: 0)
                }
            }
        }
        for head in elements(0, named: "head") {
            for layout in elements(head, named: "layout") {
                for region in elements(layout, named: "region") {
                    let node = tree.nodes[region]
                    guard let id = node.attributes["xml:id"] else { continue }
                    var style = referencedStyle(node.attributes["style"])
                    for nested in elements(region, named: "style") {
                        style = style.overridden(by: TTMLStyle(attributes: tree.nodes[nested].attributes))
                    }
                    style = style.overridden(by: TTMLStyle(attributes: node.attributes))
                    regions[id] = Region(style: style, bottomPercent: Self.bottomPercent(node.attributes))
                }
            }
        }
        for body in elements(0, named: "body") {
            try walk(body, parentBegin: .zero, parentEnd: .positiveInfinity, style: TTMLStyle(), region: nil, preserve: false)
        }
    }

    /// How many `style` references deep a style definition is followed.
    static let maximumStyleDepth = 32

    /// The style `index` defines with the ones it references (earlier references under later
    /// ones, its own attributes over all). Each definition is resolved once (`resolved`); the
    /// reference that closes a cycle contributes nothing, and chains stop at
    /// ``maximumStyleDepth``: a hostile chain of thousands of styles costs linear time and no
    /// deep recursion.
    private func resolveStyle(_ index: Int, definitions: [String: Int], resolved: inout [Int: TTMLStyle],
                              visiting: inout Set<Int>, depth: Int) -> TTMLStyle {
        if let style = resolved[index] { return style }
        guard depth < Self.maximumStyleDepth, visiting.insert(index).inserted else { return TTMLStyle() }
        defer { visiting.remove(index) }
        let node = tree.nodes[index]
        var style = TTMLStyle()
        for reference in (node.attributes["style"] ?? "").split(whereSeparator: \.isWhitespace) {
            if let other = definitions[String(reference)] {
                style = style.overridden(by: resolveStyle(other, definitions: definitions, resolved: &resolved,
                                                          visiting: &visiting, depth: depth + 1))
            }
        }
        style = style.overridden(by: TTMLStyle(attributes: node.attributes))
        resolved[index] = style
        return style
    }

    private func referencedStyle(_ references: String?) -> TTMLStyle {
        var style = TTMLStyle()
        for reference in (references ?? "").split(whereSeparator: \.isWhitespace) {
            if let other = styles[String(reference)] { style = style.overridden(by: other) }
        }
        return style
    }

    /// The styles an element specifies: referential (`style`) under inline (`tts:`).
    private func specifiedStyle(_ node: TTMLTree.Node) -> TTMLStyle {
        referencedStyle(node.attributes["style"]).overridden(by: TTMLStyle(attributes: node.attributes))
    }

    private static func bottomPercent(_ attributes: [String: String]) -> Double? {
        func percents(_ name: String) -> [Double]? {
            guard let text = attributes["tts:" + name] else { return nil }
            let parts = text.split(whereSeparator: \.isWhitespace)
            guard parts.count == 2, parts.allSatisfy({ $0.hasSuffix("%") }) else { return nil }
            let values = parts.compactMap { Double($0.dropLast()) }
            return values.count == 2 ? values : nil
        }
        guard let origin = percents("origin"), let extent = percents("extent") else { return nil }
        return origin[1] + extent[1]
    }

    /// The element's active interval on the document timeline, clipped to its parent's;
    /// `nil` when it is never active.
    private func interval(_ node: TTMLTree.Node, parentBegin: MediaTime, parentEnd: MediaTime)
        throws(TTMLError) -> (MediaTime, MediaTime)? {
        func time(_ name: String) throws(TTMLError) -> MediaTime? {
            guard let text = node.attributes[name] else { return nil }
            guard let value = TTMLTime.parse(text, parameters: parameters) else {
                throw .invalidValue(attribute: name, value: text)
            }
            return value
        }
        let begin = parentBegin + (try time("begin") ?? .zero)
        var end = parentEnd
        if let relativeEnd = try time("end") { end = min(end, parentBegin + relativeEnd) }
        if let duration = try time("dur") { end = min(end, begin + duration) }
        guard begin < end, begin < parentEnd else { return nil }
        return (begin, end)
    }

    private mutating func walk(_ index: Int, parentBegin: MediaTime, parentEnd: MediaTime, style: TTMLStyle,
                               region: String?, preserve: Bool) throws(TTMLError) {
        let node = tree.nodes[index]
        guard !node.isForeign else { return }
        if let container = node.attributes["timeContainer"], container != "par" {
            throw .unsupported("timeContainer=\"\(container)\"")
        }
        guard let (begin, end) = try interval(node, parentBegin: parentBegin, parentEnd: parentEnd) else { return }
        let style = style.overridden(by: specifiedStyle(node))
        let region = node.attributes["region"] ?? region
        let preserve = node.attributes["xml:space"].map { $0 == "preserve" } ?? preserve
        switch node.name {
        case "body", "div":
            for child in node.children {
                if case .element(let element) = child {
                    try walk(element, parentBegin: begin, parentEnd: end, style: style, region: region, preserve: preserve)
                }
            }
        case "p":
            try paragraph(node, begin: begin, end: end, style: style, region: region.flatMap { regions[$0] }, preserve: preserve)
        default:
            break
        }
    }

    private func collect(_ node: TTMLTree.Node, begin: MediaTime, end: MediaTime, style: TTMLStyle, preserve: Bool,
                         into pieces: inout [Piece]) throws(TTMLError) {
        for child in node.children {
            switch child {
            case .text(let text):
                pieces.append(Piece(kind: .text(text), style: style, preserve: preserve, begin: begin, end: end))
            case .element(let index):
                let element = tree.nodes[index]
                guard !element.isForeign else { continue }
                switch element.name {
                case "br":
                    guard let (b, e) = try interval(element, parentBegin: begin, parentEnd: end) else { continue }
                    pieces.append(Piece(kind: .lineBreak, style: style, preserve: preserve, begin: b, end: e))
                case "span":
                    guard let (b, e) = try interval(element, parentBegin: begin, parentEnd: end) else { continue }
                    let spanPreserve = element.attributes["xml:space"].map { $0 == "preserve" } ?? preserve
                    try collect(element, begin: b, end: e, style: style.overridden(by: specifiedStyle(element)),
                                preserve: spanPreserve, into: &pieces)
                default:
                    continue  // metadata, set, animation: not shown
                }
            }
        }
    }

    private mutating func paragraph(_ node: TTMLTree.Node, begin: MediaTime, end: MediaTime, style: TTMLStyle,
                                    region: Region?, preserve: Bool) throws(TTMLError) {
        let style = (region?.style ?? TTMLStyle()).overridden(by: style)
        var pieces: [Piece] = []
        try collect(node, begin: begin, end: end, style: style, preserve: preserve, into: &pieces)
        var bounds = Set([begin])
        for piece in pieces {
            bounds.insert(piece.begin)
            if piece.end.isNumeric { bounds.insert(piece.end) }
        }
        let sorted = bounds.filter { $0 < end }.sorted()
        work += sorted.count * max(pieces.count, 1)
        guard work <= Self.maximumWork else {
            throw .unsupported("timing this complex (a paragraph with \(pieces.count) timed pieces)")
        }
        let prefix = Self.alignmentTag(style: style, region: region)
        var previous: TTMLCue?
        for (position, start) in sorted.enumerated() {
            let stop = position + 1 < sorted.count ? sorted[position + 1] : end
            let active = pieces.filter { $0.begin <= start && start < $0.end }
            guard let text = Self.render(active) else {
                if let cue = previous { try append(cue) }
                previous = nil
                continue
            }
            if var cue = previous, cue.dialogue.text == prefix + text, cue.end == start {
                cue.end = stop
                previous = cue
            } else {
                if let cue = previous { try append(cue) }
                previous = TTMLCue(start: start, end: stop, dialogue: ASSDialogue(text: prefix + text))
            }
        }
        if let cue = previous { try append(cue) }
    }

    private mutating func append(_ cue: TTMLCue) throws(TTMLError) {
        guard cues.count < maximumCues else { throw .tooManyCues(limit: maximumCues) }
        cues.append(cue)
    }

    /// `{\anN}` when the document places the paragraph other than bottom centre; else "".
    private static func alignmentTag(style: TTMLStyle, region: Region?) -> String {
        let column: Int
        switch style.textAlign {
        case "left", "start": column = 1
        case "right", "end": column = 3
        default: column = 2
        }
        let row: Int  // 0 bottom, 3 middle, 6 top
        switch style.displayAlign {
        case "before": row = 6
        case "center": row = 3
        case "after": row = 0
        default: row = (region?.bottomPercent).map { $0 <= 50 ? 6 : 0 } ?? 0
        }
        let number = row + column
        return number == 2 ? "" : "{\\an\(number)}"
    }

    /// The ASS text of the pieces on screen together; `nil` when they show no words.
    private static func render(_ pieces: [Piece]) -> String? {
        struct Run { var text: String; var style: TTMLStyle; var collapsible: Bool }
        var lines: [[Run]] = [[]]
        for piece in pieces {
            switch piece.kind {
            case .lineBreak:
                lines.append([])
            case .text(let text) where piece.preserve:
                for (index, line) in text.replacingOccurrences(of: "\r\n", with: "\n")
                    .split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    if index > 0 { lines.append([]) }
                    lines[lines.count - 1].append(Run(text: String(line), style: piece.style, collapsible: false))
                }
            case .text(let text):
                var collapsed = ""
                var space = false
                for character in text {
                    if character == " " || character == "\t" || character == "\n" || character == "\r" || character == "\r\n" {
                        if !space { collapsed.append(" ") }
                        space = true
                    } else {
                        collapsed.append(character)
                        space = false
                    }
                }
                lines[lines.count - 1].append(Run(text: collapsed, style: piece.style, collapsible: true))
            }
        }
        // Collapsible spaces: none at a line's start or end, one between words across runs.
        for index in lines.indices {
            var afterSpace = true
            for run in lines[index].indices where lines[index][run].collapsible {
                var text = lines[index][run].text
                if afterSpace, text.hasPrefix(" ") { text.removeFirst() }
                if !text.isEmpty { afterSpace = text.hasSuffix(" ") }
                lines[index][run].text = text
            }
            for run in lines[index].indices.reversed() {
                guard lines[index][run].collapsible else { break }
                if lines[index][run].text.hasSuffix(" ") { lines[index][run].text.removeLast() }
                if !lines[index][run].text.isEmpty { break }
            }
            lines[index].removeAll { $0.text.isEmpty }
        }
        guard lines.contains(where: { $0.contains { !$0.text.allSatisfy(\.isWhitespace) } }) else { return nil }

        var output = ""
        var italic = false, bold = false, underline = false
        var color: (String?, String?) = (nil, nil)  // ASS colour and alpha in force
        for (index, line) in lines.enumerated() {
            if index > 0 { output += "\\N" }
            for run in line {
                var tags = ""
                let wantItalic = run.style.italic ?? false, wantBold = run.style.bold ?? false
                let wantUnderline = run.style.underline ?? false
                if wantItalic != italic { tags += wantItalic ? "\\i1" : "\\i0"; italic = wantItalic }
                if wantBold != bold { tags += wantBold ? "\\b1" : "\\b0"; bold = wantBold }
                if wantUnderline != underline { tags += wantUnderline ? "\\u1" : "\\u0"; underline = wantUnderline }
                let wantColor = run.style.color?.assColor
                let wantAlpha = run.style.color.flatMap { $0.alpha == 0xFF ? nil : $0.assAlpha }
                if wantColor != color.0 { tags += wantColor.map { "\\c" + $0 } ?? "\\c"; color.0 = wantColor }
                if wantAlpha != color.1 { tags += "\\1a" + (wantAlpha ?? "&H00&"); color.1 = wantAlpha }
                if !tags.isEmpty { output += "{" + tags + "}" }
                output += ASSDialogue.escaped(run.text)
            }
        }
        var closing = ""
        if italic { closing += "\\i0" }
        if bold { closing += "\\b0" }
        if underline { closing += "\\u0" }
        if !closing.isEmpty { output += "{" + closing + "}" }
        return output
    }

}
