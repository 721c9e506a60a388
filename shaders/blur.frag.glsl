#version 330 core
// One direction of a separable 9-tap Gaussian blur (run horizontally, then vertically).
uniform sampler2D uTexture;
uniform vec2 uStep;            // one texel along the blur direction
in vec2 vUV;
out vec4 fragColor;

void main() {
    const float w0 = 0.2270270270;
    const float w1 = 0.1945945946;
    const float w2 = 0.1216216216;
    const float w3 = 0.0540540541;
    const float w4 = 0.0162162162;
    vec3 sum = texture(uTexture, vUV).rgb * w0;
    sum += (texture(uTexture, vUV + uStep).rgb + texture(uTexture, vUV - uStep).rgb) * w1;
    sum += (texture(uTexture, vUV + 2.0 * uStep).rgb + texture(uTexture, vUV - 2.0 * uStep).rgb) * w2;
    sum += (texture(uTexture, vUV + 3.0 * uStep).rgb + texture(uTexture, vUV - 3.0 * uStep).rgb) * w3;
    sum += (texture(uTexture, vUV + 4.0 * uStep).rgb + texture(uTexture, vUV - 4.0 * uStep).rgb) * w4;
    fragColor = vec4(sum, 1.0);
}
