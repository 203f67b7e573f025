"""O(n) solve for acyclic joint graphs (Baraff 1996, "Linear-time dynamics using Lagrange
multipliers"; Bender sec. 3.2 "O(n)-Verfahren").

Graph: one node per dynamic body (6 unknowns: velocity change dv = (dv, dw)) and per tree
joint (3 unknowns: impulse p); edges body-joint. For joint j and its dynamic body on side s
with arm r: G_js = sgn_s [E, -[r]x] (sgn = +1 first body, -1 second), so the relative
velocity change of the joint is dc_j = sum_s G_js dv_s, and the impulse acts on the body as
G_js^T p = sgn_s (p, r x p). The system
    [ M   -G^T ] [dv]   [  0 ]
    [ -G    0  ] [ p] = [ -d ]        (M dv = G^T p,  G dv = d)
is the joint system K p = d with K = G M^-1 G^T, but its graph is the body-joint tree, so a
block LDL^T in an order where every node comes after its children (graph.py) creates no
fill-in: each node has only its parent left when it is eliminated.

Factor (children first), with W_b = diag(E/m, A) the body's inverse mass:
    body b:   D_b = M_b + S_b,  S_b = sum over child joints j of G_jb^T E_j G_jb,
              D_b^-1 by a 6x6 Cholesky of M_b + S_b; for a body with a zero principal
              moment (A singular: J = 0 acts as in the iterative solver, no response about
              that axis) as (E + W_b S_b)^-1 W_b instead, which never forms M_b (E + W S is
              invertible because W S has no negative eigenvalues)
    joint j:  D_j = -G_jc D_c^-1 G_jc^T (c its child body),  E_j = -D_j^-1
              (E_j^-1 is the articulated K matrix of the joint).
Solve (x = right side; z = the solution):
    forward, children first:  body b: z_b = D_b^-1 x_b, x_parent-joint += G_pb z_b
                              joint j: z_j = -E_j x_j, x_parent-body += G_jA^T z_j
    backward, parents first:  body b: z_b += D_b^-1 G_pb^T z_p
                              joint j: z_j -= E_j G_jA z_A
z_b is the body's velocity change and z_j the joint's impulse. Per node a fixed number of
6x6/3x3 block operations: O(n) time and memory. Root joints (to the world or a fixed body)
have no parent; loop-closing joints are not in the tree (rounds.py treats them).
"""
from numba import njit

from ..impulses import invert3
from ..jitopts import NO_REFCOUNT
from .graph import C_FACTOR_OPS


@njit(cache=True, inline='always')
def _skew_times(r, v0, v1, v2):
    """r x v."""
    return r[1] * v2 - r[2] * v1, r[2] * v0 - r[0] * v2, r[0] * v1 - r[1] * v0


@njit(cache=True, **NO_REFCOUNT)
def _gauss_jordan6(a, n_rhs):
    """Solve a[:, :6] X = a[:, 6:6+n_rhs] in place (partial pivoting); X in a[:, 6:].
    Returns False if a pivot vanishes."""
    for k in range(6):
        p = k
        best = abs(a[k, k])
        for i in range(k + 1, 6):
            if abs(a[i, k]) > best:
                best = abs(a[i, k])
                p = i
        if best <= 1e-300:
            return False
        if p != k:
            for c in range(6 + n_rhs):
                t = a[k, c]
                a[k, c] = a[p, c]
                a[p, c] = t
        inv = 1.0 / a[k, k]
        for c in range(k, 6 + n_rhs):
            a[k, c] *= inv
        for i in range(6):
            if i != k:
                f = a[i, k]
                if f != 0.0:
                    for c in range(k, 6 + n_rhs):
                        a[i, c] -= f * a[k, c]
    return True


