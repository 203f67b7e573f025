"""What an impulse does to a body, and where a body point will be (Schmitt sec. 3-4).

K matrix (Schmitt's M(i, v, v), Mirtich's collision matrix): the change of a point's
velocity per unit impulse at that point,
    K_i(r) = E/m_i - [r]x A_i [r]x,   A_i = R J^-1 R^T (world inverse inertia),
so an impulse p at arm r changes v by p/m and w by A (r x p). A static body (or the world,
index -1) contributes 0 and never moves.
"""
from numba import njit

from .jitopts import NO_REFCOUNT
from .motion import series_over_step

# Hot-path kernels take the body arrays they touch one by one (flat), never the `Bodies`
# tuple: numba increfs/decrefs every member array of a tuple at each inlined call site it is
# passed to (23 atomic refcount calls per joint visit for Bodies + Joints), which cost more
# than the arithmetic. Body rows are read by scalar indexing (a[b, i]), not through views.
# The tuple-taking functions further down are thin wrappers for the cold callers (springs).


@njit(cache=True, inline='always')
def dynamic(static, b):
    """Body b moves under impulses (not the world, index -1, and not a static body)."""
    return b >= 0 and not static[b]


@njit(cache=True, inline='always')
def velocity_at(static, vel, omega, b, rx, ry, rz):
    """u = v + w x r of a body point with world arm r; 0 for the world and static bodies."""
    if not dynamic(static, b):
        return 0.0, 0.0, 0.0
    return (vel[b, 0] + omega[b, 1] * rz - omega[b, 2] * ry,
            vel[b, 1] + omega[b, 2] * rx - omega[b, 0] * rz,
            vel[b, 2] + omega[b, 0] * ry - omega[b, 1] * rx)


@njit(cache=True, inline='always')
def point_at(pos, b, rx, ry, rz):
    """World position of the point with world arm r (the world: r is the point)."""
    if b < 0:
        return rx, ry, rz
    return pos[b, 0] + rx, pos[b, 1] + ry, pos[b, 2] + rz


@njit(cache=True, inline='always')
def predicted_point(static, pos, pred_pos, pred_rot, b, rx, ry, rz):
    """LookAhead from the cache: s(t+h) + M_rot r (the cache must be fresh, see
    refresh_body); a static body or the world stays where it is."""
    if not dynamic(static, b):
        return point_at(pos, b, rx, ry, rz)
    return (pred_pos[b, 0] + pred_rot[b, 0, 0] * rx + pred_rot[b, 0, 1] * ry
            + pred_rot[b, 0, 2] * rz,
            pred_pos[b, 1] + pred_rot[b, 1, 0] * rx + pred_rot[b, 1, 1] * ry
            + pred_rot[b, 1, 2] * rz,
            pred_pos[b, 2] + pred_rot[b, 2, 0] * rx + pred_rot[b, 2, 1] * ry
            + pred_rot[b, 2, 2] * rz)


@njit(cache=True, **NO_REFCOUNT)
def refresh_body(b, pos, vel, omega, inertia_w, inv_inertia_w, pred_pos, pred_series, pred_rot,
                 pred_ok, h, order, gravity, scratch_a, scratch_x):
    """Fill body b's look-ahead cache: omega series, M_rot over h, s(t+h)."""
    series_over_step(inertia_w[b], inv_inertia_w[b], omega[b], h, order, pred_series[b],
                     pred_rot[b], scratch_a, scratch_x)
    for i in range(3):
        pred_pos[b, i] = pos[b, i] + vel[b, i] * h + 0.5 * gravity[i] * h * h
    pred_ok[b] = True


@njit(cache=True, inline='always')
def ensure_look_ahead(b, static, pred_ok, pos, vel, omega, inertia_w, inv_inertia_w, pred_pos,
                      pred_series, pred_rot, h, order, gravity, scratch_a, scratch_x):
    """Refresh body b's look-ahead cache if an impulse changed its velocity since."""
    if dynamic(static, b) and not pred_ok[b]:
        refresh_body(b, pos, vel, omega, inertia_w, inv_inertia_w, pred_pos, pred_series,
                     pred_rot, pred_ok, h, order, gravity, scratch_a, scratch_x)


