"""Ballistic motion of a rigid body over one step h (Schmitt sec. 3, P-step 3).

The centre moves on its parabola: s(h) = s + v h + g h^2/2, v(h) = v + g h.

Rotation: torque-free Euler motion by Taylor series of configurable order N. Schmitt's
report writes Euler's equation in the body frame (J constant) but then integrates body
vectors with v' = w x v in the frame frozen at t = 0; the two frames differ after t = 0, and
the mix is only first-order accurate (measured: 4.5 % energy error on a free asymmetric top
after 10 s at h = 0.01, halving with h). We therefore write the series in the world frame,
where it is exact to order N:
    angular momentum L = I(t) w(t) is constant, A(t) = I(t)^-1 = R J^-1 R^T,
    A' = [w]x A - A [w]x,   w = A L,
    A_{k+1} = sum_i C(k,i) ([w_i]x A_{k-i} - A_{k-i}[w_i]x),   w_k = A_k L,
and a vector x fixed in the body moves as x' = w x x:
    x_{k+1} = sum_i C(k,i) w_i x x_{k-i}.
With scaled terms a_k = A_k h^k/k!, o_k = w_k h^k/k!, y_k = x_k h^k/k! the binomials drop out:
    a_{k+1} = h/(k+1) sum_i sym([o_i]x a_{k-i}),   y_{k+1} = h/(k+1) sum_i o_i x y_{k-i},
    w(h) = sum_k o_k,   x(h) = sum_k y_k   (k up to N for w, N+1 for x).
M_rot (3.8) is this map applied to the three world unit vectors, orthonormalised by the
iteration of sec. 3; R(h) = M_rot R (3.9). The look-ahead of a point uses the same M_rot, so
a joint that the look-ahead found closed is closed after the step too. Zero principal moments
give zero entries of J^-1 (the report's rule); the spin about such an axis carries no energy
and is dropped.

Sub-steps: the series converges like (lambda h)^k/k!, lambda = |L| ||A|| (the fastest turn of
a body vector or of w itself: the symmetry axis of a free top circles L at |L|/I1). A top
spinning at 60 rad/s turns its axis by 2 rad in a step of 1/60 s, where the order-4 series
is far off (its heavy-top precession came out 4.5 % fast at 10 deg tilt, half the rate at
25 deg). Where lambda h (with the Frobenius norm for ||A||) exceeds SUBSTEP_ANGLE, the
series runs over m equal sub-steps, each from the state the last one reached (A and I turned
by its M_rot, L kept), and M_rot is their product; slower bodies take the single step as
before, bit for bit.
A body that turns by more than ALIAS_TURN (|w| h, about half a turn) in one step keeps the
single series: there the exact rotation is ambiguous to the corrections, since a joint whose
anchor is off the spin axis closes after one more full turn as well, and the iteration finds
that root (a light pendulum bob kicked to 117 rad/s by a torque at h = 1/30 settled on it);
the series, whose error is not periodic, keeps them on the right one.
"""
import math

import numpy as np
from numba import njit

from .jitopts import NO_REFCOUNT
from .rotations import orthonormalise

SUBSTEP_ANGLE = 0.5     # rad: the most lambda h of one series (sub-)step, see the module doc
MAX_SUBSTEPS = 64       # a body turning faster than 32 rad a step is cut into 64 all the same
ALIAS_TURN = 3.0        # rad: a body turning more than this in a step keeps the single series


@njit(cache=True)
def world_inertia(rot, inertia, inv_inertia, out_inertia, out_inv_inertia):
    """I = R diag(J) R^T and A = R diag(J^-1) R^T (one body)."""
    for i in range(3):
        for j in range(3):
            s = 0.0
            t = 0.0
            for k in range(3):
                s += rot[i, k] * inertia[k] * rot[j, k]
                t += rot[i, k] * inv_inertia[k] * rot[j, k]
            out_inertia[i, j] = s
            out_inv_inertia[i, j] = t


