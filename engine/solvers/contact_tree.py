"""Contacts on a joint tree, for the tree solver's rounds (rounds.py).

A contact on a body of a joint tree is a Gauss-Seidel row between the tree's exact joint
solves. Applied to the body alone, its impulse p breaks the joints, and the next tree solve
takes most of it back: a chain lying across an edge, with links hanging from it, then needs
hundreds of rounds to agree with the contact, and each step ends with the links still moving
into the edge. So a contact impulse on tree bodies acts through the tree instead:
    load x_b = the impulse on each of its tree bodies (p and r x p), x_j = 0 (every tree
    joint keeps its row velocities), one tree solve (tree.py): z_b = the bodies' velocity
    changes with the joints' reactions included; G z = 0, so the joints stay as they were.
The contact's own response to a unit normal impulse is then
    keff = n^T (du_A - du_B),  du_s = z_s + z_s,rot x r_s   (a free side: its own response)
which is the contact row of the Schur complement K_cc - K_cj K_jj^-1 K_jc; the contact
visit sizes its normal impulse with it (contacts._knn_of), and the patch friction its 3x3 K
the same way (C.kpatch: unit impulses along t1, t2 at the patch centre and about n).
Gauss-Seidel over such rows is Gauss-Seidel on the contacts with the joints eliminated.

A contact that the tree's joints lock along n (keff at most KEFF_LOCKED of the bodies' own
n^T K n: a wheel on a steering hinge whose axis is vertical but for a rounding tilt, 1e-11 of
it) keeps keff = 0, as one the tree cannot move at all: its visit takes the bodies' own
response and the next tree solve takes back what the joints hold. Sized with such a keff, a
1 mm overlap asks for ~1e5 N s, and a light body goes to NaN in one step.

A tree with a motor or servo keeps plain contact rows (routes): the Unitree A1, its twelve
servos holding a stance on four point feet at h = 1/60, rocked with its contacts routed
(one foot carrying 0.81 of the 2.0 N s a step at step 4; at step 7 the contacts gave
17.7 N s and the trunk hopped off at 0.53 m/s, spinning at 8.7 rad/s) and stands within
0.25 mm without (tests/test_import_stand.py). Routing holds every tree row, a servo's
included, and adds the row's reaction to the servo's impulse unchecked: at step 7 a route
took one to 5.8 times its effort cap, where the tree solve's own active set lets a servo go.
"""
from numba import njit

from ..contacts.rows import row_knn
from ..jitopts import NO_REFCOUNT
from ..joints import A_MOTOR, P_MOTOR
from . import tree

KEFF_LOCKED = 1e-6


@njit(cache=True, **NO_REFCOUNT)
def routes(J, W):
    """True if contacts on the tree act through it: no enabled tree joint has a motor or
    a servo (module doc)."""
    for q in range(W.tr_joint.shape[0]):
        j = W.tr_joint[q]
        if J.enabled[j] and J.const.param[j, P_MOTOR] != 0.0:
            return False
    return True


@njit(cache=True, **NO_REFCOUNT)
def on_tree(W, b):
    """Body b is a node of a joint tree."""
    return W.tr_parent_joint[b] >= 0 or W.tr_nchild[b] > 0


@njit(cache=True, **NO_REFCOUNT)
def _touches_tree(B, W, C, c):
    for side in range(2):
        b = C.body[c, side]
        if not B.static[b] and on_tree(W, b):
            return True
    return False


@njit(cache=True, **NO_REFCOUNT)
def _hold_joints(W):
    """x_j = 0: the solve keeps every tree joint's row velocities."""
    for q in range(W.tr_joint.shape[0]):
        j = W.tr_joint[q]
        for i in range(6):
            W.tr_xj[j, i] = 0.0


@njit(cache=True, **NO_REFCOUNT)
def _respond(B, J, W, C, c, ra, rb, lx, ly, lz, ax, ay, az):
    """C.held[s] = (dv, dw) of contact c's body on side s when the impulse l at arm r_s
    plus the angular impulse a acts on A (+) and B (-): tree bodies through the tree with
    the joints held, free bodies alone, static ones 0."""
    tree.clear_loads(W)
    _hold_joints(W)
    through_tree = False
    for side in range(2):
        b = C.body[c, side]
        out = C.held[side]
        for i in range(6):
            out[i] = 0.0
        if B.static[b]:
            continue
        sgn = 1.0 if side == 0 else -1.0
        r = ra if side == 0 else rb
        tx = sgn * (r[1] * lz - r[2] * ly + ax)
        ty = sgn * (r[2] * lx - r[0] * lz + ay)
        tz = sgn * (r[0] * ly - r[1] * lx + az)
        if on_tree(W, b):
            xb = W.tr_xb[b]
            xb[0] += sgn * lx
            xb[1] += sgn * ly
            xb[2] += sgn * lz
            xb[3] += tx
            xb[4] += ty
            xb[5] += tz
            through_tree = True
        else:
            a = B.inv_inertia_w[b]
            out[0], out[1], out[2] = sgn * lx * B.inv_mass[b], sgn * ly * B.inv_mass[b], \
                sgn * lz * B.inv_mass[b]
            for i in range(3):
                out[3 + i] = a[i, 0] * tx + a[i, 1] * ty + a[i, 2] * tz
    if through_tree:
        tree.solve(W, J.const.body)
        for side in range(2):
            b = C.body[c, side]
            if not B.static[b] and on_tree(W, b):
                for i in range(6):
                    C.held[side, i] = W.tr_zb[b, i]


