import Foundation
import ReelCore
import ReelMedia
internal import CSDL2

/// Draws the window with OpenGL 3.3 core: YUV → RGB in a shader (planar and semi-planar,
/// 8 to 16 bits, BT.601/709/2020, limited or full range), the blurred backdrop through
/// two small framebuffers and a separable blur, the UI as SDF shapes and text textures, and
/// captions as libass's coverage bitmaps from one `GL_R8` atlas, each quad in its colour.
///
/// Confined to the thread that created the context (the window's): every entry point
/// checks it before touching GL.
final class GLRenderer: WindowRenderer {
    // Immutable after init.
    let name = "gl"
    private let confinement = ThreadConfinement("the GL context")
    private let window: OpaquePointer
    private let context: SDL_GLContext
    private let gl: GLFunctions
    private let text: TextRasterizer
    private var vao: UInt32 = 0
    private let yuvProgram: GLProgram
    private let blurProgram: GLProgram
    private let textureProgram: GLProgram
    private let shapeProgram: GLProgram
    private let captionProgram: GLProgram

    // Owner thread only (the GL objects live in the context).
    private var planeTextures: [UInt32] = [0, 0, 0]
    private var uploadedFrame: ObjectIdentifier?
    private var uploaded: VideoFrame?
    private let scaler = FrameScaler(smooth: false)
    /// HDR and wide-gamut frames' lookup table as a 3D texture.
    private let colorTable: GLColorTable
    private var images: [String: (texture: UInt32, width: Int, height: Int)] = [:]
    private var textTextures: [String: (texture: UInt32, width: Int, height: Int)] = [:]
    private var textOrder: [String] = []
    private var blurTargets: [(framebuffer: UInt32, texture: UInt32)] = []
    private var blurSize = (width: 0, height: 0)
    private var viewport = (width: 1, height: 1)
    /// The caption atlas texture and the generation it holds.
    private var captionAtlasTexture: UInt32 = 0
    private var captionAtlasGeneration: Int?
    private var captionPictures: [String: UInt32] = [:]

    /// How many times a caption atlas was uploaded (once per new atlas, not per draw).
    private(set) var captionAtlasUploads = 0

    /// The GL driver's renderer string (`llvmpipe …` under Xvfb).
    private(set) var driver = ""

    init(window: OpaquePointer, text: TextRasterizer) throws {
        self.window = window
        self.text = text
        guard let context = SDL_GL_CreateContext(window) else {
            throw WindowError.renderer("SDL_GL_CreateContext: \(String(cString: SDL_GetError()))")
        }
        self.context = context
        SDL_GL_MakeCurrent(window, context)
        // Vsync when the driver offers it (adaptive first).
        if SDL_GL_SetSwapInterval(-1) != 0 { SDL_GL_SetSwapInterval(1) }
        do {
            gl = try GLFunctions()
            yuvProgram = try GLProgram(gl, vertex: ShaderLibrary.quadVertex, fragment: ShaderLibrary.yuvFragment, name: "yuv")
            blurProgram = try GLProgram(gl, vertex: ShaderLibrary.quadVertex, fragment: ShaderLibrary.blurFragment, name: "blur")
            textureProgram = try GLProgram(gl, vertex: ShaderLibrary.quadVertex, fragment: ShaderLibrary.textureFragment, name: "texture")
            shapeProgram = try GLProgram(gl, vertex: ShaderLibrary.quadVertex, fragment: ShaderLibrary.shapeFragment, name: "shape")
            captionProgram = try GLProgram(gl, vertex: ShaderLibrary.quadVertex, fragment: ShaderLibrary.captionFragment, name: "caption")
        } catch {
            SDL_GL_DeleteContext(context)
            throw error
        }
        colorTable = GLColorTable(gl)
        if let s = gl.getString(UInt32(GL_RENDERER)) { driver = String(cString: s) }
        gl.genVertexArrays(1, &vao)
        gl.bindVertexArray(vao)
        planeTextures.withUnsafeMutableBufferPointer { gl.genTextures(3, $0.baseAddress) }
        for texture in planeTextures { configureTexture(texture, linear: true) }
    }

