"""The flat arrays a step works on, bundled as named tuples so numba kernels can take them.

Shapes: n bodies, m joints, s springs, N = Taylor order. Body index -1 is the world.

Model and data apart (MuJoCo's mjModel/mjData): each kind of object is a tuple of what
changes (its state, the next step's input and what a step derives), and holds its constants
apart in a nested tuple, `const` (BodyConstants, JointConstants, SpringConstants): set from
the object's definition by the World's add and edit methods, and written by nothing else —
not by a step, not by sleeping, not by the guard. A kernel reads them as B.const.inertia,
J.const.param[j, P_LO].
"""
from collections import namedtuple

import numpy as np

# A body's constants (model). Two arrays only: every kernel that takes the bodies gets each
# of their arrays as arguments, so the fewer the cheaper (the fixed flag and J^-1 follow:
# release below).
BodyConstants = namedtuple("BodyConstants", [
    "inv_mass",       # (n,) 1/m; 0 for a fixed body (a moving one has m > 0: bodies.py)
    "inertia",        # (n,3) principal moments J; 0 for a fixed body
])

# Bodies (all float64 unless noted).
Bodies = namedtuple("Bodies", [
    # state: what a step advances
    "pos",            # (n,3) centre of mass, world
    "rot",            # (n,3,3) principal axes as columns (body -> world)
    "vel",            # (n,3) centre velocity
    "omega",          # (n,3) angular velocity, world
    # mobility: how the step may move the body, set between steps from `const` (hold and
    # release below): the body's own inverse mass and inertia, or 0 and static while it
    # sleeps (sleeping.py) or the guard holds it (world.py)
    "inv_mass",       # (n,) 0 for static bodies
    "inv_inertia",    # (n,3)
    "static",         # (n,) bool: fixed, asleep or held
    # derived in the step
    "inertia_w",      # (n,3,3) R J R^T at the current time
    "inv_inertia_w",  # (n,3,3) R J^-1 R^T at the current time
    "pred_pos",       # (n,3) look-ahead cache: s(t+h)
    "pred_series",    # (n,N+1,3) look-ahead cache: scaled omega terms
    "pred_rot",       # (n,3,3) look-ahead cache: M_rot, the orthonormal rotation over h
    "pred_ok",        # (n,) bool: cache valid for the current velocities
    # input of the next step
    "load",           # (n,6) external force and torque [N, N m], world, of this step (loads.py)
    # model
    "const",          # BodyConstants
])

# A joint's constants (model); `kind` selects the constraint family (engine/joints/).
JointConstants = namedtuple("JointConstants", [
    "kind",      # (m,) int64
    "body",      # (m,2) int64, -1 = world
    "anchor",    # (m,2,3) anchor in each body's principal frame (world coords for the world)
    "frame",     # (m,2,3,3) joint frame (columns x, y, z) in each body's frame (world: world)
    "param",     # (m,P_SIZE) lock masks, limits, motor, spring (joints/__init__.py)
    "seq",       # (q,2) motor target sequences (time, value), one table for all joints; rows
                 # referenced by param (WHOLE: not one row per joint)
])

# Joints: one row each.
Joints = namedtuple("Joints", [
    # state: what a step advances
    "angle",     # (m,2) the free angles (about x_A; the universal's about y_B) at the end of
                 # the last step, unwrapped: angles are read on the branch nearest these, so
                 # a joint turns on past +-pi (joints/generic.unwrapped) [rad]
    "warm",      # (m,W_SIZE) the locks' corrections of the last step's velocity stage,
                 # and the step length (joints/warm_start.py)
    # switch, set between steps: on, or off while every end sleeps or is fixed (sleeping.py)
    "enabled",   # (m,) bool
    # input of the next step
    "effort",    # (m,) an actuator's effort on the primary coordinate [N m or N]
                 # (loads.sum_wrenches; joints/generic.apply_effort)
    # derived in the step
    "arm",       # (m,2,3) world arms at the current time
    "kinv",      # (m,3,3) inverse of the 3x3 K matrix at the current time
    "locks",     # (m,7,3,3) a generic joint's locks in the velocity stage: rows, arms and
                 # K's factors at t + h (joints/generic.factor_velocity_locks, LK_*)
    "err",       # (m,) last measured position error
    "acc",       # (m,A_SIZE) accumulated limit/motor row impulses of this step
    # model
    "const",     # JointConstants
])

