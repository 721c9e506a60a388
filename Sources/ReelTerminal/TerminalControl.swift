/// The escape sequences that set a terminal up for Reel and put it back afterwards.
/// Each is the exact bytes to write.
public enum TerminalControl {
    /// Switch to the alternate screen (`ESC[?1049h`), saving the user's screen.
    public static let enterAlternateScreen = bytes("\u{1B}[?1049h")
    /// Leave the alternate screen (`ESC[?1049l`), restoring the user's screen.
    public static let exitAlternateScreen = bytes("\u{1B}[?1049l")
    /// Hide the cursor (`ESC[?25l`).
    public static let hideCursor = bytes("\u{1B}[?25l")
    /// Show the cursor (`ESC[?25h`).
    public static let showCursor = bytes("\u{1B}[?25h")
    /// Report button presses, releases and drags (1002) in SGR coordinates (1006).
    public static let enableMouse = bytes("\u{1B}[?1002h\u{1B}[?1006h")
    /// Undo ``enableMouse``.
    public static let disableMouse = bytes("\u{1B}[?1006l\u{1B}[?1002l")
    /// Report focus in / out (`ESC[?1004h`) as `ESC[I` / `ESC[O`.
    public static let enableFocusReporting = bytes("\u{1B}[?1004h")
    /// Undo ``enableFocusReporting``.
    public static let disableFocusReporting = bytes("\u{1B}[?1004l")
    /// Begin a synchronized update (`ESC[?2026h`): the terminal holds drawing until the end.
    public static let beginSynchronizedUpdate = bytes("\u{1B}[?2026h")
    /// End a synchronized update (`ESC[?2026l`).
    public static let endSynchronizedUpdate = bytes("\u{1B}[?2026l")
    /// Ask whether synchronized output is supported (DECRQM `ESC[?2026$p`); a terminal
    /// that knows it answers `ESC[?2026;Ps$y` (see ``TerminalInputEvent/modeReport(mode:value:)``).
    public static let querySynchronizedOutput = bytes("\u{1B}[?2026$p")
    /// Ask for the kitty keyboard flags in effect (`ESC[?u`); a terminal that speaks the
    /// protocol answers `ESC[?flagsu` (see ``TerminalInputEvent/keyboardFlags(_:)``).
    public static let queryKeyboardFlags = bytes("\u{1B}[?u")
    /// Pop one entry off the kitty keyboard flags stack (`ESC[<1u`).
    public static let popKeyboardFlags = bytes("\u{1B}[<1u")
    /// Reset colours and attributes (`ESC[0m`).
    public static let resetAttributes = bytes("\u{1B}[0m")
    /// Clear the whole screen (`ESC[2J`).
    public static let clearScreen = bytes("\u{1B}[2J")

    /// Push kitty keyboard `flags` (`ESC[>flagsu`); undo with ``popKeyboardFlags``.
    public static func pushKeyboardFlags(_ flags: KittyKeyboardFlags = [.disambiguateEscapeCodes, .reportEventTypes]) -> [UInt8] {
        bytes("\u{1B}[>\(flags.rawValue)u")
    }

    /// Move the cursor to 0-based screen `column`, `row` (`ESC[row+1;column+1H`).
    public static func moveCursor(column: Int, row: Int) -> [UInt8] {
        bytes("\u{1B}[\(row + 1);\(column + 1)H")
    }

    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
}

/// The kitty keyboard protocol's progressive enhancement flags.
public struct KittyKeyboardFlags: OptionSet, Sendable, Hashable {
    /// The flags as the protocol numbers them.
    public let rawValue: Int
    /// Creates flags from their numeric value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Escape, and keys with modifiers, arrive as unambiguous `CSI … u` sequences.
    public static let disambiguateEscapeCodes = KittyKeyboardFlags(rawValue: 1)
    /// Repeat and release events are reported (`:2` and `:3` after the modifiers).
    public static let reportEventTypes = KittyKeyboardFlags(rawValue: 2)
    /// Shifted and base-layout keys are reported too.
    public static let reportAlternateKeys = KittyKeyboardFlags(rawValue: 4)
    /// Every key, including Enter, Tab and Backspace, arrives as an escape code.
    public static let reportAllKeysAsEscapeCodes = KittyKeyboardFlags(rawValue: 8)
    /// The text a key produces is reported with it.
    public static let reportAssociatedText = KittyKeyboardFlags(rawValue: 16)
}
