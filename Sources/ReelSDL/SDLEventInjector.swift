internal import CSDL2

/// Puts synthetic input into SDL's event queue (`SDL_PushEvent`), so tests and scripted
/// demos drive the window through the same path as a real mouse and keyboard.
/// Positions are in window coordinates (points).
public enum SDLEventInjector {
    public enum Key: Sendable {
        case space, f, m, h, c, escape, q, left, right, up, down, j, k, slash, enter, backspace, tab, f1, f2, f3
    }

    public static func mouseDown(x: Int, y: Int, clicks: Int = 1) { mouseButton(SDL_MOUSEBUTTONDOWN, x: x, y: y, clicks: clicks) }
    public static func mouseUp(x: Int, y: Int, clicks: Int = 1) { mouseButton(SDL_MOUSEBUTTONUP, x: x, y: y, clicks: clicks) }

    public static func mouseMove(x: Int, y: Int, buttonHeld: Bool = true) {
        var event = SDL_Event()
        event.motion.type = SDL_MOUSEMOTION.rawValue
        event.motion.windowID = focusedWindowID
        event.motion.x = Int32(x)
        event.motion.y = Int32(y)
        event.motion.state = buttonHeld ? 1 : 0
        SDL_PushEvent(&event)
    }

    public static func wheel(dy: Int) {
        var event = SDL_Event()
        event.wheel.type = SDL_MOUSEWHEEL.rawValue
        event.wheel.windowID = focusedWindowID
        event.wheel.y = Int32(dy)
        SDL_PushEvent(&event)
    }

    public static func keyDown(_ key: Key, isRepeat: Bool = false) { keyEvent(SDL_KEYDOWN, key, isRepeat: isRepeat) }
    public static func keyUp(_ key: Key) { keyEvent(SDL_KEYUP, key, isRepeat: false) }

    /// Text typed (as from an IME commit): `SDL_TEXTINPUT`, at most 31 bytes of UTF-8 per event.
    public static func text(_ string: String) {
        var chunk: [UInt8] = []
        func flush() {
            guard !chunk.isEmpty else { return }
            var event = SDL_Event()
            event.text.type = SDL_TEXTINPUT.rawValue
            event.text.windowID = focusedWindowID
            withUnsafeMutableBytes(of: &event.text.text) { raw in
                for (i, byte) in chunk.enumerated() { raw[i] = byte }
                raw[chunk.count] = 0
            }
            SDL_PushEvent(&event)
            chunk = []
        }
        for character in string {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 31 { flush() }
            chunk += bytes
        }
        flush()
    }

    /// An IME's uncommitted composition (`SDL_TEXTEDITING`, at most 31 bytes of UTF-8).
    public static func composition(_ string: String) {
        var event = SDL_Event()
        event.edit.type = SDL_TEXTEDITING.rawValue
        event.edit.windowID = focusedWindowID
        var bytes: [UInt8] = []
        for character in string {
            let utf8 = Array(String(character).utf8)
            if bytes.count + utf8.count > 31 { break }
            bytes += utf8
        }
        withUnsafeMutableBytes(of: &event.edit.text) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
            raw[bytes.count] = 0
        }
        event.edit.length = Int32(string.count)
        SDL_PushEvent(&event)
    }

    /// Moves the display's real pointer to its top-left corner, away from a centred window.
    /// A window that opens under the pointer gets the pointer's real position as a motion
    /// event, which would land between synthetic ones and move a scrub or a drag.
    public static func parkPointer() {
        SDL_WarpMouseGlobal(0, 0)
    }

    /// A file dropped on the window (`SDL_DROPFILE`; SDL's receiver frees the copy).
    public static func dropFile(_ path: String) {
        var event = SDL_Event()
        event.drop.type = SDL_DROPFILE.rawValue
        event.drop.windowID = focusedWindowID
        event.drop.file = SDL_strdup(path)
        SDL_PushEvent(&event)
    }

    public static func quit() {
        var event = SDL_Event()
        event.type = SDL_QUIT.rawValue
        SDL_PushEvent(&event)
    }

    private static var focusedWindowID: UInt32 {
        SDL_GetKeyboardFocus().map { SDL_GetWindowID($0) } ?? 0
    }

    private static func mouseButton(_ type: SDL_EventType, x: Int, y: Int, clicks: Int) {
        var event = SDL_Event()
        event.button.type = type.rawValue
        event.button.windowID = focusedWindowID
        event.button.button = UInt8(SDL_BUTTON_LEFT)
        event.button.state = UInt8(type == SDL_MOUSEBUTTONDOWN ? SDL_PRESSED : SDL_RELEASED)
        event.button.clicks = UInt8(clicks)
        event.button.x = Int32(x)
        event.button.y = Int32(y)
        SDL_PushEvent(&event)
    }

    private static func keyEvent(_ type: SDL_EventType, _ key: Key, isRepeat: Bool) {
        var event = SDL_Event()
        event.key.type = type.rawValue
        event.key.windowID = focusedWindowID
        event.key.state = UInt8(type == SDL_KEYDOWN ? SDL_PRESSED : SDL_RELEASED)
        event.key.repeat = isRepeat ? 1 : 0
        event.key.keysym.sym = keycode(key)
        SDL_PushEvent(&event)
    }

    static func keycode(_ key: Key) -> Int32 {
        switch key {
        case .space: Int32(SDLK_SPACE.rawValue)
        case .f: Int32(SDLK_f.rawValue)
        case .m: Int32(SDLK_m.rawValue)
        case .h: Int32(SDLK_h.rawValue)
        case .c: Int32(SDLK_c.rawValue)
        case .escape: Int32(SDLK_ESCAPE.rawValue)
        case .q: Int32(SDLK_q.rawValue)
        case .left: Int32(SDLK_LEFT.rawValue)
        case .right: Int32(SDLK_RIGHT.rawValue)
        case .up: Int32(SDLK_UP.rawValue)
        case .down: Int32(SDLK_DOWN.rawValue)
        case .j: Int32(SDLK_j.rawValue)
        case .k: Int32(SDLK_k.rawValue)
        case .slash: Int32(SDLK_SLASH.rawValue)
        case .enter: Int32(SDLK_RETURN.rawValue)
        case .backspace: Int32(SDLK_BACKSPACE.rawValue)
        case .tab: Int32(SDLK_TAB.rawValue)
        case .f1: Int32(SDLK_F1.rawValue)
        case .f2: Int32(SDLK_F2.rawValue)
        case .f3: Int32(SDLK_F3.rawValue)
        }
    }
}