@njit(cache=True, inline='always')
def _relative(C, ra, rb):
    """du = du_A - du_B at the arms and dw = dw_A - dw_B from C.held (_respond)."""
    a, b = C.held[0], C.held[1]
    ux = a[0] + a[4] * ra[2] - a[5] * ra[1] - (b[0] + b[4] * rb[2] - b[5] * rb[1])
    uy = a[1] + a[5] * ra[0] - a[3] * ra[2] - (b[1] + b[5] * rb[0] - b[3] * rb[2])
    uz = a[2] + a[3] * ra[1] - a[4] * ra[0] - (b[2] + b[3] * rb[1] - b[4] * rb[0])
    return ux, uy, uz, a[3] - b[3], a[4] - b[4], a[5] - b[5]


@njit(cache=True, **NO_REFCOUNT)
def set_keff(B, J, W, C):
    """For every contact touching a tree body (tree factored for the current arms): C.keff,
    and in a patch's first row C.kpatch, the patch friction's K (contacts/friction.py) at the
    patch's centre (the stage's rows prepared, contacts/rows.py); keff 0 for the other
    contacts."""
    nc = C.body.shape[0]
    for c in range(nc):
        C.keff[c] = 0.0
        if not _touches_tree(B, W, C, c):
            continue
        n = C.normal[c]
        ra, rb = C.arm[c, 0], C.arm[c, 1]
        _respond(B, J, W, C, c, ra, rb, n[0], n[1], n[2], 0.0, 0.0, 0.0)
        ux, uy, uz = _relative(C, ra, rb)[:3]
        keff = n[0] * ux + n[1] * uy + n[2] * uz
        if keff <= KEFF_LOCKED * row_knn(B, C, c, False):
            continue                        # locked by the joints (module docstring)
        C.keff[c] = keff
        if C.first[c] != c or C.prows[c] == 0:
            continue
        g = C.patch_frame[c]          # the patch's centre arms and tangents (contacts/rows.py)
        ra, rb = g[0], g[1]
        t1x, t1y, t1z, t2x, t2y, t2z = g[2, 0], g[2, 1], g[2, 2], g[3, 0], g[3, 1], g[3, 2]
        k = C.kpatch[c]
        for col in range(3):
            if col == 0:
                _respond(B, J, W, C, c, ra, rb, t1x, t1y, t1z, 0.0, 0.0, 0.0)
            elif col == 1:
                _respond(B, J, W, C, c, ra, rb, t2x, t2y, t2z, 0.0, 0.0, 0.0)
            else:
                _respond(B, J, W, C, c, ra, rb, 0.0, 0.0, 0.0, n[0], n[1], n[2])
            ux, uy, uz, wx, wy, wz = _relative(C, ra, rb)
            k[0, col] = t1x * ux + t1y * uy + t1z * uz
            k[1, col] = t2x * ux + t2y * uy + t2z * uz
            k[2, col] = n[0] * wx + n[1] * wy + n[2] * wz


@njit(cache=True, **NO_REFCOUNT)
def clear_keff(C):
    for c in range(C.keff.shape[0]):
        C.keff[c] = 0.0


@njit(cache=True, **NO_REFCOUNT)
def hold(B, C, c):
    """Remember the velocities of contact c's bodies before its visit."""
    for side in range(2):
        b = C.body[c, side]
        for i in range(3):
            C.held[side, i] = B.vel[b, i]
            C.held[side, 3 + i] = B.omega[b, i]


@njit(cache=True, **NO_REFCOUNT)
def route(B, J, W, C, c, position_stage):
    """Move what the visit of contact c did to its tree bodies (their velocity changes since
    hold(): the impulses p = m dv, r x p = I dw) through the tree: put the bodies back, load
    those impulses, solve with the joints held, apply. In the position stage a motor row's
    reaction counts into its accumulated impulse like the tree solve's own."""
    tree.clear_loads(W)
    loaded = False
    for side in range(2):
        b = C.body[c, side]
        if B.static[b] or not on_tree(W, b):
            continue
        same = True
        for i in range(3):
            if B.vel[b, i] != C.held[side, i] or B.omega[b, i] != C.held[side, 3 + i]:
                same = False
        if same:
            continue
        m = 1.0 / B.inv_mass[b]
        iw = B.inertia_w[b]
        dw0 = B.omega[b, 0] - C.held[side, 3]
        dw1 = B.omega[b, 1] - C.held[side, 4]
        dw2 = B.omega[b, 2] - C.held[side, 5]
        xb = W.tr_xb[b]
        for i in range(3):
            xb[i] += m * (B.vel[b, i] - C.held[side, i])
            xb[3 + i] += iw[i, 0] * dw0 + iw[i, 1] * dw1 + iw[i, 2] * dw2
            B.vel[b, i] = C.held[side, i]
            B.omega[b, i] = C.held[side, 3 + i]
        loaded = True
    if not loaded:
        return
    _hold_joints(W)
    tree.solve(W, J.const.body)
    tree.apply(W, B.vel, B.omega, B.pred_ok)
    if position_stage:
        for q in range(W.tr_free.shape[0]):
            j = W.tr_free[q]
            r = W.tr_motor[j]
            if r >= 0:
                J.acc[j, A_MOTOR] += W.tr_zj[j, r]