# rad: the most |u| (the body's further turn over h since its base) that the generic joints'
# linearised look-ahead takes; a larger change reads the exact look-ahead and starts a new
# base. The model's error is about |u|^3/6 (and h |w0| |u| for an asymmetric body) times the
# arm: a hinge pendulum held at its balance angle by a torque, whose half kick turns the bob
# by 0.55 rad a step at h = 1/30 before the joint takes it back, drifted 2e-6 rad in 2 s on
# the unlimited model (its loop ended each step on a 2e-6 m gap, within eps_pos 1e-5 but
# always the same way), and stays within 1e-9 of it this way
LINEAR_TURN = 1e-3
# rad: the most h |w0| (the base's own turn over the step) for which it is taken: the
# gyroscopic terms the model leaves out grow as h |w0| (0.15-2 h |w0| of the change for an
# asymmetric body); a floating chain of 7 tumbling boxes (|w| about 5 rad/s) halved 2 of
# 120 steps at h = 1/60 on the model (none on the exact look-ahead). The slider crank's
# bodies turn up to 0.03 rad a step at its h = 0.005.
LINEAR_SPIN = 0.04


@njit(cache=True, inline='always')
def rotation_change(h, w0x, w0y, w0z, dwx, dwy, dwz):
    """u = h (dw + (h/2) w0 x dw): how much further a body turns over h (as a rotation
    vector) when its spin changes by dw from w0 (the left Jacobian to first order in h w0;
    joints/ball.py's linearised look-ahead)."""
    hh = 0.5 * h
    return (h * (dwx + hh * (w0y * dwz - w0z * dwy)),
            h * (dwy + hh * (w0z * dwx - w0x * dwz)),
            h * (dwz + hh * (w0x * dwy - w0y * dwx)))


@njit(cache=True, inline='always')
def turn_terms(ux, uy, uz, rx, ry, rz):
    """The first- and second-order terms of exp([u]x) r: c = u x r and u x c / 2."""
    cx, cy, cz = uy * rz - uz * ry, uz * rx - ux * rz, ux * ry - uy * rx
    return (cx, cy, cz, 0.5 * (uy * cz - uz * cy), 0.5 * (uz * cx - ux * cz),
            0.5 * (ux * cy - uy * cx))


@njit(cache=True, inline='always')
def look_ahead_linear(b, static, pred_ok, pos, vel, omega, inertia_w, inv_inertia_w, pred_pos,
                      pred_series, pred_rot, h, order, gravity, scratch_a, scratch_x, base):
    """Body b's look-ahead for the generic joints' visits in the iterative loop: exact where
    the cache is fresh (kept then as b's base); after an impulse, the base moved by the
    velocity change since it (the ball joints' model, joints/ball.py), while it turns the
    body by at most LINEAR_TURN further than the base and the base turns by at most
    LINEAR_SPIN over the step (else exact, and a new base):
        s' = s'_0 + h dv,   M_rot = (E + [u]x + [u]x^2/2) M_rot,0,   u = h (dw + (h/2) w0 x dw)
    into pred_pos/pred_rot, with pred_ok left False (an exact reader refreshes). The centre
    is exact; the rotation leaves out how dw alters the spin's own change over the step (the
    gyroscopic terms: an error of about h |w0| times the change for an asymmetric body, none
    for a sphere), which the loop's exact look-ahead before it stops makes good. No base
    yet: exact, and kept. base = (pos (n, 3), rot (n, 3, 3), vel, omega (n, 3), ok (n,)).
    Returns True where the look-ahead is the linearised one."""
    if not dynamic(static, b):
        return False
    base_pos, base_rot, base_vel, base_omega, base_ok = base
    if not pred_ok[b] and base_ok[b]:
        w0x, w0y, w0z = base_omega[b, 0], base_omega[b, 1], base_omega[b, 2]
        ux, uy, uz = rotation_change(h, w0x, w0y, w0z, omega[b, 0] - w0x, omega[b, 1] - w0y,
                                     omega[b, 2] - w0z)
        if ux * ux + uy * uy + uz * uz <= LINEAR_TURN ** 2 \
                and h * h * (w0x * w0x + w0y * w0y + w0z * w0z) <= LINEAR_SPIN ** 2:
            for c in range(3):
                rx, ry, rz = base_rot[b, 0, c], base_rot[b, 1, c], base_rot[b, 2, c]
                cx, cy, cz, ex, ey, ez = turn_terms(ux, uy, uz, rx, ry, rz)
                pred_rot[b, 0, c] = rx + cx + ex
                pred_rot[b, 1, c] = ry + cy + ey
                pred_rot[b, 2, c] = rz + cz + ez
            for i in range(3):
                pred_pos[b, i] = base_pos[b, i] + h * (vel[b, i] - base_vel[b, i])
            return True
    ensure_look_ahead(b, static, pred_ok, pos, vel, omega, inertia_w, inv_inertia_w, pred_pos,
                      pred_series, pred_rot, h, order, gravity, scratch_a, scratch_x)
    for i in range(3):
        base_pos[b, i] = pred_pos[b, i]
        base_vel[b, i] = vel[b, i]
        base_omega[b, i] = omega[b, i]
        for c in range(3):
            base_rot[b, i, c] = pred_rot[b, i, c]
    base_ok[b] = True
    return False


