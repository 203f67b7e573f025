"""A contact step in one compiled call (issue 21): the guard at the step's start, detection,
packing into the step's Contacts, the step kernel, the guard after it, what the next
step's detection keeps (warm starts, friction anchors, the poses) and the depth projection
after the step, in the order World.step runs them one call each (engine/world.py
_plain_step). The kernels are the very ones that
World.step calls from Python, so a step taken here is the step taken there, bit for bit
(tests/test_contact_step.py); what it saves is the Python between them: a 10-box stack
spent 62 us a step in Python around 6 kernel calls, a third of its step.

It covers the common step, a steady one: World._one_call_possible and
ContactSystem.step_in_one_call say when (contacts on, no drag, load or pending depth
projection, and so on) and hand it the Contacts of the last step. It stops early, with what
it did said by its return code, where the Python step must go on: a body asleep or a body
bad at the start (nothing done), every body fixed (the
start guard done), a detection of another row count than the last step's Contacts, or
buffers too small (detection done, into the detector's buffers; nothing packed). The
depth projection's detection, where the last step left one for this step, is handed in and
taken instead of detecting, as the Python step does. After the
step kernel, a body the guard must stop leaves the rest to Python too (STEPPED, with the
bad count in out[O_BAD]).
"""
from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.experimental import structref

from .clock import monotonic_ns
from .collision.pipeline import detect_kernel
from .contacts.anchors import anchors_hold
from .contacts.depth_projection import (
    GROW,
    NOT_NEEDED,
    RES_BEFORE,
    RES_ROWS,
    keep_pending,
    project_rounds,
)
from .contacts.pack import pack_detection
from .contacts.rows import SPLIT_DEPTH
from .guard import bad_bodies, check_and_keep
from .state import K_H_TAKEN, T_DEPTH, T_END_DEPTH, T_PROJECT_NS
from .step import step

ASLEEP, BAD_START, ALL_FIXED, DETECTED, STEPPED = 0, 1, 2, 3, 4   # return codes (module doc)
# out's fields: pairs and rows detected, bad bodies, detection's time, largest reach, whether
# it detected (else it took the handed detection), the depth projection's status and rounds
O_PAIRS, O_ROWS, O_BAD, O_DETECT_NS, O_REACH, O_DETECTED, O_PROJECTED, O_ROUNDS, O_SIZE = \
    range(9)


# contact_step's arguments that stay from step to step, held in one FixedArgs
FIXED = ("B", "J", "Sp", "C", "stats", "W", "clock", "out", "asleep", "bad", "good_pos",
         "good_rot", "shape_body", "shape_kind", "shape_size", "shape_local_pos",
         "shape_local_rot", "shape_radius", "shape_group", "shape_mask", "excluded_keys",
         "poly_of_shape", "P", "sh_pos", "sh_rot", "aabb_min", "aabb_max", "reach", "order",
         "state", "pair_a", "pair_b", "sc", "material", "table_kind", "table_size",
         "table_body", "table_pos", "table_rot", "spare", "group", "group_inv_mass",
         "group_free", "shift", "moved", "res")


@structref.register
class FixedArgsType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class FixedArgs(structref.StructRefProxy):
    """contact_step's arguments that stay from step to step (FIXED: the world's named
    tuples of arrays, the detector's and the shape table's arrays, scratch), in one compiled
    object: numba unboxes it as one pointer, where it unboxed some 180 arrays, 20-25 us a
    call. It holds the arrays (not the Python objects that hold them: the caller keeps
    those, contacts/system.py _fixed_args)."""


structref.define_proxy(FixedArgs, FixedArgsType, list(FIXED))


# the same fields as plain attributes: with NUMBA_DISABLE_JIT a StructRef cannot be made
# (its proxy's constructor calls itself) and contact_step runs as Python on any attributes
FixedPlain = namedtuple("FixedPlain", FIXED)


def make_fixed(args):
    """contact_step's F for args (FIXED's order): a FixedArgs (hold_fixed), or with
    NUMBA_DISABLE_JIT a FixedPlain."""
    if not hasattr(hold_fixed, "overloads"):
        return FixedPlain(*args)
    return hold_fixed(*args)


