"""Contacts and collisions as temporary joints of the impulse method (Schmitt sec. 11,
method-notes "Collisions, contacts, friction", Guendelman et al. 2003 for shock propagation).

Notation: contact c between bodies A = body[c,0] and B = body[c,1], unit normal n from B to A
(fixed over the step), world arms r_A, r_B; an impulse p acts +p on A at r_A and -p on B at
r_B, so the relative point velocity u = u_A - u_B changes by K p with
    K = K_A(r_A) + K_B(r_B),   K_i(r) = E/m_i - [r]x A_i [r]x   (impulses.py).
Per step (solvers/iterative.py):
 (e) warm start: the matched contact's last normal and friction impulses are applied again
     at t (and its velocity-correction impulses before (c)): a resting stack then starts
     each step next to its solution instead of from zero;
 (a) collisions at t: touching contacts (gap < TOUCH_GAP) that approach (u_n = n.u < 0)
     get u_n* = -e u_n (0 below restitution_threshold), fixed before iterating; Gauss-Seidel
     over the colliding contacts, p_n = (u_n* - u_n)/(n^T K n), accumulated normal impulse
     clamped >= 0, Coulomb friction in the same pass (below); then rounds for the touching
     contacts that the pass set approaching (collide). Poisson's law instead: the
     compression impulse I_n (target u_n* = 0) first, then the restitution impulse e I_n.
     Contacts still apart are speculative rows of (b); where one would bounce within the
     step, World.step has cut the step at its collision time (contact_time).
 (b) resting contacts in the look-ahead loop: depth bookkeeping with the detection points
     a_0, b_0 (world, at t): predicted gap g' = -depth + n.((a' - a_0) - (b' - b_0)),
     linearised between exact snapshots of the look-ahead (contacts/rows.py);
     if g' < 0 (or the contact holds impulse): p_n = (n^T K n)^-1 (-g'/h), no-pull clamp.
     Friction per patch (contacts/friction.py: the points of one face share one tangential
     impulse and one twist at their centre), after the patch's last row, Schmitt's
     I_nsum / I_ralt: mean tangential velocity over the step from the look-ahead; the
     sticking impulse -K^-1 u; if |I_ralt + p_stick| <= mu_s I_nsum it sticks, else it
     slides: I_ralt becomes -mu_d I_nsum along the current sliding direction.
 (d) shock propagation after the loop: body layers from the static bodies up through the
     contact graph; layer by layer, lower layers count as infinitely heavy (K part 0, no
     impulse), every layer of the step's contact graph (shock_passes > 0: at most that
     many, reported as a cap hit).
 Rows deeper than SPLIT_DEPTH between bodies the depth projection can move keep only
 their separation in (b) (contact_rows.gap_base): their depth is removed after the step by
 depth_projection.py, without friction and without leaving velocity behind.
 (c) velocity correction at t + h: touching contacts get u_n >= 0 (accumulated >= 0), with
     the same patch friction on those impulses (own accumulators acc_v, acc_tv, acc_w[:,1]).
n^T K n of every row and the patches' K are computed once per stage (contacts/rows.py).
Kernels are NO_REFCOUNT (no allocation); `heavy` is the per-body "does not move" array
(static, or frozen by shock propagation; `shock` selects the matching K).
"""
import numpy as np
from numba import njit

from ..clock import monotonic_ns
from ..jitopts import NO_REFCOUNT
from ..state import (
    RESTITUTION_POISSON,
    S_CONTACT_CYCLES,
    S_EPS_VEL,
    S_GX,
    S_REST_SPEED,
    S_RESTITUTION_LAW,
    T_CAP_HIT,
    T_COLLISIONS,
    WARM_N,
    WARM_T,
    WARM_TV,
    WARM_V,
    WARM_W,
    WARM_WV,
)
from .block import BLOCK_ROWS, solve_patch
from .friction import apply_patch_impulse, is_patch_end, patch_friction, push_pair
from .rows import (
    NOT_COLLIDING,
    STAGE_COLLISION,
    STAGE_POSITION,
    STAGE_VELOCITY,
    TOUCH_GAP,
    by_poisson,
    colliding,
    collision_code,
    collision_round,
    gap_base,
    prepare_rows,
    relative_velocity,
)

