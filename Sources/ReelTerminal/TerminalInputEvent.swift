/// Something the terminal reported: a key, a mouse action, a focus change, or a reply to
/// a query.
public enum TerminalInputEvent: Sendable, Hashable {
    /// A key was pressed, repeated or released.
    case key(TerminalKeyEvent)
    /// A mouse button, drag or wheel action (SGR 1006 reporting).
    case mouse(TerminalMouseEvent)
    /// The terminal window gained (`true`) or lost (`false`) focus.
    case focus(Bool)
    /// The kitty keyboard flags in effect, the reply to ``TerminalControl/queryKeyboardFlags``.
    /// Any reply at all means the terminal speaks the protocol.
    case keyboardFlags(KittyKeyboardFlags)
    /// A DECRPM reply (`ESC[?mode;value$y`), such as the answer to
    /// ``TerminalControl/querySynchronizedOutput``: value 1 or 2 means supported, 0 or 4 not.
    case modeReport(mode: Int, value: Int)
    /// A kitty graphics protocol reply (`ESC_Gi=id;message ESC\`), such as the answer to
    /// ``TerminalGraphicsQueries/kittyGraphics``: `OK`, or an error code and its text.
    case kittyGraphicsReply(id: Int, message: String)
    /// The primary device attributes (DA1, `ESC[?62;4;…c`), the reply to
    /// ``TerminalGraphicsQueries/primaryDeviceAttributes``; attribute 4 is sixel graphics.
    case deviceAttributes([Int])
    /// An XTSMGRAPHICS reply (`ESC[?item;status;values…S`): item 1 colour registers,
    /// 2 the sixel geometry (width;height in pixels); status 0 is success.
    case graphicsAttribute(item: Int, status: Int, values: [Int])
    /// A window-ops pixel size report: `ESC[6;h;wt` (one cell, `cell` true) or
    /// `ESC[4;h;wt` (the text area).
    case pixelSize(cell: Bool, width: Int, height: Int)
}

/// A key event.
public struct TerminalKeyEvent: Sendable, Hashable {
    /// Whether the key went down, auto-repeated or came up.
    public enum Kind: Sendable, Hashable {
        /// The key went down. Legacy terminals report every auto-repeat as a press too.
        case press
        /// The key is held and auto-repeated (kitty protocol only).
        case `repeat`
        /// The key came up (kitty protocol only).
        case release
    }

    /// Which key.
    public var key: TerminalKey
    /// Modifiers held with it.
    public var modifiers: TerminalModifiers
    /// Press, repeat or release.
    public var kind: Kind

    /// Creates a key event.
    public init(_ key: TerminalKey, modifiers: TerminalModifiers = [], kind: Kind = .press) {
        self.key = key
        self.modifiers = modifiers
        self.kind = kind
    }
}

/// A key on the keyboard.
public enum TerminalKey: Sendable, Hashable {
    /// A key that types text, including space; with Ctrl held (Ctrl-C is
    /// `.character("c")` with ``TerminalModifiers/control``) the character is the
    /// unshifted lower-case letter.
    case character(Character)
    /// ↑
    case up
    /// ↓
    case down
    /// ←
    case left
    /// →
    case right
    /// Return / Enter.
    case enter
    /// Escape.
    case escape
    /// Tab (Shift-Tab is `.tab` with ``TerminalModifiers/shift``).
    case tab
    /// Backspace.
    case backspace
    /// Home.
    case home
    /// End.
    case end
    /// Page Up.
    case pageUp
    /// Page Down.
    case pageDown
    /// Insert.
    case insert
    /// Delete (forward).
    case delete
    /// A function key, F1…F12.
    case function(Int)
}

/// Modifier keys, as the terminal encodes them (the protocol value minus one).
public struct TerminalModifiers: OptionSet, Sendable, Hashable {
    /// The bits as the protocols number them (their modifier value minus one).
    public let rawValue: Int
    /// Creates modifiers from their bit value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Shift.
    public static let shift = TerminalModifiers(rawValue: 1)
    /// Alt / Option (Meta in the mouse protocol).
    public static let alt = TerminalModifiers(rawValue: 2)
    /// Control.
    public static let control = TerminalModifiers(rawValue: 4)
    /// Super / Command (kitty protocol only).
    public static let `super` = TerminalModifiers(rawValue: 8)
}

/// A mouse event at a 0-based screen cell.
public struct TerminalMouseEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// A button went down.
        case press(TerminalMouseButton)
        /// A button came up.
        case release(TerminalMouseButton)
        /// The pointer moved with a button held.
        case drag(TerminalMouseButton)
        /// The pointer moved with no button held (only with any-motion tracking, 1003).
        case move
        /// The wheel turned up (away from the user).
        case wheelUp
        /// The wheel turned down.
        case wheelDown
        /// The wheel or trackpad scrolled left.
        case wheelLeft
        /// The wheel or trackpad scrolled right.
        case wheelRight
    }

    /// What happened.
    public var kind: Kind
    /// 0-based column.
    public var column: Int
    /// 0-based row.
    public var row: Int
    /// Shift, Alt (Meta) and Control held with it.
    public var modifiers: TerminalModifiers

    /// Creates a mouse event.
    public init(_ kind: Kind, column: Int, row: Int, modifiers: TerminalModifiers = []) {
        self.kind = kind
        self.column = column
        self.row = row
        self.modifiers = modifiers
    }
}

/// A mouse button.
public enum TerminalMouseButton: Sendable, Hashable {
    /// The primary button.
    case left
    /// The wheel button.
    case middle
    /// The secondary button.
    case right
    /// Buttons 8 and up (back, forward, …), by their protocol number.
    case other(Int)
}