@njit(cache=True, **NO_REFCOUNT)
def _spd_inverse6(a, out, b):
    """out[b] = a[:, :6]^-1 for a symmetric positive definite a (Cholesky a = L L^T in the
    lower triangle of a, L^-1 in a[:, 6:12], then L^-T L^-1). False if not positive."""
    for j in range(6):
        d = a[j, j]
        for k in range(j):
            d -= a[j, k] * a[j, k]
        if not d > 0.0:
            return False
        d = d ** 0.5
        a[j, j] = d
        for i in range(j + 1, 6):
            v = a[i, j]
            for k in range(j):
                v -= a[i, k] * a[j, k]
            a[i, j] = v / d
    for j in range(6):  # columns of L^-1 (lower triangular)
        for i in range(6):
            if i < j:
                a[i, 6 + j] = 0.0
                continue
            v = 1.0 if i == j else 0.0
            for k in range(j, i):
                v -= a[i, k] * a[k, 6 + j]
            a[i, 6 + j] = v / a[i, i]
    for i in range(6):  # (L^-T L^-1)_ic = sum_k>=max(i,c) Linv_ki Linv_kc
        for c in range(i, 6):
            v = 0.0
            for k in range(c, 6):
                v += a[k, 6 + i] * a[k, 6 + c]
            out[b, i, c] = v
            out[b, c, i] = v
    return True


@njit(cache=True, **NO_REFCOUNT)
def _body_dinv(W, b, inv_mass, inertia_w, inv_inertia, inv_inertia_w):
    """D_b^-1 = (M_b + S_b)^-1 by Cholesky where M_b is regular (every principal moment > 0),
    else (E + W_b S_b)^-1 W_b by Gauss-Jordan; W_b itself for a body without child joints."""
    dinv = W.tr_dinv
    im = inv_mass[b]
    if W.tr_nchild[b] == 0:
        for r in range(6):
            for c in range(6):
                dinv[b, r, c] = 0.0
        for i in range(3):
            dinv[b, i, i] = im
            for c in range(3):
                dinv[b, 3 + i, 3 + c] = inv_inertia_w[b, i, c]
        return True
    a, s = W.tr_gj, W.tr_s
    if inv_inertia[b, 0] > 0.0 and inv_inertia[b, 1] > 0.0 and inv_inertia[b, 2] > 0.0:
        for r in range(6):
            for c in range(r + 1):
                v = s[b, r, c]
                if r < 3 and c == r:
                    v += 1.0 / im
                elif r >= 3 and c >= 3:
                    v += inertia_w[b, r - 3, c - 3]
                a[r, c] = v
        return _spd_inverse6(a, dinv, b)
    for r in range(6):  # [E + W S | W]
        for c in range(6):
            if r < 3:
                v = im * s[b, r, c]
            else:
                v = inv_inertia_w[b, r - 3, 0] * s[b, 3, c] \
                    + inv_inertia_w[b, r - 3, 1] * s[b, 4, c] \
                    + inv_inertia_w[b, r - 3, 2] * s[b, 5, c]
            a[r, c] = v + (1.0 if r == c else 0.0)
            w = 0.0
            if r < 3 and c == r:
                w = im
            elif r >= 3 and c >= 3:
                w = inv_inertia_w[b, r - 3, c - 3]
            a[r, 6 + c] = w
    if not _gauss_jordan6(a, 6):
        return False
    for r in range(6):  # symmetric in exact arithmetic: keep it so
        for c in range(6):
            dinv[b, r, c] = 0.5 * (a[r, 6 + c] + a[c, 6 + r])
    return True