# A spring's constants (model); springs and dampers between two body points (Schmitt
# sec. 10).
SpringConstants = namedtuple("SpringConstants", [
    "body",      # (s,2) int64
    "anchor",    # (s,2,3) in each body's frame (world coords for the world)
    "rest",      # (s,) rest length Dist
    "stiff",     # (s,) K_f [N/m]
    "damp",      # (s,) K_d [N s/m]
])

Springs = namedtuple("Springs", [
    # state
    "force_prev",  # (s,3) spring force at the previous step's time (iterated mode)
    # derived in the step
    "applied",   # (s,3) impulse applied so far in this step (iterated mode)
    # model
    "const",     # SpringConstants
])

# What each field is (the model/data split):
#   model     an object's constants (its `const` tuple)
#   state     what a step advances from t to t + h, and a save keeps (resume.py)
#   input     what is given for the next step before it starts (loads.sum_wrenches)
#   switch    set between steps, never in one: a body's mobility (hold/release: sleeping,
#             the guard), a joint's enabled flag (sleeping); a save keeps the bodies'
#   derived   recomputed from model and state inside a step (look-ahead caches, the world
#             frame's arms and inertias, the step's accumulated impulses)
# tests/test_engine_step_stages.py checks that a step writes no model and no switch field and
# leaves the settings array as it was. Contacts are all of one step: detection fills them,
# the step derives the rest.
ROLES = {
    "Bodies": {"model": ("inv_mass", "inertia"),
               "state": ("pos", "rot", "vel", "omega"),
               "input": ("load",),
               "switch": ("inv_mass", "inv_inertia", "static"),
               "derived": ("inertia_w", "inv_inertia_w", "pred_pos", "pred_series",
                           "pred_rot", "pred_ok")},
    "Joints": {"model": ("kind", "body", "anchor", "frame", "param", "seq"),
               "state": ("angle", "warm"),
               "input": ("effort",),
               "switch": ("enabled",),
               "derived": ("arm", "kinv", "locks", "err", "acc")},
    "Springs": {"model": ("body", "anchor", "rest", "stiff", "damp"),
                "state": ("force_prev",),
                "input": (),
                "switch": (),
                "derived": ("applied",)},
}
CONSTANTS = {"Bodies": BodyConstants, "Joints": JointConstants, "Springs": SpringConstants}

# Fields that are one table for all objects, not one row per object (the row functions
# below keep them whole).
WHOLE = ("seq",)


def map_rows(fn, table, *others):
    """`table`'s type with fn(array, *the others' arrays) for each per-object array, the
    nested constants included; WHOLE fields stay the table's."""
    out = []
    for name, a, *rest in zip(table._fields, table, *others, strict=True):
        if isinstance(a, tuple):
            out.append(map_rows(fn, a, *rest))
        else:
            out.append(a if name in WHOLE else fn(a, *rest))
    return type(table)(*out)


def append_rows(table, rows):
    """The table with `rows` (a table of the same kind) added at its end."""
    return map_rows(lambda a, r: np.concatenate([a, r]), table, rows)


def insert_row(table, i, row):
    """The table with `row` (row_at's) put back before index i."""
    return map_rows(lambda a, r: np.insert(a, i, r, axis=0), table, row)


def delete_row(table, i):
    return map_rows(lambda a: np.delete(a, i, axis=0), table)


def row_at(table, i):
    """Row i of every per-object array (copies), as a table of the same kind."""
    return map_rows(lambda a: np.array(a[i]), table)


def with_seq(J, seq):
    """Joints whose target sequence table is `seq`."""
    return J._replace(const=J.const._replace(seq=seq))


def hold(B, idx):
    """Bodies idx stop moving in the steps to come (asleep, or held by the guard)."""
    B.static[idx] = True
    B.inv_mass[idx] = 0.0
    B.inv_inertia[idx] = 0.0


def inverse_moments(inertia):
    """J^-1 of principal moments, 0 where J = 0 (a thin rod about its axis; a fixed body)."""
    return np.where(inertia > 0, 1.0 / np.where(inertia > 0, inertia, 1.0), 0.0)


def release(B, idx):
    """Bodies idx move again with their own mass and inertia (bit for bit from their
    constants), or stay static where fixed."""
    c = B.const
    B.inv_mass[idx] = c.inv_mass[idx]
    B.static[idx] = c.inv_mass[idx] == 0.0
    B.inv_inertia[idx] = inverse_moments(c.inertia[idx])