TINY = 1e-12
UNREACHED = 1 << 40
SHOCK_TIGHTER = 0.1  # the position shock pass's tolerance: this part of the loops' (each
                     # layer on its frozen base is cheap to finish; a tower's sway is the sum
                     # of its layers' residuals); the velocity pass runs to eps_vel (step.py)
APPROACH_LEFT = 0.1  # part of a bouncing row's gap left at the first cut (contact_time)
TOI_MIN = 1e-4       # [h] the shortest sub-step a collision time cuts a step to


@njit(cache=True, **NO_REFCOUNT)
def prepare(B, C):
    """World arms at the current time; heavy = static. The arm of a point fixed in the body
    is r = R u; on a curved side (C.radius rho > 0) u is the centre of curvature and the
    contact point stays at -s rho n from it (s = +1 for A, -1 for B; contacts/rows.py)."""
    rot, static = B.rot, B.static
    for b in range(static.shape[0]):
        C.heavy[b] = static[b]
    for c in range(C.body.shape[0]):
        for side in range(2):
            b = C.body[c, side]
            off = (-1.0 if side == 0 else 1.0) * C.radius[c, side]
            for i in range(3):
                C.arm[c, side, i] = rot[b, i, 0] * C.anchor[c, side, 0] \
                    + rot[b, i, 1] * C.anchor[c, side, 1] \
                    + rot[b, i, 2] * C.anchor[c, side, 2] + off * C.normal[c, i]


@njit(cache=True, **NO_REFCOUNT)
def begin_step(B, C):
    """Start of a step (arms fresh): reference points a_0, b_0, impulses reset."""
    for c in range(C.body.shape[0]):
        for side in range(2):
            b = C.body[c, side]
            for i in range(3):
                C.ref[c, side, i] = B.pos[b, i] + C.arm[c, side, i]
        C.acc_n[c] = 0.0
        C.acc_v[c] = 0.0
        C.acc_c[c] = 0.0
        C.collision[c] = NOT_COLLIDING
        C.acc_w[c, 0] = 0.0
        C.acc_w[c, 1] = 0.0
        for i in range(3):
            C.acc_t[c, i] = 0.0
            C.acc_tv[c, i] = 0.0
            C.acc_r[c, 0, i] = 0.0
            C.acc_r[c, 1, i] = 0.0


@njit(cache=True, inline='always')
def _knn_of(C, c, shock):
    """n^T K n of row c: through its joint tree where the tree solver set C.keff
    (solvers/contact_tree.py), else of the two bodies (contacts/rows.py)."""
    if C.keff[c] > 0.0:
        return C.keff[c]
    return C.k_normal[c, 1 if shock else 0]


@njit(cache=True, inline='always')
def _push(B, heavy, C, c, px, py, pz):
    """+p on A at r_A, -p on B at r_B (heavy bodies do not move)."""
    push_pair(B, heavy, C.body[c], C.arm[c], px, py, pz, 0.0, 0.0, 0.0)


@njit(cache=True, inline='always')
def _normal_velocity(B, C, c):
    """u_n = n . (u_A - u_B) at the contact points now."""
    ux, uy, uz = relative_velocity(B, C, c, C.arm[c, 0], C.arm[c, 1])
    return C.normal[c, 0] * ux + C.normal[c, 1] * uy + C.normal[c, 2] * uz


# ---- (e) warm start, (a) collisions ------------------------------------------------------