@njit(cache=True, **NO_REFCOUNT)
def factor(W, body, arm, inv_mass, inertia_w, inv_inertia, inv_inertia_w):
    """Block LDL^T of Baraff's matrix in the children-first order. False if singular."""
    s_acc, dinv, e_mat, k3 = W.tr_s, W.tr_dinv, W.tr_e, W.tr_gj
    order = W.tr_order
    for q in range(order.shape[0]):
        node = order[q]
        if node >= 0:
            for r in range(6):
                for c in range(6):
                    s_acc[node, r, c] = 0.0
    ops = 0
    for q in range(order.shape[0]):
        node = order[q]
        if node >= 0:
            if not _body_dinv(W, node, inv_mass, inertia_w, inv_inertia, inv_inertia_w):
                return False
            ops += 1
            continue
        j = -node - 1
        cs = W.tr_child_side[j]
        c = body[j, cs]
        r = arm[j, cs]
        # K_art = G D_c^-1 G^T, G = [E, -[r]x] (the side's sign cancels): X = D^-1 G^T in
        # k3[:, 6:9] (column i of G^T is (e_i, r x e_i)), then K_art = X_top - r x X_bottom
        for i in range(3):
            ex = (r[1] if i == 2 else 0.0) - (r[2] if i == 1 else 0.0)
            ey = (r[2] if i == 0 else 0.0) - (r[0] if i == 2 else 0.0)
            ez = (r[0] if i == 1 else 0.0) - (r[1] if i == 0 else 0.0)
            for row in range(6):
                k3[row, 6 + i] = dinv[c, row, i] + dinv[c, row, 3] * ex \
                    + dinv[c, row, 4] * ey + dinv[c, row, 5] * ez
            tx, ty, tz = _skew_times(r, k3[3, 6 + i], k3[4, 6 + i], k3[5, 6 + i])
            k3[0, i] = k3[0, 6 + i] - tx
            k3[1, i] = k3[1, 6 + i] - ty
            k3[2, i] = k3[2, 6 + i] - tz
        if not invert3(k3[0:3, 0:3], e_mat[j]):
            return False
        ops += 1
        if W.tr_has_parent[j] == 0:
            continue
        pa = body[j, 1 - cs]
        ra = arm[j, 1 - cs]
        # S_A += G^T E G: F = E G = [E, -E [r]x] (3x6), G^T F = (F; r x F)
        for col in range(6):
            if col < 3:
                f0, f1, f2 = e_mat[j, 0, col], e_mat[j, 1, col], e_mat[j, 2, col]
            else:
                i = col - 3
                ex = (ra[1] if i == 2 else 0.0) - (ra[2] if i == 1 else 0.0)
                ey = (ra[2] if i == 0 else 0.0) - (ra[0] if i == 2 else 0.0)
                ez = (ra[0] if i == 1 else 0.0) - (ra[1] if i == 0 else 0.0)
                f0 = -(e_mat[j, 0, 0] * ex + e_mat[j, 0, 1] * ey + e_mat[j, 0, 2] * ez)
                f1 = -(e_mat[j, 1, 0] * ex + e_mat[j, 1, 1] * ey + e_mat[j, 1, 2] * ez)
                f2 = -(e_mat[j, 2, 0] * ex + e_mat[j, 2, 1] * ey + e_mat[j, 2, 2] * ez)
            tx, ty, tz = _skew_times(ra, f0, f1, f2)
            s_acc[pa, 0, col] += f0
            s_acc[pa, 1, col] += f1
            s_acc[pa, 2, col] += f2
            s_acc[pa, 3, col] += tx
            s_acc[pa, 4, col] += ty
            s_acc[pa, 5, col] += tz
        ops += 1
    W.count[C_FACTOR_OPS] = ops
    return True


@njit(cache=True, inline='always')
def _g_times(sgn, r, z, out, k):
    """out[k] += G z = sgn (z_lin - r x z_ang) (3-vector)."""
    tx, ty, tz = _skew_times(r, z[3], z[4], z[5])
    out[k, 0] += sgn * (z[0] - tx)
    out[k, 1] += sgn * (z[1] - ty)
    out[k, 2] += sgn * (z[2] - tz)