@njit(cache=True)
def omega_series(inertia_w, inv_inertia_w, omega, h, order, out, scratch):
    """Scaled Taylor terms o_0..o_N of w(t) at t = h (see module doc). out: (N+1, 3).

    scratch: (N+1, 3, 3) for the scaled inverse-inertia terms a_k (symmetric). Each a_{k+1}
    is summed in registers (s_rc), with every entry's additions in the order of the loop
    `for c: S[:, c] += f b; S[c, :] += f b` over the columns b = o x a[:, c] of [o]x a:
    entry (r, c) gets f B[c, r] then f B[r, c] (r < c), the diagonal f B[r, r] twice.
    """
    lx = inertia_w[0, 0] * omega[0] + inertia_w[0, 1] * omega[1] + inertia_w[0, 2] * omega[2]
    ly = inertia_w[1, 0] * omega[0] + inertia_w[1, 1] * omega[1] + inertia_w[1, 2] * omega[2]
    lz = inertia_w[2, 0] * omega[0] + inertia_w[2, 1] * omega[1] + inertia_w[2, 2] * omega[2]
    for i in range(3):
        for j in range(3):
            scratch[0, i, j] = inv_inertia_w[i, j]
        out[0, i] = inv_inertia_w[i, 0] * lx + inv_inertia_w[i, 1] * ly + inv_inertia_w[i, 2] * lz
    for k in range(order):
        f = h / (k + 1)
        s00 = s01 = s02 = s11 = s12 = s22 = 0.0
        for i in range(k + 1):
            ox, oy, oz = out[i, 0], out[i, 1], out[i, 2]
            a = scratch[k - i]
            # B = [o]x a: B[r, c] = (o x a[:, c])_r
            b00 = oy * a[2, 0] - oz * a[1, 0]
            b10 = oz * a[0, 0] - ox * a[2, 0]
            b20 = ox * a[1, 0] - oy * a[0, 0]
            b01 = oy * a[2, 1] - oz * a[1, 1]
            b11 = oz * a[0, 1] - ox * a[2, 1]
            b21 = ox * a[1, 1] - oy * a[0, 1]
            b02 = oy * a[2, 2] - oz * a[1, 2]
            b12 = oz * a[0, 2] - ox * a[2, 2]
            b22 = ox * a[1, 2] - oy * a[0, 2]
            # sym(B) = B + B^T
            s00 = (s00 + f * b00) + f * b00
            s01 = (s01 + f * b10) + f * b01
            s02 = (s02 + f * b20) + f * b02
            s11 = (s11 + f * b11) + f * b11
            s12 = (s12 + f * b21) + f * b12
            s22 = (s22 + f * b22) + f * b22
        a = scratch[k + 1]
        a[0, 0], a[0, 1], a[0, 2] = s00, s01, s02
        a[1, 0], a[1, 1], a[1, 2] = s01, s11, s12
        a[2, 0], a[2, 1], a[2, 2] = s02, s12, s22
        out[k + 1, 0] = s00 * lx + s01 * ly + s02 * lz
        out[k + 1, 1] = s01 * lx + s11 * ly + s12 * lz
        out[k + 1, 2] = s02 * lx + s12 * ly + s22 * lz


@njit(cache=True)
def rotate_ahead(series, order, h, rx, ry, rz, scratch):
    """x(h) for a body-fixed vector x(0) = r under the rotation series (see module doc).

    series: scaled terms o_0..o_N; scratch: (N+2, 3). Returns the three components.
    """
    scratch[0, 0] = rx
    scratch[0, 1] = ry
    scratch[0, 2] = rz
    tx, ty, tz = rx, ry, rz
    for k in range(order + 1):
        f = h / (k + 1)
        ax = 0.0
        ay = 0.0
        az = 0.0
        for i in range(k + 1):
            ox, oy, oz = series[i, 0], series[i, 1], series[i, 2]
            yx, yy, yz = scratch[k - i, 0], scratch[k - i, 1], scratch[k - i, 2]
            ax += oy * yz - oz * yy
            ay += oz * yx - ox * yz
            az += ox * yy - oy * yx
        scratch[k + 1, 0] = f * ax
        scratch[k + 1, 1] = f * ay
        scratch[k + 1, 2] = f * az
        tx += f * ax
        ty += f * ay
        tz += f * az
    return tx, ty, tz