# Contacts of one step (engine/contacts/solve.py): c rows, one per contact point; A = body[:,0]
# (the normal points from B to A). Filled from a ContactSet before each step.
Contacts = namedtuple("Contacts", [
    "body",      # (c,2) int64 bodies A, B
    "anchor",    # (c,2,3) contact point in each body's principal frame (relative to the COM)
    "normal",    # (c,3) unit, world, from B to A (fixed over the step)
    "depth",     # (c,) overlap at detection (> 0 overlapping, < 0 apart)
    "coef",      # (c,5) restitution e, static mu_s, dynamic mu_d, torsional mu_t [m] and
                 # rolling mu_r [m] friction of the pair (contacts/friction.py)
    "warm",      # (c,8) the matched contact's impulses in the last step (0 if new): acc_n,
                 # acc_t, acc_w[:,0], acc_v, acc_tv, acc_w[:,1] (WARM_* columns)
    "arm",       # (c,2,3) world arms at the current time (derived)
    "ref",       # (c,2,3) world contact points at detection (depth bookkeeping, derived)
    "acc_n",     # (c,) accumulated normal impulse of this step (derived, >= 0)
    "acc_t",     # (c,3) accumulated friction impulse of this step (derived)
    "acc_v",     # (c,) normal impulse of the velocity correction (derived, >= 0)
    "acc_c",     # (c,) normal impulse of the collision pass (derived, >= 0)
    "acc_tv",    # (c,3) friction impulse of the velocity correction (derived)
    "acc_w",     # (c,2) twist friction impulse about n, position stage / velocity correction
                 # (friction lives per patch, in the patch's first row: contacts/friction.py)
    "acc_r",     # (c,2,3) rolling friction angular impulse (world, in the contact plane),
                 # position stage / velocity correction (patch's first row; not warm started)
    "first",     # (c,) int64 first row of the contact's patch (derived)
    "pcount",    # (c,) int64 rows of the patch (in its first row; rows first .. first+pcount-1)
    "collision",  # (c,) int64: the collision round the row collides in this step, coded
                  # (contacts/rows.py: NOT_COLLIDING, collision_code, collision_round)
    "layer",     # (c,) int64 shock-propagation layer of the contact (derived)
    "order",     # (c,) int64 visiting order: highest layer first (derived)
    "heavy",     # (n,) bool: static or frozen by shock propagation (scratch)
    "free",      # (n,) bool: neither static nor on a joint (moved by the depth projection)
    "body_layer",  # (n,) int64 (scratch)
    "save",      # (c,9) acc_n, acc_t, acc_v, acc_w[:,0], acc_r[:,0] saved for a step halving
                 # or around the collision stage (scratch)
    "keep",      # (c,WARM_SIZE) what the next step's warm start takes: the impulses of the
                 # position loop and of the velocity correction before their shock passes
    # per stage (contacts/rows.py): [c, 0] as the loops see it, [c, 1] as the shock pass does
    "k_normal",  # (c,2) n^T K n of each row: its inverse effective mass along n
    "split",     # (c,) bool: the row's depth is left to the depth projection (SPLIT_DEPTH)
    "prows",     # (c,) int64 rows the patch counts in this stage (first row; 0: none)
    "patch_frame",  # (c,4,3) patch centre arms r_A, r_B, tangents t1, t2 (first row)
    "prad",      # (c,) patch radius R (first row)
    "pk",        # (c,2,3,3) the patch friction's K (first row)
    "g0",        # (c,) predicted gap at the last look-ahead snapshot (position stage)
    "un0",       # (c,) relative normal velocity at that snapshot
    "patch_disp0",  # (c,3) patch: mean displacement over the step at the snapshot (first
                    # row)
    "patch_vel0",   # (c,3) patch: relative velocity at its centre at the snapshot (first row)
    "keff",      # (c,) n^T K n through a joint tree (solvers/contact_tree.py; 0: free bodies)
    "kpatch",    # (c,3,3) the patch friction's K through a joint tree (in the patch's first
                 # row, where keff > 0; contacts/friction.py)
    "held",      # (2,6) velocities of a contact's bodies before a visit (scratch)
    "radius",    # (c,2) curvature radius of each side at the contact point: the sphere's,
                 # capsule's or a cylinder side's radius (the point follows the surface over
                 # the step, contact_rows.snapshot), 0 for faces, edges and corners
    "face",      # (c,) a cylinder's radius where the row is a rim point of its cap lying on
                 # the other body (the patch is its disc: twist radius 2 r / 3), else 0
    "drift",     # (c,3) how far A's material contact point has slid along the contact plane
                 # relative to B's since the contact began to stick (world; friction anchors,
                 # contacts/system.py; 0 for curved sides and fresh or sliding contacts)
    "pturn",     # (c,) patch: the turn about n that its rows' drifts add up to (first row)
    "slide",     # (c,) bool: the patch slid when its stage began (first row; its friction
                 # cone is mu_d, else mu_s: contacts/friction.py)
])

