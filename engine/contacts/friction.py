"""Coulomb friction per contact patch: one tangential impulse and one twist at the patch's
centre instead of one friction impulse per contact point.

A patch is the run of contact rows between the same two bodies with (nearly) the same
normal n, e.g. the up-to-4 points of a box face. Per-point friction on such a patch is a
rank-deficient system: the 8 tangential rows of 4 corners act on only 3 relative degrees of
freedom (2 slides, 1 twist), and Gauss-Seidel keeps trading impulse between the corners
without settling (a resting 10-box stack needed ~20 000 contact visits per step). The patch
form has exactly those 3 rows:

  centre x = mean of the points, arms r_A = x - s_A, r_B = x - s_B, tangents t1, t2 of n
  (contacts/rows.py computes them and K once per stage);
  lambda = (p1, p2, tau): linear impulse p1 t1 + p2 t2 at x (+ on A, - on B) and angular
  impulse tau n (+ on A, - on B);
  constraint (sticking): relative velocity at x along t1, t2 and relative spin about n are 0:
      u = (t1.(u_A - u_B), t2.(u_A - u_B), n.(w_A - w_B)),  u_i = v_i + w_i x r_i;
  K (3x3, symmetric): column of a unit linear impulse t: per body, w = A (r x t),
      du = t/m + w x r -> rows (t1.du, t2.du, n.w); column of a unit angular impulse n:
      w = A n, du = w x r -> rows (t1.du, t2.du, n.w); summed over both bodies;
  sticking impulse: lambda = -K^-1 u.
Cone (Schmitt sec. 11 per patch): |tau| <= mu N R and |p| <= mu N, N the patch's
accumulated normal impulse, R the face's mean distance from x under a uniform pressure
(contact_rows._twist_radius; where the twist is cut to its cone, p is solved again for that
twist). mu is mu_s for a patch that stuck when the stage began and mu_d for one that slid
(C.slide, contact_rows.SLIDE_SPEED): decided once a stage, not per visit, since a visit in
a loop whose normal impulses have not converged yet would throw a fresh contact onto mu_d
(and a block below its static angle then slid away for ever); a sticking patch whose demand
still exceeds mu_s N after the loop breaks loose in that step (break_loose). Beyond the
cone the accumulated impulse is scaled back onto it in the direction of the sticking
impulse, so friction opposes the slide and never reverses it. Schmitt's rule sets
p = -mu_d N u_t/|u_t| from the current sliding direction instead; in a Gauss-Seidel loop
that throws the full impulse from side to side with the sign of a residual u_t of
micrometres per second: the bonded wall of wall_car (252 stones) shook itself down within
2 s that way, and stands with the projection.
On a joint tree (C.keff > 0, solvers/contact_tree.py) K is the tree's (C.kpatch).

Torsional and rolling friction (material fields, lengths in m as in MuJoCo; a pair takes
the larger of its two bodies' values, C.coef[:, 3:5]): the torsional coefficient mu_t adds
to the twist cone, |tau| <= (mu R + mu_t) N, so a sphere spinning on its point of contact
(R = 0) spins down at mu_t N / I; the rolling coefficient mu_r bounds an angular impulse in
the contact plane that stops the relative rolling (rolling_friction), |l| <= mu_r N, so a
ball rolling on flat ground slows at (mu_r / r) g / (1 + I / (m r^2)).
"""
import numpy as np
from numba import njit

from ..impulses import angular_impulse_to, dynamic, impulse_to
from ..jitopts import NO_REFCOUNT
from .rows import STAGE_POSITION, STAGE_VELOCITY, colliding, relative_velocity

TINY = 1e-12


@njit(cache=True, inline='always')
def is_patch_end(C, i, step):
    """Is order position i the last row of its patch when the rows are visited in the order
    i, i + step, ...?"""
    j = i + step
    return j < 0 or j >= C.order.shape[0] or C.first[C.order[j]] != C.first[C.order[i]]


