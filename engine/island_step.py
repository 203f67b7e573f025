"""The step kernel on each part of a split step (engine/islands.py). A call steps the parts
it is given one after the other, without the GIL (islands.py runs one call per thread on its
share): for each, it copies the part's bodies, joints, springs and contact rows out of the
world's arrays (what the step reads: state, mobility, loads, constants, detected rows; the
derived fields are zeros, computed anew), steps them as a world of their own
(step.step_with: own loops, stopping rules, layers and halvings), and writes back what the
step changed: the part's own movable bodies (not the static ones it read), its joints and
springs, and the rows' impulses, warm start and patches (put_contacts: what
contacts/system.py and the guard read after a step). Parts share no body, joint or row they
write, so threads never write the same element, and a part's result does not depend on the
thread that steps it.
"""
import numpy as np
from numba import njit

from .sleeping import find_islands
from .state import Bodies, BodyConstants, Contacts, JointConstants, Joints, SpringConstants, Springs
from .step import collision_cut, scratch, step_with

ALL = np.zeros(0, dtype=np.bool_)       # put(): no mask, every entry


@njit(cache=True, nogil=True)
def step_parts(B, J, Sp, C, bodies, mine, b0, rows, row_refs, r0, joints, joint_refs, j0,
               springs, spring_refs, s0, parts, settings, stats, W, clocks):
    """Step parts[0], parts[1], ... Part k: bodies[b0[k]:b0[k+1]] (world indices; mine: the
    part's own movable ones), contact rows rows[r0[k]:r0[k+1]] whose bodies are row_refs
    (indices into the part's bodies), joints and springs likewise (-1: the world); its
    statistics go into stats[k], its clock into clocks[k]. settings is only read."""
    for q in range(parts.shape[0]):
        k = parts[q]
        bi = bodies[b0[k]:b0[k + 1]]
        ri, rr = rows[r0[k]:r0[k + 1]], row_refs[r0[k]:r0[k + 1]]
        ji, jr = joints[j0[k]:j0[k + 1]], joint_refs[j0[k]:j0[k + 1]]
        si, sr = springs[s0[k]:s0[k + 1]], spring_refs[s0[k]:s0[k + 1]]
        Bp = take_bodies(B, bi)
        Jp = take_joints(J, ji, jr)
        Spp = take_springs(Sp, si, sr)
        Cp = take_contacts(C, ri, rr, bi.shape[0])
        step_with(Bp, Jp, Spp, Cp, settings, stats[k], W, False, clocks[k],
                  scratch(Bp, Jp, Cp, settings))
        put_bodies(B, bi, mine[b0[k]:b0[k + 1]], Bp)
        put_joints(J, ji, Jp)
        put_springs(Sp, si, Spp)
        put_contacts(C, ri, Cp)


@njit(cache=True)
def world_cut(B, C, settings):
    """The whole world's step up to its first collision time (step.collision_cut), which
    every part then takes."""
    return collision_cut(B, C, settings)


