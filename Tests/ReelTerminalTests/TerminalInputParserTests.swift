import Testing

@testable import ReelTerminal

private func key(_ k: TerminalKey, _ mods: TerminalModifiers = [], _ kind: TerminalKeyEvent.Kind = .press) -> TerminalInputEvent {
    .key(TerminalKeyEvent(k, modifiers: mods, kind: kind))
}

private func mouse(_ kind: TerminalMouseEvent.Kind, _ column: Int, _ row: Int, _ mods: TerminalModifiers = []) -> TerminalInputEvent {
    .mouse(TerminalMouseEvent(kind, column: column, row: row, modifiers: mods))
}

private let cases: [(String, [TerminalInputEvent])] = [
    // Legacy keys.
    ("\u{1B}[A", [key(.up)]), ("\u{1B}[B", [key(.down)]), ("\u{1B}[C", [key(.right)]), ("\u{1B}[D", [key(.left)]),
    ("\u{1B}OA", [key(.up)]), ("\u{1B}OD", [key(.left)]),
    ("\u{1B}[1;2B", [key(.down, [.shift])]),
    (" ", [key(.character(" "))]), ("q", [key(.character("q"))]), ("\r", [key(.enter)]), ("\t", [key(.tab)]),
    ("\u{7F}", [key(.backspace)]), ("\u{03}", [key(.character("c"), [.control])]),
    ("抖", [key(.character("抖"))]), ("é", [key(.character("é"))]), ("🎬", [key(.character("🎬"))]),
    ("\u{1B}j", [key(.character("j"), [.alt])]), ("\u{1B}[Z", [key(.tab, [.shift])]),
    ("\u{1B}[5~", [key(.pageUp)]), ("\u{1B}[3;5~", [key(.delete, [.control])]), ("\u{1B}[15~", [key(.function(5))]),
    ("jk\u{1B}[A q", [key(.character("j")), key(.character("k")), key(.up), key(.character(" ")), key(.character("q"))]),
    // Kitty keyboard protocol.
    ("\u{1B}[27u", [key(.escape)]), ("\u{1B}[13u", [key(.enter)]), ("\u{1B}[99;5u", [key(.character("c"), [.control])]),
    ("\u{1B}[32;1:3u", [key(.character(" "), [], .release)]), ("\u{1B}[106;1:2u", [key(.character("j"), [], .repeat)]),
    ("\u{1B}[108;1:1u", [key(.character("l"))]), ("\u{1B}[1;1:3A", [key(.up, [], .release)]),
    ("\u{1B}[1;5:2C", [key(.right, [.control], .repeat)]), ("\u{1B}[1;3:1D", [key(.left, [.alt])]),
    ("\u{1B}[97;65u", [key(.character("a"))]),  // caps lock (64) is ignored
    ("\u{1B}[57441;2u", []),  // left shift itself: not a key Reel uses
    ("\u{1B}[3;1:3~", [key(.delete, [], .release)]),
    // SGR mouse.
    ("\u{1B}[<0;10;5M", [mouse(.press(.left), 9, 4)]), ("\u{1B}[<0;10;5m", [mouse(.release(.left), 9, 4)]),
    ("\u{1B}[<32;11;7M", [mouse(.drag(.left), 10, 6)]), ("\u{1B}[<34;11;8M", [mouse(.drag(.right), 10, 7)]),
    ("\u{1B}[<64;1;1M", [mouse(.wheelUp, 0, 0)]), ("\u{1B}[<65;3;4M", [mouse(.wheelDown, 2, 3)]),
    ("\u{1B}[<2;1;1M", [mouse(.press(.right), 0, 0)]), ("\u{1B}[<1;1;1M", [mouse(.press(.middle), 0, 0)]),
    ("\u{1B}[<20;200;100M", [mouse(.press(.left), 199, 99, [.shift, .control])]),
    ("\u{1B}[<35;5;5M", [mouse(.move, 4, 4)]), ("\u{1B}[<72;1;1M", [mouse(.wheelUp, 0, 0, [.alt])]),
    ("\u{1B}[<128;1;1M", [mouse(.press(.other(8)), 0, 0)]),
    // Focus, replies, and sequences to ignore.
    ("\u{1B}[I", [.focus(true)]), ("\u{1B}[O", [.focus(false)]),
    ("\u{1B}[?3u", [.keyboardFlags([.disambiguateEscapeCodes, .reportEventTypes])]),
    ("\u{1B}[?2026;2$y", [.modeReport(mode: 2026, value: 2)]),
    ("\u{1B}[?1;2cx", [.deviceAttributes([1, 2]), key(.character("x"))]),  // device attributes reply (DA1)
    ("\u{1B}[200~", []),
]