@njit(cache=True, **NO_REFCOUNT)
def _warm_patch(B, C, f, velocity_stage, scale):
    """Apply the last step's impulses of patch f again, scaled by scale (the step ratio):
    normals per row (position stage: rows not colliding now; velocity stage: rows that
    touch, acc_n > 0), then the patch's summed friction w_t, projected onto the contact
    plane (w_t - n (n.w_t)), and twist, clipped to the cone."""
    cn, ct, cw = (WARM_V, WARM_TV, WARM_WV) if velocity_stage else (WARM_N, WARM_T, WARM_W)
    acc_n = C.acc_v if velocity_stage else C.acc_n
    acc_t = C.acc_tv if velocity_stage else C.acc_t
    col = 1 if velocity_stage else 0
    nx, ny, nz = C.normal[f, 0], C.normal[f, 1], C.normal[f, 2]
    tx = ty = tz = tw = 0.0
    total = 0.0
    for c in range(f, f + C.pcount[f]):
        if (C.acc_n[c] <= 0.0) if velocity_stage else colliding(C, c):
            continue
        wn = C.warm[c, cn] * scale
        if wn > 0.0:
            acc_n[c] += wn
            _push(B, C.heavy, C, c, wn * C.normal[c, 0], wn * C.normal[c, 1],
                  wn * C.normal[c, 2])
        total += acc_n[c]
        tx += C.warm[c, ct] * scale
        ty += C.warm[c, ct + 1] * scale
        tz += C.warm[c, ct + 2] * scale
        tw += C.warm[c, cw] * scale
    if total <= 0.0 or (tx == 0.0 and ty == 0.0 and tz == 0.0 and tw == 0.0):
        return
    d = nx * tx + ny * ty + nz * tz
    tx, ty, tz = tx - d * nx, ty - d * ny, tz - d * nz
    mag = np.sqrt(tx * tx + ty * ty + tz * tz)
    cone = C.coef[f, 1] * total
    if mag > cone:
        g = cone / mag
        tx, ty, tz = tx * g, ty * g, tz * g
    cone = C.coef[f, 1] * total * C.prad[f] + C.coef[f, 3] * total
    tw = min(max(tw, -cone), cone)
    acc_t[f, 0] += tx
    acc_t[f, 1] += ty
    acc_t[f, 2] += tz
    C.acc_w[f, col] += tw
    apply_patch_impulse(B, C.heavy, C, f, tx, ty, tz, tw)


@njit(cache=True, **NO_REFCOUNT)
def warm_start(B, C, velocity_stage, scale):
    """(e) The matched contacts' last impulses again, patch by patch: the position stage's
    (velocity_stage False, at the start of the step) or the velocity correction's (True,
    before (c)). The stage's rows must be prepared (contact_rows.prepare_rows)."""
    for f in range(C.body.shape[0]):
        if C.first[f] == f and C.prows[f] > 0:
            _warm_patch(B, C, f, velocity_stage, scale)


@njit(cache=True, **NO_REFCOUNT)
def contact_time(B, C, h, settings):
    """Schmitt sec. 11's collision time: the earliest time in (0, h) at which a row that is
    apart now (gap > TOUCH_GAP) closes fast enough to bounce (e > 0, approach speed at the
    moment of contact above restitution_threshold), on the ballistic path of its gap
        g(t) = g + u_n t + a_n t^2 / 2,  g = -depth, u_n = n.(u_A - u_B), a_n = n.(g_A - g_B)
    (g_X gravity for a moving body, 0 for a static one; the arms' turning over the sub-step
    is left out: the next detection finds what it changes, and the step is cut again).
    The step is cut (solvers/iterative.py) where the predicted gap is TOUCH_GAP / 2, or,
    while a tenth of it is more than TOUCH_GAP, where a tenth is left (APPROACH_LEFT): the
    next sub-step predicts
    the rest again and is cut once more, and the one after starts with the row touching,
    so the bounce happens at the moment of contact. A path that is not ballistic (a
    pendulum's, turned by its joint within the step) arrives earlier than predicted, and a
    row the loop had to push before the cut would lose its bounce in the velocity
    correction; over the last tenth the error is a hundredth. Returns h where no row
    bounces within h."""
    thr = settings[S_REST_SPEED]
    gx, gy, gz = settings[S_GX], settings[S_GX + 1], settings[S_GX + 2]
    best = h
    for c in range(C.body.shape[0]):
        gap = -C.depth[c]
        if gap <= TOUCH_GAP or C.coef[c, 0] <= 0.0:
            continue
        un = _normal_velocity(B, C, c)
        an = 0.0
        for side in range(2):
            if not B.static[C.body[c, side]]:
                sgn = 1.0 if side == 0 else -1.0
                an += sgn * (C.normal[c, 0] * gx + C.normal[c, 1] * gy + C.normal[c, 2] * gz)
        t = _first_root(0.5 * an, un, gap - 0.5 * TOUCH_GAP)
        if 0.0 < t < best and -(un + an * t) > thr:
            # cut where a tenth of the gap is left: the next sub-step predicts the rest
            # over a tenth of the time, a hundredth of the path's error
            left = APPROACH_LEFT * gap
            if left < TOUCH_GAP:       # near: straight to the contact
                left = 0.5 * TOUCH_GAP
            best = min(t, _first_root(0.5 * an, un, gap - left))
    return best


