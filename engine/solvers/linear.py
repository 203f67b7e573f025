"""The global block system over all ball joints (Schmitt sec. 7, Bender sec. 3.2 "LGS").

Unknowns: the joints' impulses p_i (+p_i on the joint's first body, -p_i on its second).
Block K_ji is the change of joint j's relative velocity c_j = u_a - u_b per unit p_i:
    K_jj = K_A(r_a) + K_B(r_b),
    K_ji = s_j s_i K_C(r_j, r_i)   if j and i share the dynamic body C (s = +1 if C is the
                                    joint's first body, -1 if its second),   0 otherwise,
    K_C(r1, r2) = E/m_C - [r1]x A_C [r2]x   (velocity at arm r1 per impulse at arm r2).
K p = d with d_j = (b'_j - a'_j)/h (position stage) or u_b - u_a (velocity stage).

K is symmetric positive definite (for independent joints) and sparse; it only depends on the
arms and inertias at the current time, so it is factored once while time stands still:
block LDL^T, D 3x3 blocks, in the fill-reducing order of graph.py (right-looking: after
pivot k, every pair of rows i >= j of column k updates A_ij -= L_ik A_jk^T, with
L_ik = A_ik D_k^-1). The pattern and the update lists come from graph.py; this file only
does arithmetic on flat arrays. Cost: one 3x3 product per update; for the trees here the
minimum-degree order keeps every column at <= 2 off-diagonal blocks, so O(n).
"""
from numba import njit

from ..impulses import impulse_to, invert3
from ..jitopts import NO_REFCOUNT
from .graph import C_FACTOR_OPS

PIVOT_TOL = 1e-9  # relative size of a pivot block below which K counts as singular


@njit(cache=True)
def add_k_pair(static, inv_mass, inv_inertia_w, c, r1x, r1y, r1z, r2x, r2y, r2z, sign, out):
    """out += sign K_C(r1, r2) = sign (E/m - [r1]x A [r2]x)."""
    a = inv_inertia_w
    im = inv_mass[c]
    for col in range(3):
        # p = e_col: w = A (r2 x p), then -(r1 x w)
        qx = (r2y if col == 2 else 0.0) - (r2z if col == 1 else 0.0)
        qy = (r2z if col == 0 else 0.0) - (r2x if col == 2 else 0.0)
        qz = (r2x if col == 1 else 0.0) - (r2y if col == 0 else 0.0)
        wx = a[c, 0, 0] * qx + a[c, 0, 1] * qy + a[c, 0, 2] * qz
        wy = a[c, 1, 0] * qx + a[c, 1, 1] * qy + a[c, 1, 2] * qz
        wz = a[c, 2, 0] * qx + a[c, 2, 1] * qy + a[c, 2, 2] * qz
        out[0, col] += sign * (-(r1y * wz - r1z * wy) + (im if col == 0 else 0.0))
        out[1, col] += sign * (-(r1z * wx - r1x * wz) + (im if col == 1 else 0.0))
        out[2, col] += sign * (-(r1x * wy - r1y * wx) + (im if col == 2 else 0.0))