@njit(cache=True)
def rotation_over_step(series, order, h, out, scratch_y):
    """M_rot (3.8): the images of the world unit vectors over h, orthonormalised.

    rotate_ahead's recurrence for the three unit vectors at once: column c of the scaled
    terms Y_k = scratch_y[k] is y_k for x(0) = e_c, i.e. Y_0 = E and
        Y_{k+1} = h/(k+1) sum_i [o_i]x Y_{k-i},   M = sum_k Y_k.
    Each column gets exactly rotate_ahead's operations in the same order (same rounding);
    running the three independent columns side by side lets the CPU overlap their latency
    chains (3x faster than three rotate_ahead calls), and summing each Y_{k+1} in registers
    (n_rc) keeps it from a store and a load per term. scratch_y: (N+2, 3, 3).
    """
    for r in range(3):
        for c in range(3):
            scratch_y[0, r, c] = 1.0 if r == c else 0.0
            out[r, c] = scratch_y[0, r, c]
    for k in range(order + 1):
        f = h / (k + 1)
        n00 = n01 = n02 = n10 = n11 = n12 = n20 = n21 = n22 = 0.0
        for i in range(k):
            ox, oy, oz = series[i, 0], series[i, 1], series[i, 2]
            y = scratch_y[k - i]
            # o_i x (column c of Y_{k-i})
            n00 += oy * y[2, 0] - oz * y[1, 0]
            n10 += oz * y[0, 0] - ox * y[2, 0]
            n20 += ox * y[1, 0] - oy * y[0, 0]
            n01 += oy * y[2, 1] - oz * y[1, 1]
            n11 += oz * y[0, 1] - ox * y[2, 1]
            n21 += ox * y[1, 1] - oy * y[0, 1]
            n02 += oy * y[2, 2] - oz * y[1, 2]
            n12 += oz * y[0, 2] - ox * y[2, 2]
            n22 += ox * y[1, 2] - oy * y[0, 2]
        # last term i = k: o_k x e_c with Y_0 = E, i.e. [o_k]x itself (its products with 0
        # and 1 are exact, so leaving them out changes no bit)
        ox, oy, oz = series[k, 0], series[k, 1], series[k, 2]
        n10 += oz
        n20 -= oy
        n01 -= oz
        n21 += ox
        n02 += oy
        n12 -= ox
        nxt = scratch_y[k + 1]
        nxt[0, 0], nxt[0, 1], nxt[0, 2] = f * n00, f * n01, f * n02
        nxt[1, 0], nxt[1, 1], nxt[1, 2] = f * n10, f * n11, f * n12
        nxt[2, 0], nxt[2, 1], nxt[2, 2] = f * n20, f * n21, f * n22
        for r in range(3):
            for c in range(3):
                out[r, c] += nxt[r, c]
    orthonormalise(out)


@njit(cache=True)
def rotation_substeps(inertia_w, inv_inertia_w, omega, h):
    """How many equal sub-steps the series needs over h: ceil(lambda h / SUBSTEP_ANGLE),
    lambda = |I w| ||A||_F (module doc); 1 for every body that turns slowly."""
    lx = inertia_w[0, 0] * omega[0] + inertia_w[0, 1] * omega[1] + inertia_w[0, 2] * omega[2]
    ly = inertia_w[1, 0] * omega[0] + inertia_w[1, 1] * omega[1] + inertia_w[1, 2] * omega[2]
    lz = inertia_w[2, 0] * omega[0] + inertia_w[2, 1] * omega[1] + inertia_w[2, 2] * omega[2]
    a2 = 0.0
    for i in range(3):
        for j in range(3):
            a2 += inv_inertia_w[i, j] * inv_inertia_w[i, j]
    turn = h * math.sqrt((lx * lx + ly * ly + lz * lz) * a2)
    if not turn > SUBSTEP_ANGLE:        # (a NaN takes the single step and is caught later)
        return 1
    if h * math.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2) > ALIAS_TURN:
        return 1                        # ambiguous: a full turn more closes a joint as well
    return min(int(math.ceil(turn / SUBSTEP_ANGLE)), MAX_SUBSTEPS)


