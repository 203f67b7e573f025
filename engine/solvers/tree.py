"""O(n) solve for acyclic joint graphs (Baraff 1996, "Linear-time dynamics using Lagrange
multipliers"; Bender sec. 3.2 "O(n)-Verfahren").

Graph: one node per dynamic body (6 unknowns: velocity change dv = (dv, dw)) and per tree
joint (n_j <= 6 unknowns: the impulses along its rows); edges body-joint. For joint j and its
dynamic body on side s, G_js = sgn_s g_js (sgn = +1 first body, -1 second) with g_js the
joint's n_j x 6 rows (joints/jacobian.py; for a ball joint g = [E, -[r]x], r the arm), so the
change of the joint's row velocities is dc_j = sum_s G_js dv_s, and its impulses act on the
body as G_js^T p. The system
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
              (E_j^-1 is the articulated K matrix of the joint, n_j x n_j).
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

from ..jitopts import NO_REFCOUNT
from .graph import C_FACTOR_OPS


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
def _spd_inverse(a, n, out, b):
    """out[b, :n, :n] = a[:n, :n]^-1 for a symmetric positive definite a (Cholesky
    a = L L^T in the lower triangle of a, L^-1 in a[:n, 6:6+n], then L^-T L^-1). False if
    not positive."""
    for j in range(n):
        d = a[j, j]
        for k in range(j):
            d -= a[j, k] * a[j, k]
        if not d > 0.0:
            return False
        d = d ** 0.5
        a[j, j] = d
        for i in range(j + 1, n):
            v = a[i, j]
            for k in range(j):
                v -= a[i, k] * a[j, k]
            a[i, j] = v / d
    for j in range(n):  # columns of L^-1 (lower triangular)
        for i in range(n):
            if i < j:
                a[i, 6 + j] = 0.0
                continue
            v = 1.0 if i == j else 0.0
            for k in range(j, i):
                v -= a[i, k] * a[k, 6 + j]
            a[i, 6 + j] = v / a[i, i]
    for i in range(n):  # (L^-T L^-1)_ic = sum_k>=max(i,c) Linv_ki Linv_kc
        for c in range(i, n):
            v = 0.0
            for k in range(c, n):
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
        return _spd_inverse(a, 6, dinv, b)
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
def factor(W, body, inv_mass, inertia_w, inv_inertia, inv_inertia_w):
    """Block LDL^T of Baraff's matrix in the children-first order (the joints' rows in
    W.tr_g / W.tr_nrow, from joints/jacobian.py). False if singular."""
    s_acc, dinv, e_mat, a, x = W.tr_s, W.tr_dinv, W.tr_e, W.tr_gj, W.tr_tmp
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
        n = W.tr_nrow[j]
        if n == 0:
            continue
        cs = W.tr_child_side[j]
        c = body[j, cs]
        g = W.tr_g[j, cs]
        # K_art = G D_c^-1 G^T (the side's sign cancels): X = D_c^-1 G^T (6 x n), G X
        for i in range(n):
            for row in range(6):
                v = 0.0
                for k in range(6):
                    v += dinv[c, row, k] * g[i, k]
                x[row, i] = v
        for i in range(n):  # symmetric: the lower triangle is what the Cholesky reads
            for k in range(i + 1):
                v = 0.0
                for q2 in range(6):
                    v += g[i, q2] * x[q2, k]
                a[i, k] = v
        if not _spd_inverse(a, n, e_mat, j):
            return False
        ops += 1
        if W.tr_has_parent[j] == 0:
            continue
        pa = body[j, 1 - cs]
        g = W.tr_g[j, 1 - cs]
        # S_A += G^T E G: F = E G (n x 6) in x, then G^T F
        for i in range(n):
            for col in range(6):
                v = 0.0
                for k in range(n):
                    v += e_mat[j, i, k] * g[k, col]
                x[i, col] = v
        for r in range(6):  # symmetric: the upper triangle, mirrored
            for col in range(r, 6):
                v = 0.0
                for k in range(n):
                    v += g[k, r] * x[k, col]
                s_acc[pa, r, col] += v
                if col != r:
                    s_acc[pa, col, r] += v
        ops += 1
    W.count[C_FACTOR_OPS] = ops
    return True


@njit(cache=True, **NO_REFCOUNT)
def clear_loads(W):
    """x_b = 0: no known impulses on the bodies."""
    order, xb = W.tr_order, W.tr_xb
    for q in range(order.shape[0]):
        node = order[q]
        if node >= 0:
            for i in range(6):
                xb[node, i] = 0.0


@njit(cache=True, **NO_REFCOUNT)
def solve(W, body):
    """Solve with right side x_j = -d_j in W.tr_xj (tree joints, their n_j rows) and x_b the
    known impulses on the bodies (clear_loads, then e.g. a saturated motor's): afterwards
    W.tr_zb holds the bodies' velocity changes and W.tr_zj the joints' impulses (per row,
    +on the joint's first body). x_b is used up."""
    order = W.tr_order
    dinv, e_mat, G, nrow = W.tr_dinv, W.tr_e, W.tr_g, W.tr_nrow
    xb, xj, zb, zj = W.tr_xb, W.tr_xj, W.tr_zb, W.tr_zj
    for q in range(order.shape[0]):  # forward, children first
        node = order[q]
        if node >= 0:
            b = node
            for i in range(6):
                zb[b, i] = dinv[b, i, 0] * xb[b, 0] + dinv[b, i, 1] * xb[b, 1] \
                    + dinv[b, i, 2] * xb[b, 2] + dinv[b, i, 3] * xb[b, 3] \
                    + dinv[b, i, 4] * xb[b, 4] + dinv[b, i, 5] * xb[b, 5]
            p = W.tr_parent_joint[b]
            if p >= 0:  # x_p += G_pb z_b
                s = W.tr_parent_side[b]
                sgn = 1.0 if s == 0 else -1.0
                g = G[p, s]
                for i in range(nrow[p]):
                    xj[p, i] += sgn * (g[i, 0] * zb[b, 0] + g[i, 1] * zb[b, 1]
                                       + g[i, 2] * zb[b, 2] + g[i, 3] * zb[b, 3]
                                       + g[i, 4] * zb[b, 4] + g[i, 5] * zb[b, 5])
        else:
            j = -node - 1
            n = nrow[j]
            for i in range(n):
                v = 0.0
                for k in range(n):
                    v += e_mat[j, i, k] * xj[j, k]
                zj[j, i] = -v
            if W.tr_has_parent[j] != 0:  # x_A += G_jA^T z_j
                s = 1 - W.tr_child_side[j]
                a = body[j, s]
                sgn = 1.0 if s == 0 else -1.0
                g = G[j, s]
                for c in range(6):
                    v = 0.0
                    for i in range(n):
                        v += g[i, c] * zj[j, i]
                    xb[a, c] += sgn * v
    gt = W.tr_tmp[0]
    for q in range(order.shape[0] - 1, -1, -1):  # backward, parents first
        node = order[q]
        if node >= 0:
            b = node
            p = W.tr_parent_joint[b]
            if p < 0:
                continue
            s = W.tr_parent_side[b]
            sgn = 1.0 if s == 0 else -1.0
            g = G[p, s]
            for c in range(6):  # G_pb^T z_p
                v = 0.0
                for i in range(nrow[p]):
                    v += g[i, c] * zj[p, i]
                gt[c] = sgn * v
            for i in range(6):
                zb[b, i] += dinv[b, i, 0] * gt[0] + dinv[b, i, 1] * gt[1] \
                    + dinv[b, i, 2] * gt[2] + dinv[b, i, 3] * gt[3] \
                    + dinv[b, i, 4] * gt[4] + dinv[b, i, 5] * gt[5]
        else:
            j = -node - 1
            if W.tr_has_parent[j] == 0:
                continue
            n = nrow[j]
            s = 1 - W.tr_child_side[j]
            a = body[j, s]
            sgn = 1.0 if s == 0 else -1.0
            g = G[j, s]
            for i in range(n):  # u = G_jA z_A
                gt[i] = sgn * (g[i, 0] * zb[a, 0] + g[i, 1] * zb[a, 1] + g[i, 2] * zb[a, 2]
                               + g[i, 3] * zb[a, 3] + g[i, 4] * zb[a, 4] + g[i, 5] * zb[a, 5])
            for i in range(n):
                v = 0.0
                for k in range(n):
                    v += e_mat[j, i, k] * gt[k]
                zj[j, i] -= v


@njit(cache=True, **NO_REFCOUNT)
def apply(W, vel, omega, pred_ok):
    """Add the solved velocity changes to the tree's bodies (those that changed)."""
    order, zb = W.tr_order, W.tr_zb
    for q in range(order.shape[0]):
        b = order[q]
        if b < 0:
            continue
        moved = False
        for i in range(6):
            if zb[b, i] != 0.0:
                moved = True
        if not moved:
            continue
        for i in range(3):
            vel[b, i] += zb[b, i]
            omega[b, i] += zb[b, 3 + i]
        pred_ok[b] = False
