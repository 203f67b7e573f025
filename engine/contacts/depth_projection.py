"""Depth projection after a step: contacts detected anew at t + h that are deeper than
SPLIT_DEPTH are pushed apart by shifting the bodies, frictionless, velocities untouched.

Why: the position stage keeps every known contact point from sinking further, but
  - in a jammed pile Gauss-Seidel with Coulomb friction stalls: pushing one cube out of
    its neighbour needs another to slide along a funnel plate, friction holds it, and the
    row's impulse grows every cycle while the depth stays;
  - cubes that tumble at h = 1/60 (0.2 rad a step) meet with corners that were not
    contact points at t; such depth is only seen by detecting again.
What: rows c (normal n from B to A, depth d > 0 overlapping) of a detection at the state
after the step. Bodies joined by joints move as one group (a common shift leaves every
joint as it was); a group with a static body or the world in it does not move. Each free
group gets a shift x, linear in the row impulses p:
    x_A += p n / m_A,  x_B -= p n / m_B  (m: the group's mass),   g = -d + n . (x_A - x_B);
Gauss-Seidel on g >= target with p = (target - g) / (1/m_A + 1/m_B) over the free sides,
accumulated p >= 0; target 0 for rows deeper than SPLIT_DEPTH and -d for the others (they may
not sink further). Then s += x. This is the position projection of split-impulse solvers
(Catto's NGS, Bullet's split impulse), used only where the step left real depth, and
translational only: with the rows' rotations too (x + q x r), pushes at corners turned the
cubes by tenths of a radian, and the next detection found 3.7 cm where the projection
expected 0.3 (new corners); shifts are exact, so what it expects is what is detected.
Stopping: when a sweep's largest change is below eps, or when the sweeps stall: every
STALL_SWEEPS sweeps the residual (how far a row is from its target, max(0, target - g))
is summed over the rows, and if the sum did not fall below STALL_RATIO of the last one while no
row is deeper than ROUND_DEPTH, the loop stops (the sum, not the largest: up a column the
largest stays while the push travels). A jammed pile (funnel_1000 at 1/60) reaches its
equilibrium of deep rows pushed against rows that may not sink, 1-1.6 mm, within 4-8 sweeps,
and the further 30 sweeps up to the cap moved it by tenths of a millimetre for 3/4 of the
projection's time; what is left is the next step's. Deeper rows keep the loop going to the
cap (stopped there too, funnel_1000's first second reached 12 mm, against 3.5 with the cap).
"""
import numpy as np
from numba import njit
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .. import state as S
from ..collision.manifold import I_BA, I_BB, R_DEPTH, R_N, R_W
from ..collision.pipeline import detect_kernel
from .rows import SPLIT_DEPTH

TINY = 1e-12
STALL_SWEEPS = 4    # sweeps between two measures of the residual (module doc)
STALL_RATIO = 0.9   # the residual must fall below this part of the last measure
ROUND_DEPTH = 2 * SPLIT_DEPTH   # [m] deeper rows: no stop on a stall; project_rounds
                                # detects again after a projection that left such rows