# Columns of Contacts.warm: the last step's accumulated impulses of the matched contact.
WARM_N, WARM_T, WARM_W, WARM_V, WARM_TV, WARM_WV, WARM_SIZE = 0, 1, 4, 5, 6, 9, 10

# Solver settings passed to kernels as one float array (index constants below).
S_H, S_EPS_POS, S_EPS_VEL, S_MAX_CYCLES, S_BUDGET_NS, S_ORDER, S_VEL_CORR, \
    S_MAX_HALVINGS, S_SPRING_ITERATED, S_H_PREV, S_GX, S_GY, S_GZ, S_TIME, S_SOLVER, \
    S_RESTITUTION_LAW, S_REST_SPEED, S_SHOCK_PASSES, S_CONTACT_CYCLES, S_CONTACT_TOL, \
    S_TOI, S_SPRING_SYNC, S_RELAX, S_WARM, S_RELAX_PREV, S_SIZE = range(26)
# The settings array is read-only in a step: the step kernel works on its own copy (where
# the cut at a collision time shortens S_H, a tall stack raises S_CONTACT_CYCLES and the
# sub-steps advance S_TIME and S_H_PREV) and reports its clock in a K_* array.
# S_TOI: 1 while the step may be cut at a collision time (World.step clears it when the
# step's sub-steps reach their cap).
# S_SPRING_SYNC: 1 where springs, dampers and brakes act as two half kicks around each step
# (velocities at the step's end in step with the positions: extrapolation needs that),
# else 0: one kick at t for the window (h_prev + h)/2 (joints/spring.py).
# S_RELAX: the iterative loops' over-relaxation of the joints' corrections: 0 adapts it to a
# slow loop, 1 is plain Gauss-Seidel, else that factor from the first cycle
# (solvers/relaxation.py).
# S_WARM: 1 where the iterative velocity stage starts with the joints' corrections of the
# last step (joints/warm_start.py).
# S_RELAX_PREV: the over-relaxation the last step's position loop ended on (K_RELAX; 0:
# none), the adapted position loop's start (solvers/relaxation.carried).
RESTITUTION_NEWTON, RESTITUTION_POISSON = 0, 1

# The step's clock, written by the step kernel: K_H_TAKEN the time it took (less than S_H
# where it was cut at a collision time), K_H_LAST its last sub-step's length (the next
# step's h_prev), K_TIME the time at its end, K_RELAX the over-relaxation its last position
# loop ended on (the next step's S_RELAX_PREV).
K_H_TAKEN, K_H_LAST, K_TIME, K_RELAX, K_SIZE = range(5)

# Statistics of one step, written by the kernels into one float array.
# T_END_DEPTH: the deepest contact row at t + h after the position stage (its linearised
# look-ahead, contacts.end_depth); T_DEPTH: the deepest contact after the step's depth
# projection, where one ran (depth_projection.py; else T_END_DEPTH).
T_CHECKS, T_IMPULSES, T_SWEEPS, T_RESIDUAL, T_VEL_CHECKS, T_VEL_IMPULSES, T_VEL_RESIDUAL, \
    T_HALVINGS, T_BUDGET_HIT, T_SOLVE_NS, \
    T_DETECT_NS, T_COLLIDE_NS, T_CONTACT_NS, T_COLLISIONS, T_CONTACTS, T_LAYERS, \
    T_END_DEPTH, T_DEPTH, T_PROJECT_NS, T_CAP_HIT, T_ROWS, T_TOI_EVENTS, T_CONTACT_IMPULSE, \
    T_POSITION_NS, T_SHOCK_NS, T_ADVANCE_NS, T_VELOCITY_NS, T_SIZE = range(28)
# The stages' times (engine/step.py): T_DETECT_NS, T_COLLIDE_NS, T_POSITION_NS, T_SHOCK_NS,
# T_ADVANCE_NS, T_VELOCITY_NS, T_PROJECT_NS; T_SOLVE_NS the kernel's whole step;
# T_CONTACT_NS = position + shock + velocity where the step has contacts (else 0).
# engine/step_stats.py names every field.
# T_CAP_HIT: loops or passes of the step's contact stages that stopped on a cap instead of
# their tolerance (shock layers, collision rounds, collision-time events); T_ROWS: contact
# rows of the step; T_TOI_EVENTS: sub-steps the step was split into at collision times
# (World.step); T_CONTACT_IMPULSE: total normal contact impulse of the step [N s].