@njit(cache=True)
def plan_parts(static, row_body, joint_body, spring_body, min_rows, max_parts):
    """The parts of a split step (islands.py): islands of the movable bodies over the rows,
    joints and springs (sleeping.find_islands); each island of min_rows rows or more a part, largest
    first onto the part with the least work (at most max_parts), and one more part for the
    rest. Returns (parts, bodies, mine, b0, rows, row_refs, r0, joints, joint_refs, j0,
    springs, spring_refs, s0): part k's bodies are bodies[b0[k]:b0[k+1]] (ascending world
    indices: its movable ones, mine, and the static ones its entries reach), its rows
    rows[r0[k]:r0[k+1]] (ascending) with their bodies as indices into the part's (row_refs;
    -1 the world), the joints and springs likewise. parts = 0 (and empty arrays) where
    fewer than two islands have min_rows rows."""
    n = static.shape[0]
    label = np.empty(n, dtype=np.int64)
    count = find_islands(~static, np.concatenate((row_body, joint_body, spring_body)), label)
    work = np.zeros(max(count, 1), dtype=np.int64)
    for pairs in (row_body, joint_body, spring_body):
        for k in range(pairs.shape[0]):
            i = _island(pairs, k, label)
            if i >= 0:
                work[i] += 1
    big = np.array([i for i in range(count) if work[i] >= min_rows], dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    refs0 = np.zeros((0, 2), dtype=np.int64)
    if big.shape[0] < 2:
        return (0, none, np.zeros(0, dtype=np.bool_), none, none, refs0, none, none, refs0,
                none, none, refs0, none)
    big = big[np.argsort(-work[big], kind="mergesort")]   # largest first, ties by island
    rest = min(big.shape[0], max_parts)
    part_of = np.full(count, rest)
    load = np.zeros(rest, dtype=np.int64)
    for i in big:
        p = np.argmin(load)
        part_of[i] = p
        load[p] += work[i]
    parts = rest + 1
    body_part = np.full(n, -1)
    for b in range(n):
        if label[b] >= 0:
            body_part[b] = part_of[label[b]]
    rows, r0 = _by_part(row_body, label, part_of, parts)
    joints, j0 = _by_part(joint_body, label, part_of, parts)
    springs, s0 = _by_part(spring_body, label, part_of, parts)
    # each part's bodies: its own, then the static ends of its entries (once a part)
    seen = np.full(n, -1)
    bodies = np.empty(n + 2 * (rows.shape[0] + joints.shape[0] + springs.shape[0]),
                      dtype=np.int64)
    b0 = np.zeros(parts + 1, dtype=np.int64)
    m = 0
    by_part = np.argsort(body_part, kind="mergesort")      # (-1 first: skipped below)
    q = 0
    while q < n and body_part[by_part[q]] < 0:
        q += 1
    for p in range(parts):
        start = m
        while q < n and body_part[by_part[q]] == p:
            bodies[m] = by_part[q]
            m += 1
            q += 1
        for pairs, idx, off in ((row_body, rows, r0), (joint_body, joints, j0),
                                (spring_body, springs, s0)):
            for e in range(off[p], off[p + 1]):
                for side in range(2):
                    b = pairs[idx[e], side]
                    if b >= 0 and static[b] and seen[b] != p:
                        seen[b] = p
                        bodies[m] = b
                        m += 1
        bodies[start:m] = np.sort(bodies[start:m])
        b0[p + 1] = m
    bodies = bodies[:m].copy()
    mine = np.zeros(m, dtype=np.bool_)
    local = np.full(n, -1)
    row_refs = np.empty((rows.shape[0], 2), dtype=np.int64)
    joint_refs = np.empty((joints.shape[0], 2), dtype=np.int64)
    spring_refs = np.empty((springs.shape[0], 2), dtype=np.int64)
    for p in range(parts):
        for i in range(b0[p], b0[p + 1]):
            local[bodies[i]] = i - b0[p]
            mine[i] = not static[bodies[i]]
        for pairs, idx, off, refs in ((row_body, rows, r0, row_refs),
                                      (joint_body, joints, j0, joint_refs),
                                      (spring_body, springs, s0, spring_refs)):
            for e in range(off[p], off[p + 1]):
                for side in range(2):
                    b = pairs[idx[e], side]
                    refs[e, side] = local[b] if b >= 0 else -1
    if b0[parts] == b0[parts - 1]:                         # (no rest)
        parts -= 1
    return (parts, bodies, mine, b0[:parts + 1].copy(), rows, row_refs, r0[:parts + 1].copy(),
            joints, joint_refs, j0[:parts + 1].copy(), springs, spring_refs,
            s0[:parts + 1].copy())


@njit(cache=True)
def _island(pairs, k, label):
    """The island of entry k: its first end's that moves (-1: neither moves)."""
    for side in range(2):
        b = pairs[k, side]
        if b >= 0 and label[b] >= 0:
            return label[b]
    return -1


@njit(cache=True)
def _by_part(pairs, label, part_of, parts):
    """The entries sorted by part (ascending within one; entries whose ends do not move
    left out) and the parts' offsets (parts + 1,)."""
    count = np.zeros(parts + 1, dtype=np.int64)
    part = np.full(pairs.shape[0], -1)
    for k in range(pairs.shape[0]):
        i = _island(pairs, k, label)
        if i >= 0:
            part[k] = part_of[i]
            count[part[k] + 1] += 1
    off = np.cumsum(count)
    out = np.empty(off[parts], dtype=np.int64)
    fill = off[:parts].copy()
    for k in range(pairs.shape[0]):
        if part[k] >= 0:
            out[fill[part[k]]] = k
            fill[part[k]] += 1
    return out, off


@njit(cache=True)
def take(a, idx):
    """a[idx] along the first axis (a new C-ordered array)."""
    out = np.empty((idx.shape[0],) + a.shape[1:], dtype=a.dtype)
    for i in range(idx.shape[0]):
        out[i] = a[idx[i]]
    return out


@njit(cache=True)
def blank(a, n):
    """Zeros like n rows of a."""
    return np.zeros((n,) + a.shape[1:], dtype=a.dtype)


@njit(cache=True)
def put(a, idx, part, mask):
    """a[idx[i]] = part[i] where mask[i] (an empty mask: every i)."""
    for i in range(idx.shape[0]):
        if mask.shape[0] == 0 or mask[i]:
            a[idx[i]] = part[i]


@njit(cache=True)
def put_rows(a, rows, part):
    for i in range(rows.shape[0]):
        a[rows[i]] = part[i]


@njit(cache=True)
def put_row_numbers(a, rows, part):
    """A row-number field (the patch's first row, the visiting order) back in world rows."""
    for i in range(rows.shape[0]):
        a[rows[i]] = rows[part[i]]


@njit(cache=True)
def take_bodies(B, idx):
    n = idx.shape[0]
    return Bodies(take(B.pos, idx),
                  take(B.rot, idx),
                  take(B.vel, idx),
                  take(B.omega, idx),
                  take(B.inv_mass, idx),
                  take(B.inv_inertia, idx),
                  take(B.static, idx),
                  blank(B.inertia_w, n),
                  blank(B.inv_inertia_w, n),
                  blank(B.pred_pos, n),
                  blank(B.pred_series, n),
                  blank(B.pred_rot, n),
                  blank(B.pred_ok, n),
                  take(B.load, idx),
                  BodyConstants(take(B.const.inv_mass, idx), take(B.const.inertia, idx)))


@njit(cache=True)
def take_joints(J, idx, refs):
    return Joints(take(J.angle, idx),
                  take(J.warm, idx),
                  take(J.enabled, idx),
                  take(J.effort, idx),
                  take(J.arm, idx),
                  take(J.kinv, idx),
                  take(J.locks, idx),
                  take(J.err, idx),
                  take(J.acc, idx),
                  JointConstants(take(J.const.kind, idx),
                                 refs,
                                 take(J.const.anchor, idx),
                                 take(J.const.frame, idx),
                                 take(J.const.param, idx),
                                 J.const.seq))


@njit(cache=True)
def take_springs(Sp, idx, refs):
    return Springs(take(Sp.force_prev, idx),
                   take(Sp.applied, idx),
                   SpringConstants(refs,
                                   take(Sp.const.anchor, idx),
                                   take(Sp.const.rest, idx),
                                   take(Sp.const.stiff, idx),
                                   take(Sp.const.damp, idx)))


@njit(cache=True)
def take_contacts(C, rows, refs, nb):
    n = rows.shape[0]
    return Contacts(refs,
                    take(C.anchor, rows),
                    take(C.normal, rows),
                    take(C.depth, rows),
                    take(C.coef, rows),
                    take(C.warm, rows),
                    blank(C.arm, n),
                    blank(C.ref, n),
                    blank(C.acc_n, n),
                    blank(C.acc_t, n),
                    blank(C.acc_v, n),
                    blank(C.acc_c, n),
                    blank(C.acc_tv, n),
                    blank(C.acc_w, n),
                    blank(C.acc_r, n),
                    blank(C.first, n),
                    blank(C.pcount, n),
                    blank(C.collision, n),
                    blank(C.layer, n),
                    blank(C.order, n),
                    blank(C.heavy, nb),
                    blank(C.free, nb),
                    blank(C.body_layer, nb),
                    blank(C.save, n),
                    blank(C.keep, n),
                    blank(C.k_normal, n),
                    blank(C.split, n),
                    blank(C.prows, n),
                    blank(C.patch_frame, n),
                    blank(C.prad, n),
                    blank(C.pk, n),
                    blank(C.g0, n),
                    blank(C.un0, n),
                    blank(C.patch_disp0, n),
                    blank(C.patch_vel0, n),
                    blank(C.keff, n),
                    blank(C.kpatch, n),
                    blank(C.held, 2),
                    take(C.radius, rows),
                    take(C.face, rows),
                    take(C.drift, rows),
                    blank(C.pturn, n),
                    blank(C.slide, n))


@njit(cache=True)
def put_bodies(B, idx, mine, Bp):
    put(B.pos, idx, Bp.pos, mine)
    put(B.rot, idx, Bp.rot, mine)
    put(B.vel, idx, Bp.vel, mine)
    put(B.omega, idx, Bp.omega, mine)
    put(B.inv_mass, idx, Bp.inv_mass, mine)
    put(B.inv_inertia, idx, Bp.inv_inertia, mine)
    put(B.static, idx, Bp.static, mine)
    put(B.inertia_w, idx, Bp.inertia_w, mine)
    put(B.inv_inertia_w, idx, Bp.inv_inertia_w, mine)
    put(B.pred_pos, idx, Bp.pred_pos, mine)
    put(B.pred_series, idx, Bp.pred_series, mine)
    put(B.pred_rot, idx, Bp.pred_rot, mine)
    put(B.pred_ok, idx, Bp.pred_ok, mine)
    put(B.load, idx, Bp.load, mine)


@njit(cache=True)
def put_joints(J, idx, Jp):
    put(J.angle, idx, Jp.angle, ALL)
    put(J.warm, idx, Jp.warm, ALL)
    put(J.enabled, idx, Jp.enabled, ALL)
    put(J.effort, idx, Jp.effort, ALL)
    put(J.arm, idx, Jp.arm, ALL)
    put(J.kinv, idx, Jp.kinv, ALL)
    put(J.locks, idx, Jp.locks, ALL)
    put(J.err, idx, Jp.err, ALL)
    put(J.acc, idx, Jp.acc, ALL)


@njit(cache=True)
def put_springs(Sp, idx, Spp):
    put(Sp.force_prev, idx, Spp.force_prev, ALL)
    put(Sp.applied, idx, Spp.applied, ALL)


@njit(cache=True)
def put_contacts(C, rows, Cp):
    put_rows(C.acc_n, rows, Cp.acc_n)
    put_rows(C.acc_t, rows, Cp.acc_t)
    put_rows(C.acc_v, rows, Cp.acc_v)
    put_rows(C.acc_c, rows, Cp.acc_c)
    put_rows(C.acc_tv, rows, Cp.acc_tv)
    put_rows(C.acc_w, rows, Cp.acc_w)
    put_rows(C.acc_r, rows, Cp.acc_r)
    put_rows(C.keep, rows, Cp.keep)
    put_row_numbers(C.first, rows, Cp.first)
    put_rows(C.pcount, rows, Cp.pcount)
    put_row_numbers(C.order, rows, Cp.order)
    put_rows(C.slide, rows, Cp.slide)
    put_rows(C.split, rows, Cp.split)
    put_rows(C.collision, rows, Cp.collision)
    put_rows(C.layer, rows, Cp.layer)
    put_rows(C.prows, rows, Cp.prows)
