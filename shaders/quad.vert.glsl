#version 330 core
// One rectangle in pixels (top-left origin), drawn as a 4-vertex triangle strip with
// no vertex buffer: the corner comes from gl_VertexID.
uniform vec2 uViewport;    // target size in pixels
uniform vec4 uRect;        // x, y, width, height in pixels
uniform vec4 uTexRect;     // u0, v0, u1, v1 of the source
uniform int uRotation;     // clockwise quarter turns applied to the picture on screen
out vec2 vUV;
out vec2 vLocal;           // 0…1 across the rectangle

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
    vLocal = corner;
    vec2 uv = corner;
    // A picture turned clockwise: the screen's top-left shows the source's bottom-left.
    if (uRotation == 1) uv = vec2(corner.y, 1.0 - corner.x);
    else if (uRotation == 2) uv = vec2(1.0 - corner.x, 1.0 - corner.y);
    else if (uRotation == 3) uv = vec2(1.0 - corner.y, corner.x);
    vUV = mix(uTexRect.xy, uTexRect.zw, uv);
    vec2 pixel = uRect.xy + corner * uRect.zw;
    vec2 ndc = pixel / uViewport * 2.0 - 1.0;
    gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
}