    deinit {
        confinement.check("delete the context")
        SDL_GL_MakeCurrent(window, context)
        var all = planeTextures + images.values.map(\.texture) + textTextures.values.map(\.texture) + blurTargets.map(\.texture)
            + Array(captionPictures.values) + (captionAtlasTexture != 0 ? [captionAtlasTexture] : [])
        gl.deleteTextures(Int32(all.count), &all)
        colorTable.delete()
        var framebuffers = blurTargets.map(\.framebuffer)
        if !framebuffers.isEmpty { gl.deleteFramebuffers(Int32(framebuffers.count), &framebuffers) }
        SDL_GL_DeleteContext(context)
    }

    var drawableSize: (width: Int, height: Int) {
        confinement.check("drawableSize")
        var w: Int32 = 0, h: Int32 = 0
        SDL_GL_GetDrawableSize(window, &w, &h)
        return (Int(w), Int(h))
    }

    // MARK: Drawing

    func draw(_ list: [DrawCommand]) {
        confinement.check("draw")
        SDL_GL_MakeCurrent(window, context)
        let size = drawableSize
        viewport = (max(1, size.width), max(1, size.height))
        bindTarget(0, width: viewport.width, height: viewport.height)
        gl.clearColor(0, 0, 0, 1)
        gl.clear(UInt32(GL_COLOR_BUFFER_BIT))
        gl.enable(UInt32(GL_BLEND))
        gl.blendFunc(UInt32(GL_SRC_ALPHA), UInt32(GL_ONE_MINUS_SRC_ALPHA))
        for command in list {
            switch command {
            case .fill(let rect, let color, let radius):
                drawShape(rect, color: color, radius: radius)
            case .picture(let source, let rect):
                drawSource(source, rect: rect, tint: (1, 1, 1, 1))
            case .backdrop(let source, let rect, let dim):
                drawBackdrop(source, rect: rect, dim: dim)
            case .text(let string, let point, let size, let color, let anchor, let maxWidth):
                drawText(string, point: point, size: size, color: color, anchor: anchor, maxWidth: maxWidth)
            case .captions(let layer):
                drawCaptions(layer)
            }
        }
    }

    func readPixels() -> RGBImage {
        confinement.check("readPixels")
        let (w, h) = viewport
        var bytes = [UInt8](repeating: 0, count: w * h * 3)
        gl.bindFramebuffer(UInt32(GL_FRAMEBUFFER), 0)
        gl.pixelStorei(UInt32(GL_PACK_ALIGNMENT), 1)
        bytes.withUnsafeMutableBytes { gl.readPixels(0, 0, Int32(w), Int32(h), UInt32(GL_RGB), UInt32(GL_UNSIGNED_BYTE), $0.baseAddress) }
        // GL rows go bottom-up.
        var flipped = [UInt8](repeating: 0, count: bytes.count)
        let row = w * 3
        for y in 0..<h {
            flipped[(y * row)..<((y + 1) * row)] = bytes[((h - 1 - y) * row)..<((h - y) * row)]
        }
        return RGBImage(width: w, height: h, bytes: flipped)
    }

    func present() {
        confinement.check("present")
        SDL_GL_SwapWindow(window)
    }

    private func bindTarget(_ framebuffer: UInt32, width: Int, height: Int) {
        gl.bindFramebuffer(UInt32(GL_FRAMEBUFFER), framebuffer)
        gl.viewport(0, 0, Int32(width), Int32(height))
    }

    private func setQuad(_ program: GLProgram, rect: UIRect, target: (width: Int, height: Int),
                         texRect: (Float, Float, Float, Float) = (0, 0, 1, 1), rotation: Int = 0) {
        gl.uniform2f(program["uViewport"], Float(target.width), Float(target.height))
        gl.uniform4f(program["uRect"], Float(rect.x), Float(rect.y), Float(rect.width), Float(rect.height))
        gl.uniform4f(program["uTexRect"], texRect.0, texRect.1, texRect.2, texRect.3)
        gl.uniform1i(program["uRotation"], Int32(((rotation / 90) % 4 + 4) % 4))
    }

    private func drawQuad() {
        gl.drawArrays(UInt32(GL_TRIANGLE_STRIP), 0, 4)
    }

    private func drawShape(_ rect: UIRect, color: UIColor, radius: Double) {
        guard rect.width > 0, rect.height > 0, color.a > 0 else { return }
        gl.useProgram(shapeProgram.id)
        setQuad(shapeProgram, rect: rect, target: viewport)
        gl.uniform4f(shapeProgram["uColor"], Float(color.r), Float(color.g), Float(color.b), Float(color.a))
        gl.uniform2f(shapeProgram["uSize"], Float(rect.width), Float(rect.height))
        gl.uniform1f(shapeProgram["uRadius"], Float(radius))
        drawQuad()
    }

