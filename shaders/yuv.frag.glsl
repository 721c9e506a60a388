#version 330 core
// Planar (Y, U, V) or semi-planar (Y, UV interleaved: NV12, P010) YUV to RGB.
// uColor and uOffset fold range expansion, bit depth and the BT.601/709/2020 matrix
// into one affine map (see YUVToRGB.swift); the chroma planes are sampled where the frame's
// chroma location puts their samples (uChromaOffset).
// HDR and wide-gamut frames (uMapped 1) then go through uTable, the 3D lookup table of
// ReelCore's ColorLUT (linearise, primaries to BT.709: signed PQ of the light in nits), and
// are finished as ColorLUT.finish does: the tone curve (ToneMappingCurve: BT.2390, clip,
// linear) on the largest component with the others scaled alike, gamut mapping toward the
// grey of the same luminance, the display's transfer, and the 8x8 Bayer dither of
// ColorLUT.dither before the 8-bit framebuffer rounds.
// SDR frames (uMapped 0) take exactly the path they always took.
uniform sampler2D uPlaneY;
uniform sampler2D uPlaneU;     // U, or UV for semi-planar
uniform sampler2D uPlaneV;
uniform int uSemiPlanar;
uniform vec2 uChromaOffset;   // where the chroma samples sit (YUVToRGB.chromaOffset)
uniform mat3 uColor;
uniform vec3 uOffset;
uniform int uMapped;
uniform sampler3D uTable;
uniform float uTableSize;
uniform float uSourcePeak;    // nits
uniform float uTargetPeak;    // nits
uniform int uCurve;           // 0 BT.2390, 1 clip, 2 linear
uniform int uSRGB;
in vec2 vUV;
out vec4 fragColor;

float bayer(ivec2 p) {
    int v = 0;
    for (int bit = 0; bit < 3; bit++) {
        int xb = (p.x >> bit) & 1;
        int yb = (p.y >> bit) & 1;
        v |= ((xb ^ yb) << (2 * (2 - bit) + 1)) | (yb << (2 * (2 - bit)));
    }
    return (float(v) + 0.5) / 64.0 - 0.5;
}

const float M1 = 2610.0 / 16384.0;
const float M2 = 2523.0 / 4096.0 * 128.0;
const float C1 = 3424.0 / 4096.0;
const float C2 = 2413.0 / 4096.0 * 32.0;
const float C3 = 2392.0 / 4096.0 * 32.0;

float pqToNits(float e) {
    float p = pow(clamp(e, 0.0, 1.0), 1.0 / M2);
    return 10000.0 * pow(max(p - C1, 0.0) / (C2 - C3 * p), 1.0 / M1);
}

float nitsToPQ(float nits) {
    float y = pow(clamp(nits, 0.0, 10000.0) / 10000.0, M1);
    return pow((C1 + C2 * y) / (1.0 + C3 * y), M2);
}

// ToneMappingCurve.map: the largest component's nits on the display.
float curve(float nits) {
    if (uCurve == 1) return min(nits, uTargetPeak);
    if (uCurve == 2) return uSourcePeak > uTargetPeak ? min(nits * uTargetPeak / uSourcePeak, uTargetPeak) : min(nits, uTargetPeak);
    float sourceMax = nitsToPQ(uSourcePeak);
    float e1 = nitsToPQ(nits) / sourceMax;
    float maxLum = nitsToPQ(uTargetPeak) / sourceMax;
    if (maxLum >= 1.0) return nits;
    float ks = max(0.0, 1.5 * maxLum - 0.5);
    float e2 = e1;
    if (e1 >= 1.0) {
        e2 = maxLum;
    } else if (e1 >= ks) {
        float t = (e1 - ks) / (1.0 - ks);
        float t2 = t * t, t3 = t2 * t;
        e2 = (2.0 * t3 - 3.0 * t2 + 1.0) * ks + (t3 - 2.0 * t2 + t) * (1.0 - ks) + (-2.0 * t3 + 3.0 * t2) * maxLum;
    }
    return min(pqToNits(e2 * sourceMax), uTargetPeak);
}

vec3 gamutMap(vec3 c) {
    if (min(c.r, min(c.g, c.b)) >= 0.0 && max(c.r, max(c.g, c.b)) <= 1.0) return c;
    float y = dot(c, vec3(0.2126, 0.7152, 0.0722));
    if (y >= 1.0) return vec3(1.0);
    if (y <= 0.0) return vec3(0.0);
    float t = 1.0;
    for (int i = 0; i < 3; i++) {
        if (c[i] > 1.0) t = min(t, (1.0 - y) / (c[i] - y));
        if (c[i] < 0.0) t = min(t, y / (y - c[i]));
    }
    return vec3(y) + (c - vec3(y)) * t;
}

vec3 encode(vec3 l) {
    l = clamp(l, 0.0, 1.0);
    if (uSRGB == 1) {
        return mix(1.055 * pow(l, vec3(1.0 / 2.4)) - 0.055, 12.92 * l, vec3(lessThanEqual(l, vec3(0.0031308))));
    }
    return pow(l, vec3(1.0 / 2.4));
}

void main() {
    float y = texture(uPlaneY, vUV).r;
    vec2 c = vUV + uChromaOffset;
    vec2 uv = uSemiPlanar == 1 ? texture(uPlaneU, c).rg
                               : vec2(texture(uPlaneU, c).r, texture(uPlaneV, c).r);
    vec3 rgb = uColor * vec3(y, uv) + uOffset;
    if (uMapped == 1) {
        vec3 coordinate = (clamp(rgb, 0.0, 1.0) * (uTableSize - 1.0) + 0.5) / uTableSize;
        vec3 coded = texture(uTable, coordinate).rgb;
        vec3 light = sign(coded) * vec3(pqToNits(abs(coded.r)), pqToNits(abs(coded.g)), pqToNits(abs(coded.b)));
        float top = max(light.r, max(light.g, light.b));
        if (top > 0.0) light *= curve(top) / top;
        rgb = encode(gamutMap(light / uTargetPeak)) + bayer(ivec2(gl_FragCoord.xy) & 7) / 255.0;
    }
    fragColor = vec4(clamp(rgb, 0.0, 1.0), 1.0);
}