def empty_bodies(n, order):
    const = BodyConstants(inv_mass=np.zeros(n), inertia=np.zeros((n, 3)))
    return Bodies(
        pos=np.zeros((n, 3)), rot=np.tile(np.eye(3), (n, 1, 1)), vel=np.zeros((n, 3)),
        omega=np.zeros((n, 3)), inv_mass=np.zeros(n), inv_inertia=np.zeros((n, 3)),
        static=np.zeros(n, dtype=np.bool_),
        inertia_w=np.zeros((n, 3, 3)), inv_inertia_w=np.zeros((n, 3, 3)),
        pred_pos=np.zeros((n, 3)), pred_series=np.zeros((n, order + 1, 3)),
        pred_rot=np.tile(np.eye(3), (n, 1, 1)),
        pred_ok=np.zeros(n, dtype=np.bool_), load=np.zeros((n, 6)), const=const)


def empty_joints(m, seq_rows=0):
    from .joints import A_SIZE, P_SIZE, W_SIZE
    const = JointConstants(
        kind=np.zeros(m, dtype=np.int64), body=np.zeros((m, 2), dtype=np.int64),
        anchor=np.zeros((m, 2, 3)), frame=np.tile(np.eye(3), (m, 2, 1, 1)),
        param=np.zeros((m, P_SIZE)), seq=np.zeros((seq_rows, 2)))
    return Joints(
        angle=np.zeros((m, 2)), warm=np.zeros((m, W_SIZE)),
        enabled=np.ones(m, dtype=np.bool_), effort=np.zeros(m),
        arm=np.zeros((m, 2, 3)), kinv=np.zeros((m, 3, 3)),
        locks=np.zeros((m, 7, 3, 3)), err=np.zeros(m),
        acc=np.zeros((m, A_SIZE)), const=const)


def empty_springs(s):
    const = SpringConstants(
        body=np.zeros((s, 2), dtype=np.int64), anchor=np.zeros((s, 2, 3)), rest=np.zeros(s),
        stiff=np.zeros(s), damp=np.zeros(s))
    return Springs(force_prev=np.zeros((s, 3)), applied=np.zeros((s, 3)), const=const)


def empty_contacts(c, n):
    return Contacts(
        body=np.zeros((c, 2), dtype=np.int64), anchor=np.zeros((c, 2, 3)),
        normal=np.zeros((c, 3)), depth=np.zeros(c), coef=np.zeros((c, 5)),
        warm=np.zeros((c, WARM_SIZE)), arm=np.zeros((c, 2, 3)), ref=np.zeros((c, 2, 3)),
        acc_n=np.zeros(c), acc_t=np.zeros((c, 3)), acc_v=np.zeros(c), acc_c=np.zeros(c),
        acc_tv=np.zeros((c, 3)), acc_w=np.zeros((c, 2)), acc_r=np.zeros((c, 2, 3)),
        first=np.arange(c, dtype=np.int64),
        pcount=np.ones(c, dtype=np.int64),
        collision=np.zeros(c, dtype=np.int64), layer=np.zeros(c, dtype=np.int64),
        order=np.arange(c, dtype=np.int64),
        heavy=np.zeros(n, dtype=np.bool_), free=np.zeros(n, dtype=np.bool_),
        body_layer=np.zeros(n, dtype=np.int64), save=np.zeros((c, 9)),
        keep=np.zeros((c, WARM_SIZE)), k_normal=np.zeros((c, 2)),
        split=np.zeros(c, dtype=np.bool_), prows=np.zeros(c, dtype=np.int64),
        patch_frame=np.zeros((c, 4, 3)), prad=np.zeros(c), pk=np.zeros((c, 2, 3, 3)),
        g0=np.zeros(c),
        un0=np.zeros(c), patch_disp0=np.zeros((c, 3)), patch_vel0=np.zeros((c, 3)),
        keff=np.zeros(c), kpatch=np.zeros((c, 3, 3)), held=np.zeros((2, 6)),
        radius=np.zeros((c, 2)), face=np.zeros(c), drift=np.zeros((c, 3)), pturn=np.zeros(c),
        slide=np.zeros(c, dtype=np.bool_))