    /// Draws a frame (YUV program) or an image (texture program) into `rect` of the bound target.
    private func drawSource(_ source: DrawSource, rect: UIRect, tint: (Float, Float, Float, Float),
                            target: (width: Int, height: Int)? = nil) {
        let target = target ?? viewport
        switch source {
        case .frame(let frame):
            guard let prepared = upload(frame) else { return }
            gl.useProgram(yuvProgram.id)
            setQuad(yuvProgram, rect: rect, target: target, rotation: frame.rotation)
            let format = prepared.pixelFormat
            let depth = FrameUpload.effectiveBitDepth(format)
            let conversion = YUVToRGB(matrix: prepared.colorMatrix, range: prepared.colorRange, bitDepth: depth,
                                      storageBits: format.bitDepth > 8 ? 16 : 8)
            conversion.matrix.withUnsafeBufferPointer { gl.uniformMatrix3fv(yuvProgram["uColor"], 1, 0, $0.baseAddress) }
            gl.uniform3f(yuvProgram["uOffset"], conversion.offset[0], conversion.offset[1], conversion.offset[2])
            gl.uniform1i(yuvProgram["uSemiPlanar"], format.isSemiPlanar ? 1 : 0)
            let chroma = chromaOffset(prepared)
            gl.uniform2f(yuvProgram["uChromaOffset"], chroma.x, chroma.y)
            colorTable.bind(yuvProgram)
            for (i, name) in ["uPlaneY", "uPlaneU", "uPlaneV"].enumerated() {
                gl.activeTexture(UInt32(GL_TEXTURE0) + UInt32(i))
                gl.bindTexture(UInt32(GL_TEXTURE_2D), planeTextures[i])
                gl.uniform1i(yuvProgram[name], Int32(i))
            }
            gl.activeTexture(UInt32(GL_TEXTURE0))
            drawQuad()
        case .image(let key, let image):
            guard let texture = imageTexture(key: key, image: image) else { return }
            drawTexture(texture, rect: rect, tint: tint, target: target)
        }
    }

    private func drawTexture(_ texture: UInt32, rect: UIRect, tint: (Float, Float, Float, Float),
                             target: (width: Int, height: Int)) {
        gl.useProgram(textureProgram.id)
        setQuad(textureProgram, rect: rect, target: target)
        gl.activeTexture(UInt32(GL_TEXTURE0))
        gl.bindTexture(UInt32(GL_TEXTURE_2D), texture)
        gl.uniform1i(textureProgram["uTexture"], 0)
        gl.uniform4f(textureProgram["uTint"], tint.0, tint.1, tint.2, tint.3)
        drawQuad()
    }

    /// Aspect-fill the source into a small framebuffer, blur it twice each way, then draw it
    /// darkened over `rect`.
    private func drawBackdrop(_ source: DrawSource, rect: UIRect, dim: Double) {
        let small = (width: max(8, Int(rect.width / 10)), height: max(8, Int(rect.height / 10)))
        ensureBlurTargets(small)
        let (contentW, contentH): (Int, Int)
        switch source {
        case .frame(let frame): (contentW, contentH) = (frame.displayWidth, frame.displayHeight)
        case .image(_, let image): (contentW, contentH) = (image.width, image.height)
        }
        let target = UIRect(x: 0, y: 0, width: Double(small.width), height: Double(small.height))
        let fill = target.aspectFill(contentWidth: contentW, contentHeight: contentH)
        gl.disable(UInt32(GL_BLEND))
        bindTarget(blurTargets[0].framebuffer, width: small.width, height: small.height)
        drawSource(source, rect: fill, tint: (1, 1, 1, 1), target: small)
        gl.useProgram(blurProgram.id)
        for _ in 0..<2 {
            for (from, to, step) in [(0, 1, (1.0 / Float(small.width), Float(0))), (1, 0, (Float(0), 1.0 / Float(small.height)))] {
                bindTarget(blurTargets[to].framebuffer, width: small.width, height: small.height)
                setQuad(blurProgram, rect: target, target: small)
                gl.activeTexture(UInt32(GL_TEXTURE0))
                gl.bindTexture(UInt32(GL_TEXTURE_2D), blurTargets[from].texture)
                gl.uniform1i(blurProgram["uTexture"], 0)
                gl.uniform2f(blurProgram["uStep"], step.0, step.1)
                drawQuad()
            }
        }
        bindTarget(0, width: viewport.width, height: viewport.height)
        let level = Float(1 - dim)
        drawTexture(blurTargets[0].texture, rect: rect, tint: (level, level, level, 1), target: viewport)
        gl.enable(UInt32(GL_BLEND))
    }