PROJECTION_ROUNDS = 3      # detections (each followed by a projection) after a step at most
# project_rounds' status (R_*) and its res fields (pairs and rows of the detection that did
# not fit its buffers; the deepest row before the last projection)
NOT_NEEDED, PROJECTED, GROW = 0, 1, 2
RES_PAIRS, RES_ROWS, RES_BEFORE, RES_SIZE = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def project_rounds(pos, rot, vel, omega, static, shape_body, shape_kind, shape_size,
                   shape_local_pos, shape_local_rot, shape_radius, shape_group, shape_mask,
                   excluded_keys, poly_of_shape, P, margin, h, sh_pos, sh_rot, aabb_min,
                   aabb_max, reach, order, state, pair_a, pair_b, found, sc, group, inv_mass,
                   free, shift, moved, eps, sweeps, rounds, contact_margin, stats, res):
    """After a step (ContactSystem._project_depth, which says when): up to `rounds` times,
    detect at the state after the step into `found` (speculative over h: the detector's
    arrays, collision/pipeline.py detect_kernel, as CollisionDetector.detect with spare)
    and project its rows (project); again while a projection left rows deeper than
    ROUND_DEPTH or shifted a body by the detection margin (contact_margin) or more (a pair
    the detection did not list may have been reached). Writes T_DEPTH. Returns (status,
    rounds done): GROW where a detection did not fit its buffers (res: its pair and row
    counts; nothing projected in that round: grow them and go on with the rounds left);
    else PROJECTED, with found's first res[RES_ROWS] rows the last detection and
    res[RES_BEFORE] its deepest row before its projection."""
    everything_fixed = True
    for b in range(static.shape[0]):
        everything_fixed = everything_fixed and static[b]
    for r in range(rounds):
        n_pairs, n = 0, 0
        if not everything_fixed:   # (static pairs never collide: CollisionDetector.detect)
            n_pairs, n = detect_kernel(pos, rot, vel, omega, static, shape_body, shape_kind,
                                       shape_size, shape_local_pos, shape_local_rot,
                                       shape_radius, shape_group, shape_mask, excluded_keys,
                                       poly_of_shape, P, margin, h, sh_pos, sh_rot, aabb_min,
                                       aabb_max, reach, order, state, pair_a, pair_b, found,
                                       sc)
        res[RES_PAIRS], res[RES_ROWS] = n_pairs, n
        if n_pairs > pair_a.shape[0] or n > found.ints.shape[0]:
            return GROW, r
        body = np.empty((n, 2), dtype=np.int64)
        normal = np.empty((n, 3))
        depth = np.empty(n)
        for c in range(n):
            body[c, 0], body[c, 1] = found.ints[c, I_BA], found.ints[c, I_BB]
            for i in range(3):
                normal[c, i] = found.reals[c, R_N + i]
            depth[c] = found.reals[c, R_DEPTH]
        before, after, largest, _ = project(pos, group, inv_mass, free, body, normal, depth,
                                            eps, sweeps, np.empty(n), shift, moved)
        res[RES_BEFORE] = before
        stats[S.T_DEPTH] = after
        # done: nothing deep; or all pushed out by shifts smaller than the detection margin
        if before <= SPLIT_DEPTH or (after <= ROUND_DEPTH and largest < contact_margin):
            break
    return PROJECTED, rounds


@njit(cache=True, nogil=True)
def keep_pending(found, n, before, group, shift, ints, reals, was_static, was_pos, was_rot,
                 was_vel, was_omega, static, pos, rot, vel, omega):
    """What the next step's detection takes if nothing changes before it
    (ContactSystem._take_pending): the last detection of project_rounds (found's first n
    rows) into ints, reals, its rows moved by the projection's shifts where it projected
    (before: its deepest row before), and the bodies' state (static ... omega) into
    was_*."""
    ints[:n] = found.ints[:n]
    reals[:n] = found.reals[:n]
    if before > SPLIT_DEPTH:      # the last detection was projected: its rows moved
        shift_rows(ints[:n], reals[:n], group, shift)
    was_static[:] = static
    was_pos[:] = pos
    was_rot[:] = rot
    was_vel[:] = vel
    was_omega[:] = omega


@njit(cache=True, nogil=True)
def project(pos, group, inv_mass, free, body, normal, depth, eps, sweeps, acc, shift, moved):
    """The projection (module docstring) over the rows of one detection; shifts the free
    groups' bodies. group (n,): each body's group; inv_mass, free (g,): per group (free:
    neither static nor held by the world). Scratch: acc (c,), shift (g,3), moved (g,) bool.
    Returns (deepest row before, deepest after [m], largest shift [m], contact visits)."""
    nc = body.shape[0]
    worst_before = 0.0
    for c in range(nc):
        acc[c] = 0.0
        worst_before = max(worst_before, depth[c])
    if worst_before <= SPLIT_DEPTH:
        return worst_before, worst_before, 0.0, 0
    for q in range(shift.shape[0]):
        moved[q] = False
        for i in range(3):
            shift[q, i] = 0.0
    visits = 0
    residual = np.inf
    for sweep in range(sweeps):
        worst = 0.0
        for c in range(nc):
            a, b = group[body[c, 0]], group[body[c, 1]]
            if a == b or not (depth[c] > SPLIT_DEPTH or moved[a] or moved[b]):
                continue            # (one group's own bodies cannot be shifted apart)
            k = _row_mass(inv_mass, free, a, b)
            if k <= TINY:
                continue
            visits += 1
            p = (_target(depth[c]) - _gap(shift, moved, group, body, normal, depth, c)) / k
            new = max(acc[c] + p, 0.0)
            p = new - acc[c]
            if p == 0.0:
                continue
            acc[c] = new
            worst = max(worst, abs(p) * k)
            for side in range(2):
                q = a if side == 0 else b
                if free[q]:
                    s = (p if side == 0 else -p) * inv_mass[q]
                    for i in range(3):
                        shift[q, i] += s * normal[c, i]
                    moved[q] = True
        if worst < eps:
            break
        if (sweep + 1) % STALL_SWEEPS == 0:
            last = residual
            residual, deepest = _residual(shift, moved, group, inv_mass, free, body, normal,
                                          depth)
            if residual > STALL_RATIO * last and deepest <= ROUND_DEPTH:
                break
    worst_after = 0.0
    largest = 0.0
    for c in range(nc):
        worst_after = max(worst_after, -_gap(shift, moved, group, body, normal, depth, c))
    for q in range(shift.shape[0]):
        if moved[q]:
            largest = max(largest, np.sqrt(shift[q, 0] ** 2 + shift[q, 1] ** 2
                                           + shift[q, 2] ** 2))
    for b in range(pos.shape[0]):
        q = group[b]
        if moved[q]:
            for i in range(3):
                pos[b, i] += shift[q, i]
    return worst_before, worst_after, largest, visits


