internal import CSDL2

/// The OpenGL 3.3 core functions the renderer uses, loaded through
/// `SDL_GL_GetProcAddress` once a context is current (nothing links libGL).
struct GLFunctions {
    typealias Enum = UInt32
    typealias UInt = UInt32

    let clear: @convention(c) (UInt32) -> Void
    let clearColor: @convention(c) (Float, Float, Float, Float) -> Void
    let viewport: @convention(c) (Int32, Int32, Int32, Int32) -> Void
    let enable: @convention(c) (Enum) -> Void
    let disable: @convention(c) (Enum) -> Void
    let blendFunc: @convention(c) (Enum, Enum) -> Void
    let getError: @convention(c) () -> Enum
    let getString: @convention(c) (Enum) -> UnsafePointer<UInt8>?
    let pixelStorei: @convention(c) (Enum, Int32) -> Void
    let genTextures: @convention(c) (Int32, UnsafeMutablePointer<UInt>?) -> Void
    let deleteTextures: @convention(c) (Int32, UnsafePointer<UInt>?) -> Void
    let bindTexture: @convention(c) (Enum, UInt) -> Void
    let activeTexture: @convention(c) (Enum) -> Void
    let texImage2D: @convention(c) (Enum, Int32, Int32, Int32, Int32, Int32, Enum, Enum, UnsafeRawPointer?) -> Void
    let texImage3D: @convention(c) (Enum, Int32, Int32, Int32, Int32, Int32, Int32, Enum, Enum, UnsafeRawPointer?) -> Void
    let texSubImage2D: @convention(c) (Enum, Int32, Int32, Int32, Int32, Int32, Enum, Enum, UnsafeRawPointer?) -> Void
    let texParameteri: @convention(c) (Enum, Enum, Int32) -> Void
    let readPixels: @convention(c) (Int32, Int32, Int32, Int32, Enum, Enum, UnsafeMutableRawPointer?) -> Void
    let drawArrays: @convention(c) (Enum, Int32, Int32) -> Void
    let genVertexArrays: @convention(c) (Int32, UnsafeMutablePointer<UInt>?) -> Void
    let bindVertexArray: @convention(c) (UInt) -> Void
    let createShader: @convention(c) (Enum) -> UInt
    let shaderSource: @convention(c) (UInt, Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?) -> Void
    let compileShader: @convention(c) (UInt) -> Void
    let getShaderiv: @convention(c) (UInt, Enum, UnsafeMutablePointer<Int32>?) -> Void
    let getShaderInfoLog: @convention(c) (UInt, Int32, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<CChar>?) -> Void
    let deleteShader: @convention(c) (UInt) -> Void
    let createProgram: @convention(c) () -> UInt
    let attachShader: @convention(c) (UInt, UInt) -> Void
    let linkProgram: @convention(c) (UInt) -> Void
    let getProgramiv: @convention(c) (UInt, Enum, UnsafeMutablePointer<Int32>?) -> Void
    let getProgramInfoLog: @convention(c) (UInt, Int32, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<CChar>?) -> Void
    let useProgram: @convention(c) (UInt) -> Void
    let deleteProgram: @convention(c) (UInt) -> Void
    let getUniformLocation: @convention(c) (UInt, UnsafePointer<CChar>?) -> Int32
    let uniform1i: @convention(c) (Int32, Int32) -> Void
    let uniform1f: @convention(c) (Int32, Float) -> Void
    let uniform2f: @convention(c) (Int32, Float, Float) -> Void
    let uniform3f: @convention(c) (Int32, Float, Float, Float) -> Void
    let uniform4f: @convention(c) (Int32, Float, Float, Float, Float) -> Void
    let uniformMatrix3fv: @convention(c) (Int32, Int32, UInt8, UnsafePointer<Float>?) -> Void
    let genFramebuffers: @convention(c) (Int32, UnsafeMutablePointer<UInt>?) -> Void
    let deleteFramebuffers: @convention(c) (Int32, UnsafePointer<UInt>?) -> Void
    let bindFramebuffer: @convention(c) (Enum, UInt) -> Void
    let framebufferTexture2D: @convention(c) (Enum, Enum, Enum, UInt, Int32) -> Void
    let checkFramebufferStatus: @convention(c) (Enum) -> Enum

    /// Loads every function; throws naming the first one the driver lacks.
    init() throws {
        func load<T>(_ name: String) throws -> T {
            guard let pointer = SDL_GL_GetProcAddress(name) else {
                throw WindowError.renderer("OpenGL function \(name) is missing")
            }
            return unsafeBitCast(pointer, to: T.self)
        }
        clear = try load("glClear")
        clearColor = try load("glClearColor")
        viewport = try load("glViewport")
        enable = try load("glEnable")
        disable = try load("glDisable")
        blendFunc = try load("glBlendFunc")
        getError = try load("glGetError")
        getString = try load("glGetString")
        pixelStorei = try load("glPixelStorei")
        genTextures = try load("glGenTextures")
        deleteTextures = try load("glDeleteTextures")
        bindTexture = try load("glBindTexture")
        activeTexture = try load("glActiveTexture")
        texImage2D = try load("glTexImage2D")
        texImage3D = try load("glTexImage3D")
        texSubImage2D = try load("glTexSubImage2D")
        texParameteri = try load("glTexParameteri")
        readPixels = try load("glReadPixels")
        drawArrays = try load("glDrawArrays")
        genVertexArrays = try load("glGenVertexArrays")
        bindVertexArray = try load("glBindVertexArray")
        createShader = try load("glCreateShader")
        shaderSource = try load("glShaderSource")
        compileShader = try load("glCompileShader")
        getShaderiv = try load("glGetShaderiv")
        getShaderInfoLog = try load("glGetShaderInfoLog")
        deleteShader = try load("glDeleteShader")
        createProgram = try load("glCreateProgram")
        attachShader = try load("glAttachShader")
        linkProgram = try load("glLinkProgram")
        getProgramiv = try load("glGetProgramiv")
        getProgramInfoLog = try load("glGetProgramInfoLog")
        useProgram = try load("glUseProgram")
        deleteProgram = try load("glDeleteProgram")
        getUniformLocation = try load("glGetUniformLocation")
        uniform1i = try load("glUniform1i")
        uniform1f = try load("glUniform1f")
        uniform2f = try load("glUniform2f")
        uniform3f = try load("glUniform3f")
        uniform4f = try load("glUniform4f")
        uniformMatrix3fv = try load("glUniformMatrix3fv")
        genFramebuffers = try load("glGenFramebuffers")
        deleteFramebuffers = try load("glDeleteFramebuffers")
        bindFramebuffer = try load("glBindFramebuffer")
        framebufferTexture2D = try load("glFramebufferTexture2D")
        checkFramebufferStatus = try load("glCheckFramebufferStatus")
    }
}