    private func ensureBlurTargets(_ size: (width: Int, height: Int)) {
        if blurTargets.isEmpty {
            for _ in 0..<2 {
                var framebuffer: UInt32 = 0, texture: UInt32 = 0
                gl.genFramebuffers(1, &framebuffer)
                gl.genTextures(1, &texture)
                configureTexture(texture, linear: true)
                blurTargets.append((framebuffer, texture))
            }
        }
        guard blurSize != size else { return }
        blurSize = size
        for target in blurTargets {
            gl.bindTexture(UInt32(GL_TEXTURE_2D), target.texture)
            gl.texImage2D(UInt32(GL_TEXTURE_2D), 0, GL_RGB8, Int32(size.width), Int32(size.height), 0, UInt32(GL_RGB), UInt32(GL_UNSIGNED_BYTE), nil)
            gl.bindFramebuffer(UInt32(GL_FRAMEBUFFER), target.framebuffer)
            gl.framebufferTexture2D(UInt32(GL_FRAMEBUFFER), UInt32(GL_COLOR_ATTACHMENT0), UInt32(GL_TEXTURE_2D), target.texture, 0)
        }
        gl.bindFramebuffer(UInt32(GL_FRAMEBUFFER), 0)
    }

    private func drawText(_ string: String, point: (x: Double, y: Double), size: Double, color: UIColor,
                          anchor: TextAnchor, maxWidth: Double?) {
        let pixelSize = Int(size.rounded())
        let fitted = text.fit(string, size: pixelSize, maxWidth: maxWidth)
        let key = "\(pixelSize)\u{1}\(fitted)"
        var entry = textTextures[key]
        if entry == nil, let image = text.render(fitted, size: pixelSize) {
            var texture: UInt32 = 0
            gl.genTextures(1, &texture)
            configureTexture(texture, linear: false)
            gl.pixelStorei(UInt32(GL_UNPACK_ALIGNMENT), 1)
            gl.pixelStorei(UInt32(GL_UNPACK_ROW_LENGTH), 0)
            image.rgba.withUnsafeBytes {
                gl.texImage2D(UInt32(GL_TEXTURE_2D), 0, GL_RGBA8, Int32(image.width), Int32(image.height), 0, UInt32(GL_RGBA), UInt32(GL_UNSIGNED_BYTE), $0.baseAddress)
            }
            entry = (texture, image.width, image.height)
            textTextures[key] = entry
            textOrder.append(key)
            if textOrder.count > 128, let old = textTextures.removeValue(forKey: textOrder.removeFirst()) {
                var t = old.texture
                gl.deleteTextures(1, &t)
            }
        }
        guard let entry else { return }
        let origin = TextRasterizer.origin(point: point, width: entry.width, height: entry.height, anchor: anchor)
        let rect = UIRect(x: origin.x.rounded(), y: origin.y.rounded(), width: Double(entry.width), height: Double(entry.height))
        drawTexture(entry.texture, rect: rect, tint: (Float(color.r), Float(color.g), Float(color.b), Float(color.a)), target: viewport)
    }

    // MARK: Captions