@njit(cache=True, inline='always')
def _first_root(a, b, c):
    """The smallest positive root of a t^2 + b t + c = 0 (inf if none)."""
    if a == 0.0:
        return -c / b if b < 0.0 else np.inf
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return np.inf
    q = -0.5 * (b + np.sqrt(disc)) if b >= 0.0 else -0.5 * (b - np.sqrt(disc))
    t1 = q / a
    t2 = c / q if q != 0.0 else np.inf
    lo, hi = min(t1, t2), max(t1, t2)
    if lo > 0.0:
        return lo
    return hi if hi > 0.0 else np.inf


@njit(cache=True, **NO_REFCOUNT)
def collide(B, C, h, settings, stats, target, shock):
    """(a) Velocity-level collisions at t; target (c,) scratch for u_n*. Leaves the rows
    prepared for the position stage (shock: with the shock variant).
    A row collides when it approaches (u_n < -eps_vel), touches (its gap is below
    TOUCH_GAP) and would close within the step (a resting row's slow drift is the position
    loop's). Rows that are still apart are left to the
    position loop (a speculative contact: it lets them close exactly to contact by t + h);
    those that would bounce have cut the step at their collision time (contact_time).
    Rounds (Guendelman et al. 2003): after a round's sweeps, touching rows that now
    approach faster than restitution_threshold (a Newton's cradle: the next pair along the
    chain) collide in the next round with their own restitution target (slower ones, a
    pile's resting rows, are left to the position loop); earlier rounds' rows are not
    visited again, so an
    elastic chain hands the striker's speed on ball by ball. Each row collides once a
    step; more than contact_cycles rounds count as a cap hit (T_CAP_HIT)."""
    nc = C.body.shape[0]
    thr = settings[S_REST_SPEED]
    eps = settings[S_EPS_VEL]
    poisson = int(settings[S_RESTITUTION_LAW]) == RESTITUTION_POISSON
    max_rounds = int(settings[S_CONTACT_CYCLES])
    for c in range(nc):   # the collision rounds accumulate on their own (save: scratch)
        C.collision[c] = NOT_COLLIDING
        C.save[c, 0] = C.acc_n[c]
        C.acc_n[c] = 0.0
        C.save[c, 5] = C.acc_w[c, 0]
        C.acc_w[c, 0] = 0.0
        for i in range(3):
            C.save[c, 1 + i] = C.acc_t[c, i]
            C.acc_t[c, i] = 0.0
            C.save[c, 6 + i] = C.acc_r[c, 0, i]
            C.acc_r[c, 0, i] = 0.0
    count = 0
    rnd = 0
    while True:
        new = 0
        for c in range(nc):
            if colliding(C, c):
                continue
            un = _normal_velocity(B, C, c)
            # round 0: every touching row that approaches; later rounds: those that a
            # round set approaching fast enough to bounce (slower ones: the position loop)
            if un < (-eps if rnd == 0 else -thr) and -C.depth[c] < TOUCH_GAP \
                    and -C.depth[c] + un * h < 0.0:
                fast = -un > thr
                C.collision[c] = collision_code(rnd, fast and poisson)
                e = C.coef[c, 0] if fast else 0.0
                target[c] = 0.0 if poisson else -e * un
                new += 1
        if new == 0:
            break
        if rnd == max_rounds:
            for c in range(nc):        # not taken this step: left to the position loop
                if collision_round(C, c) == rnd:
                    C.collision[c] = NOT_COLLIDING
            stats[T_CAP_HIT] += 1
            break
        count += new
        prepare_rows(B, C, STAGE_COLLISION, False, h, settings, -1 if rnd == 0 else rnd)
        _collide_round(B, C, settings, target, eps, poisson, rnd)
        rnd += 1
    # the collision impulses stay: the position stage starts its own accumulation
    for c in range(nc):
        if colliding(C, c):
            C.acc_c[c] += C.acc_n[c]
        C.acc_n[c] = C.save[c, 0]
        C.acc_w[c, 0] = C.save[c, 5]
        for i in range(3):
            C.acc_t[c, i] = C.save[c, 1 + i]
            C.acc_r[c, 0, i] = C.save[c, 6 + i]
    stats[T_COLLISIONS] += count
    prepare_rows(B, C, STAGE_POSITION, shock, h, settings)


