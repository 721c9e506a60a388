/// The text around the video: a category line on top; the title and uploader, a progress
/// bar with time labels and the 2x badge, and a help or stats line at the bottom.
///
/// Values in, bytes out: ``render(_:columns:rows:full:)`` returns the bytes that bring the
/// screen's chrome rows up to date, redrawing only lines whose text changed. Every string
/// that came from a feed goes through ``TerminalText/sanitize(_:)`` first, so a title can
/// never move the cursor, change colours or set the window title.
public struct TerminalChrome: Sendable {
    /// What the chrome shows.
    public struct State: Sendable, Hashable {
        /// The category line (tabs): names, and which is selected.
        public var categories: [String]
        /// Index into ``categories`` of the current one.
        public var selectedCategory: Int
        /// The item's title (feed text, sanitised when drawn).
        public var title: String
        /// The uploader (feed text, sanitised when drawn), shown as `@name`.
        public var uploader: String?
        /// Playback position, in seconds.
        public var elapsed: Double
        /// Item length in seconds, when known.
        public var duration: Double?
        /// A live stream: "LIVE" in place of the length; the bar spans ``liveWindow`` (its right
        /// end the edge), or stands full before the window is known.
        public var isLive = false
        /// A live stream's window on its own clock, in seconds, up to where a player joins.
        public var liveWindow: ClosedRange<Double>?
        /// Paused (shows ❚❚ instead of ►).
        public var isPaused: Bool
        /// Muted (shows "muted").
        public var isMuted: Bool
        /// A badge beside the bar ("2x" while held).
        public var badge: String?
        /// Where the item sits in the feed ("3/12"), if in one.
        public var position: String?
        /// The last line: the stats line with `--hud`, else key help; nil leaves it empty.
        public var statusLine: String?
        /// The captions on screen (lines separated by `\n`; "" when none now), drawn centred on
        /// a row of their own under the video; nil when no caption row is reserved.
        public var caption: String?

        /// Creates a state; everything optional starts empty.
        public init(categories: [String] = [], selectedCategory: Int = 0, title: String = "", uploader: String? = nil,
                    elapsed: Double = 0, duration: Double? = nil, isPaused: Bool = false, isMuted: Bool = false,
                    badge: String? = nil, position: String? = nil, statusLine: String? = nil, caption: String? = nil) {
            self.categories = categories
            self.selectedCategory = selectedCategory
            self.title = title
            self.uploader = uploader
            self.elapsed = elapsed
            self.duration = duration
            self.isPaused = isPaused
            self.isMuted = isMuted
            self.badge = badge
            self.position = position
            self.statusLine = statusLine
            self.caption = caption
        }
    }

    /// The chrome's own glyphs. None is East Asian ambiguous width (``TerminalText/isAmbiguousWidth(_:)``),
    /// so every terminal draws each one column wide and the time labels stay where the bar's
    /// layout puts them, in CJK-configured terminals too (`▶`, `━`, `─` and `·` are ambiguous).
    public enum Glyph {
        public static let playing = "►"
        public static let paused = "❚❚"
        public static let barDone = "▰"
        public static let barRest = "▱"
        public static let separator = "∙"
        public static let all = [playing, paused, barDone, barRest, separator]
    }

    /// Rows the chrome takes above the video.
    public static let topRows = 1
    /// Rows the chrome takes below the video.
    public static let bottomRows = 3

    private var shown: [Int: [UInt8]] = [:]
    private var shownSize: (columns: Int, rows: Int) = (0, 0)
    private var shownVisible = true

    /// A chrome with nothing drawn yet.
    public init() {}

    /// Forgets what is on screen, so the next render draws every line.
    public mutating func invalidate() {
        shown = [:]
    }

    /// The video area (column, row, columns, rows) for a `columns × rows` terminal, with the
    /// chrome shown or not, and a caption row under the video or not.
    public static func videoArea(columns: Int, rows: Int, chromeVisible: Bool,
                                 captionRow: Bool = false) -> (column: Int, row: Int, columns: Int, rows: Int) {
        let caption = captionRow && rows > 2 ? 1 : 0
        guard chromeVisible, rows > topRows + bottomRows + 1 + caption else { return (0, 0, columns, rows - caption) }
        return (0, topRows, columns, rows - topRows - bottomRows - caption)
    }

    /// The caption row of a `rows`-tall screen: right under the video, above the title line
    /// when the chrome shows, the last row when it does not. The video area never covers it,
    /// so the cell encoder never draws there.
    public static func captionRow(rows: Int, chromeVisible: Bool) -> Int {
        chromeVisible && rows > topRows + bottomRows + 2 ? rows - bottomRows - 1 : rows - 1
    }

