import ReelCore
import ReelMedia
internal import CSDL2

/// The window's half of the colour path: for each uploaded frame, its ``ColorMapper``'s
/// ``ColorLUT`` (none for SDR), its cube uploaded as a `GL_RGB32F` 3D texture when the cube
/// changes (another transfer or primaries; a new scene peak changes only uniforms), and the YUV
/// program's uniforms that select it. The shader
/// interpolates the cube as `ColorLUT.sample` does and finishes as `ColorLUT.finish` does, so
/// the window and the CPU path show the same picture.
///
/// Confined to the GL renderer's thread (it owns it).
final class GLColorTable {
    private let gl: GLFunctions
    private let mapper = ColorMapper()
    private var table: ColorLUT?
    private var texture: UInt32 = 0
    /// The cube the 3D texture holds: uploaded again only for another transfer or primaries,
    /// not for a new scene peak (the peak and curve are uniforms).
    private var inTexture: ColorLUT.CubeKey?

    init(_ gl: GLFunctions) {
        self.gl = gl
    }

    /// The mapping of the frame drawn last, if it had one.
    var mapping: ColorMapping? { table?.mapping }

    /// Decides the table for a newly uploaded frame (once per frame).
    func prepare(_ frame: VideoFrame) {
        table = mapper.table(for: frame)
    }

    /// Sets `program`'s colour uniforms for the prepared frame, uploading its table if new.
    func bind(_ program: GLProgram) {
        // The 3D sampler has a unit of its own even when unused: two samplers of different
        // types on one unit make the draw fail.
        gl.uniform1i(program["uTable"], 3)
        guard let table else {
            gl.uniform1i(program["uMapped"], 0)
            return
        }
        gl.activeTexture(UInt32(GL_TEXTURE3))
        if texture == 0 {
            gl.genTextures(1, &texture)
            gl.bindTexture(UInt32(GL_TEXTURE_3D), texture)
            for parameter in [GL_TEXTURE_MIN_FILTER, GL_TEXTURE_MAG_FILTER] {
                gl.texParameteri(UInt32(GL_TEXTURE_3D), UInt32(parameter), GL_LINEAR)
            }
            for parameter in [GL_TEXTURE_WRAP_S, GL_TEXTURE_WRAP_T, GL_TEXTURE_WRAP_R] {
                gl.texParameteri(UInt32(GL_TEXTURE_3D), UInt32(parameter), GL_CLAMP_TO_EDGE)
            }
        }
        gl.bindTexture(UInt32(GL_TEXTURE_3D), texture)
        if inTexture != table.cubeKey {
            gl.pixelStorei(UInt32(GL_UNPACK_ALIGNMENT), 4)
            gl.pixelStorei(UInt32(GL_UNPACK_ROW_LENGTH), 0)
            let n = Int32(table.size)
            table.values.withUnsafeBytes {
                gl.texImage3D(UInt32(GL_TEXTURE_3D), 0, GL_RGB32F, n, n, n, 0, UInt32(GL_RGB), UInt32(GL_FLOAT), $0.baseAddress)
            }
            inTexture = table.cubeKey
        }
        let mapping = table.mapping
        gl.uniform1f(program["uTableSize"], Float(table.size))
        gl.uniform1f(program["uSourcePeak"], Float(max(mapping.sourcePeak, 1)))
        gl.uniform1f(program["uTargetPeak"], Float(mapping.targetPeak))
        gl.uniform1i(program["uCurve"], Self.curveNumber(mapping.curve))
        gl.uniform1i(program["uSRGB"], mapping.display == .srgb ? 1 : 0)
        gl.uniform1i(program["uMapped"], 1)
        gl.activeTexture(UInt32(GL_TEXTURE0))
    }

    /// The shader's number for `curve` (yuv.frag.glsl's `curve`).
    static func curveNumber(_ curve: ToneMappingCurve) -> Int32 {
        switch curve {
        case .auto, .bt2390: 0
        case .clip: 1
        case .linear: 2
        }
    }

    func delete() {
        if texture != 0 { gl.deleteTextures(1, &texture) }
    }
}
