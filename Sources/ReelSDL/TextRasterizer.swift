import Foundation
import ReelMedia
internal import CSDL2

/// White text with coverage in alpha, as RGBA bytes (R, G, B, A per pixel, no padding).
struct TextImage {
    let width: Int
    let height: Int
    let rgba: [UInt8]
}

/// Renders lines of text through SDL2_ttf with a CJK-capable font found through
/// fontconfig; one `TTF_Font` per pixel size, results cached by (text, size).
///
/// Belongs to its window's thread (SDL_ttf is not thread-safe): every path into SDL_ttf
/// checks it.
final class TextRasterizer {
    // Immutable after init.
    let fontPath: String
    private let confinement = ThreadConfinement("the text rasterizer")

    // Owner thread only.
    private var fonts: [Int: OpaquePointer] = [:]
    private var cache: [String: TextImage] = [:]
    private var order: [String] = []
    private let cacheLimit = 256

    /// The font file fontconfig picks for Chinese sans text, else any default font.
    static func locateFont() -> String? {
        if let env = ProcessInfo.processInfo.environment["REEL_FONT"], FileManager.default.fileExists(atPath: env) { return env }
        for pattern in ["sans:lang=zh-cn", ":lang=zh"] {
            if let path = FontLocator.match(pattern), FileManager.default.fileExists(atPath: path) { return path }
        }
        return FontLocator.defaultFontPath()
    }

    init() throws {
        guard let path = Self.locateFont() else { throw WindowError.font("no font found through fontconfig (install fonts-wqy-microhei)") }
        if TTF_WasInit() == 0, TTF_Init() != 0 {
            throw WindowError.font("TTF_Init: \(String(cString: SDL_GetError()))")
        }
        fontPath = path
    }

    deinit {
        confinement.check("close the fonts")
        for font in fonts.values { TTF_CloseFont(font) }
        TTF_Quit()
    }

    private func font(size: Int) -> OpaquePointer? {
        confinement.check("font")
        let size = max(6, min(size, 200))
        if let font = fonts[size] { return font }
        guard let font = TTF_OpenFont(fontPath, Int32(size)) else { return nil }
        fonts[size] = font
        return font
    }

    /// Width of `text` at `size` in pixels.
    func width(of text: String, size: Int) -> Int {
        guard let font = font(size: size) else { return 0 }
        var w: Int32 = 0, h: Int32 = 0
        TTF_SizeUTF8(font, text, &w, &h)
        return Int(w)
    }

    /// `text` cut with an ellipsis so that it fits `maxWidth` pixels.
    func fit(_ text: String, size: Int, maxWidth: Double?) -> String {
        guard let maxWidth, width(of: text, size: size) > Int(maxWidth) else { return text }
        var characters = Array(text)
        while !characters.isEmpty {
            characters.removeLast()
            let candidate = String(characters) + "…"
            if width(of: candidate, size: size) <= Int(maxWidth) { return candidate }
        }
        return ""
    }

    /// The rendered text, cached.
    func render(_ text: String, size: Int) -> TextImage? {
        confinement.check("render")
        let key = "\(size)\u{1}\(text)"
        if let hit = cache[key] { return hit }
        guard !text.isEmpty, let font = font(size: size) else { return nil }
        let white = SDL_Color(r: 255, g: 255, b: 255, a: 255)
        guard let surface = TTF_RenderUTF8_Blended(font, text, white) else { return nil }
        defer { SDL_FreeSurface(surface) }
        guard let converted = SDL_ConvertSurfaceFormat(surface, SDL_PIXELFORMAT_ABGR8888.rawValue, 0) else { return nil }
        defer { SDL_FreeSurface(converted) }
        let w = Int(converted.pointee.w), h = Int(converted.pointee.h), pitch = Int(converted.pointee.pitch)
        var bytes = [UInt8](repeating: 0, count: w * h * 4)
        SDL_LockSurface(converted)
        if let pixels = converted.pointee.pixels {
            let source = pixels.assumingMemoryBound(to: UInt8.self)
            bytes.withUnsafeMutableBufferPointer { out in
                for row in 0..<h {
                    (out.baseAddress! + row * w * 4).update(from: source + row * pitch, count: w * 4)
                }
            }
        }
        SDL_UnlockSurface(converted)
        let image = TextImage(width: w, height: h, rgba: bytes)
        cache[key] = image
        order.append(key)
        if order.count > cacheLimit {
            cache[order.removeFirst()] = nil
        }
        return image
    }

    /// Top-left of a `width` × `height` box placed at `point` by `anchor`.
    static func origin(point: (x: Double, y: Double), width: Int, height: Int, anchor: TextAnchor) -> (x: Double, y: Double) {
        let w = Double(width), h = Double(height)
        switch anchor {
        case .topLeft: return (point.x, point.y)
        case .topCenter: return (point.x - w / 2, point.y)
        case .topRight: return (point.x - w, point.y)
        case .centerLeft: return (point.x, point.y - h / 2)
        case .center: return (point.x - w / 2, point.y - h / 2)
        case .centerRight: return (point.x - w, point.y - h / 2)
        case .bottomLeft: return (point.x, point.y - h)
        case .bottomCenter: return (point.x - w / 2, point.y - h)
        case .bottomRight: return (point.x - w, point.y - h)
        }
    }
}
