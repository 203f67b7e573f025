// The per-instance pose every instanced pass shares (shape, outline, pick, shadow): a unit
// mesh scaled per instance, then its rigid pose. Capsules shift their hemispheres by
// in_shift * in_offset so the radius and the half length scale separately.
in vec3 in_pos;
in float in_shift;
in vec3 in_rot0;
in vec3 in_rot1;
in vec3 in_rot2;
in vec3 in_trans;
in vec3 in_scale;
in vec3 in_offset;

mat3 instance_rotation() {
    return mat3(in_rot0, in_rot1, in_rot2);
}

vec3 instance_world() {
    return instance_rotation() * (in_pos * in_scale + in_shift * in_offset) + in_trans;
}