@njit(cache=True, inline='always')
def _in_round(C, c, rnd):
    return collision_round(C, c) == rnd


@njit(cache=True, **NO_REFCOUNT)
def _collide_round(B, C, settings, target, eps, poisson, rnd):
    """The collision sweeps over the rows of round rnd (rows prepared for the collision
    stage). Poisson's law: the compression sweeps first (target 0), then the restitution
    impulse e I_n of each row, then sweeps towards u_n >= 0 again with friction."""
    nc = C.body.shape[0]
    _collision_sweeps(B, C, settings, target, eps, rnd)
    if poisson:
        for c in range(nc):
            p = C.coef[c, 0] * C.acc_n[c]
            if _in_round(C, c, rnd) and by_poisson(C, c) and p > 0.0:
                C.acc_n[c] += p
                _push(B, C.heavy, C, c, p * C.normal[c, 0], p * C.normal[c, 1],
                      p * C.normal[c, 2])
        for c in range(nc):
            if _in_round(C, c, rnd):
                target[c] = max(_normal_velocity(B, C, c), 0.0)
        _collision_sweeps(B, C, settings, target, eps, rnd)


@njit(cache=True, **NO_REFCOUNT)
def _collision_sweeps(B, C, settings, target, eps, rnd):
    """Gauss-Seidel over the colliding contacts of round rnd towards u_n >= u_n* (no pull),
    patch friction after each patch's last row (on the normal impulse of all rounds)."""
    sweeps = int(settings[S_CONTACT_CYCLES])
    # the round's rows lie between order positions lo and hi (patches are consecutive in
    # the order): a later round of a few rows does not sweep the whole pile
    lo, hi = C.order.shape[0], -1
    for i in range(C.order.shape[0]):
        if _in_round(C, C.order[i], rnd):
            lo, hi = min(lo, i), i
    while hi >= 0 and not is_patch_end(C, hi, 1):
        hi += 1
    for _ in range(sweeps):
        worst = 0.0
        for i in range(lo, hi + 1):
            c = C.order[i]
            if _in_round(C, c, rnd):
                k_normal = C.k_normal[c, 0]
                if k_normal > TINY:
                    p = (target[c] - _normal_velocity(B, C, c)) / k_normal  # (u_n* - u_n)/(n^T K n)
                    new = max(C.acc_n[c] + p, 0.0)
                    p = new - C.acc_n[c]
                    C.acc_n[c] = new
                    if p != 0.0:
                        _push(B, C.heavy, C, c, p * C.normal[c, 0], p * C.normal[c, 1],
                              p * C.normal[c, 2])
                    worst = max(worst, abs(p) * k_normal)
            if is_patch_end(C, i, 1):
                worst = max(worst, patch_friction(B, C.heavy, C, i, STAGE_COLLISION, 1.0,
                                                  False))
        if worst < eps:
            break


# ---- (b) resting contacts in the look-ahead loop -------------------------------------------

