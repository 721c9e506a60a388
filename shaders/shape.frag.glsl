#version 330 core
// A filled rectangle with rounded corners from a signed distance field, antialiased
// over one pixel: plain rects (radius 0), rounded bars and badges, circles (radius = h/2).
uniform vec4 uColor;           // straight alpha
uniform vec2 uSize;            // rectangle size in pixels
uniform float uRadius;         // corner radius in pixels
in vec2 vLocal;
out vec4 fragColor;

float roundedBox(vec2 p, vec2 halfSize, float r) {
    vec2 q = abs(p) - halfSize + vec2(r);
    return length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - r;
}

void main() {
    vec2 p = (vLocal - 0.5) * uSize;
    float r = min(uRadius, 0.5 * min(uSize.x, uSize.y));
    float d = roundedBox(p, 0.5 * uSize, r);
    float coverage = clamp(0.5 - d, 0.0, 1.0);
    fragColor = vec4(uColor.rgb, uColor.a * coverage);
}
