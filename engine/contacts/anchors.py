"""Friction anchors (contacts/system.py `_pack` says why): the kernels that carry
a sticking contact's two material points from step to step and measure how far they have
slid apart along the contact plane.

A row's anchors are its contact points in A's and B's body frames (principal frames, as the
detection gives them) where the contact began to stick. Its drift is
    d = R_A (a - p_A) - R_B (b - p_B),   then without its part along n,
the anchored points' world offset less the detected points' (p_A, p_B: this detection's),
so 0 where the anchors are the detected points. Of d only what lies beyond `free` (eps_pos)
is handed on, shrunk continuously: d (|d| - free) / |d|.
"""
import numpy as np
from numba import njit

from ..collision.manifold import I_BA, I_BB, I_FEAT, R_LA, R_LB, R_N


@njit(cache=True)
def anchor_drifts(rot, pos, prev_pos, prev_rot, ints, reals, prev_ints, radius, rows,
                  prev_stick, prev_hold, free, limit, stick, drift):
    """Fill stick (c, 2, 3) with each row's anchors and drift (c, 3) with its drift (module
    doc); ints, reals: this detection's tables, prev_ints the last one's
    (collision/detector.py ContactSet). A row keeps last step's anchors (rows[c] >= 0, the
    matched row, of the same feature, whose prev_hold is set) unless a side is curved
    (radius > 0), a body moved since the last step's end (its pose differs from
    prev_pos/prev_rot: an edit) or the drift exceeds `limit`; else it starts afresh at the
    detected points (drift 0). A row matched by place only (a flipped feature id,
    collision/persist.py) starts afresh: its old anchors were another feature's point, and
    taking them made a resting wall's result 5x more sensitive to the last bit."""
    n_bodies = pos.shape[0]
    known = prev_pos.shape[0] == n_bodies
    moved = np.zeros(n_bodies, dtype=np.int8)      # 0 not checked yet, 1 still, 2 moved
    for c in range(ints.shape[0]):
        for i in range(3):
            stick[c, 0, i] = reals[c, R_LA + i]
            stick[c, 1, i] = reals[c, R_LB + i]
            drift[c, i] = 0.0
        r = rows[c] if c < rows.shape[0] else -1
        if radius[c, 0] != 0.0 or radius[c, 1] != 0.0 or r < 0 or r >= prev_hold.shape[0] \
                or not prev_hold[r] or prev_ints[r, I_FEAT] != ints[c, I_FEAT]:
            continue
        a, b = ints[c, I_BA], ints[c, I_BB]
        if not known or _moved(a, pos, rot, prev_pos, prev_rot, moved) \
                or _moved(b, pos, rot, prev_pos, prev_rot, moved):
            continue
        d0 = d1 = d2 = 0.0      # (scalars: an array here cost an allocation a row)
        for j in range(3):
            ea = prev_stick[r, 0, j] - reals[c, R_LA + j]
            eb = prev_stick[r, 1, j] - reals[c, R_LB + j]
            d0 += rot[a, 0, j] * ea - rot[b, 0, j] * eb
            d1 += rot[a, 1, j] * ea - rot[b, 1, j] * eb
            d2 += rot[a, 2, j] * ea - rot[b, 2, j] * eb
        nx, ny, nz = reals[c, R_N], reals[c, R_N + 1], reals[c, R_N + 2]
        dn = d0 * nx + d1 * ny + d2 * nz
        d0 -= dn * nx
        d1 -= dn * ny
        d2 -= dn * nz
        size = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if size > limit:
            continue
        scale = max(size - free, 0.0) / max(size, free)
        for i in range(3):
            stick[c, 0, i] = prev_stick[r, 0, i]
            stick[c, 1, i] = prev_stick[r, 1, i]
        drift[c, 0] = d0 * scale
        drift[c, 1] = d1 * scale
        drift[c, 2] = d2 * scale


@njit(cache=True, inline='always')
def _moved(b, pos, rot, prev_pos, prev_rot, moved):
    """Has body b's pose changed since the last step's end? (cached in moved)"""
    if moved[b] == 0:
        moved[b] = 1      # (plain ifs: `same = same and ...` compiled 6x slower)
        for i in range(3):
            if pos[b, i] != prev_pos[b, i]:
                moved[b] = 2
            for j in range(3):
                if rot[b, i, j] != prev_rot[b, i, j]:
                    moved[b] = 2
    return moved[b] == 2


@njit(cache=True)
def keep_unmoved(hold, ints, pos, rot, prev_pos, prev_rot):
    """hold[c] stays set only where neither of row c's bodies (ints: the detection's table)
    moved since the last step's end (for a saved state: what anchor_drifts will find at the
    next detection)."""
    known = prev_pos.shape[0] == pos.shape[0]
    moved = np.zeros(pos.shape[0], dtype=np.int8)
    for c in range(hold.shape[0]):
        if hold[c] and (not known
                        or _moved(ints[c, I_BA], pos, rot, prev_pos, prev_rot, moved)
                        or _moved(ints[c, I_BB], pos, rot, prev_pos, prev_rot, moved)):
            hold[c] = False


@njit(cache=True)
def anchors_hold(first, acc_n, acc_t, coef, slide, hold):
    """hold[c]: row c keeps its anchors for the next step: its patch (first[c]) neither slid
    nor reached its static cone, |acc_t| >= mu_s N (N: the patch's position-stage normal
    impulse; the accumulated friction lives in the patch's first row)."""
    n = first.shape[0]
    normal = np.zeros(n)
    for c in range(n):
        normal[first[c]] += acc_n[c]
    for c in range(n):
        f = first[c]
        t = np.sqrt(acc_t[f, 0] ** 2 + acc_t[f, 1] ** 2 + acc_t[f, 2] ** 2)
        hold[c] = not slide[f] and not (t > 0.0 and t >= (1.0 - 1e-6) * coef[f, 1] * normal[f])
