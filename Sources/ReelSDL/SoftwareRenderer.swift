import Foundation
import ReelCore
import ReelMedia
internal import CSDL2

/// Draws the same ``DrawCommand`` list with SDL_Renderer in software, for machines
/// without OpenGL: frames go through libswscale (every matrix, range and bit depth the
/// frame declares) into an RGB texture; rounded corners come from an antialiased disc
/// texture; the backdrop is a tiny blurred copy stretched with linear filtering; captions
/// are blended on the CPU into one texture the size of their bounds.
///
/// Confined to the window's thread: every entry point checks it before calling SDL.
final class SoftwareRenderer: WindowRenderer {
    // Immutable after init.
    let name = "software"
    private let confinement = ThreadConfinement("the SDL renderer")
    private let renderer: OpaquePointer
    private let text: TextRasterizer
    private let scaler = FrameScaler(smooth: false)
    private let smallScaler = FrameScaler(smooth: true)

    // Owner thread only (the textures belong to the renderer).
    private var videoTexture: (texture: OpaquePointer, width: Int, height: Int)?
    private var videoKey: (ObjectIdentifier, Int, Int)?
    private var backdropTexture: (texture: OpaquePointer, width: Int, height: Int)?
    private var backdropKey: ObjectIdentifier?
    private var backdropImageKey: String?
    private var images: [String: OpaquePointer] = [:]
    private var texts: [String: (texture: OpaquePointer, width: Int, height: Int)] = [:]
    private var textOrder: [String] = []
    private var disc: OpaquePointer?
    /// The blended captions and what they were blended from.
    private var captionTexture: (texture: OpaquePointer, key: String, width: Int, height: Int)?
    private let discSize = 64

