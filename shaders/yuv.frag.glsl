#version 330 core
// Planar (Y, U, V) or semi-planar (Y, UV interleaved: NV12, P010) YUV to RGB.
// uColor and uOffset fold range expansion, bit depth and the BT.601/709/2020 matrix
// into one affine map (see YUVToRGB.swift).
uniform sampler2D uPlaneY;
uniform sampler2D uPlaneU;     // U, or UV for semi-planar
uniform sampler2D uPlaneV;
uniform int uSemiPlanar;
uniform mat3 uColor;
uniform vec3 uOffset;
in vec2 vUV;
out vec4 fragColor;

void main() {
    float y = texture(uPlaneY, vUV).r;
    vec2 uv = uSemiPlanar == 1 ? texture(uPlaneU, vUV).rg
                               : vec2(texture(uPlaneU, vUV).r, texture(uPlaneV, vUV).r);
    vec3 rgb = uColor * vec3(y, uv) + uOffset;
    fragColor = vec4(clamp(rgb, 0.0, 1.0), 1.0);
}