@njit(cache=True, inline='always')
def correct_position(B, C, c, heavy, h, shock):
    """Normal impulse of contact c in the position loop, on the linearised look-ahead
    g' = g0 + h (u_n - un0) (contacts/rows.py): velocity change caused [m/s]."""
    un = _normal_velocity(B, C, c)
    g = C.g0[c] + h * (un - C.un0[c])
    acc = C.acc_n[c]
    if g >= 0.0 and acc <= 0.0:
        return 0.0                                    # apart: nothing to do
    k_normal = _knn_of(C, c, shock)
    if k_normal <= TINY:
        return 0.0
    p = -g / (h * k_normal)                                # p = (n^T K n)^-1 (-g'/h)
    new = max(acc + p, 0.0)
    p = new - acc
    C.acc_n[c] = new
    if p != 0.0:
        _push(B, heavy, C, c, p * C.normal[c, 0], p * C.normal[c, 1], p * C.normal[c, 2])
    return abs(p) * k_normal


@njit(cache=True, inline='always')
def _normal_rows(B, C, i, step, heavy, stage, h, tol, shock, block):
    """The normal rows of a visit at order position i (rows visited in the direction
    step = +-1): its own row; or, for a patch of BLOCK_ROWS rows or more, nothing before the
    patch's last row and there all its rows as one block (contacts/block.py), falling back
    to them one by one, unless block is False (a visit routed through the joint tree,
    solvers/rounds.py, moves its own row only). Returns (velocity change caused, is the
    patch's last row)."""
    c = C.order[i]
    f = C.first[c]
    end = is_patch_end(C, i, step)
    if not (block and C.pcount[f] >= BLOCK_ROWS):
        if stage == STAGE_POSITION:
            return correct_position(B, C, c, heavy, h, shock), end
        return correct_velocity(B, C, c, shock), end
    if not end:
        return 0.0, False
    done, du = solve_patch(B, heavy, C, f, stage, h, tol)
    if not done:
        for r in range(f, f + C.pcount[f]):
            if stage == STAGE_POSITION:
                du = max(du, correct_position(B, C, r, heavy, h, shock))
            else:
                du = max(du, correct_velocity(B, C, r, shock))
    return du, True


@njit(cache=True, inline='always')
def visit_position(B, C, i, step, heavy, h, eps, shock, block=True):
    """One visit of the contact at order position i in the position loop: its normal
    impulse (_normal_rows), and after the patch's last row the patch friction.
    Returns (error [m], corrected)."""
    du, end = _normal_rows(B, C, i, step, heavy, STAGE_POSITION, h, eps / h, shock, block)
    if end:
        du = max(du, patch_friction(B, heavy, C, i, STAGE_POSITION, h, shock))
    err = du * h
    return err, err >= eps


# ---- (c) velocity correction at t + h ------------------------------------------------------

@njit(cache=True, inline='always')
def correct_velocity(B, C, c, shock):
    """Touching contact (it took impulse this step): u_n >= 0, accumulated impulse >= 0.
    Returns the velocity change caused [m/s]."""
    if C.acc_n[c] <= 0.0:
        return 0.0
    un = _normal_velocity(B, C, c)
    if un >= 0.0 and C.acc_v[c] <= 0.0:
        return 0.0
    k_normal = _knn_of(C, c, shock)
    if k_normal <= TINY:
        return 0.0
    p = -un / k_normal
    new = max(C.acc_v[c] + p, 0.0)
    p = new - C.acc_v[c]
    C.acc_v[c] = new
    if p != 0.0:
        _push(B, C.heavy, C, c, p * C.normal[c, 0], p * C.normal[c, 1], p * C.normal[c, 2])
    return abs(p) * k_normal


@njit(cache=True, inline='always')
def visit_velocity(B, C, i, step, eps, shock, block=True):
    """(c) One visit of the contact at order position i: its normal (_normal_rows), and after
    the patch's last row the patch friction on the correction's own normal impulses.
    Returns (error [m/s], corrected)."""
    err, end = _normal_rows(B, C, i, step, C.heavy, STAGE_VELOCITY, 1.0, eps, shock, block)
    if end:
        err = max(err, patch_friction(B, C.heavy, C, i, STAGE_VELOCITY, 1.0, shock))
    return err, err >= eps