@njit(cache=True, **NO_REFCOUNT)
def solve(W, body, arm):
    """Solve with right side x_j = -d_j in W.tr_xj (tree joints) and x_b = 0: afterwards
    W.tr_zb holds the bodies' velocity changes and W.tr_zj the joints' impulses."""
    order = W.tr_order
    dinv, e_mat = W.tr_dinv, W.tr_e
    xb, xj, zb, zj = W.tr_xb, W.tr_xj, W.tr_zb, W.tr_zj
    for q in range(order.shape[0]):
        node = order[q]
        if node >= 0:
            for i in range(6):
                xb[node, i] = 0.0
    for q in range(order.shape[0]):  # forward, children first
        node = order[q]
        if node >= 0:
            b = node
            for i in range(6):
                zb[b, i] = dinv[b, i, 0] * xb[b, 0] + dinv[b, i, 1] * xb[b, 1] \
                    + dinv[b, i, 2] * xb[b, 2] + dinv[b, i, 3] * xb[b, 3] \
                    + dinv[b, i, 4] * xb[b, 4] + dinv[b, i, 5] * xb[b, 5]
            p = W.tr_parent_joint[b]
            if p >= 0:
                s = W.tr_parent_side[b]
                _g_times(1.0 if s == 0 else -1.0, arm[p, s], zb[b], xj, p)
        else:
            j = -node - 1
            for i in range(3):
                zj[j, i] = -(e_mat[j, i, 0] * xj[j, 0] + e_mat[j, i, 1] * xj[j, 1]
                             + e_mat[j, i, 2] * xj[j, 2])
            if W.tr_has_parent[j] != 0:
                s = 1 - W.tr_child_side[j]
                a = body[j, s]
                sgn = 1.0 if s == 0 else -1.0
                r = arm[j, s]
                tx, ty, tz = _skew_times(r, zj[j, 0], zj[j, 1], zj[j, 2])
                xb[a, 0] += sgn * zj[j, 0]
                xb[a, 1] += sgn * zj[j, 1]
                xb[a, 2] += sgn * zj[j, 2]
                xb[a, 3] += sgn * tx
                xb[a, 4] += sgn * ty
                xb[a, 5] += sgn * tz
    for q in range(order.shape[0] - 1, -1, -1):  # backward, parents first
        node = order[q]
        if node >= 0:
            b = node
            p = W.tr_parent_joint[b]
            if p < 0:
                continue
            s = W.tr_parent_side[b]
            sgn = 1.0 if s == 0 else -1.0
            r = arm[p, s]
            tx, ty, tz = _skew_times(r, zj[p, 0], zj[p, 1], zj[p, 2])
            g0, g1, g2 = sgn * zj[p, 0], sgn * zj[p, 1], sgn * zj[p, 2]
            g3, g4, g5 = sgn * tx, sgn * ty, sgn * tz
            for i in range(6):
                zb[b, i] += dinv[b, i, 0] * g0 + dinv[b, i, 1] * g1 + dinv[b, i, 2] * g2 \
                    + dinv[b, i, 3] * g3 + dinv[b, i, 4] * g4 + dinv[b, i, 5] * g5
        else:
            j = -node - 1
            if W.tr_has_parent[j] == 0:
                continue
            s = 1 - W.tr_child_side[j]
            a = body[j, s]
            sgn = 1.0 if s == 0 else -1.0
            r = arm[j, s]
            tx, ty, tz = _skew_times(r, zb[a, 3], zb[a, 4], zb[a, 5])
            u0 = sgn * (zb[a, 0] - tx)
            u1 = sgn * (zb[a, 1] - ty)
            u2 = sgn * (zb[a, 2] - tz)
            for i in range(3):
                zj[j, i] -= e_mat[j, i, 0] * u0 + e_mat[j, i, 1] * u1 + e_mat[j, i, 2] * u2


@njit(cache=True, **NO_REFCOUNT)
def apply(W, vel, omega, pred_ok):
    """Add the solved velocity changes to the tree's bodies."""
    order, zb = W.tr_order, W.tr_zb
    for q in range(order.shape[0]):
        b = order[q]
        if b < 0:
            continue
        for i in range(3):
            vel[b, i] += zb[b, i]
            omega[b, i] += zb[b, 3 + i]
        pred_ok[b] = False