@njit(cache=True, inline='always')
def impulse_to(static, inv_mass, vel, omega, inv_inertia_w, pred_ok, b, rx, ry, rz, px, py, pz):
    """Impulse p at world arm r: v += p/m, w += A (r x p). Invalidates the look-ahead cache."""
    if not dynamic(static, b):
        return
    im = inv_mass[b]
    vel[b, 0] += im * px
    vel[b, 1] += im * py
    vel[b, 2] += im * pz
    angular_impulse_to(static, omega, inv_inertia_w, pred_ok, b, ry * pz - rz * py,
                       rz * px - rx * pz, rx * py - ry * px)


@njit(cache=True, inline='always')
def angular_impulse_to(static, omega, inv_inertia_w, pred_ok, b, lx, ly, lz):
    """Angular impulse l: w += A l."""
    if not dynamic(static, b):
        return
    for i in range(3):
        omega[b, i] += inv_inertia_w[b, i, 0] * lx + inv_inertia_w[b, i, 1] * ly \
            + inv_inertia_w[b, i, 2] * lz
    pred_ok[b] = False


@njit(cache=True, inline='always')
def add_k_matrix_of(static, inv_mass, inv_inertia_w, b, rx, ry, rz, k):
    """k += K_b(r) = E/m - [r]x A [r]x (nothing for the world or a static body)."""
    if not dynamic(static, b):
        return
    a = inv_inertia_w
    im = inv_mass[b]
    # S = [r]x A: column c of S is r x A[:, c]; then K -= S [r]x row by row.
    _sub_k_row(k, 0, ry * a[b, 2, 0] - rz * a[b, 1, 0], ry * a[b, 2, 1] - rz * a[b, 1, 1],
               ry * a[b, 2, 2] - rz * a[b, 1, 2], rx, ry, rz, im)
    _sub_k_row(k, 1, rz * a[b, 0, 0] - rx * a[b, 2, 0], rz * a[b, 0, 1] - rx * a[b, 2, 1],
               rz * a[b, 0, 2] - rx * a[b, 2, 2], rx, ry, rz, im)
    _sub_k_row(k, 2, rx * a[b, 1, 0] - ry * a[b, 0, 0], rx * a[b, 1, 1] - ry * a[b, 0, 1],
               rx * a[b, 1, 2] - ry * a[b, 0, 2], rx, ry, rz, im)


@njit(cache=True, inline='always')
def _sub_k_row(k, i, si0, si1, si2, rx, ry, rz, im):
    """Row i: k[i,:] -= (S[r]x)[i,:] = -(r x S[i,:]^T)^T, then the E/m diagonal term."""
    k[i, 0] -= si1 * rz - si2 * ry
    k[i, 1] -= si2 * rx - si0 * rz
    k[i, 2] -= si0 * ry - si1 * rx
    k[i, i] += im


# ---- the same on the Bodies tuple (springs, tools; not the joint loops) --------------------

@njit(cache=True, inline='always')
def is_dynamic(B, b):
    return dynamic(B.static, b)