@njit(cache=True, nogil=True)
def shift_rows(ints, reals, group, shift):
    """A detection's rows (the detector's tables, collision/detector.py ContactSet) moved by
    the groups' shifts of a projection: depth -= n . (x_A - x_B), the world point by the
    mean of the two shifts (what the next step's detection would find; contacts/system.py
    takes them as that detection)."""
    for c in range(ints.shape[0]):
        a, b = group[ints[c, I_BA]], group[ints[c, I_BB]]
        d = 0.0
        for i in range(3):
            d += reals[c, R_N + i] * (shift[a, i] - shift[b, i])
        reals[c, R_DEPTH] -= d
        for i in range(3):
            reals[c, R_W + i] += 0.5 * (shift[a, i] + shift[b, i])


def joint_groups(n_bodies, static, inv_mass, joint_body, enabled):
    """(group (n,), inv_mass (g,), free (g,)): bodies joined by enabled joints share a
    group (connected components); a group with a static body or a joint to the world is
    not free."""
    on = joint_body[enabled]
    pairs = on[(on[:, 0] >= 0) & (on[:, 1] >= 0)]
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])),
                       shape=(n_bodies, n_bodies))
    count, group = connected_components(graph, directed=False)
    group = group.astype(np.int64)
    held = np.asarray(static, dtype=bool).copy()
    held[on[(on[:, 0] < 0) | (on[:, 1] < 0)].max(axis=1)] = True    # joined to the world
    with np.errstate(divide="ignore"):   # (inv_mass 0 of a body not fixed: mass inf)
        mass = np.bincount(group, weights=np.where(held, 0.0,
                                                   1.0 / np.where(held, 1.0, inv_mass)),
                           minlength=count)
    free = np.bincount(group, weights=held, minlength=count) == 0
    inv = np.where(free, 1.0 / np.where(free, mass, 1.0), 0.0)
    return group, inv, free


@njit(cache=True)
def _target(d):
    return 0.0 if d > SPLIT_DEPTH else min(-d, 0.0)


@njit(cache=True)
def _row_mass(inv_mass, free, a, b):
    """1/m_A + 1/m_B over the free sides of a row between groups a and b."""
    return (inv_mass[a] if free[a] else 0.0) + (inv_mass[b] if free[b] else 0.0)


@njit(cache=True)
def _residual(shift, moved, group, inv_mass, free, body, normal, depth):
    """(The sum of max(0, target - g), the largest -g) over the rows the projection can
    move (g: _gap)."""
    total = 0.0
    deepest = 0.0
    for c in range(body.shape[0]):
        a, b = group[body[c, 0]], group[body[c, 1]]
        if a != b and _row_mass(inv_mass, free, a, b) > TINY:
            g = _gap(shift, moved, group, body, normal, depth, c)
            total += max(0.0, _target(depth[c]) - g)
            deepest = max(deepest, -g)
    return total, deepest


@njit(cache=True)
def _gap(shift, moved, group, body, normal, depth, c):
    """g = -d + n . (x_A - x_B)."""
    g = -depth[c]
    for side in range(2):
        q = group[body[c, side]]
        if moved[q]:
            s = 1.0 if side == 0 else -1.0
            g += s * (normal[c, 0] * shift[q, 0] + normal[c, 1] * shift[q, 1]
                      + normal[c, 2] * shift[q, 2])
    return g