@njit(cache=True, inline='always')
def push_pair(B, heavy, bodies, arms, px, py, pz, lx, ly, lz):
    """Impulse p at arms[0] and angular impulse l on body A = bodies[0], -p at arms[1] and
    -l on body B (heavy bodies do not move)."""
    for side in range(2):
        body = bodies[side]
        if heavy[body]:
            continue
        sgn = 1.0 if side == 0 else -1.0
        impulse_to(B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w, B.pred_ok, body,
                   arms[side, 0], arms[side, 1], arms[side, 2], sgn * px, sgn * py, sgn * pz)
        if lx != 0.0 or ly != 0.0 or lz != 0.0:
            angular_impulse_to(B.static, B.omega, B.inv_inertia_w, B.pred_ok, body,
                               sgn * lx, sgn * ly, sgn * lz)


@njit(cache=True, inline='always')
def apply_patch_impulse(B, heavy, C, f, px, py, pz, tau):
    """Linear impulse p at patch f's centre and angular impulse tau n: + on A, - on B."""
    n = C.normal[f]
    push_pair(B, heavy, C.body[f], C.patch_frame[f], px, py, pz, tau * n[0], tau * n[1], tau * n[2])


@njit(cache=True, inline='always')
def _solve3(k, u0, u1, u2):
    """x = -K^-1 u (Cramer); (0, 0, 0, False) if K is singular."""
    a, b, c = k[0, 0], k[0, 1], k[0, 2]
    d, e, f = k[1, 0], k[1, 1], k[1, 2]
    g, h, i = k[2, 0], k[2, 1], k[2, 2]
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if not abs(det) > TINY * TINY * TINY:
        return 0.0, 0.0, 0.0, False
    x0 = (u0 * (e * i - f * h) - b * (u1 * i - f * u2) + c * (u1 * h - e * u2)) / det
    x1 = (a * (u1 * i - f * u2) - u0 * (d * i - f * g) + c * (d * u2 - u1 * g)) / det
    x2 = (a * (e * u2 - u1 * h) - b * (d * u2 - u1 * g) + u0 * (d * h - e * g)) / det
    return -x0, -x1, -x2, True


@njit(cache=True, inline='always')
def _stick_with_twist(k, u1, u2, d3, s1, s2):
    """The linear sticking impulse when the twist change is fixed at d3 (its cone took
    over): K[0:2, 0:2] s = -(u + K[0:2, 2] d3); (s1, s2) unchanged if that block is singular.
    Through a joint tree the slide and the twist are strongly coupled, and the 3x3 answer's
    linear part would count on a twist the patch cannot give."""
    r1 = -(u1 + k[0, 2] * d3)
    r2 = -(u2 + k[1, 2] * d3)
    det = k[0, 0] * k[1, 1] - k[0, 1] * k[1, 0]
    if not abs(det) > TINY * TINY:
        return s1, s2
    return (r1 * k[1, 1] - k[0, 1] * r2) / det, (k[0, 0] * r2 - k[1, 0] * r1) / det


@njit(cache=True, inline='always')
def patch_normal_total(C, f, stage):
    """N: the patch's accumulated normal impulse of this stage (the collision stage: of its
    colliding rows)."""
    total = 0.0
    for c in range(f, f + C.pcount[f]):
        if stage == STAGE_VELOCITY:
            total += C.acc_v[c]
        elif stage == STAGE_POSITION or colliding(C, c):
            total += C.acc_n[c]
    return total