    /// Picture cues as RGBA textures, then each coverage quad from the atlas in its colour.
    /// The atlas is uploaded only when its generation is new.
    private func drawCaptions(_ layer: CaptionLayer) {
        for picture in layer.pictures {
            guard let texture = captionPictureTexture(picture) else { continue }
            drawTexture(texture, rect: picture.rect, tint: (1, 1, 1, 1), target: viewport)
        }
        let atlas = layer.atlas
        guard !layer.quads.isEmpty, atlas.width > 0, atlas.height > 0, atlas.bytes.count >= atlas.width * atlas.height else { return }
        if captionAtlasTexture == 0 {
            gl.genTextures(1, &captionAtlasTexture)
            configureTexture(captionAtlasTexture, linear: false)
        }
        gl.activeTexture(UInt32(GL_TEXTURE0))
        gl.bindTexture(UInt32(GL_TEXTURE_2D), captionAtlasTexture)
        if captionAtlasGeneration != atlas.generation {
            gl.pixelStorei(UInt32(GL_UNPACK_ALIGNMENT), 1)
            gl.pixelStorei(UInt32(GL_UNPACK_ROW_LENGTH), 0)
            atlas.bytes.withUnsafeBytes {
                gl.texImage2D(UInt32(GL_TEXTURE_2D), 0, GL_R8, Int32(atlas.width), Int32(atlas.height), 0,
                              UInt32(GL_RED), UInt32(GL_UNSIGNED_BYTE), $0.baseAddress)
            }
            captionAtlasGeneration = atlas.generation
            captionAtlasUploads += 1
        }
        gl.useProgram(captionProgram.id)
        gl.uniform1i(captionProgram["uAtlas"], 0)
        let aw = Float(atlas.width), ah = Float(atlas.height)
        for quad in layer.quads where quad.color.a > 0 {
            let texRect = (Float(quad.atlasX) / aw, Float(quad.atlasY) / ah,
                           Float(quad.atlasX + quad.width) / aw, Float(quad.atlasY + quad.height) / ah)
            setQuad(captionProgram, rect: quad.rect, target: viewport, texRect: texRect)
            gl.uniform4f(captionProgram["uColor"], Float(quad.color.r), Float(quad.color.g), Float(quad.color.b), Float(quad.color.a))
            drawQuad()
        }
    }

    private func captionPictureTexture(_ picture: CaptionPicture) -> UInt32? {
        if let hit = captionPictures[picture.key] { return hit }
        guard picture.width > 0, picture.height > 0, picture.rgba.count >= picture.width * picture.height * 4 else { return nil }
        // Picture cues change a few times a minute: keep the last few.
        if captionPictures.count >= 8 {
            var old = Array(captionPictures.values)
            gl.deleteTextures(Int32(old.count), &old)
            captionPictures.removeAll()
        }
        var texture: UInt32 = 0
        gl.genTextures(1, &texture)
        configureTexture(texture, linear: true)
        gl.pixelStorei(UInt32(GL_UNPACK_ALIGNMENT), 1)
        gl.pixelStorei(UInt32(GL_UNPACK_ROW_LENGTH), 0)
        picture.rgba.withUnsafeBytes {
            gl.texImage2D(UInt32(GL_TEXTURE_2D), 0, GL_RGBA8, Int32(picture.width), Int32(picture.height), 0,
                          UInt32(GL_RGBA), UInt32(GL_UNSIGNED_BYTE), $0.baseAddress)
        }
        captionPictures[picture.key] = texture
        return texture
    }

    // MARK: Textures

