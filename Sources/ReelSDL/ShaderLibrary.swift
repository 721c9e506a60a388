import Foundation

/// The GLSL sources from the top-level `shaders/` folder, compiled into the binary
/// (SwiftPM `embedInCode` through the `Sources/ReelSDL/shaders` symlink), so `reel`
/// runs anywhere.
enum ShaderLibrary {
    static var quadVertex: String { text(PackageResources.quad_vert_glsl) }
    static var yuvFragment: String { text(PackageResources.yuv_frag_glsl) }
    static var blurFragment: String { text(PackageResources.blur_frag_glsl) }
    static var textureFragment: String { text(PackageResources.texture_frag_glsl) }
    static var shapeFragment: String { text(PackageResources.shape_frag_glsl) }
    static var captionFragment: String { text(PackageResources.caption_frag_glsl) }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
