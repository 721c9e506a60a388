#version 330 core
// Captions: one of libass's coverage bitmaps, packed in an 8-bit atlas (GL_R8), drawn in
// its colour. Straight alpha, with the window's SRC_ALPHA / ONE_MINUS_SRC_ALPHA blend.
uniform sampler2D uAtlas;
uniform vec4 uColor;           // the image's colour, alpha = 1 - libass's transparency
in vec2 vUV;
out vec4 fragColor;

void main() {
    fragColor = vec4(uColor.rgb, uColor.a * texture(uAtlas, vUV).r);
}