    /// The caption row's text: the cue's lines joined, control characters removed, centred in
    /// `columns` with wide and ambiguous characters measured as two columns, cut to fit.
    public static func captionText(_ caption: String, columns: Int) -> String {
        let lines = caption.split(whereSeparator: \.isNewline).map { TerminalText.sanitize(String($0)).trimmingCharacters(in: .whitespaces) }
        let text = fit(lines.filter { !$0.isEmpty }.joined(separator: " "), columns)
        guard !text.isEmpty else { return "" }
        let width = TerminalText.displayWidth(text, ambiguousAsWide: true)
        return String(repeating: " ", count: max(0, (columns - width) / 2)) + text
    }

    /// The progress bar's cells on a `columns`-wide screen: its first column and width.
    public static func progressBarSpan(columns: Int, state: State) -> (start: Int, width: Int) {
        let left = leftLabel(state)
        let right = rightLabel(state)
        let start = TerminalText.displayWidth(left) + 1
        let width = max(0, columns - start - TerminalText.displayWidth(right) - 1)
        return (start, width)
    }

    /// The row of the progress bar on a `rows`-tall screen.
    public static func progressRow(rows: Int) -> Int { rows - 2 }

    /// Where on the timeline (0…1) a click at `column`, `row` lands, or nil when it is not
    /// on the progress bar.
    public static func seekFraction(column: Int, row: Int, columns: Int, rows: Int, state: State) -> Double? {
        guard row == progressRow(rows: rows) else { return nil }
        let span = progressBarSpan(columns: columns, state: state)
        guard span.width > 0, column >= span.start, column < span.start + span.width else { return nil }
        return span.width == 1 ? 0 : Double(column - span.start) / Double(span.width - 1)
    }

