import Foundation
import ReelCore
internal import CSDL2

/// An SDL window with its renderer: starts SDL's video subsystem only (the audio subsystem
/// is someone else's), opens a resizable HiDPI-aware window and picks OpenGL or
/// SDL_Renderer; closes all of it in `deinit`.
///
/// Confined to the thread that creates it (``confinement``): every member but
/// ``makeWaker()``'s closure checks it, and so do the renderers and the text rasterizer.
final class SDLWindowHost {
    // Immutable after init.
    /// The thread the window, its GL context and SDL's video subsystem belong to.
    let confinement: ThreadConfinement
    let window: OpaquePointer
    let text: TextRasterizer
    /// The event type SDL assigned for "a frame arrived" wake-ups.
    let wakeEventType: UInt32

    // Owner thread only.
    private var installed: (any WindowRenderer)?
    private var windowedFrame: (x: Int, y: Int, width: Int, height: Int)?
    private var fullscreen = false

    var renderer: any WindowRenderer {
        confinement.check("renderer")
        return installed!
    }

    init(title: String, width: Int, height: Int, renderer kind: RendererKind, allowFallback: Bool) throws {
        confinement = ThreadConfinement("the SDL window")
        if SDL_InitSubSystem(SDL_INIT_VIDEO) != 0 {
            throw WindowError.sdl("SDL_InitSubSystem(video): \(String(cString: SDL_GetError()))")
        }
        var opened: OpaquePointer?
        var chosen: (any WindowRenderer)?
        do {
            text = try TextRasterizer()
            if kind == .gl {
                do {
                    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3)
                    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3)
                    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, Int32(SDL_GL_CONTEXT_PROFILE_CORE.rawValue))
                    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1)
                    opened = try Self.openWindow(title: title, width: width, height: height, gl: true)
                    chosen = try GLRenderer(window: opened!, text: text)
                } catch {
                    if let w = opened { SDL_DestroyWindow(w); opened = nil }
                    guard allowFallback else { throw error }
                    FileHandle.standardError.write(Data("reel: OpenGL unavailable (\(error)); using the software renderer\n".utf8))
                }
            }
            if chosen == nil {
                opened = try Self.openWindow(title: title, width: width, height: height, gl: false)
                chosen = try SoftwareRenderer(window: opened!, text: text)
            }
        } catch {
            if let opened { SDL_DestroyWindow(opened) }
            SDL_QuitSubSystem(SDL_INIT_VIDEO)
            throw error
        }
        window = opened!
        installed = chosen!
        wakeEventType = SDL_RegisterEvents(1)
    }

    private static func openWindow(title: String, width: Int, height: Int, gl: Bool) throws -> OpaquePointer {
        var flags = SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_ALLOW_HIGHDPI.rawValue
        if gl { flags |= SDL_WINDOW_OPENGL.rawValue }
        let centered = Int32(bitPattern: reel_sdl_windowpos_centered())
        guard let window = SDL_CreateWindow(title, centered, centered, Int32(width), Int32(height), flags) else {
            throw WindowError.sdl("SDL_CreateWindow: \(String(cString: SDL_GetError()))")
        }
        return window
    }

    deinit {
        confinement.check("close")
        // The renderer (GL context, SDL_Renderer) goes before its window.
        installed = nil
        SDL_DestroyWindow(window)
        SDL_QuitSubSystem(SDL_INIT_VIDEO)
    }

    /// The window's size in points.
    var windowSize: (width: Int, height: Int) {
        confinement.check("windowSize")
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetWindowSize(window, &w, &h)
        return (Int(w), Int(h))
    }

    /// Drawable pixels per window point (2 on a HiDPI display).
    var pixelScale: (x: Double, y: Double) {
        let d = renderer.drawableSize, w = windowSize
        guard w.width > 0, w.height > 0, d.width > 0 else { return (1, 1) }
        return (Double(d.width) / Double(w.width), Double(d.height) / Double(w.height))
    }

    /// Fullscreen as a borderless window covering the display: it behaves the same with or
    /// without a window manager (SDL's desktop fullscreen relies on the WM to resize the
    /// window, and under a bare X server such as Xvfb the window would keep its size).
    func setFullscreen(_ on: Bool) {
        confinement.check("setFullscreen")
        guard on != fullscreen else { return }
        if on {
            var x: Int32 = 0, y: Int32 = 0
            SDL_GetWindowPosition(window, &x, &y)
            windowedFrame = (Int(x), Int(y), windowSize.width, windowSize.height)
            var bounds = SDL_Rect()
            SDL_GetDisplayBounds(max(0, SDL_GetWindowDisplayIndex(window)), &bounds)
            SDL_SetWindowBordered(window, SDL_FALSE)
            SDL_SetWindowPosition(window, bounds.x, bounds.y)
            SDL_SetWindowSize(window, bounds.w, bounds.h)
            SDL_RaiseWindow(window)
        } else if let frame = windowedFrame {
            SDL_SetWindowBordered(window, SDL_TRUE)
            SDL_SetWindowSize(window, Int32(frame.width), Int32(frame.height))
            SDL_SetWindowPosition(window, Int32(frame.x), Int32(frame.y))
        }
        fullscreen = on
    }

    var isFullscreen: Bool {
        confinement.check("isFullscreen")
        return fullscreen
    }

    /// Whether the calling thread owns the window.
    var isOnOwnerThread: Bool { confinement.isOnOwnerThread }

    /// A closure any thread may call to wake `SDL_WaitEvent` (`SDL_PushEvent` is the one
    /// SDL event call documented as thread-safe).
    func makeWaker() -> @Sendable () -> Void {
        let type = wakeEventType
        return {
            var event = SDL_Event()
            event.type = type
            SDL_PushEvent(&event)
        }
    }
}

