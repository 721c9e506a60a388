#version 330 core
// A texture times a tint: images (tint white), the darkened backdrop (tint grey),
// and text, whose glyphs are white with coverage in alpha (tint = text colour).
uniform sampler2D uTexture;
uniform vec4 uTint;
in vec2 vUV;
out vec4 fragColor;

void main() {
    fragColor = texture(uTexture, vUV) * uTint;
}
