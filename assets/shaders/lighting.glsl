// Shared lighting: one directional light with a PCF shadow map, hemisphere ambient,
// Blinn-Phong specular. Included (textually) by shape.frag.glsl and grid.frag.glsl.
// Kept cheap on purpose (no pow, 4 shadow taps): it must run on Mesa llvmpipe.
uniform vec3 u_light_dir;      // unit vector pointing towards the light
uniform vec3 u_light_color;
uniform vec3 u_eye;
uniform sampler2DShadow u_shadow_map;
uniform int u_use_shadow;
uniform float u_shadow_texel;

float shadow_factor(vec4 light_clip, float ndl) {
    if (u_use_shadow == 0 || ndl <= 0.0) return 1.0;
    vec3 p = light_clip.xyz * 0.5 + 0.5;   // orthographic light: w == 1
    if (p.x <= 0.0 || p.x >= 1.0 || p.y <= 0.0 || p.y >= 1.0 || p.z >= 1.0) return 1.0;
    float bias = u_shadow_texel * (0.8 + 2.5 * (1.0 - ndl));
    float d = p.z - bias;
    float t = u_shadow_texel;
    // 4 bilinear-compared taps = a smooth 4x4-texel PCF footprint
    float lit = texture(u_shadow_map, vec3(p.xy + vec2(-t, -t), d))
              + texture(u_shadow_map, vec3(p.xy + vec2( t, -t), d))
              + texture(u_shadow_map, vec3(p.xy + vec2(-t,  t), d))
              + texture(u_shadow_map, vec3(p.xy + vec2( t,  t), d));
    return lit * 0.25;
}

float pow48(float x) {
    float x2 = x * x, x4 = x2 * x2, x8 = x4 * x4, x16 = x8 * x8;
    return x16 * x16 * x16;
}

vec3 shade(vec3 albedo, vec3 n, vec3 world, vec4 light_clip, float spec_strength) {
    vec3 v = normalize(u_eye - world);
    float ndl = dot(n, u_light_dir);
    float shadow = shadow_factor(light_clip, ndl);
    ndl = max(ndl, 0.0);
    vec3 h = normalize(u_light_dir + v);
    float spec = ndl > 0.0 ? pow48(max(dot(n, h), 0.0)) * spec_strength : 0.0;
    vec3 ambient = mix(vec3(0.16, 0.15, 0.14), vec3(0.40, 0.44, 0.52), 0.5 + 0.5 * n.y);
    return albedo * (ambient + u_light_color * (ndl * 0.75 * shadow)) + u_light_color * (spec * shadow);
}