@njit(cache=True, **NO_REFCOUNT)
def layers(B, J, C):
    """(d) Body layers of this step's contact graph: 0 for static bodies, else 1 + the lowest
    neighbour through a contact (relaxed until nothing changes: at most one pass per body,
    so no height is cut off); contact layer = the higher of its bodies'.
    Bodies on a joint are left out (layer UNREACHED): freezing one side of a joint would
    break it, so their contacts are finished by the loop alone. C.free: the bodies neither
    static nor on a joint (the depth projection moves only those).
    Returns the highest contact layer reached."""
    bl = C.body_layer
    for b in range(bl.shape[0]):
        bl[b] = 0 if B.static[b] else UNREACHED
    jointed = C.heavy            # scratch here; prepare() resets it
    for b in range(bl.shape[0]):
        jointed[b] = False
    for j in range(J.const.kind.shape[0]):
        if J.enabled[j]:
            for side in range(2):
                if J.const.body[j, side] >= 0:        # -1: the world
                    jointed[J.const.body[j, side]] = True
    for _ in range(bl.shape[0] + 1):
        changed = False
        for c in range(C.body.shape[0]):
            a, b = C.body[c, 0], C.body[c, 1]
            if jointed[a] and not B.static[a] or jointed[b] and not B.static[b]:
                continue
            if bl[a] + 1 < bl[b]:
                bl[b] = bl[a] + 1
                changed = True
            elif bl[b] + 1 < bl[a]:
                bl[a] = bl[b] + 1
                changed = True
        if not changed:
            break
    for b in range(bl.shape[0]):
        C.free[b] = not (jointed[b] or B.static[b])
        jointed[b] = B.static[b]
    top = 0
    for c in range(C.body.shape[0]):
        L = max(bl[C.body[c, 0]], bl[C.body[c, 1]])
        C.layer[c] = L
        if L < UNREACHED and L > top:
            top = L
    return top


@njit(cache=True, **NO_REFCOUNT)
def order_by_layer(C, top):
    """C.order: the rows by descending layer (layers() first; rows on jointed bodies, layer
    UNREACHED, lead), ties in row order: what np.argsort(-C.layer, kind="mergesort") gives,
    as a counting sort without allocating. Its buckets are C.pcount, which find_patches
    fills afresh after it. Every layer 1..top has a row, so the top + 1 buckets (layer 0:
    two fixed bodies) fit in the rows."""
    nc = C.body.shape[0]
    count = C.pcount
    k = 0
    for c in range(nc):
        if C.layer[c] > top:
            C.order[k] = c
            k += 1
    buckets = min(top + 1, nc)
    for i in range(buckets):
        count[i] = 0
    for c in range(nc):
        if C.layer[c] <= top:
            count[top - C.layer[c]] += 1
    for i in range(buckets):          # each bucket's first position
        n = count[i]
        count[i] = k
        k += n
    for c in range(nc):
        if C.layer[c] <= top:
            i = top - C.layer[c]
            C.order[count[i]] = c
            count[i] += 1


@njit(cache=True, **NO_REFCOUNT)
def shock_pass(B, C, top, h, eps, settings, velocity, deadline):
    """(d) Layer by layer from the ground up; lower layers are infinitely heavy. The position
    stage's contacts (velocity False, after the loop) or the velocity correction's (True,
    after P-step 4: a stack's u_n >= 0 then holds in one pass per layer instead of hundreds
    of Gauss-Seidel cycles). C.order lists the contacts by descending layer. Past deadline
    (monotonic ns, 0: none) each layer gets one sweep only (anytime). On positions the face
    patches go as blocks (contacts/block.py) in a layer's first sweep only, then row by row:
    a brick on two lower ones has two patches that each ask for the whole brick's motion,
    and the two blocks handed it back and forth (the pyramid's shock pass took 1 200-1 400
    visits a step in its first half second, against 820-930 row by row), while a cube on
    one cube is done in the first sweep (the 10-cube stack's position stage: 110 contact
    visits a step at rest, 330 without blocks in this pass).
    Returns the number of contact visits."""
    sweeps = int(settings[S_CONTACT_CYCLES])
    nc = C.body.shape[0]
    order_idx = C.order
    visits = 0
    start = nc - 1
    for L in range(1, top + 1):
        while start >= 0 and C.layer[order_idx[start]] < L:
            start -= 1
        stop = start
        while stop >= 0 and C.layer[order_idx[stop]] == L:
            stop -= 1
        if stop == start:
            continue
        for b in range(C.heavy.shape[0]):
            C.heavy[b] = B.static[b] or C.body_layer[b] < L
        for sweep in range(sweeps):
            moved = False
            for i in range(start, stop, -1):
                if velocity:
                    err, corrected = visit_velocity(B, C, i, -1, eps, True)
                else:
                    err, corrected = visit_position(B, C, i, -1, C.heavy, h, eps, True,
                                                    sweep == 0)
                visits += 1
                moved = moved or corrected
            if not moved or (deadline > 0 and monotonic_ns() > deadline):
                break
        start = stop
    for b in range(C.heavy.shape[0]):
        C.heavy[b] = B.static[b]
    return visits