@njit(cache=True, inline='always')
def _demand(B, C, f, stage, h, k, acc_t, col):
    """The accumulated patch impulse that would make patch f stick, c = o + s (o the
    accumulated one, s = -K^-1 u the sticking impulse for its relative velocity u at the
    centre: linear, in the position stage the mean over the step,
    d/h = patch_disp0/h + u - patch_vel0 (contacts/rows.py), and spin about n; in the
    position stage both with the anchors' drift, patch_disp0 and pturn, to take back), in
    the tangent frame (t1, t2, n).
    Returns (c1, c2, c3, o1, o2, o3, s1, s2, u1, u2, ok); ok False if K is singular."""
    n = C.normal[f]
    g = C.patch_frame[f]
    ux, uy, uz = relative_velocity(B, C, f, g[0], g[1])
    if stage == STAGE_POSITION:
        ux += C.patch_disp0[f, 0] / h - C.patch_vel0[f, 0]
        uy += C.patch_disp0[f, 1] / h - C.patch_vel0[f, 1]
        uz += C.patch_disp0[f, 2] / h - C.patch_vel0[f, 2]
    spin = C.pturn[f] / h if stage == STAGE_POSITION else 0.0   # (anchors' turn back)
    for side in range(2):
        body = C.body[f, side]
        if dynamic(B.static, body):
            sgn = 1.0 if side == 0 else -1.0
            spin += sgn * (n[0] * B.omega[body, 0] + n[1] * B.omega[body, 1]
                           + n[2] * B.omega[body, 2])
    t1, t2 = g[2], g[3]
    u1 = t1[0] * ux + t1[1] * uy + t1[2] * uz
    u2 = t2[0] * ux + t2[1] * uy + t2[2] * uz
    s1, s2, s3, ok = _solve3(k, u1, u2, spin)
    o1 = t1[0] * acc_t[f, 0] + t1[1] * acc_t[f, 1] + t1[2] * acc_t[f, 2]
    o2 = t2[0] * acc_t[f, 0] + t2[1] * acc_t[f, 1] + t2[2] * acc_t[f, 2]
    o3 = C.acc_w[f, col]
    return o1 + s1, o2 + s2, o3 + s3, o1, o2, o3, s1, s2, u1, u2, ok


@njit(cache=True, inline='always')
def patch_friction(B, heavy, C, i, stage, h, shock):
    """Friction of the patch of order position i. stage: STAGE_POSITION (mean relative
    velocity over the step from the linearised look-ahead, contacts/rows.py; budget acc_n,
    store acc_t/acc_w[:,0]), STAGE_VELOCITY (velocity at t+h, budget acc_v, store
    acc_tv/acc_w[:,1]) or STAGE_COLLISION (velocity now, budget acc_n of the colliding
    rows, acc_t/acc_w[:,0]); shock: the shock pass's K. The accumulated patch impulse lives
    in the patch's first row. Returns the largest velocity change caused [m/s]."""
    f = C.first[C.order[i]]
    if C.prows[f] == 0:
        return 0.0
    acc_t = C.acc_tv if stage == STAGE_VELOCITY else C.acc_t
    col = 1 if stage == STAGE_VELOCITY else 0
    normal_total = patch_normal_total(C, f, stage)
    if normal_total <= 0.0 and acc_t[f, 0] == 0.0 and acc_t[f, 1] == 0.0 \
            and acc_t[f, 2] == 0.0 and C.acc_w[f, col] == 0.0 and C.acc_r[f, col, 0] == 0.0 \
            and C.acc_r[f, col, 1] == 0.0 and C.acc_r[f, col, 2] == 0.0:
        return 0.0
    rolled = 0.0
    if C.coef[f, 4] > 0.0:
        rolled = rolling_friction(B, heavy, C, f, col, normal_total)
    return max(rolled, _slide_and_twist(B, heavy, C, f, stage, h, shock, acc_t, col,
                                        normal_total))