@njit(cache=True, **NO_REFCOUNT)
def factor(W, arm, inv_mass, inv_inertia_w, static):
    """Assemble K and factor it (LDL^T). Returns False on a singular pivot block."""
    val, a_keep, dinv = W.lin_val, W.lin_a, W.lin_dinv
    g = W.lin_joint.shape[0]
    val[:, :, :] = 0.0
    for q in range(W.lin_con_slot.shape[0]):
        rj, rs, cj, cs = W.lin_con_rj[q], W.lin_con_rs[q], W.lin_con_cj[q], W.lin_con_cs[q]
        add_k_pair(static, inv_mass, inv_inertia_w, W.lin_con_body[q], arm[rj, rs, 0],
                   arm[rj, rs, 1], arm[rj, rs, 2], arm[cj, cs, 0], arm[cj, cs, 1],
                   arm[cj, cs, 2], 1.0 if rs == cs else -1.0, val[W.lin_con_slot[q]])
    col_ptr, upd_ptr = W.lin_col_ptr, W.lin_upd_ptr
    ua, ub, ud = W.lin_upd_a, W.lin_upd_b, W.lin_upd_dst
    for k in range(g):
        big = 0.0
        for r in range(3):
            for c in range(3):
                big = max(big, abs(val[k, r, c]))
        W.lin_scale[k] = big
    ops = 0
    for k in range(g):
        # a pivot that the updates cancelled down to roundoff: the joint is redundant
        big = 0.0
        for r in range(3):
            for c in range(3):
                big = max(big, abs(val[k, r, c]))
        if big <= PIVOT_TOL * W.lin_scale[k] or not invert3(val[k], dinv[k]):
            return False
        for e in range(col_ptr[k], col_ptr[k + 1]):
            s = g + e
            for r in range(3):
                for c in range(3):
                    a_keep[e, r, c] = val[s, r, c]
            for r in range(3):  # L_ik = A_ik D_k^-1
                for c in range(3):
                    val[s, r, c] = a_keep[e, r, 0] * dinv[k, 0, c] \
                        + a_keep[e, r, 1] * dinv[k, 1, c] + a_keep[e, r, 2] * dinv[k, 2, c]
            ops += 1
        for u in range(upd_ptr[k], upd_ptr[k + 1]):
            li, aj, d = g + ua[u], ub[u], ud[u]
            for r in range(3):  # A_ij -= L_ik A_jk^T
                for c in range(3):
                    val[d, r, c] -= val[li, r, 0] * a_keep[aj, c, 0] \
                        + val[li, r, 1] * a_keep[aj, c, 1] + val[li, r, 2] * a_keep[aj, c, 2]
            ops += 1
        ops += 1
    W.count[C_FACTOR_OPS] = ops
    return True


@njit(cache=True, **NO_REFCOUNT)
def solve(W):
    """y <- K^-1 y with the factors (forward L, D^-1, backward L^T), positions k."""
    val, dinv, y, row = W.lin_val, W.lin_dinv, W.lin_y, W.lin_row
    col_ptr = W.lin_col_ptr
    g = W.lin_joint.shape[0]
    for k in range(g):
        for e in range(col_ptr[k], col_ptr[k + 1]):
            i, s = row[e], g + e
            for r in range(3):
                y[i, r] -= val[s, r, 0] * y[k, 0] + val[s, r, 1] * y[k, 1] \
                    + val[s, r, 2] * y[k, 2]
    for k in range(g):
        x0, x1, x2 = y[k, 0], y[k, 1], y[k, 2]
        for r in range(3):
            y[k, r] = dinv[k, r, 0] * x0 + dinv[k, r, 1] * x1 + dinv[k, r, 2] * x2
    for k in range(g - 1, -1, -1):
        for e in range(col_ptr[k], col_ptr[k + 1]):
            i, s = row[e], g + e
            for r in range(3):
                y[k, r] -= val[s, 0, r] * y[i, 0] + val[s, 1, r] * y[i, 1] \
                    + val[s, 2, r] * y[i, 2]


@njit(cache=True, **NO_REFCOUNT)
def apply(W, body, arm, static, inv_mass, vel, omega, inv_inertia_w, pred_ok):
    """The solved impulses: +p_k on the joint's first body, -p_k on its second."""
    y = W.lin_y
    for k in range(W.lin_joint.shape[0]):
        j = W.lin_joint[k]
        impulse_to(static, inv_mass, vel, omega, inv_inertia_w, pred_ok, body[j, 0],
                   arm[j, 0, 0], arm[j, 0, 1], arm[j, 0, 2], y[k, 0], y[k, 1], y[k, 2])
        impulse_to(static, inv_mass, vel, omega, inv_inertia_w, pred_ok, body[j, 1],
                   arm[j, 1, 0], arm[j, 1, 1], arm[j, 1, 2], -y[k, 0], -y[k, 1], -y[k, 2])
