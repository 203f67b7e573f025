"""Depth projection after a step: contacts detected anew at t + h that are deeper than
SPLIT_DEPTH are pushed apart by moving the bodies, frictionless, velocities untouched.

Why: the position stage keeps every known contact point from sinking further, but
  - in a jammed pile Gauss-Seidel with Coulomb friction stalls: pushing one cube out of
    its neighbour needs another to slide along a funnel plate, friction holds it, and the
    row's impulse grows every cycle while the depth stays;
  - cubes that tumble at h = 1/60 (0.2 rad a step) meet with corners that were not
    contact points at t; such depth is only seen by detecting again.
What: rows c (points a on A, b on B, normal n from B to A, depth d > 0 overlapping) of a
detection at the state after the step; free bodies (not static, not on a joint) get a shift
x and a small rotation q (rotation vector), linear in the row impulses p:
    x += p n / m,   q += A (r x n) p      (+ on A, - on B, A = R J^-1 R^T),
    row gap g = -d + n . ((x_A + q_A x r_A) - (x_B + q_B x r_B)),
Gauss-Seidel on g >= target with p = (target - g) / (n^T K n), accumulated p >= 0, target 0
for rows deeper than SPLIT_DEPTH and -d for the others (they may not sink further). Then
s += x, R <- exp([q]x) R. This is the position projection of split-impulse solvers
(Catto's NGS, Bullet's split impulse), used here only where the step left real depth.
"""
import numpy as np
from numba import njit

from .contact_rows import SPLIT_DEPTH

TINY = 1e-12


@njit(cache=True)
def _row_setup(pos, rot, inv_mass, inv_inertia_w, free, body, local, normal, arm, knn):
    """World arms and n^T K n of the free sides of every row."""
    for c in range(body.shape[0]):
        k = 0.0
        n = normal[c]
        for side in range(2):
            b = body[c, side]
            for i in range(3):
                arm[c, side, i] = rot[b, i, 0] * local[c, side, 0] \
                    + rot[b, i, 1] * local[c, side, 1] + rot[b, i, 2] * local[c, side, 2]
            if not free[b]:
                continue
            r = arm[c, side]
            cx, cy, cz = r[1] * n[2] - r[2] * n[1], r[2] * n[0] - r[0] * n[2], \
                r[0] * n[1] - r[1] * n[0]
            A = inv_inertia_w[b]
            k += inv_mass[b] + cx * (A[0, 0] * cx + A[0, 1] * cy + A[0, 2] * cz) \
                + cy * (A[1, 0] * cx + A[1, 1] * cy + A[1, 2] * cz) \
                + cz * (A[2, 0] * cx + A[2, 1] * cy + A[2, 2] * cz)
        knn[c] = k


@njit(cache=True)
def project(pos, rot, inv_mass, inv_inertia_w, free, body, local, normal, depth, eps,
            sweeps, arm, knn, acc, shift, tilt, moved):
    """The projection (module docstring) over the rows of one detection; moves the free
    bodies. Scratch: arm (c,2,3), knn, acc (c,), shift, tilt (n,3), moved (n,) bool.
    Returns (deepest row before, deepest after [m], contact visits)."""
    nc = body.shape[0]
    worst_before = 0.0
    for c in range(nc):
        acc[c] = 0.0
        worst_before = max(worst_before, depth[c])
    if worst_before <= SPLIT_DEPTH:
        return worst_before, worst_before, 0
    for b in range(pos.shape[0]):
        moved[b] = False
        for i in range(3):
            shift[b, i] = 0.0
            tilt[b, i] = 0.0
    _row_setup(pos, rot, inv_mass, inv_inertia_w, free, body, local, normal, arm, knn)
    visits = 0
    for _ in range(sweeps):
        worst = 0.0
        for c in range(nc):
            a, b = body[c, 0], body[c, 1]
            if knn[c] <= TINY or not (depth[c] > SPLIT_DEPTH or moved[a] or moved[b]):
                continue
            visits += 1
            n = normal[c]
            g = -depth[c]
            for side in range(2):
                q = a if side == 0 else b
                if moved[q]:
                    r = arm[c, side]
                    t = tilt[q]
                    sgn = 1.0 if side == 0 else -1.0
                    g += sgn * (n[0] * (shift[q, 0] + t[1] * r[2] - t[2] * r[1])
                                + n[1] * (shift[q, 1] + t[2] * r[0] - t[0] * r[2])
                                + n[2] * (shift[q, 2] + t[0] * r[1] - t[1] * r[0]))
            target = 0.0 if depth[c] > SPLIT_DEPTH else min(-depth[c], 0.0)
            p = (target - g) / knn[c]
            new = max(acc[c] + p, 0.0)
            p = new - acc[c]
            if p == 0.0:
                continue
            acc[c] = new
            worst = max(worst, abs(p) * knn[c])
            for side in range(2):
                q = a if side == 0 else b
                if not free[q]:
                    continue
                s = p if side == 0 else -p
                r = arm[c, side]
                A = inv_inertia_w[q]
                lx, ly, lz = s * (r[1] * n[2] - r[2] * n[1]), s * (r[2] * n[0] - r[0] * n[2]), \
                    s * (r[0] * n[1] - r[1] * n[0])
                for i in range(3):
                    shift[q, i] += s * n[i] * inv_mass[q]
                    tilt[q, i] += A[i, 0] * lx + A[i, 1] * ly + A[i, 2] * lz
                moved[q] = True
        if worst < eps:
            break
    worst_after = 0.0
    for c in range(nc):
        g = -depth[c]
        for side in range(2):
            q = body[c, side]
            if moved[q]:
                r = arm[c, side]
                t = tilt[q]
                sgn = 1.0 if side == 0 else -1.0
                n = normal[c]
                g += sgn * (n[0] * (shift[q, 0] + t[1] * r[2] - t[2] * r[1])
                            + n[1] * (shift[q, 1] + t[2] * r[0] - t[0] * r[2])
                            + n[2] * (shift[q, 2] + t[0] * r[1] - t[1] * r[0]))
        worst_after = max(worst_after, -g)
    for b in range(pos.shape[0]):
        if moved[b]:
            _move(pos, rot, shift, tilt, b)
    return worst_before, worst_after, visits


@njit(cache=True)
def _move(pos, rot, shift, tilt, b):
    """s += x, R <- exp([q]x) R (Rodrigues)."""
    for i in range(3):
        pos[b, i] += shift[b, i]
    wx, wy, wz = tilt[b, 0], tilt[b, 1], tilt[b, 2]
    angle = np.sqrt(wx * wx + wy * wy + wz * wz)
    if angle == 0.0:
        return
    kx, ky, kz = wx / angle, wy / angle, wz / angle
    s, c1 = np.sin(angle), 1.0 - np.cos(angle)
    r00, r01, r02 = 1.0 - c1 * (ky * ky + kz * kz), c1 * kx * ky - s * kz, c1 * kx * kz + s * ky
    r10, r11, r12 = c1 * kx * ky + s * kz, 1.0 - c1 * (kx * kx + kz * kz), c1 * ky * kz - s * kx
    r20, r21, r22 = c1 * kx * kz - s * ky, c1 * ky * kz + s * kx, 1.0 - c1 * (kx * kx + ky * ky)
    for j in range(3):
        x, y, z = rot[b, 0, j], rot[b, 1, j], rot[b, 2, j]
        rot[b, 0, j] = r00 * x + r01 * y + r02 * z
        rot[b, 1, j] = r10 * x + r11 * y + r12 * z
        rot[b, 2, j] = r20 * x + r21 * y + r22 * z