@njit(cache=True, **NO_REFCOUNT)
def series_over_step(inertia_w, inv_inertia_w, omega, h, order, series, m_rot, scratch_a,
                     scratch_x):
    """The look-ahead's rotation over h: M_rot (3.8) into m_rot, and into `series` scaled
    omega terms whose sum is w(h). One series over h, or, for a fast-turning body, m
    sub-steps (module doc), `series` then holding the last one's terms.
    scratch_a: (N+1, 3, 3); scratch_x: (N+7, 3, 3) (rotation_over_step uses N+2)."""
    m = rotation_substeps(inertia_w, inv_inertia_w, omega, h)
    if m == 1:
        omega_series(inertia_w, inv_inertia_w, omega, h, order, series, scratch_a)
        rotation_over_step(series, order, h, m_rot, scratch_x)
        return
    n = order + 2
    iw, aw, mk, tmp = scratch_x[n], scratch_x[n + 1], scratch_x[n + 2], scratch_x[n + 3]
    w = scratch_x[n + 4, 0]
    for i in range(3):
        w[i] = omega[i]
        for j in range(3):
            iw[i, j] = inertia_w[i, j]
            aw[i, j] = inv_inertia_w[i, j]
            m_rot[i, j] = 1.0 if i == j else 0.0
    hs = h / m
    for _ in range(m):
        omega_series(iw, aw, w, hs, order, series, scratch_a)
        rotation_over_step(series, order, hs, mk, scratch_x)
        for i in range(3):
            s = 0.0
            for k in range(order + 1):
                s += series[k, i]
            w[i] = s
        turn_by(mk, m_rot, tmp)             # M_rot <- M_k M_rot
        turn_by(mk, iw, tmp)                # I <- M_k I M_k^T
        turn_back(iw, mk, tmp)
        turn_by(mk, aw, tmp)                # A <- M_k A M_k^T
        turn_back(aw, mk, tmp)
    orthonormalise(m_rot)


@njit(cache=True)
def turn_by(mk, x, tmp):
    """x <- M_k x (3 x 3, in place through tmp)."""
    for i in range(3):
        for j in range(3):
            tmp[i, j] = mk[i, 0] * x[0, j] + mk[i, 1] * x[1, j] + mk[i, 2] * x[2, j]
    for i in range(3):
        for j in range(3):
            x[i, j] = tmp[i, j]


@njit(cache=True)
def turn_back(x, mk, tmp):
    """x <- x M_k^T (3 x 3, in place through tmp)."""
    for i in range(3):
        for j in range(3):
            tmp[i, j] = x[i, 0] * mk[j, 0] + x[i, 1] * mk[j, 1] + x[i, 2] * mk[j, 2]
    for i in range(3):
        for j in range(3):
            x[i, j] = tmp[i, j]


@njit(cache=True, **NO_REFCOUNT)
def advance_body(b, pos, rot, vel, omega, pred_pos, pred_rot, pred_series, order, gravity, h,
                 scratch_r):
    """P-step 3 for dynamic body b from its look-ahead (pred_*): R(h) = M_rot R (3.9),
    s(h) and v(h) by (3.4), w(h) = sum of the scaled series terms. scratch_r: (3, 3)."""
    r = scratch_r
    for i in range(3):
        for j in range(3):
            r[i, j] = pred_rot[b, i, 0] * rot[b, 0, j] + pred_rot[b, i, 1] * rot[b, 1, j] \
                + pred_rot[b, i, 2] * rot[b, 2, j]
    orthonormalise(r)  # M_rot and R are orthonormal; this only removes rounding drift
    for i in range(3):
        for j in range(3):
            rot[b, i, j] = r[i, j]
    for i in range(3):
        w = 0.0
        for k in range(order + 1):
            w += pred_series[b, k, i]
        omega[b, i] = w
        pos[b, i] = pred_pos[b, i]
        vel[b, i] += gravity[i] * h


def look_ahead(pos, rot, vel, omega, inertia, point, gravity, h, order=4):
    """Where the body point `point` (world, at t) will be at t + h on the ballistic path.

    Schmitt's LookAhead(k, p, h) = s(t+h) + Integrate_w(k, p - s, h) for one body given by its
    state (pos, rot, vel, omega) and principal moments `inertia`. Convenience (not a hot path).
    """
    inertia = np.asarray(inertia, dtype=np.float64)
    inv = np.where(inertia > 0, 1.0 / np.where(inertia > 0, inertia, 1.0), 0.0)
    iw = np.empty((3, 3))
    aw = np.empty((3, 3))
    world_inertia(np.asarray(rot, np.float64), inertia, inv, iw, aw)
    m = np.empty((3, 3))
    series_over_step(iw, aw, np.asarray(omega, np.float64), h, order, np.empty((order + 1, 3)),
                     m, np.empty((order + 1, 3, 3)), np.empty((order + 7, 3, 3)))
    r = np.asarray(point, np.float64) - pos
    s = np.asarray(pos) + np.asarray(vel) * h + 0.5 * np.asarray(gravity) * h * h
    return s + m @ r
