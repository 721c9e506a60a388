/// Turns the bytes a terminal sends into ``TerminalInputEvent``s.
///
/// Feed it whatever each `read()` returned; a sequence split across reads is kept until
/// its end arrives. Understands legacy keys (control bytes, UTF-8 text, `ESC[A`-style
/// arrows, `ESC O` keys, `ESC[n~` keys, Alt as an `ESC` prefix), the kitty keyboard
/// protocol (`CSI code;mods:event u` and `CSI 1;mods:event A…D`, with press, repeat and
/// release), SGR 1006 mouse reports (`CSI < b;x;y M/m`), focus reports, and the replies to
/// ``TerminalControl/queryKeyboardFlags`` and ``TerminalControl/querySynchronizedOutput``.
/// Unknown or malformed sequences are skipped whole, never turned into keys.
///
/// A lone `ESC` is ambiguous: it may be the Escape key or the start of a sequence whose
/// rest has not arrived. The parser holds it; call ``flush()`` when no byte has followed
/// for a short while (25–50 ms) to report it as Escape. (With the kitty protocol's
/// disambiguate flag the Escape key arrives as `CSI 27u` and the question never arises.)
public struct TerminalInputParser: Sendable {
    private var pending: [UInt8] = []

    /// The longest sequence the parser waits for; anything longer is discarded as garbage.
    public static let maximumSequenceLength = 64
    /// The longest application program command (a kitty graphics reply) it waits for.
    public static let maximumStringLength = 1024

    /// Creates a parser with nothing pending.
    public init() {}

    /// Whether bytes of an unfinished sequence (or a lone `ESC`) are waiting for more.
    public var hasPendingInput: Bool { !pending.isEmpty }