    private func configureTexture(_ texture: UInt32, linear: Bool) {
        gl.bindTexture(UInt32(GL_TEXTURE_2D), texture)
        let filter = linear ? GL_LINEAR : GL_NEAREST
        gl.texParameteri(UInt32(GL_TEXTURE_2D), UInt32(GL_TEXTURE_MIN_FILTER), filter)
        gl.texParameteri(UInt32(GL_TEXTURE_2D), UInt32(GL_TEXTURE_MAG_FILTER), filter)
        gl.texParameteri(UInt32(GL_TEXTURE_2D), UInt32(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        gl.texParameteri(UInt32(GL_TEXTURE_2D), UInt32(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
    }

    /// Uploads the frame's planes (once per frame); returns the frame as uploaded.
    private func upload(_ frame: VideoFrame) -> VideoFrame? {
        if uploadedFrame == ObjectIdentifier(frame), let uploaded { return uploaded }
        guard let prepared = FrameUpload.prepared(frame, scaler: scaler) else { return nil }
        let format = prepared.pixelFormat
        let wide = format.bitDepth > 8
        let bytesPerSample = wide ? 2 : 1
        gl.pixelStorei(UInt32(GL_UNPACK_ALIGNMENT), 1)
        prepared.withPlanes { planes in
            for (i, plane) in planes.prefix(3).enumerated() {
                let components = (format.isSemiPlanar && i == 1) ? 2 : 1
                let internalFormat: Int32
                let layout: Int32
                if components == 2 {
                    internalFormat = wide ? GL_RG16 : GL_RG8; layout = GL_RG
                } else {
                    internalFormat = wide ? GL_R16 : GL_R8; layout = GL_RED
                }
                gl.bindTexture(UInt32(GL_TEXTURE_2D), planeTextures[i])
                gl.pixelStorei(UInt32(GL_UNPACK_ROW_LENGTH), Int32(plane.stride / (components * bytesPerSample)))
                gl.texImage2D(UInt32(GL_TEXTURE_2D), 0, internalFormat, Int32(plane.width), Int32(plane.height), 0,
                              UInt32(layout), UInt32(wide ? GL_UNSIGNED_SHORT : GL_UNSIGNED_BYTE), plane.bytes.baseAddress)
            }
        }
        gl.pixelStorei(UInt32(GL_UNPACK_ROW_LENGTH), 0)
        uploadedFrame = ObjectIdentifier(frame)
        uploaded = prepared
        colorTable.prepare(prepared)
        return prepared
    }

    /// The chroma planes' sampling offset for `frame`'s chroma location.
    private func chromaOffset(_ frame: VideoFrame) -> (x: Float, y: Float) {
        let format = frame.pixelFormat
        let chroma = frame.withPlanes { planes in planes.count > 1 ? (planes[1].width, planes[1].height) : (frame.width, frame.height) }
        return YUVToRGB.chromaOffset(frame.color.chromaLocation, shiftX: format.chromaShiftX, shiftY: format.chromaShiftY,
                                     planeWidth: chroma.0, planeHeight: chroma.1)
    }

    private func imageTexture(key: String, image: RGBImage) -> UInt32? {
        if let hit = images[key] { return hit.texture }
        guard image.width > 0, image.height > 0 else { return nil }
        var texture: UInt32 = 0
        gl.genTextures(1, &texture)
        configureTexture(texture, linear: true)
        gl.pixelStorei(UInt32(GL_UNPACK_ALIGNMENT), 1)
        gl.pixelStorei(UInt32(GL_UNPACK_ROW_LENGTH), 0)
        image.bytes.withUnsafeBytes {
            gl.texImage2D(UInt32(GL_TEXTURE_2D), 0, GL_RGB8, Int32(image.width), Int32(image.height), 0, UInt32(GL_RGB), UInt32(GL_UNSIGNED_BYTE), $0.baseAddress)
        }
        if images.count > 64, let old = images.first {
            var t = old.value.texture
            gl.deleteTextures(1, &t)
            images.removeValue(forKey: old.key)
        }
        images[key] = (texture, image.width, image.height)
        return texture
    }
}

/// A linked program with its uniform locations looked up once.
final class GLProgram {
    let id: UInt32
    private var locations: [String: Int32] = [:]
    private let gl: GLFunctions

    init(_ gl: GLFunctions, vertex: String, fragment: String, name: String) throws {
        self.gl = gl
        func compile(_ source: String, _ kind: Int32) throws -> UInt32 {
            let shader = gl.createShader(UInt32(kind))
            source.withCString { pointer in
                var p: UnsafePointer<CChar>? = pointer
                gl.shaderSource(shader, 1, &p, nil)
            }
            gl.compileShader(shader)
            var ok: Int32 = 0
            gl.getShaderiv(shader, UInt32(GL_COMPILE_STATUS), &ok)
            if ok == 0 {
                var log = [CChar](repeating: 0, count: 2048)
                gl.getShaderInfoLog(shader, 2048, nil, &log)
                throw WindowError.renderer("shader \(name) does not compile: \(String(cString: log).split(separator: "\n").first ?? "")")
            }
            return shader
        }
        let vs = try compile(vertex, GL_VERTEX_SHADER)
        let fs = try compile(fragment, GL_FRAGMENT_SHADER)
        id = gl.createProgram()
        gl.attachShader(id, vs)
        gl.attachShader(id, fs)
        gl.linkProgram(id)
        gl.deleteShader(vs)
        gl.deleteShader(fs)
        var ok: Int32 = 0
        gl.getProgramiv(id, UInt32(GL_LINK_STATUS), &ok)
        if ok == 0 {
            var log = [CChar](repeating: 0, count: 2048)
            gl.getProgramInfoLog(id, 2048, nil, &log)
            throw WindowError.renderer("program \(name) does not link: \(String(cString: log))")
        }
    }

    subscript(name: String) -> Int32 {
        if let location = locations[name] { return location }
        let location = gl.getUniformLocation(id, name)
        locations[name] = location
        return location
    }
}
