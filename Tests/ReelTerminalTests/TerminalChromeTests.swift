import Testing
import ReelTerminal

@Suite struct TerminalChromeTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func aTitleWithEscapeSequencesIsRenderedInert() {
        let hostile = "\u{1B}]0;pwned\u{07}Cat\u{1B}[2J video\u{1B}[31m!\u{9B}1;1H\r\nnext"
        let state = TerminalChrome.State(categories: ["For\u{1B}[5mYou"], title: hostile, uploader: "eve\u{1B}[8m",
                                         elapsed: 12, duration: 45)
        var chrome = TerminalChrome()
        let out = text(chrome.render(state, columns: 60, rows: 12))
        #expect(!out.contains("]0;"))
        #expect(!out.contains("[2J"))
        #expect(!out.contains("[31m"))
        #expect(!out.contains("[5m"))
        #expect(!out.contains("[8m"))
        #expect(!out.contains("\r"))
        #expect(!out.contains("\n"))
        #expect(!out.contains("\u{9B}"))
        let lines = TerminalChrome.lines(state, columns: 60, rows: 12)
        #expect(lines[9] == "@eve · Cat video!  next")
        #expect(lines[0] == "[ForYou]")
        // Every ESC in the output starts one of the chrome's own sequences: cursor moves,
        // SGR and erase-line.
        var rest = out[...]
        while let escape = rest.firstIndex(of: "\u{1B}") {
            let after = rest[rest.index(after: escape)...]
            #expect(after.hasPrefix("["))
            let body = after.dropFirst().prefix { "0123456789;".contains($0) }
            let final = after.dropFirst(1 + body.count).first
            #expect(final == "m" || final == "H" || final == "K", "unexpected sequence \(after.prefix(12).debugDescription)")
            rest = after
        }
    }

    @Test func progressLineHasTimeLabelsBarAndBadge() {
        let state = TerminalChrome.State(title: "t", elapsed: 12.7, duration: 45, badge: "2x")
        let lines = TerminalChrome.lines(state, columns: 40, rows: 10)
        let progress = lines[8]!
        #expect(progress.hasPrefix("▶ 0:12 ━"))
        #expect(progress.hasSuffix("─ 0:45 2x"))
        #expect(TerminalText.displayWidth(progress) == 40)
        var paused = state
        paused.isPaused = true
        paused.badge = nil
        #expect(TerminalChrome.lines(paused, columns: 40, rows: 10)[8]!.hasPrefix("❚❚ 0:12"))
    }

    @Test func timeLabels() {
        #expect(TerminalChrome.timeLabel(0) == "0:00")
        #expect(TerminalChrome.timeLabel(7.9) == "0:07")
        #expect(TerminalChrome.timeLabel(62) == "1:02")
        #expect(TerminalChrome.timeLabel(3723) == "1:02:03")
        #expect(TerminalChrome.timeLabel(.nan) == "0:00")
    }

    @Test func aClickOnTheBarGivesTheFraction() {
        let state = TerminalChrome.State(title: "t", elapsed: 0, duration: 10)
        let span = TerminalChrome.progressBarSpan(columns: 40, state: state)
        #expect(span.start == 7)  // "▶ 0:00 "
        #expect(TerminalChrome.seekFraction(column: span.start, row: 8, columns: 40, rows: 10, state: state) == 0)
        #expect(TerminalChrome.seekFraction(column: span.start + span.width - 1, row: 8, columns: 40, rows: 10, state: state) == 1)
        #expect(TerminalChrome.seekFraction(column: span.start, row: 7, columns: 40, rows: 10, state: state) == nil)
        #expect(TerminalChrome.seekFraction(column: 2, row: 8, columns: 40, rows: 10, state: state) == nil)
    }

    @Test func onlyChangedLinesAreRedrawn() {
        var chrome = TerminalChrome()
        var state = TerminalChrome.State(categories: ["a", "b"], title: "t", elapsed: 1, duration: 10, statusLine: "help")
        #expect(!chrome.render(state, columns: 40, rows: 10).isEmpty)
        #expect(chrome.render(state, columns: 40, rows: 10).isEmpty)
        state.elapsed = 5
        let out = text(chrome.render(state, columns: 40, rows: 10))
        #expect(out.hasPrefix("\u{1B}[9;1H"))
        #expect(!out.contains("\u{1B}[1;1H"))
        #expect(!out.contains("help"))
        #expect(!text(chrome.render(state, columns: 40, rows: 10, full: true)).isEmpty)
    }

    @Test func videoAreaLeavesRoomForTheChrome() {
        #expect(TerminalChrome.videoArea(columns: 80, rows: 24, chromeVisible: true) == (0, 1, 80, 20))
        #expect(TerminalChrome.videoArea(columns: 80, rows: 24, chromeVisible: false) == (0, 0, 80, 24))
        #expect(TerminalChrome.videoArea(columns: 80, rows: 4, chromeVisible: true) == (0, 0, 80, 4))
    }
}
