import Foundation
import Testing
import ReelTerminal

/// The caption row: under the video, clear of the chrome, centred, measured right, inert.
@Suite struct TerminalCaptionRowTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func theRowIsUnderTheVideoAndTheVideoNeverCoversIt() {
        for visible in [true, false] {
            let plain = TerminalChrome.videoArea(columns: 80, rows: 24, chromeVisible: visible)
            let area = TerminalChrome.videoArea(columns: 80, rows: 24, chromeVisible: visible, captionRow: true)
            let row = TerminalChrome.captionRow(rows: 24, chromeVisible: visible)
            #expect(area.rows == plain.rows - 1)
            #expect(row == area.row + area.rows, "the row right under the video")
            if visible {
                #expect(row == 24 - TerminalChrome.bottomRows - 1, "above the title line")
            } else {
                #expect(row == 23)
            }
        }
    }

    @Test func cueLinesAreJoinedAndCentredWithWideCharactersCounted() {
        let line = TerminalChrome.captionText("第二行字幕\nsecond line", columns: 40)
        // 5 CJK characters (10 columns) + " second line" (12): 22 columns, 9 to the left.
        #expect(line == String(repeating: " ", count: 9) + "第二行字幕 second line")
        // Ambiguous-width characters count as two (a CJK-configured terminal draws them so).
        let ambiguous = TerminalChrome.captionText("±1", columns: 10)
        #expect(ambiguous == "   ±1")
    }

    @Test func aLongCueIsCutToTheScreenAndNeverWraps() {
        let line = TerminalChrome.captionText(String(repeating: "字", count: 50), columns: 21)
        #expect(TerminalText.displayWidth(line, ambiguousAsWide: true) <= 21)
        #expect(line.hasSuffix("…"))
    }

    @Test func escapeSequencesInACueAreInert() {
        let state = TerminalChrome.State(title: "t", caption: "\u{1B}]0;pwned\u{07}hi\u{1B}[2J there\u{9B}1;1H")
        var chrome = TerminalChrome()
        let out = text(chrome.render(state, columns: 40, rows: 12))
        #expect(!out.contains("]0;"))
        #expect(!out.contains("[2J"))
        #expect(!out.contains("\u{9B}"))
        let row = TerminalChrome.captionRow(rows: 12, chromeVisible: true)
        #expect(TerminalChrome.lines(state, columns: 40, rows: 12)[row]?.trimmingCharacters(in: .whitespaces) == "hi there")
    }

    @Test func theRowIsDrawnWithTheChromeHiddenAndClearedWhenTheCueEnds() {
        var chrome = TerminalChrome()
        var state = TerminalChrome.State(title: "clip", caption: "Hello")
        let shown = text(chrome.render(state, columns: 30, rows: 10, chromeVisible: false))
        let row = TerminalChrome.captionRow(rows: 10, chromeVisible: false)
        #expect(shown.contains("\u{1B}[\(row + 1);1H"))
        #expect(shown.contains("Hello"))
        #expect(!shown.contains("clip"), "the title stays hidden")
        // Nothing changed: nothing written.
        #expect(chrome.render(state, columns: 30, rows: 10, chromeVisible: false).isEmpty)
        state.caption = ""
        let cleared = text(chrome.render(state, columns: 30, rows: 10, chromeVisible: false))
        #expect(cleared.contains("\u{1B}[\(row + 1);1H"))
        #expect(cleared.contains("\u{1B}[K"))
        #expect(!cleared.contains("Hello"))
        #expect(TerminalChrome.lines(state, columns: 30, rows: 10, chromeVisible: false) == [row: ""])
    }
}