@njit(cache=True, inline='always')
def body_arm(B, b, local, out):
    """World arm R u of a body-frame point u (for the world: the world point itself)."""
    if b < 0:
        out[0], out[1], out[2] = local[0], local[1], local[2]
        return
    r = B.rot[b]
    for i in range(3):
        out[i] = r[i, 0] * local[0] + r[i, 1] * local[1] + r[i, 2] * local[2]


@njit(cache=True, inline='always')
def body_point(B, b, arm):
    """World position of the point with world arm `arm` (the world: arm is the point)."""
    return point_at(B.pos, b, arm[0], arm[1], arm[2])


@njit(cache=True, inline='always')
def point_velocity(B, b, arm):
    """u = v + w x r of a body point; 0 for the world and static bodies."""
    return velocity_at(B.static, B.vel, B.omega, b, arm[0], arm[1], arm[2])


@njit(cache=True, inline='always')
def predict_point(B, b, arm, h, order, gravity, scratch_a, scratch_x):
    """LookAhead: the body point with world arm `arm` at time t + h on the ballistic path.

    The per-body series is cached in B.pred_* until the body's velocity changes.
    """
    if dynamic(B.static, b) and not B.pred_ok[b]:
        refresh_prediction(B, b, h, order, gravity, scratch_a, scratch_x)
    return predicted_point(B.static, B.pos, B.pred_pos, B.pred_rot, b, arm[0], arm[1], arm[2])


@njit(cache=True)
def refresh_prediction(B, b, h, order, gravity, scratch_a, scratch_x):
    """Fill body b's look-ahead cache: omega series, M_rot over h, s(t+h)."""
    refresh_body(b, B.pos, B.vel, B.omega, B.inertia_w, B.inv_inertia_w, B.pred_pos,
                 B.pred_series, B.pred_rot, B.pred_ok, h, order, gravity, scratch_a, scratch_x)


@njit(cache=True, inline='always')
def apply_impulse(B, b, arm, px, py, pz):
    """Impulse p at world arm r: v += p/m, w += A (r x p). Invalidates the look-ahead cache."""
    impulse_to(B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w, B.pred_ok, b,
               arm[0], arm[1], arm[2], px, py, pz)


@njit(cache=True, inline='always')
def apply_angular_impulse(B, b, lx, ly, lz):
    """Angular impulse l: w += A l."""
    angular_impulse_to(B.static, B.omega, B.inv_inertia_w, B.pred_ok, b, lx, ly, lz)


@njit(cache=True)
def add_k_matrix(B, b, arm, k):
    """k += K_b(r) = E/m - [r]x A [r]x (nothing for the world or a static body)."""
    add_k_matrix_of(B.static, B.inv_mass, B.inv_inertia_w, b, arm[0], arm[1], arm[2], k)


@njit(cache=True)
def invert3(m, out):
    """out = m^-1 for a 3x3 matrix; returns False (and zeros) if m is singular."""
    c00 = m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1]
    c01 = m[1, 2] * m[2, 0] - m[1, 0] * m[2, 2]
    c02 = m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]
    det = m[0, 0] * c00 + m[0, 1] * c01 + m[0, 2] * c02
    scale = 0.0
    for i in range(3):
        for j in range(3):
            scale = max(scale, abs(m[i, j]))
    if scale == 0.0 or abs(det) <= 1e-14 * scale * scale * scale:
        out[:, :] = 0.0
        return False
    inv = 1.0 / det
    out[0, 0] = c00 * inv
    out[1, 0] = c01 * inv
    out[2, 0] = c02 * inv
    out[0, 1] = (m[0, 2] * m[2, 1] - m[0, 1] * m[2, 2]) * inv
    out[1, 1] = (m[0, 0] * m[2, 2] - m[0, 2] * m[2, 0]) * inv
    out[2, 1] = (m[0, 1] * m[2, 0] - m[0, 0] * m[2, 1]) * inv
    out[0, 2] = (m[0, 1] * m[1, 2] - m[0, 2] * m[1, 1]) * inv
    out[1, 2] = (m[0, 2] * m[1, 0] - m[0, 0] * m[1, 2]) * inv
    out[2, 2] = (m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]) * inv
    return True