    /// `0:07`, `1:02`, `1:02:03`.
    public static func timeLabel(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "0:00" }
        let total = Int(seconds)
        let h = total / 3600, m = total / 60 % 60, s = total % 60
        let ss = s < 10 ? "0\(s)" : "\(s)"
        if h > 0 { return "\(h):\(m < 10 ? "0" : "")\(m):\(ss)" }
        return "\(m):\(ss)"
    }

    /// The plain text of each chrome row (no colours), keyed by screen row: what a test or
    /// a screen reader sees.
    public static func lines(_ state: State, columns: Int, rows: Int, chromeVisible: Bool = true) -> [Int: String] {
        guard columns > 0, rows > topRows + bottomRows + 1 else { return [:] }
        var out: [Int: String] = [:]
        if let caption = state.caption { out[captionRow(rows: rows, chromeVisible: chromeVisible)] = captionText(caption, columns: columns) }
        guard chromeVisible else { return out }
        out[0] = fit(categoryText(state), columns)
        out[rows - 3] = fit(titleText(state), columns)
        out[rows - 2] = progressText(state, columns: columns)
        out[rows - 1] = fit(state.statusLine.map(TerminalText.sanitize) ?? "", columns)
        return out
    }

    /// The bytes that update the chrome rows of a `columns × rows` screen to `state`. With
    /// `full`, every row is drawn (after a resize or a clear).
    public mutating func render(_ state: State, columns: Int, rows: Int, full: Bool = false, chromeVisible: Bool = true) -> [UInt8] {
        if full || shownSize != (columns, rows) || shownVisible != chromeVisible {
            shown = [:]
            shownSize = (columns, rows)
            shownVisible = chromeVisible
        }
        guard columns > 0, rows > Self.topRows + Self.bottomRows + 1 else { return [] }
        var lines: [Int: [UInt8]] = [:]
        if let caption = state.caption {
            // Bold white on black: legible whatever the video is.
            let text = Self.captionText(caption, columns: columns)
            let lead = text.prefix { $0 == " " }
            let words = String(text.dropFirst(lead.count))
            lines[Self.captionRow(rows: rows, chromeVisible: chromeVisible)] = Self.bytes(String(lead)) + Self.styled(words, sgr: "1;97;40")
        }
        if chromeVisible {
            lines[0] = Self.categoryLine(state, columns: columns)
            lines[rows - 3] = Self.styled(Self.fit(Self.titleText(state), columns), sgr: "1")
            lines[rows - 2] = Self.progressLine(state, columns: columns)
            lines[rows - 1] = Self.styled(Self.fit(state.statusLine.map(TerminalText.sanitize) ?? "", columns), sgr: "2")
        }
        var out: [UInt8] = []
        for row in lines.keys.sorted() {
            let line = lines[row]!
            if shown[row] == line { continue }
            shown[row] = line
            // The row is erased before its text, not after: a line as wide as the screen
            // leaves the cursor waiting on the last column, and an erase there takes that
            // column's character (xterm showed the progress line's "0:06" as "0:0").
            out += TerminalControl.moveCursor(column: 0, row: row)
            out += Self.bytes("\u{1B}[0m\u{1B}[K")
            out += line
            out += Self.bytes("\u{1B}[0m")
        }
        return out
    }

    // MARK: Text

    private static func categoryText(_ state: State) -> String {
        var parts: [String] = []
        for (i, name) in state.categories.enumerated() {
            let clean = TerminalText.sanitize(name)
            parts.append(i == state.selectedCategory ? "[\(clean)]" : " \(clean) ")
        }
        var text = parts.joined(separator: " ")
        if let position = state.position { text += "  " + TerminalText.sanitize(position) }
        return text
    }

    private static func titleText(_ state: State) -> String {
        let title = TerminalText.sanitize(state.title)
        guard let uploader = state.uploader.map(TerminalText.sanitize), !uploader.isEmpty else { return title }
        return "\(uploader.hasPrefix("@") ? uploader : "@" + uploader) \(Glyph.separator) \(title)"
    }

    private static func leftLabel(_ state: State) -> String {
        (state.isPaused ? Glyph.paused : Glyph.playing) + " " + timeLabel(state.elapsed)
    }

    private static func rightLabel(_ state: State) -> String {
        var text = state.isLive ? "LIVE" : timeLabel(state.duration ?? 0)
        if state.isMuted { text += " muted" }
        if let badge = state.badge { text += " " + TerminalText.sanitize(badge) }
        return text
    }

    private static func filled(_ state: State, width: Int) -> Int {
        if state.isLive {
            guard let window = state.liveWindow, window.upperBound > window.lowerBound else { return width }
            let fraction = (state.elapsed - window.lowerBound) / (window.upperBound - window.lowerBound)
            return max(0, min(width, Int((fraction * Double(width)).rounded())))
        }
        guard let duration = state.duration, duration > 0 else { return 0 }
        return max(0, min(width, Int((state.elapsed / duration * Double(width)).rounded())))
    }

    private static func progressText(_ state: State, columns: Int) -> String {
        let span = progressBarSpan(columns: columns, state: state)
        let done = filled(state, width: span.width)
        let bar = String(repeating: Glyph.barDone, count: done) + String(repeating: Glyph.barRest, count: span.width - done)
        return fit(leftLabel(state) + " " + bar + " " + rightLabel(state), columns)
    }

    /// Cut to `columns`, measuring East Asian ambiguous characters (from a feed, or in a
    /// status line) as two columns, so a line never wraps on a CJK-configured terminal.
    private static func fit(_ text: String, _ columns: Int) -> String {
        TerminalText.truncate(text, toWidth: columns, ambiguousAsWide: true)
    }

    // MARK: Bytes

    private static func categoryLine(_ state: State, columns: Int) -> [UInt8] {
        // Selected tab in reverse video; the rest plain.
        var out: [UInt8] = []
        var used = 0
        for (i, name) in state.categories.enumerated() {
            let clean = TerminalText.sanitize(name)
            let cell = i == state.selectedCategory ? " \(clean) " : " \(clean) "
            let width = TerminalText.displayWidth(cell) + (i > 0 ? 1 : 0)
            if used + width > columns { break }
            if i > 0 { out += bytes(" ") }
            out += i == state.selectedCategory ? styled(cell, sgr: "7;1") : bytes(cell)
            used += width
        }
        if let position = state.position {
            let text = "  " + TerminalText.sanitize(position)
            if used + TerminalText.displayWidth(text) <= columns { out += styled(text, sgr: "2") }
        }
        return out
    }

    private static func progressLine(_ state: State, columns: Int) -> [UInt8] {
        let span = progressBarSpan(columns: columns, state: state)
        let left = leftLabel(state), right = rightLabel(state)
        guard span.width > 0 else { return bytes(fit(left + " " + right, columns)) }
        let done = filled(state, width: span.width)
        var out = bytes(left + " ")
        out += styled(String(repeating: Glyph.barDone, count: done), sgr: "38;2;254;44;85")
        out += styled(String(repeating: Glyph.barRest, count: span.width - done), sgr: "2")
        out += state.isLive ? bytes(" ") + styled("LIVE", sgr: "1;38;2;254;44;85") : bytes(" " + timeLabel(state.duration ?? 0))
        if state.isMuted { out += bytes(" muted") }
        if let badge = state.badge { out += bytes(" ") + styled(TerminalText.sanitize(badge), sgr: "7;1") }
        return out
    }

    private static func styled(_ text: String, sgr: String) -> [UInt8] {
        text.isEmpty ? [] : bytes("\u{1B}[\(sgr)m" + text + "\u{1B}[0m")
    }

    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
}