    init(window: OpaquePointer, text: TextRasterizer) throws {
        guard let renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue) else {
            throw WindowError.renderer("SDL_CreateRenderer: \(String(cString: SDL_GetError()))")
        }
        self.renderer = renderer
        self.text = text
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
    }

    deinit {
        confinement.check("destroy the renderer")
        for texture in images.values { SDL_DestroyTexture(texture) }
        for entry in texts.values { SDL_DestroyTexture(entry.texture) }
        if let videoTexture { SDL_DestroyTexture(videoTexture.texture) }
        if let backdropTexture { SDL_DestroyTexture(backdropTexture.texture) }
        if let disc { SDL_DestroyTexture(disc) }
        if let captionTexture { SDL_DestroyTexture(captionTexture.texture) }
        SDL_DestroyRenderer(renderer)
    }

    var drawableSize: (width: Int, height: Int) {
        confinement.check("drawableSize")
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &w, &h)
        return (Int(w), Int(h))
    }

    func draw(_ list: [DrawCommand]) {
        confinement.check("draw")
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
        SDL_RenderClear(renderer)
        for command in list {
            switch command {
            case .fill(let rect, let color, let radius): fill(rect, color: color, radius: radius)
            case .picture(let source, let rect): picture(source, rect: rect)
            case .backdrop(let source, let rect, let dim): backdrop(source, rect: rect, dim: dim)
            case .text(let string, let point, let size, let color, let anchor, let maxWidth):
                drawText(string, point: point, size: size, color: color, anchor: anchor, maxWidth: maxWidth)
            case .captions(let layer): captions(layer)
            }
        }
    }

    func readPixels() -> RGBImage {
        confinement.check("readPixels")
        let (w, h) = drawableSize
        var bytes = [UInt8](repeating: 0, count: w * h * 3)
        bytes.withUnsafeMutableBytes {
            _ = SDL_RenderReadPixels(renderer, nil, SDL_PIXELFORMAT_RGB24.rawValue, $0.baseAddress, Int32(w * 3))
        }
        return RGBImage(width: w, height: h, bytes: bytes)
    }

    func present() {
        confinement.check("present")
        SDL_RenderPresent(renderer)
    }

    // MARK: Shapes

    private func fill(_ rect: UIRect, color: UIColor, radius: Double) {
        guard rect.width > 0, rect.height > 0, color.a > 0 else { return }
        let r = min(radius, min(rect.width, rect.height) / 2).rounded()
        let rgba = (UInt8(color.r * 255), UInt8(color.g * 255), UInt8(color.b * 255), UInt8(color.a * 255))
        SDL_SetRenderDrawColor(renderer, rgba.0, rgba.1, rgba.2, rgba.3)
        if r < 1 {
            var f = SDL_FRect(x: Float(rect.x), y: Float(rect.y), w: Float(rect.width), h: Float(rect.height))
            SDL_RenderFillRectF(renderer, &f)
            return
        }
        // Middle column and the two side strips between the corners.
        var parts = [
            SDL_FRect(x: Float(rect.x + r), y: Float(rect.y), w: Float(rect.width - 2 * r), h: Float(rect.height)),
            SDL_FRect(x: Float(rect.x), y: Float(rect.y + r), w: Float(r), h: Float(rect.height - 2 * r)),
            SDL_FRect(x: Float(rect.maxX - r), y: Float(rect.y + r), w: Float(r), h: Float(rect.height - 2 * r)),
        ]
        for i in parts.indices where parts[i].w > 0 && parts[i].h > 0 { SDL_RenderFillRectF(renderer, &parts[i]) }
        guard let disc = discTexture() else { return }
        SDL_SetTextureColorMod(disc, rgba.0, rgba.1, rgba.2)
        SDL_SetTextureAlphaMod(disc, rgba.3)
        let half = Int32(discSize / 2)
        let corners: [(Int32, Int32, Double, Double)] = [
            (0, 0, rect.x, rect.y), (half, 0, rect.maxX - r, rect.y),
            (0, half, rect.x, rect.maxY - r), (half, half, rect.maxX - r, rect.maxY - r),
        ]
        for (sx, sy, dx, dy) in corners {
            var source = SDL_Rect(x: sx, y: sy, w: half, h: half)
            var destination = SDL_FRect(x: Float(dx), y: Float(dy), w: Float(r), h: Float(r))
            SDL_RenderCopyF(renderer, disc, &source, &destination)
        }
    }

    /// A white antialiased disc, alpha = coverage.
    private func discTexture() -> OpaquePointer? {
        if let disc { return disc }
        let n = discSize
        var bytes = [UInt8](repeating: 255, count: n * n * 4)
        let c = Double(n) / 2
        for y in 0..<n {
            for x in 0..<n {
                let d = ((Double(x) + 0.5 - c) * (Double(x) + 0.5 - c) + (Double(y) + 0.5 - c) * (Double(y) + 0.5 - c)).squareRoot() - c
                bytes[(y * n + x) * 4 + 3] = UInt8(max(0, min(1, 0.5 - d)) * 255)
            }
        }
        disc = makeTexture(rgba: bytes, width: n, height: n)
        if let disc { SDL_SetTextureScaleMode(disc, SDL_ScaleModeLinear) }
        return disc
    }

    private func makeTexture(rgba: [UInt8], width: Int, height: Int) -> OpaquePointer? {
        guard let texture = SDL_CreateTexture(renderer, SDL_PIXELFORMAT_ABGR8888.rawValue, Int32(SDL_TEXTUREACCESS_STATIC.rawValue), Int32(width), Int32(height)) else { return nil }
        rgba.withUnsafeBytes { _ = SDL_UpdateTexture(texture, nil, $0.baseAddress, Int32(width * 4)) }
        SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_BLEND)
        return texture
    }

    private func makeRGBTexture(_ image: RGBImage, access: SDL_TextureAccess = SDL_TEXTUREACCESS_STATIC) -> OpaquePointer? {
        guard image.width > 0, image.height > 0,
              let texture = SDL_CreateTexture(renderer, SDL_PIXELFORMAT_RGB24.rawValue, Int32(access.rawValue), Int32(image.width), Int32(image.height)) else { return nil }
        image.bytes.withUnsafeBytes { _ = SDL_UpdateTexture(texture, nil, $0.baseAddress, Int32(image.width * 3)) }
        return texture
    }

    // MARK: Pictures

    /// Copies `texture` so that, turned `rotation` degrees clockwise, it fills `rect`.
    private func copy(_ texture: OpaquePointer, into rect: UIRect, rotation: Int) {
        let quarter = ((rotation / 90) % 4 + 4) % 4
        if quarter == 0 {
            var d = SDL_FRect(x: Float(rect.x), y: Float(rect.y), w: Float(rect.width), h: Float(rect.height))
            SDL_RenderCopyF(renderer, texture, nil, &d)
            return
        }
        let (w, h) = quarter % 2 == 1 ? (rect.height, rect.width) : (rect.width, rect.height)
        var d = SDL_FRect(x: Float(rect.midX - w / 2), y: Float(rect.midY - h / 2), w: Float(w), h: Float(h))
        SDL_RenderCopyExF(renderer, texture, nil, &d, Double(quarter * 90), nil, SDL_FLIP_NONE)
    }

    private func picture(_ source: DrawSource, rect: UIRect) {
        switch source {
        case .frame(let frame):
            let quarter = ((frame.rotation / 90) % 4 + 4) % 4
            let w = max(1, Int((quarter % 2 == 1 ? rect.height : rect.width).rounded()))
            let h = max(1, Int((quarter % 2 == 1 ? rect.width : rect.height).rounded()))
            let key = (ObjectIdentifier(frame), w, h)
            if videoKey == nil || videoKey! != key {
                guard let image = try? scaler.rgb(frame, width: w, height: h) else { return }
                if let existing = videoTexture, existing.width == w, existing.height == h {
                    image.bytes.withUnsafeBytes { _ = SDL_UpdateTexture(existing.texture, nil, $0.baseAddress, Int32(w * 3)) }
                } else {
                    if let existing = videoTexture { SDL_DestroyTexture(existing.texture) }
                    videoTexture = makeRGBTexture(image, access: SDL_TEXTUREACCESS_STREAMING).map { ($0, w, h) }
                }
                videoKey = key
            }
            if let videoTexture { copy(videoTexture.texture, into: rect, rotation: frame.rotation) }
        case .image(let key, let image):
            if images[key] == nil {
                if images.count > 64, let old = images.first { SDL_DestroyTexture(old.value); images.removeValue(forKey: old.key) }
                images[key] = makeRGBTexture(image)
                if let texture = images[key] { SDL_SetTextureScaleMode(texture, SDL_ScaleModeLinear) }
            }
            if let texture = images[key] { copy(texture, into: rect, rotation: 0) }
        }
    }

    private func backdrop(_ source: DrawSource, rect: UIRect, dim: Double) {
        let rotation: Int
        let display: (Int, Int)
        switch source {
        case .frame(let frame):
            rotation = frame.rotation
            display = (frame.displayWidth, frame.displayHeight)
            if backdropKey != ObjectIdentifier(frame) {
                let small = Self.smallSize(width: frame.width, height: frame.height)
                guard let image = try? smallScaler.rgb(frame, width: small.0, height: small.1) else { return }
                setBackdrop(Self.blurred(image))
                backdropKey = ObjectIdentifier(frame)
                backdropImageKey = nil
            }
        case .image(let key, let image):
            rotation = 0
            display = (image.width, image.height)
            if backdropImageKey != key {
                let small = Self.smallSize(width: image.width, height: image.height)
                setBackdrop(Self.blurred(Self.downsample(image, width: small.0, height: small.1)))
                backdropImageKey = key
                backdropKey = nil
            }
        }
        guard let backdropTexture else { return }
        let level = UInt8((1 - dim) * 255)
        SDL_SetTextureColorMod(backdropTexture.texture, level, level, level)
        copy(backdropTexture.texture, into: rect.aspectFill(contentWidth: display.0, contentHeight: display.1), rotation: rotation)
    }

    private func setBackdrop(_ image: RGBImage) {
        if let existing = backdropTexture { SDL_DestroyTexture(existing.texture) }
        backdropTexture = makeRGBTexture(image).map { ($0, image.width, image.height) }
        if let backdropTexture { SDL_SetTextureScaleMode(backdropTexture.texture, SDL_ScaleModeLinear) }
    }

    static func smallSize(width: Int, height: Int) -> (Int, Int) {
        let longest = 32.0
        let scale = longest / Double(max(width, height, 1))
        return (max(2, Int(Double(width) * scale)), max(2, Int(Double(height) * scale)))
    }

    static func downsample(_ image: RGBImage, width: Int, height: Int) -> RGBImage {
        var out = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let sx = min(image.width - 1, x * image.width / width), sy = min(image.height - 1, y * image.height / height)
                for c in 0..<3 { out[(y * width + x) * 3 + c] = image.bytes[(sy * image.width + sx) * 3 + c] }
            }
        }
        return RGBImage(width: width, height: height, bytes: out)
    }

    /// Two box-blur passes each way (radius 2) over a tiny image.
    static func blurred(_ image: RGBImage) -> RGBImage {
        var pixels = image.bytes.map(Double.init)
        let w = image.width, h = image.height, radius = 2
        for _ in 0..<2 {
            for horizontal in [true, false] {
                var out = pixels
                for y in 0..<h {
                    for x in 0..<w {
                        for c in 0..<3 {
                            var sum = 0.0
                            for k in -radius...radius {
                                let sx = horizontal ? min(w - 1, max(0, x + k)) : x
                                let sy = horizontal ? y : min(h - 1, max(0, y + k))
                                sum += pixels[(sy * w + sx) * 3 + c]
                            }
                            out[(y * w + x) * 3 + c] = sum / Double(2 * radius + 1)
                        }
                    }
                }
                pixels = out
            }
        }
        return RGBImage(width: w, height: h, bytes: pixels.map { UInt8(max(0, min(255, $0.rounded()))) })
    }

    // MARK: Text

    private func drawText(_ string: String, point: (x: Double, y: Double), size: Double, color: UIColor,
                          anchor: TextAnchor, maxWidth: Double?) {
        let pixelSize = Int(size.rounded())
        let fitted = text.fit(string, size: pixelSize, maxWidth: maxWidth)
        let key = "\(pixelSize)\u{1}\(fitted)"
        if texts[key] == nil, let image = text.render(fitted, size: pixelSize),
           let texture = makeTexture(rgba: image.rgba, width: image.width, height: image.height) {
            texts[key] = (texture, image.width, image.height)
            textOrder.append(key)
            if textOrder.count > 128, let old = texts.removeValue(forKey: textOrder.removeFirst()) { SDL_DestroyTexture(old.texture) }
        }
        guard let entry = texts[key] else { return }
        SDL_SetTextureColorMod(entry.texture, UInt8(color.r * 255), UInt8(color.g * 255), UInt8(color.b * 255))
        SDL_SetTextureAlphaMod(entry.texture, UInt8(color.a * 255))
        let origin = TextRasterizer.origin(point: point, width: entry.width, height: entry.height, anchor: anchor)
        var d = SDL_FRect(x: Float(origin.x.rounded()), y: Float(origin.y.rounded()), w: Float(entry.width), h: Float(entry.height))
        SDL_RenderCopyF(renderer, entry.texture, nil, &d)
    }

    // MARK: Captions

    /// Blends the layer into a texture of its bounds (again only when the atlas or the
    /// pictures changed) and copies it with alpha blending.
    private func captions(_ layer: CaptionLayer) {
        guard let bounds = layer.bounds, bounds.width >= 1, bounds.height >= 1 else { return }
        let key = Self.captionKey(layer, bounds: bounds)
        if captionTexture?.key != key {
            let image = Self.composite(layer, in: bounds)
            if let old = captionTexture { SDL_DestroyTexture(old.texture) }
            captionTexture = makeTexture(rgba: image.rgba, width: image.width, height: image.height).map { ($0, key, image.width, image.height) }
        }
        guard let captionTexture else { return }
        var d = SDL_FRect(x: Float(bounds.x.rounded(.down)), y: Float(bounds.y.rounded(.down)),
                          w: Float(captionTexture.width), h: Float(captionTexture.height))
        SDL_RenderCopyF(renderer, captionTexture.texture, nil, &d)
    }

    /// What the blended texture depends on: the atlas, the pictures, and where each sits in the bounds.
    private static func captionKey(_ layer: CaptionLayer, bounds: UIRect) -> String {
        var key = "\(layer.atlas.generation):\(Int(bounds.width))x\(Int(bounds.height))"
        for picture in layer.pictures {
            key += "|\(picture.key)@\(Int(picture.rect.x - bounds.x)),\(Int(picture.rect.y - bounds.y)),\(Int(picture.rect.width))x\(Int(picture.rect.height))"
        }
        if let first = layer.quads.first { key += "|q\(Int(first.rect.x - bounds.x)),\(Int(first.rect.y - bounds.y))" }
        return key
    }

    /// The layer blended over transparency (pictures, then quads in order; "over" in
    /// premultiplied alpha), returned as straight-alpha RGBA the size of `bounds`.
    static func composite(_ layer: CaptionLayer, in bounds: UIRect) -> (rgba: [UInt8], width: Int, height: Int) {
        let ox = Int(bounds.x.rounded(.down)), oy = Int(bounds.y.rounded(.down))
        let width = max(1, Int(bounds.maxX.rounded(.up)) - ox), height = max(1, Int(bounds.maxY.rounded(.up)) - oy)
        // Premultiplied r, g, b, a in 0…1.
        var pixels = [Float](repeating: 0, count: width * height * 4)
        func blend(_ x: Int, _ y: Int, _ r: Float, _ g: Float, _ b: Float, _ a: Float) {
            guard a > 0, x >= 0, y >= 0, x < width, y < height else { return }
            let i = (y * width + x) * 4
            let keep = 1 - a
            pixels[i] = r * a + pixels[i] * keep
            pixels[i + 1] = g * a + pixels[i + 1] * keep
            pixels[i + 2] = b * a + pixels[i + 2] * keep
            pixels[i + 3] = a + pixels[i + 3] * keep
        }
        for picture in layer.pictures {
            let px = Int(picture.rect.x.rounded()) - ox, py = Int(picture.rect.y.rounded()) - oy
            let pw = Int(picture.rect.width.rounded()), ph = Int(picture.rect.height.rounded())
            guard pw > 0, ph > 0, picture.width > 0, picture.height > 0 else { continue }
            for y in 0..<ph {
                let sy = min(picture.height - 1, y * picture.height / ph)
                for x in 0..<pw {
                    let sx = min(picture.width - 1, x * picture.width / pw)
                    let s = (sy * picture.width + sx) * 4
                    blend(px + x, py + y, Float(picture.rgba[s]) / 255, Float(picture.rgba[s + 1]) / 255,
                          Float(picture.rgba[s + 2]) / 255, Float(picture.rgba[s + 3]) / 255)
                }
            }
        }
        let atlas = layer.atlas
        for quad in layer.quads where quad.color.a > 0 {
            let qx = Int(quad.rect.x.rounded()) - ox, qy = Int(quad.rect.y.rounded()) - oy
            let r = Float(quad.color.r), g = Float(quad.color.g), b = Float(quad.color.b), alpha = Float(quad.color.a)
            for row in 0..<quad.height where quad.atlasY + row < atlas.height {
                let base = (quad.atlasY + row) * atlas.width + quad.atlasX
                for column in 0..<quad.width where quad.atlasX + column < atlas.width {
                    let coverage = atlas.bytes[base + column]
                    if coverage == 0 { continue }
                    blend(qx + column, qy + row, r, g, b, alpha * Float(coverage) / 255)
                }
            }
        }
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        for i in 0..<(width * height) {
            let a = pixels[i * 4 + 3]
            guard a > 0 else { continue }
            for c in 0..<3 { rgba[i * 4 + c] = UInt8(max(0, min(255, (pixels[i * 4 + c] / a * 255).rounded()))) }
            rgba[i * 4 + 3] = UInt8(max(0, min(255, (a * 255).rounded())))
        }
        return (rgba, width, height)
    }
}