@njit(cache=True, inline='always')
def _slide_and_twist(B, heavy, C, f, stage, h, shock, acc_t, col, normal_total):
    """patch_friction's Coulomb part: the linear impulse and the twist of patch f."""
    g = C.patch_frame[f]
    radius = C.prad[f]
    k = C.kpatch[f] if C.keff[f] > 0.0 else C.pk[f, 1 if shock else 0]
    c1, c2, c3, o1, o2, o3, s1, s2, u1, u2, ok = _demand(B, C, f, stage, h, k, acc_t, col)
    if not ok:
        return 0.0
    t1, t2 = g[2], g[3]
    # Coulomb cone, twist and linear each (module docstring): mu_s for a patch that stuck
    # when the stage began, mu_d for one that slid; beyond it the accumulated impulse is
    # scaled back onto the cone; the twist cone widened by the torsional coefficient
    mu = C.coef[f, 2] if C.slide[f] else C.coef[f, 1]
    lim = (mu * radius + C.coef[f, 3]) * normal_total
    if abs(c3) > lim:
        c3 = min(max(c3, -lim), lim)
        s1, s2 = _stick_with_twist(k, u1, u2, c3 - o3, s1, s2)
        c1, c2 = o1 + s1, o2 + s2
    mag = np.sqrt(c1 * c1 + c2 * c2)
    if mag > mu * normal_total:
        scale = mu * normal_total / mag
        c1, c2 = c1 * scale, c2 * scale
    d1, d2, d3 = c1 - o1, c2 - o2, c3 - o3
    if d1 == 0.0 and d2 == 0.0 and d3 == 0.0:
        return 0.0
    acc_t[f, 0] = c1 * t1[0] + c2 * t2[0]
    acc_t[f, 1] = c1 * t1[1] + c2 * t2[1]
    acc_t[f, 2] = c1 * t1[2] + c2 * t2[2]
    C.acc_w[f, col] = c3
    apply_patch_impulse(B, heavy, C, f, d1 * t1[0] + d2 * t2[0], d1 * t1[1] + d2 * t2[1],
                        d1 * t1[2] + d2 * t2[2], d3)
    # velocity change caused: K d (linear part, and the spin times R as a point speed)
    e1 = k[0, 0] * d1 + k[0, 1] * d2 + k[0, 2] * d3
    e2 = k[1, 0] * d1 + k[1, 1] * d2 + k[1, 2] * d3
    e3 = (k[2, 0] * d1 + k[2, 1] * d2 + k[2, 2] * d3) * max(radius, C.coef[f, 3])
    return max(np.sqrt(e1 * e1 + e2 * e2), abs(e3))


