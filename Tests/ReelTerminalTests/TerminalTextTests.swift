import Testing

@testable import ReelTerminal

@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("Hi \u{1B}[31mred\u{1B}[0m!", "Hi red!"),
        ("a\u{1B}]0;pwned title\u{07}b", "ab"),  // OSC ended by BEL
        ("a\u{1B}]8;;http://evil\u{1B}\\link\u{1B}]8;;\u{1B}\\b", "alinkb"),  // OSC 8 ended by ST
        ("a\u{1B}P1$qm\u{1B}\\b", "ab"),  // DCS
        ("a\u{1B}_apc\u{9C}b\u{1B}^pm\u{1B}\\c\u{1B}Xsos\u{07}d", "abcd"),
        ("a\u{9B}31mb\u{9D}0;x\u{9C}c\u{85}d\u{90}q\u{9C}e", "abcde"),  // C1 forms
        ("a\u{1B}cb\u{1B}(Bc\u{1B}#8d", "abcd"),  // RIS, designate charset, DECALN
        ("a\u{1B}[?1049h\u{1B}[2J\u{1B}[Hb", "ab"),
        ("a\tb\nc\r\nd", "a b c  d"),
        ("bell\u{07} back\u{08}space del\u{7F}", "bell backspace del"),
        ("a\u{1B}]0;never ends", "a"),
        ("trailing\u{1B}", "trailing"),
        ("a\u{1B}[12\u{1}b", "ab"),  // CSI broken by a control: both dropped
        ("x\u{202E}txt.exe", "xtxt.exe"),
        ("抖音 短视频 🎬 café", "抖音 短视频 🎬 café"),
    ])
    func sanitize(_ input: String, _ expected: String) {
        let out = TerminalText.sanitize(input)
        #expect(out == expected)
        #expect(!out.utf8.contains(0x1B) && !out.unicodeScalars.contains { (0x80...0x9F).contains($0.value) })
    }

    @Test func hostileTitlesComeOutInert() {
        let hostile = [
            "\u{1B}]52;c;ZWNobyBwd25lZA==\u{07}copy", "\u{1B}[6n", "\u{9B}6n", "\u{1B}P+q544e\u{1B}\\",
            "\u{1B}\u{1B}[31m", "\u{1B}[", "\u{9B}", "\u{1B}]", "日本\u{1B}[2K語", "\u{0}\u{1}\u{1F}\u{7F}\u{80}\u{9F}",
        ]
        for title in hostile {
            let out = TerminalText.sanitize(title)
            for byte in out.utf8 {
                #expect(byte >= 0x20 && byte != 0x7F, "control byte \(byte) left in \(out.debugDescription)")
            }
            #expect(!out.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x9D || $0.value == 0x1B })
        }
        #expect(TerminalText.sanitize("日本\u{1B}[2K語") == "日本語")
    }

    @Test func printableTextIsKeptAsItIs() {
        let ascii = String(String.UnicodeScalarView((0x20...0x7E).map { Unicode.Scalar(UInt8($0)) }))
        #expect(TerminalText.sanitize(ascii) == ascii)
        #expect(TerminalText.displayWidth(ascii) == 95)
        let mixed = "【抖音】猫咪 #萌宠 — Ünïcödé ñ 한국어 テスト 🐱👍🏽"
        #expect(TerminalText.sanitize(mixed) == mixed)
    }

    @Test func displayWidths() {
        #expect(TerminalText.displayWidth("abc") == 3)
        #expect(TerminalText.displayWidth("抖音") == 4)
        #expect(TerminalText.displayWidth("한국어") == 6)
        #expect(TerminalText.displayWidth("ｈｉ") == 4)  // fullwidth forms
        #expect(TerminalText.displayWidth("e\u{301}") == 1)  // combining acute
        #expect(TerminalText.displayWidth("🎬") == 2)
        #expect(TerminalText.displayWidth("👨‍👩‍👧") == 2)  // one grapheme
        #expect(TerminalText.displayWidth("カタカナ。") == 10)
        #expect(TerminalText.displayWidth("a\u{200B}b") == 2)
        #expect(TerminalText.displayWidth("") == 0)
    }

    @Test func truncation() {
        #expect(TerminalText.truncate("短视频标题很长", toWidth: 7) == "短视频…")
        #expect(TerminalText.displayWidth(TerminalText.truncate("短视频标题很长", toWidth: 8)) == 7, "a wide char never straddles the edge")
        #expect(TerminalText.truncate("抖音", toWidth: 4) == "抖音")
        #expect(TerminalText.truncate("抖音", toWidth: 3) == "抖…")
        #expect(TerminalText.truncate("hello world", toWidth: 8) == "hello w…")
        #expect(TerminalText.truncate("hello", toWidth: 1) == "…")
        #expect(TerminalText.truncate("hello", toWidth: 0) == "")
        #expect(TerminalText.truncate("hello", toWidth: 3, ellipsis: "...") == "...")
        #expect(TerminalText.truncate("hello", toWidth: 2, ellipsis: "...") == "he")
        #expect(TerminalText.truncate("cafe\u{301}s", toWidth: 4) == "caf…")
        #expect(TerminalText.truncate("cafe\u{301}s", toWidth: 5) == "cafe\u{301}s")
    }
}