@njit(cache=True, **NO_REFCOUNT)
def end_depth(B, C, h):
    """The deepest row at t + h [m] as the position stage leaves it (the linearised
    look-ahead of contacts/rows.py, with the row's whole depth)."""
    worst = 0.0
    for c in range(C.body.shape[0]):
        g = C.g0[c] + h * (_normal_velocity(B, C, c) - C.un0[c]) - gap_base(C, c) \
            - C.depth[c]
        worst = max(worst, -g)
    return worst


@njit(cache=True, **NO_REFCOUNT)
def keep_for_warm_start(C, velocity_stage):
    """Remember the stage's impulses as they are before its shock pass, for the next step's
    warm start (contacts/system.py). The shock pass treats lower layers as infinitely heavy,
    so its impulses carry each layer's own need, not the load of the layers above; warm
    starting from them would restart every step's loop from that wrong distribution. From
    the loop's impulses, a stack's loop converges across steps and the shock pass has
    less and less to do."""
    for c in range(C.body.shape[0]):
        if velocity_stage:
            C.keep[c, WARM_V] = C.acc_v[c]
            C.keep[c, WARM_WV] = C.acc_w[c, 1]
            for i in range(3):
                C.keep[c, WARM_TV + i] = C.acc_tv[c, i]
        else:
            C.keep[c, WARM_N] = C.acc_n[c]
            C.keep[c, WARM_W] = C.acc_w[c, 0]
            for i in range(3):
                C.keep[c, WARM_T + i] = C.acc_t[c, i]


@njit(cache=True, **NO_REFCOUNT)
def save(C):
    for c in range(C.body.shape[0]):
        C.save[c, 0] = C.acc_n[c]
        C.save[c, 1] = C.acc_t[c, 0]
        C.save[c, 2] = C.acc_t[c, 1]
        C.save[c, 3] = C.acc_t[c, 2]
        C.save[c, 4] = C.acc_v[c]
        C.save[c, 5] = C.acc_w[c, 0]
        for i in range(3):
            C.save[c, 6 + i] = C.acc_r[c, 0, i]


@njit(cache=True, **NO_REFCOUNT)
def restore(C):
    for c in range(C.body.shape[0]):
        C.acc_n[c] = C.save[c, 0]
        C.acc_t[c, 0] = C.save[c, 1]
        C.acc_t[c, 1] = C.save[c, 2]
        C.acc_t[c, 2] = C.save[c, 3]
        C.acc_v[c] = C.save[c, 4]
        C.acc_w[c, 0] = C.save[c, 5]
        for i in range(3):
            C.acc_r[c, 0, i] = C.save[c, 6 + i]


@njit(cache=True, **NO_REFCOUNT)
def touching(C):
    """Contacts that carry normal impulse after the step."""
    n = 0
    for c in range(C.body.shape[0]):
        if C.acc_n[c] + C.acc_v[c] + C.acc_c[c] > 0.0:
            n += 1
    return n


@njit(cache=True, **NO_REFCOUNT)
def total_impulse(C):
    """Total normal impulse of the step's contacts [N s] (collisions, loop, correction)."""
    total = 0.0
    for c in range(C.body.shape[0]):
        total += C.acc_n[c] + C.acc_v[c] + C.acc_c[c]
    return total