/// Input decoded from an SDL event, in drawable pixels.
enum HostInput {
    case pointerDown(x: Double, y: Double, clicks: Int)
    case pointerMove(x: Double, y: Double, pressed: Bool)
    case pointerUp(x: Double, y: Double)
    case pointerLeave
    case wheel(dy: Double)
    case keyDown(keycode: Int32, isRepeat: Bool)
    case keyUp(keycode: Int32)
    case textInput(String)
    case textEditing(String)
    /// A file dropped on the window (SDL_DROPFILE): its path.
    case drop(String)
    case resized
    case wake
    case quit
}

extension SDLWindowHost {
    /// Waits up to `timeoutMs` for the first event, then drains the queue.
    func events(waitMs timeoutMs: Int) -> [HostInput] {
        confinement.check("events")
        var event = SDL_Event()
        var out: [HostInput] = []
        var got = timeoutMs > 0 ? SDL_WaitEventTimeout(&event, Int32(timeoutMs)) : SDL_PollEvent(&event)
        while got != 0 {
            if let input = decode(event) { out.append(input) }
            got = SDL_PollEvent(&event)
        }
        return out
    }

    private func decode(_ event: SDL_Event) -> HostInput? {
        let scale = pixelScale
        switch event.type {
        case SDL_QUIT.rawValue: return .quit
        case wakeEventType: return .wake
        case SDL_MOUSEBUTTONDOWN.rawValue where event.button.button == UInt8(SDL_BUTTON_LEFT):
            return .pointerDown(x: Double(event.button.x) * scale.x, y: Double(event.button.y) * scale.y, clicks: Int(event.button.clicks))
        case SDL_MOUSEBUTTONUP.rawValue where event.button.button == UInt8(SDL_BUTTON_LEFT):
            return .pointerUp(x: Double(event.button.x) * scale.x, y: Double(event.button.y) * scale.y)
        case SDL_MOUSEMOTION.rawValue:
            return .pointerMove(x: Double(event.motion.x) * scale.x, y: Double(event.motion.y) * scale.y, pressed: event.motion.state & 1 != 0)
        case SDL_MOUSEWHEEL.rawValue:
            return .wheel(dy: Double(event.wheel.y))
        case SDL_KEYDOWN.rawValue:
            return .keyDown(keycode: event.key.keysym.sym, isRepeat: event.key.repeat != 0)
        case SDL_KEYUP.rawValue:
            return .keyUp(keycode: event.key.keysym.sym)
        case SDL_TEXTINPUT.rawValue:
            var copy = event.text.text
            return .textInput(withUnsafeBytes(of: &copy) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) })
        case SDL_TEXTEDITING.rawValue:
            var copy = event.edit.text
            return .textEditing(withUnsafeBytes(of: &copy) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) })
        case SDL_DROPFILE.rawValue:
            guard let file = event.drop.file else { return nil }
            defer { SDL_free(file) }
            return .drop(String(cString: file))
        case SDL_WINDOWEVENT.rawValue:
            switch UInt32(event.window.event) {
            case SDL_WINDOWEVENT_LEAVE.rawValue: return .pointerLeave
            case SDL_WINDOWEVENT_SIZE_CHANGED.rawValue, SDL_WINDOWEVENT_RESIZED.rawValue, SDL_WINDOWEVENT_EXPOSED.rawValue: return .resized
            default: return nil
            }
        default: return nil
        }
    }

    /// Starts SDL text input (IME included); `rect` tells the IME where the field is.
    func startTextInput(rect: UIRect) {
        confinement.check("startTextInput")
        let scale = pixelScale
        var r = SDL_Rect(x: Int32(rect.x / scale.x), y: Int32(rect.y / scale.y), w: Int32(rect.width / scale.x), h: Int32(rect.height / scale.y))
        SDL_SetTextInputRect(&r)
        SDL_StartTextInput()
    }
    func stopTextInput() {
        confinement.check("stopTextInput")
        SDL_StopTextInput()
    }

    static func key(_ keycode: Int32) -> PlaybackViewModel.Key {
        switch keycode {
        case SDLEventInjector.keycode(.space): .space
        case SDLEventInjector.keycode(.f): .f
        case SDLEventInjector.keycode(.m): .m
        case SDLEventInjector.keycode(.h): .h
        case SDLEventInjector.keycode(.c): .c
        case SDLEventInjector.keycode(.escape): .escape
        case SDLEventInjector.keycode(.q): .q
        case SDLEventInjector.keycode(.left): .left
        case SDLEventInjector.keycode(.right): .right
        case SDLEventInjector.keycode(.up): .up
        case SDLEventInjector.keycode(.down): .down
        default: .other
        }
    }
}