@Suite struct TerminalInputParserTests {
    @Test func eachSequenceWhole() {
        for (input, expected) in cases {
            var parser = TerminalInputParser()
            #expect(parser.feed(Array(input.utf8)) == expected, "\(input.debugDescription)")
            #expect(!parser.hasPendingInput, "\(input.debugDescription)")
        }
    }

    @Test func eachSequenceSplitAtEveryByteBoundary() {
        for (input, expected) in cases {
            let bytes = Array(input.utf8)
            for split in 1..<max(1, bytes.count) {
                var parser = TerminalInputParser()
                let events = parser.feed(bytes[..<split]) + parser.feed(bytes[split...])
                #expect(events == expected, "\(input.debugDescription) split at \(split)")
            }
            var parser = TerminalInputParser()
            let oneByOne = bytes.flatMap { parser.feed([$0]) }
            #expect(oneByOne == expected, "\(input.debugDescription) one byte at a time")
        }
    }

    @Test func allCasesBackToBack() {
        var parser = TerminalInputParser()
        let all = cases.flatMap { Array($0.0.utf8) }
        var events: [TerminalInputEvent] = []
        for chunk in stride(from: 0, to: all.count, by: 7) {
            events += parser.feed(all[chunk..<min(all.count, chunk + 7)])
        }
        #expect(events == cases.flatMap(\.1))
    }

    @Test func aLoneEscapeWaitsForFlush() {
        var parser = TerminalInputParser()
        #expect(parser.feed([0x1B]).isEmpty)
        #expect(parser.hasPendingInput)
        #expect(parser.flush() == [key(.escape)])
        #expect(!parser.hasPendingInput)
        #expect(parser.feed([0x1B, 0x1B]) == [key(.escape)], "the first of two is Escape")
        #expect(parser.flush() == [key(.escape)])
    }

    @Test func flushDropsUnfinishedSequencesAndCharacters() {
        var parser = TerminalInputParser()
        #expect(parser.feed(Array("\u{1B}[<0;1".utf8)).isEmpty)
        #expect(parser.flush().isEmpty)
        #expect(parser.feed([0xE6, 0x8A]).isEmpty)  // first two bytes of 抖
        #expect(parser.flush().isEmpty)
        #expect(parser.feed(Array("x".utf8)) == [key(.character("x"))])
    }

    @Test func garbageIsSkippedWithoutInventingKeys() {
        var parser = TerminalInputParser()
        #expect(parser.feed([0x80, 0xFF, 0xC3]) .isEmpty)  // stray continuation, invalid, truncated lead…
        #expect(parser.feed(Array("a".utf8)) == [key(.character("a"))], "…whose missing continuation is not swallowed")
        let endless = Array("\u{1B}[".utf8) + Array(repeating: UInt8(ascii: "1"), count: 100)
        #expect(parser.feed(endless).isEmpty)
        #expect(!parser.hasPendingInput, "an over-long sequence is dropped")
        #expect(parser.feed(Array("b".utf8)) == [key(.character("b"))])
    }

    @Test func setupSequences() {
        #expect(String(decoding: TerminalControl.enableMouse, as: UTF8.self) == "\u{1B}[?1002h\u{1B}[?1006h")
        #expect(String(decoding: TerminalControl.pushKeyboardFlags(), as: UTF8.self) == "\u{1B}[>3u")
        #expect(String(decoding: TerminalControl.popKeyboardFlags, as: UTF8.self) == "\u{1B}[<1u")
        #expect(String(decoding: TerminalControl.moveCursor(column: 0, row: 4), as: UTF8.self) == "\u{1B}[5;1H")
        // What Reel writes, the parser reads back as nothing: no stray keys if echoed.
        var parser = TerminalInputParser()
        #expect(parser.feed(TerminalControl.enterAlternateScreen + TerminalControl.hideCursor).isEmpty)
    }
}
