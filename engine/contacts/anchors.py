"""Friction anchors (contacts/system.py `_friction_anchors` says why): the kernels that carry
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


@njit(cache=True)
def anchor_drifts(rot, pos, prev_pos, prev_rot, body_a, body_b, point_a, point_b, normal,
                  radius, rows, prev_stick, prev_hold, free, limit, stick, drift):
    """Fill stick (c, 2, 3) with each row's anchors and drift (c, 3) with its drift (module
    doc). A row keeps last step's anchors (rows[c] >= 0, the matched row, whose prev_hold is
    set) unless a side is curved (radius > 0), a body moved since the last step's end (its
    pose differs from prev_pos/prev_rot: an edit) or the drift exceeds `limit`; else it
    starts afresh at the detected points (drift 0)."""
    n_bodies = pos.shape[0]
    known = prev_pos.shape[0] == n_bodies
    moved = np.zeros(n_bodies, dtype=np.int8)      # 0 not checked yet, 1 still, 2 moved
    for c in range(body_a.shape[0]):
        for i in range(3):
            stick[c, 0, i] = point_a[c, i]
            stick[c, 1, i] = point_b[c, i]
            drift[c, i] = 0.0
        r = rows[c] if c < rows.shape[0] else -1
        if radius[c, 0] != 0.0 or radius[c, 1] != 0.0 or r < 0 or r >= prev_hold.shape[0] \
                or not prev_hold[r]:
            continue
        a, b = body_a[c], body_b[c]
        if not known or _moved(a, pos, rot, prev_pos, prev_rot, moved) \
                or _moved(b, pos, rot, prev_pos, prev_rot, moved):
            continue
        d = np.zeros(3)
        for i in range(3):
            for j in range(3):
                d[i] += rot[a, i, j] * (prev_stick[r, 0, j] - point_a[c, j]) \
                    - rot[b, i, j] * (prev_stick[r, 1, j] - point_b[c, j])
        dn = d[0] * normal[c, 0] + d[1] * normal[c, 1] + d[2] * normal[c, 2]
        for i in range(3):
            d[i] -= dn * normal[c, i]
        size = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        if size > limit:
            continue
        scale = max(size - free, 0.0) / max(size, free)
        for i in range(3):
            stick[c, 0, i] = prev_stick[r, 0, i]
            stick[c, 1, i] = prev_stick[r, 1, i]
            drift[c, i] = d[i] * scale


@njit(cache=True)
def _moved(b, pos, rot, prev_pos, prev_rot, moved):
    """Has body b's pose changed since the last step's end? (cached in moved)"""
    if moved[b] == 0:
        same = True
        for i in range(3):
            same = same and pos[b, i] == prev_pos[b, i]
            for j in range(3):
                same = same and rot[b, i, j] == prev_rot[b, i, j]
        moved[b] = 1 if same else 2
    return moved[b] == 2


@njit(cache=True)
def keep_unmoved(hold, body_a, body_b, pos, rot, prev_pos, prev_rot):
    """hold[c] stays set only where neither of row c's bodies moved since the last step's
    end (for a saved state: what anchor_drifts will find at the next detection)."""
    known = prev_pos.shape[0] == pos.shape[0]
    moved = np.zeros(pos.shape[0], dtype=np.int8)
    for c in range(hold.shape[0]):
        if hold[c] and (not known or _moved(body_a[c], pos, rot, prev_pos, prev_rot, moved)
                        or _moved(body_b[c], pos, rot, prev_pos, prev_rot, moved)):
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
