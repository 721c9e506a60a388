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
        #expect(lines[9] == "@eve ∙ Cat video!  next")
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
        #expect(progress.hasPrefix("► 0:12 ▰"))
        #expect(progress.hasSuffix("▱ 0:45 2x"))
        #expect(TerminalText.displayWidth(progress) == 40)
        var paused = state
        paused.isPaused = true
        paused.badge = nil
        #expect(TerminalChrome.lines(paused, columns: 40, rows: 10)[8]!.hasPrefix("❚❚ 0:12"))
    }

    @Test func aLiveItemShowsLiveAndAFullBar() {
        var state = TerminalChrome.State(title: "t", elapsed: 83)
        state.isLive = true
        let progress = TerminalChrome.lines(state, columns: 40, rows: 10)[8]!
        #expect(progress.hasPrefix("► 1:23 ▰"))
        #expect(progress.hasSuffix("▰ LIVE"), "\(progress)")
        #expect(!progress.contains("▱"), "at the live edge")
        #expect(TerminalText.displayWidth(progress) == 40)
    }

    /// With its window known, a live item's bar spans the window, and a click on it seeks
    /// there (a quarter of the way along an 8 s window is 2 s into it).
    @Test func aLiveItemWithAWindowFillsToItsPlaceInIt() throws {
        var state = TerminalChrome.State(title: "t", elapsed: 122)
        state.isLive = true
        state.liveWindow = 120...128
        let progress = TerminalChrome.lines(state, columns: 40, rows: 10)[8]!
        #expect(progress.hasPrefix("► 2:02 ▰"))
        #expect(progress.hasSuffix("▱ LIVE"), "\(progress)")
        let filled = progress.filter { $0 == "▰" }.count, empty = progress.filter { $0 == "▱" }.count
        #expect(abs(Double(filled) / Double(filled + empty) - 0.25) < 0.05, "\(progress)")
        #expect(TerminalText.displayWidth(progress) == 40)
    }

    /// A terminal configured for CJK draws East Asian ambiguous characters two columns wide:
    /// the chrome's own glyphs are none of them, so the bar and the time labels sit where
    /// they do elsewhere, and feed text with ambiguous characters is cut short enough to fit.
    @Test func layoutsHoldInCJKConfiguredTerminals() throws {
        for glyph in TerminalChrome.Glyph.all {
            #expect(!glyph.unicodeScalars.contains(where: TerminalText.isAmbiguousWidth), "\(glyph) is ambiguous")
        }
        #expect("▶━─·…“”—→".unicodeScalars.allSatisfy(TerminalText.isAmbiguousWidth))
        #expect(!"abc 标题 ►❚▰▱∙".unicodeScalars.contains(where: TerminalText.isAmbiguousWidth))
        #expect(TerminalText.displayWidth("a·b…", ambiguousAsWide: true) == 6)
        #expect(TerminalText.displayWidth("a·b…") == 4)

        let title = String(repeating: "“标题”·Ω…—", count: 8)
        for paused in [false, true] {
            for columns in [24, 40, 80] {
                let state = TerminalChrome.State(categories: ["推荐·For you", "音乐"], title: title, uploader: "李·雷",
                                                 elapsed: 12.7, duration: 45, isPaused: paused, badge: "2x",
                                                 position: "3/12", statusLine: "↑↓ swipe  ←→ 5s  53×20 cells")
                let lines = TerminalChrome.lines(state, columns: columns, rows: 12)
                for (row, line) in lines {
                    #expect(TerminalText.displayWidth(line, ambiguousAsWide: true) <= columns, "row \(row) overflows: \(line)")
                }
                // The progress line measures the same on both kinds of terminal.
                let progress = try #require(lines[10])
                #expect(TerminalText.displayWidth(progress, ambiguousAsWide: true) == TerminalText.displayWidth(progress))
                #expect(TerminalText.displayWidth(progress) == columns)
                let span = TerminalChrome.progressBarSpan(columns: columns, state: state)
                let prefix = String(progress.prefix(span.start))
                #expect(TerminalText.displayWidth(prefix, ambiguousAsWide: true) == span.start)
            }
        }
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
        #expect(span.start == 7)  // "► 0:00 "
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

    /// The progress line is as wide as the screen: after its last character the cursor waits
    /// on the last column, where an erase-line would take that character (xterm showed
    /// "0:06" as "0:0"). Each row is erased before its text, and nothing erases after it.
    @Test func aRowIsErasedBeforeItsTextSoAFullWidthLineKeepsItsLastColumn() throws {
        let state = TerminalChrome.State(title: "clip", elapsed: 5, duration: 6)
        var chrome = TerminalChrome()
        let out = text(chrome.render(state, columns: 120, rows: 45))
        let start = try #require(out.range(of: "\u{1B}[44;1H"))
        let rest = out[start.upperBound...]
        let row = rest.range(of: "\u{1B}[45;1H").map { rest[..<$0.lowerBound] } ?? rest
        #expect(row.hasPrefix("\u{1B}[0m\u{1B}[K"))
        #expect(row.hasSuffix("0:06\u{1B}[0m"), "\(row.debugDescription)")
        #expect(row.components(separatedBy: "\u{1B}[K").count == 2)  // one erase, before the text
        #expect(TerminalChrome.lines(state, columns: 120, rows: 45)[43].map { TerminalText.displayWidth($0) } == 120)
    }
}