@njit(cache=True)
def hold_fixed(B, J, Sp, C, stats, W, clock, out, asleep, bad, good_pos, good_rot, shape_body,
               shape_kind, shape_size, shape_local_pos, shape_local_rot, shape_radius,
               shape_group, shape_mask, excluded_keys, poly_of_shape, P, sh_pos, sh_rot,
               aabb_min, aabb_max, reach, order, state, pair_a, pair_b, sc, material,
               table_kind, table_size, table_body, table_pos, table_rot, spare, group,
               group_inv_mass, group_free, shift, moved, res):
    """A FixedArgs of these (FIXED's order), made by a cached kernel (the proxy's own
    constructor compiles anew in each process)."""
    return FixedArgs(B, J, Sp, C, stats, W, clock, out, asleep, bad, good_pos, good_rot,
                     shape_body, shape_kind, shape_size, shape_local_pos, shape_local_rot,
                     shape_radius, shape_group, shape_mask, excluded_keys, poly_of_shape, P,
                     sh_pos, sh_rot, aabb_min, aabb_max, reach, order, state, pair_a, pair_b,
                     sc, material, table_kind, table_size, table_body, table_pos, table_rot,
                     spare, group, group_inv_mass, group_free, shift, moved, res)


@njit(cache=True, nogil=True)     # (the viewer's physics thread: the UI draws meanwhile)
def contact_step(F, given, margin, h, found, prev_ints, prev_reals, n_shapes, prev_warm, fresh,
                 prev_pos, prev_rot, curved, prev_stick, prev_hold, free, limit, stick, keep,
                 hold, handed, handed_ints, handed_reals, was_static, was_pos, was_rot,
                 was_vel, was_omega, eps, sweeps, rounds, contact_margin, pend_ints,
                 pend_reals, pend_static, pend_pos, pend_rot, pend_vel, pend_omega):
    """One step (module doc). found: the detector's output buffers for this detection;
    prev_*: the last detection's rows, warm starts, anchors and the poses after the last
    step (prev_pos, prev_rot: overwritten with the poses after this one); table_*: the
    ContactSystem's shape table (pack_detection's); stick, keep, hold: this step's anchors,
    warm starts and held anchors, C's row count each; asleep: the bodies asleep (any: an
    awake body may wake them, World.step's Python looks); handed: take the detection
    handed_ints, handed_reals (the depth projection's) rather than detect, if the bodies are
    still as it left them (was_*: ContactSystem._take_pending's test, np.array_equal).
    After the step, the depth projection where the step may have left depth
    (ContactSystem._project_depth's test; contacts/depth_projection.py project_rounds into
    spare, over the joint groups group*, scratch shift and moved, res its results), and what
    the next step takes from it (keep_pending into pend_*); out[O_PROJECTED] says what was
    done (depth_projection's NOT_NEEDED, PROJECTED, GROW: rounds left to Python,
    out[O_ROUNDS] of them done). F: the FixedArgs (FIXED)."""
    B, J, Sp, C, stats, W, clock, out = F.B, F.J, F.Sp, F.C, F.stats, F.W, F.clock, F.out
    asleep, bad, good_pos, good_rot = F.asleep, F.bad, F.good_pos, F.good_rot
    shape_body, shape_kind, shape_size = F.shape_body, F.shape_kind, F.shape_size
    shape_local_pos, shape_local_rot, shape_radius = \
        F.shape_local_pos, F.shape_local_rot, F.shape_radius
    shape_group, shape_mask, excluded_keys = F.shape_group, F.shape_mask, F.excluded_keys
    poly_of_shape, P, sh_pos, sh_rot = F.poly_of_shape, F.P, F.sh_pos, F.sh_rot
    aabb_min, aabb_max, reach, order, state = F.aabb_min, F.aabb_max, F.reach, F.order, F.state
    pair_a, pair_b, sc, material = F.pair_a, F.pair_b, F.sc, F.material
    table_kind, table_size, table_body, table_pos, table_rot = \
        F.table_kind, F.table_size, F.table_body, F.table_pos, F.table_rot
    spare, group, group_inv_mass, group_free = F.spare, F.group, F.group_inv_mass, F.group_free
    shift, moved, res = F.shift, F.moved, F.res
    for b in range(asleep.shape[0]):
        if asleep[b]:
            return ASLEEP
    if check_and_keep(B.pos, B.rot, B.vel, B.omega, B.static, bad, good_pos, good_rot) > 0:
        return BAD_START
    t0 = monotonic_ns()
    ints, reals = handed_ints, handed_reals
    n = handed_ints.shape[0]
    handed = handed and _equal(was_static, B.static) and _equal(was_pos, B.pos) and \
        _equal(was_rot, B.rot) and _equal(was_vel, B.vel) and _equal(was_omega, B.omega)
    out[O_DETECTED] = 0.0 if handed else 1.0
    if not handed:
        moving = False
        for b in range(B.static.shape[0]):
            moving = moving or not B.static[b]
        if not moving:
            out[O_DETECTED] = 0.0
            return ALL_FIXED
        n_pairs, n = detect_kernel(B.pos, B.rot, B.vel, B.omega, B.static, shape_body,
                                   shape_kind, shape_size, shape_local_pos, shape_local_rot,
                                   shape_radius, shape_group, shape_mask, excluded_keys,
                                   poly_of_shape, P, margin, h, sh_pos, sh_rot, aabb_min,
                                   aabb_max, reach, order, state, pair_a, pair_b, found, sc)
        out[O_PAIRS] = n_pairs
        if n_pairs > pair_a.shape[0] or n > found.ints.shape[0]:
            out[O_ROWS] = n
            return DETECTED
        ints, reals = found.ints[:n], found.reals[:n]
    out[O_ROWS] = n
    if n != C.body.shape[0]:
        out[O_DETECT_NS] = monotonic_ns() - t0
        return DETECTED
    C.warm[:] = 0.0               # (ContactSystem._rows_for)
    C.keep[:] = 0.0
    pack_detection(prev_ints, prev_reals, ints, reals, n_shapes,
                   prev_warm, material, fresh, C.body, C.anchor, C.normal, C.depth, C.warm,
                   C.coef, B.rot, B.pos, prev_pos, prev_rot, curved, table_kind, table_size,
                   table_body, table_pos, table_rot, C.radius, C.face, prev_stick, prev_hold,
                   free, limit, stick, C.drift)
    out[O_DETECT_NS] = monotonic_ns() - t0
    step(B, J, Sp, C, given, stats, W, clock)
    k = bad_bodies(B.pos, B.rot, B.vel, B.omega, B.static, bad)
    out[O_BAD] = k
    if k > 0:
        return STEPPED
    keep[:] = C.keep              # (ContactSystem.finish)
    anchors_hold(C.first, C.acc_n, C.acc_t, C.coef, C.slide, hold)
    top = 0.0                     # (ContactSystem.project_depth)
    for s in range(reach.shape[0]):
        top = max(top, reach[s])
    out[O_REACH] = top
    out[O_PROJECTED] = NOT_NEEDED
    stats[T_DEPTH] = stats[T_END_DEPTH]
    if stats[T_END_DEPTH] > SPLIT_DEPTH or top > SPLIT_DEPTH:   # (motion over h)
        t1 = monotonic_ns()
        taken = clock[K_H_TAKEN]
        if not (taken > 0.0 and taken < np.inf):
            taken = h
        status, done = project_rounds(
            B.pos, B.rot, B.vel, B.omega, B.static, shape_body, shape_kind, shape_size,
            shape_local_pos, shape_local_rot, shape_radius, shape_group, shape_mask,
            excluded_keys, poly_of_shape, P, margin, taken, sh_pos, sh_rot, aabb_min, aabb_max,
            reach, order, state, pair_a, pair_b, spare, sc, group, group_inv_mass, group_free,
            shift, moved, eps, sweeps, rounds, contact_margin, stats, res)
        out[O_PROJECTED], out[O_ROUNDS] = status, done
        if status == GROW:
            return STEPPED
        keep_pending(spare, int(res[RES_ROWS]), res[RES_BEFORE], group, shift, pend_ints,
                     pend_reals, pend_static, pend_pos, pend_rot, pend_vel, pend_omega,
                     B.static, B.pos, B.rot, B.vel, B.omega)
        stats[T_PROJECT_NS] = monotonic_ns() - t1
    prev_pos[:] = B.pos
    prev_rot[:] = B.rot
    return STEPPED


@njit(cache=True)
def _equal(a, b):
    """np.array_equal of two C-contiguous arrays (NaN equals nothing)."""
    if a.shape != b.shape:
        return False
    x, y = a.reshape(-1), b.reshape(-1)
    for i in range(x.shape[0]):
        if x[i] != y[i]:
            return False
    return True