@njit(cache=True, inline='always')
def rolling_friction(B, heavy, C, f, col, normal_total):
    """Rolling friction of patch f: an angular impulse l = l1 t1 + l2 t2 in the contact
    plane (+ on A, - on B), accumulated in C.acc_r[f, col] within |l| <= mu_r N.
    constraint: no relative rolling, u_i = t_i . (w_A - w_B) = 0 (i = 1, 2);
    K_ij = t_i . (A_A + A_B) t_j with A the world inverse inertia of each body that moves
    (not heavy); sticking impulse l = -K^-1 u, then the accumulated one is scaled back onto
    the cone. (Through a joint tree the free bodies' K is used: the loop corrects the rest.)
    Returns the velocity change caused at the distance mu_r (a point speed, m/s)."""
    g = C.patch_frame[f]
    t1, t2 = g[2], g[3]
    u1 = u2 = 0.0
    k11 = k12 = k22 = 0.0
    for side in range(2):
        body = C.body[f, side]
        if heavy[body]:
            continue
        sgn = 1.0 if side == 0 else -1.0
        u1 += sgn * (t1[0] * B.omega[body, 0] + t1[1] * B.omega[body, 1]
                     + t1[2] * B.omega[body, 2])
        u2 += sgn * (t2[0] * B.omega[body, 0] + t2[1] * B.omega[body, 1]
                     + t2[2] * B.omega[body, 2])
        a = B.inv_inertia_w[body]
        for i in range(3):
            a1 = a[i, 0] * t1[0] + a[i, 1] * t1[1] + a[i, 2] * t1[2]
            a2 = a[i, 0] * t2[0] + a[i, 1] * t2[1] + a[i, 2] * t2[2]
            k11 += t1[i] * a1
            k12 += t1[i] * a2
            k22 += t2[i] * a2
    det = k11 * k22 - k12 * k12
    if not det > TINY * TINY:
        return 0.0
    acc = C.acc_r[f, col]
    o1 = t1[0] * acc[0] + t1[1] * acc[1] + t1[2] * acc[2]
    o2 = t2[0] * acc[0] + t2[1] * acc[1] + t2[2] * acc[2]
    c1 = o1 - (k22 * u1 - k12 * u2) / det
    c2 = o2 - (k11 * u2 - k12 * u1) / det
    cone = C.coef[f, 4] * max(normal_total, 0.0)
    mag = np.sqrt(c1 * c1 + c2 * c2)
    if mag > cone:
        c1, c2 = c1 * cone / mag, c2 * cone / mag
    d1, d2 = c1 - o1, c2 - o2
    if d1 == 0.0 and d2 == 0.0:
        return 0.0
    for i in range(3):
        acc[i] = c1 * t1[i] + c2 * t2[i]
    lx, ly, lz = d1 * t1[0] + d2 * t2[0], d1 * t1[1] + d2 * t2[1], d1 * t1[2] + d2 * t2[2]
    push_pair(B, heavy, C.body[f], C.patch_frame[f], 0.0, 0.0, 0.0, lx, ly, lz)
    e1, e2 = k11 * d1 + k12 * d2, k12 * d1 + k22 * d2
    return np.sqrt(e1 * e1 + e2 * e2) * C.coef[f, 4]


BREAK_TOL = 1e-3   # the demand must exceed the static cone by this part to break loose


@njit(cache=True, **NO_REFCOUNT)
def break_loose(B, C, h, eps_vel):
    """After the position loop: a sticking patch whose demand c (_demand, with the loop's
    final normal impulses) exceeds its static cone breaks loose in this step: it slides
    (C.slide) from now on, and one more visit puts its impulse on the dynamic cone. The cone
    is otherwise chosen once a stage, by the patch's state when the stage began
    (patch_friction); without this a block released on a slope steeper than its static
    angle would slide its first step with mu_s. Patches on jointed bodies are left to the
    next stage (an impulse after the position stage would open their joints)."""
    for i in range(C.order.shape[0]):
        if not is_patch_end(C, i, 1):
            continue
        f = C.first[C.order[i]]
        if C.prows[f] == 0 or C.slide[f] or not C.coef[f, 2] < C.coef[f, 1]:
            continue
        a, b = C.body[f, 0], C.body[f, 1]
        if not (B.static[a] or C.free[a]) or not (B.static[b] or C.free[b]):
            continue     # a jointed body: an impulse now would open its joints
        normal_total = patch_normal_total(C, f, STAGE_POSITION)
        if normal_total <= 0.0:
            continue
        k = C.kpatch[f] if C.keff[f] > 0.0 else C.pk[f, 0]
        c1, c2, c3, _, _, _, _, _, _, _, ok = _demand(B, C, f, STAGE_POSITION, h, k, C.acc_t, 0)
        # beyond the cone by more than the loops' tolerance can explain (a velocity error
        # of eps_vel is an impulse eps_vel / K[0, 0]: at h = 1e-4 that is a fifth of the
        # whole per-step friction budget of a block on a slope)
        slack = eps_vel / k[0, 0] if k[0, 0] > TINY else 0.0
        cone = (1.0 + BREAK_TOL) * C.coef[f, 1] * normal_total + slack
        twist = cone * C.prad[f] + C.coef[f, 3] * normal_total
        if ok and (c1 * c1 + c2 * c2 > cone * cone or abs(c3) > twist):
            C.slide[f] = True
            patch_friction(B, C.heavy, C, i, STAGE_POSITION, h, False)