    /// Parses `bytes` after whatever was pending and returns the events completed so far.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [TerminalInputEvent] {
        pending.append(contentsOf: bytes)
        return drain(final: false)
    }

    /// Resolves what is pending as if no more bytes will come: a lone `ESC` becomes the
    /// Escape key; an unfinished sequence or UTF-8 character is dropped.
    public mutating func flush() -> [TerminalInputEvent] {
        drain(final: true)
    }

    private mutating func drain(final: Bool) -> [TerminalInputEvent] {
        var events: [TerminalInputEvent] = []
        var i = 0
        while i < pending.count {
            switch Self.parse(pending, at: i, final: final) {
            case .incomplete:
                let apc = pending.count > i + 1 && pending[i] == 0x1B && pending[i + 1] == UInt8(ascii: "_")
                if pending.count - i > (apc ? Self.maximumStringLength : Self.maximumSequenceLength) {
                    i = pending.count  // garbage: drop it
                }
                pending.removeFirst(i)
                return events
            case .consumed(let n, let new):
                events += new
                i += n
            }
        }
        pending.removeAll(keepingCapacity: true)
        return events
    }

    enum Step {
        case incomplete
        case consumed(Int, [TerminalInputEvent])
    }

    static func parse(_ b: [UInt8], at i: Int, final: Bool) -> Step {
        let byte = b[i]
        switch byte {
        case 0x1B:
            return parseEscape(b, at: i, final: final)
        case 0x0D, 0x0A:
            return .consumed(1, [key(.enter)])
        case 0x09:
            return .consumed(1, [key(.tab)])
        case 0x7F, 0x08:
            return .consumed(1, [key(.backspace)])
        case 0x00:
            return .consumed(1, [key(.character(" "), [.control])])
        case 0x01...0x1A:
            let letter = Character(Unicode.Scalar(0x60 + byte))
            return .consumed(1, [key(.character(letter), [.control])])
        case 0x1C...0x1F:
            let symbol = Character(Unicode.Scalar(0x40 + byte))  // \ ] ^ _
            return .consumed(1, [key(.character(symbol), [.control])])
        case 0x20...0x7E:
            return .consumed(1, [key(.character(Character(Unicode.Scalar(byte))))])
        default:
            return parseUTF8(b, at: i, final: final)
        }
    }

    private static func key(_ k: TerminalKey, _ modifiers: TerminalModifiers = [], _ kind: TerminalKeyEvent.Kind = .press) -> TerminalInputEvent {
        .key(TerminalKeyEvent(k, modifiers: modifiers, kind: kind))
    }

    private static func parseUTF8(_ b: [UInt8], at i: Int, final: Bool) -> Step {
        let lead = b[i]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return .consumed(1, [])  // stray continuation or invalid lead byte
        }
        var n = 1
        while n < length {
            guard i + n < b.count else { return final ? .consumed(n, []) : .incomplete }
            guard b[i + n] & 0xC0 == 0x80 else { return .consumed(n, []) }
            n += 1
        }
        let text = String(decoding: b[i..<(i + length)], as: UTF8.self)
        guard text.unicodeScalars.count == 1, let c = text.first, c != "\u{FFFD}" else { return .consumed(length, []) }
        return .consumed(length, [key(.character(c))])
    }

    private static func parseEscape(_ b: [UInt8], at i: Int, final: Bool) -> Step {
        guard i + 1 < b.count else { return final ? .consumed(1, [key(.escape)]) : .incomplete }
        switch b[i + 1] {
        case UInt8(ascii: "["):
            return parseCSI(b, at: i, final: final)
        case UInt8(ascii: "_"):
            return parseAPC(b, at: i, final: final)
        case UInt8(ascii: "O"):
            guard i + 2 < b.count else {
                return final ? .consumed(2, [key(.character("O"), [.alt])]) : .incomplete
            }
            let k: TerminalKey? = switch b[i + 2] {
            case UInt8(ascii: "A"): .up
            case UInt8(ascii: "B"): .down
            case UInt8(ascii: "C"): .right
            case UInt8(ascii: "D"): .left
            case UInt8(ascii: "H"): .home
            case UInt8(ascii: "F"): .end
            case UInt8(ascii: "M"): .enter
            case UInt8(ascii: "P"): .function(1)
            case UInt8(ascii: "Q"): .function(2)
            case UInt8(ascii: "R"): .function(3)
            case UInt8(ascii: "S"): .function(4)
            default: nil
            }
            return .consumed(3, k.map { [key($0)] } ?? [])
        case 0x1B:
            return .consumed(1, [key(.escape)])
        default:
            // Alt + key: ESC followed by what the key alone sends.
            switch parse(b, at: i + 1, final: final) {
            case .incomplete:
                return .incomplete
            case .consumed(let n, let events):
                let altered = events.map { event -> TerminalInputEvent in
                    guard case .key(var k) = event else { return event }
                    k.modifiers.insert(.alt)
                    return .key(k)
                }
                return .consumed(n + 1, altered)
            }
        }
    }

    private static func parseCSI(_ b: [UInt8], at i: Int, final: Bool) -> Step {
        var j = i + 2
        while j < b.count {
            let c = b[j]
            if (0x40...0x7E).contains(c) {
                let body = Array(b[(i + 2)..<j])
                return .consumed(j - i + 1, dispatchCSI(body: body, final: c))
            }
            guard (0x20...0x3F).contains(c) else {
                return .consumed(j - i, [])  // malformed: drop up to the offending byte
            }
            j += 1
        }
        return final ? .consumed(b.count - i, []) : .incomplete
    }

    /// An application program command, `ESC _ … ESC \` (or BEL): the kitty graphics
    /// protocol's replies (`ESC_Gi=31;OK ESC\`). Other commands are skipped. Without its end
    /// and nothing more coming (`final`), `ESC _` was Alt-underscore.
    private static func parseAPC(_ b: [UInt8], at i: Int, final: Bool) -> Step {
        var j = i + 2
        while j < b.count {
            let end = b[j] == 0x07 ? 1 : (b[j] == 0x1B && j + 1 < b.count && b[j + 1] == UInt8(ascii: "\\") ? 2 : 0)
            if b[j] == 0x1B && j + 1 >= b.count && !final { return .incomplete }
            if end > 0 {
                return .consumed(j - i + end, kittyReply(Array(b[(i + 2)..<j])).map { [$0] } ?? [])
            }
            j += 1
        }
        return final ? .consumed(2, [key(.character("_"), [.alt])]) : .incomplete
    }

    /// `Gkey=value,…;message` → the reply's image id and message.
    private static func kittyReply(_ body: [UInt8]) -> TerminalInputEvent? {
        guard body.first == UInt8(ascii: "G") else { return nil }
        let text = String(decoding: body.dropFirst(), as: UTF8.self)
        let parts = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        var id = 0
        for pair in parts[0].split(separator: ",") where pair.hasPrefix("i=") {
            id = Int(pair.dropFirst(2)) ?? 0
        }
        return .kittyGraphicsReply(id: id, message: parts.count > 1 ? String(parts[1]) : "")
    }

    /// The parameters of a CSI sequence: an optional private marker, `;`-separated fields
    /// of `:`-separated numbers, and intermediates.
    private struct Parameters {
        var marker: UInt8?
        var fields: [[Int?]] = []
        var intermediates: [UInt8] = []

        init(_ body: [UInt8]) {
            var rest = body[...]
            if let first = rest.first, (0x3C...0x3F).contains(first) {
                marker = first
                rest = rest.dropFirst()
            }
            var field: [Int?] = []
            var number: Int?
            var sawAny = false
            for c in rest {
                switch c {
                case 0x30...0x39:
                    number = min(1_000_000, (number ?? 0) * 10 + Int(c - 0x30))
                    sawAny = true
                case UInt8(ascii: ":"):
                    field.append(number); number = nil; sawAny = true
                case UInt8(ascii: ";"):
                    field.append(number); fields.append(field); field = []; number = nil; sawAny = true
                case 0x20...0x2F:
                    intermediates.append(c)
                default:
                    break
                }
            }
            if sawAny {
                field.append(number)
                fields.append(field)
            }
        }

        func value(_ field: Int, _ sub: Int = 0, default fallback: Int) -> Int {
            guard field < fields.count, sub < fields[field].count, let v = fields[field][sub] else { return fallback }
            return v
        }

        /// Modifiers and event kind from field 1 (`mods:event`), as kitty and xterm encode them.
        var modifiersAndKind: (TerminalModifiers, TerminalKeyEvent.Kind) {
            let mods = TerminalModifiers(rawValue: max(0, value(1, default: 1) - 1) & 0xF)
            let kind: TerminalKeyEvent.Kind = switch value(1, 1, default: 1) {
            case 2: .repeat
            case 3: .release
            default: .press
            }
            return (mods, kind)
        }
    }

    private static func dispatchCSI(body: [UInt8], final: UInt8) -> [TerminalInputEvent] {
        let p = Parameters(body)
        switch (p.marker, final) {
        case (UInt8(ascii: "<"), UInt8(ascii: "M")), (UInt8(ascii: "<"), UInt8(ascii: "m")):
            return mouse(p, released: final == UInt8(ascii: "m")).map { [.mouse($0)] } ?? []
        case (UInt8(ascii: "?"), UInt8(ascii: "u")):
            return [.keyboardFlags(KittyKeyboardFlags(rawValue: p.value(0, default: 0)))]
        case (UInt8(ascii: "?"), UInt8(ascii: "y")) where p.intermediates == [UInt8(ascii: "$")]:
            return [.modeReport(mode: p.value(0, default: 0), value: p.value(1, default: 0))]
        case (UInt8(ascii: "?"), UInt8(ascii: "c")):
            return [.deviceAttributes(p.fields.map { $0.first.flatMap { $0 } ?? 0 })]
        case (UInt8(ascii: "?"), UInt8(ascii: "S")) where p.fields.count >= 2:
            return [.graphicsAttribute(item: p.value(0, default: 0), status: p.value(1, default: 0),
                                       values: p.fields.dropFirst(2).map { $0.first.flatMap { $0 } ?? 0 })]
        case (nil, UInt8(ascii: "t")) where p.fields.count == 3 && [4, 6].contains(p.value(0, default: 0)):
            return [.pixelSize(cell: p.value(0, default: 0) == 6, width: p.value(2, default: 0), height: p.value(1, default: 0))]
        case (nil, _):
            break
        default:
            return []
        }
        guard p.intermediates.isEmpty else { return [] }
        let (mods, kind) = p.modifiersAndKind
        let k: TerminalKey?
        switch final {
        case UInt8(ascii: "A"): k = .up
        case UInt8(ascii: "B"): k = .down
        case UInt8(ascii: "C"): k = .right
        case UInt8(ascii: "D"): k = .left
        case UInt8(ascii: "H"): k = .home
        case UInt8(ascii: "F"): k = .end
        case UInt8(ascii: "P"): k = .function(1)
        case UInt8(ascii: "Q"): k = .function(2)
        case UInt8(ascii: "S"): k = .function(4)
        case UInt8(ascii: "Z"):
            return [key(.tab, mods.union(.shift), kind)]
        case UInt8(ascii: "I") where p.fields.isEmpty:
            return [.focus(true)]
        case UInt8(ascii: "O") where p.fields.isEmpty:
            return [.focus(false)]
        case UInt8(ascii: "~"):
            k = tildeKey(p.value(0, default: 0))
        case UInt8(ascii: "u"):
            k = kittyKey(p.value(0, default: 0))
        default:
            k = nil
        }
        return k.map { [key($0, mods, kind)] } ?? []
    }

    private static func tildeKey(_ number: Int) -> TerminalKey? {
        switch number {
        case 1, 7: .home
        case 2: .insert
        case 3: .delete
        case 4, 8: .end
        case 5: .pageUp
        case 6: .pageDown
        case 11...15: .function(number - 10)
        case 17...21: .function(number - 11)
        case 23, 24: .function(number - 12)
        default: nil
        }
    }

    /// A kitty key code: a Unicode code point, with the control keys at their C0 values.
    /// Codes in the private use area (57344…63743) name keypad, media and modifier keys,
    /// which Reel does not use, except keypad Enter (57414).
    private static func kittyKey(_ code: Int) -> TerminalKey? {
        switch code {
        case 13, 57414: return .enter
        case 9: return .tab
        case 127, 8: return .backspace
        case 27: return .escape
        case 57344...63743: return nil
        case 32...:
            guard let scalar = Unicode.Scalar(UInt32(clamping: code)) else { return nil }
            return .character(Character(scalar))
        default: return nil
        }
    }

    private static func mouse(_ p: Parameters, released: Bool) -> TerminalMouseEvent? {
        guard p.fields.count >= 3 else { return nil }
        let b = p.value(0, default: 0)
        let column = p.value(1, default: 1) - 1, row = p.value(2, default: 1) - 1
        var mods: TerminalModifiers = []
        if b & 4 != 0 { mods.insert(.shift) }
        if b & 8 != 0 { mods.insert(.alt) }
        if b & 16 != 0 { mods.insert(.control) }
        let low = b & 3
        if b & 64 != 0 {
            let kinds: [TerminalMouseEvent.Kind] = [.wheelUp, .wheelDown, .wheelLeft, .wheelRight]
            return TerminalMouseEvent(kinds[low], column: column, row: row, modifiers: mods)
        }
        let button: TerminalMouseButton? =
            b & 128 != 0 ? .other(8 + low) : [TerminalMouseButton.left, .middle, .right][safe: low]
        let kind: TerminalMouseEvent.Kind
        if b & 32 != 0 {
            kind = button.map { .drag($0) } ?? .move
        } else if let button {
            kind = released ? .release(button) : .press(button)
        } else {
            return nil
        }
        return TerminalMouseEvent(kind, column: column, row: row, modifiers: mods)
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
