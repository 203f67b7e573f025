"""One time step t -> t + h as named stages, the same list for every solver (Schmitt sec.
5-6 and 11, design.md sec. 2). settings[S_SOLVER] picks how the position and velocity
stages solve (iterative Gauss-Seidel cycles, or the global solvers' rounds); which stages run
and in which order does not change.

In World.step (Python, engine/world.py): the drag, the finite-state guard, DETECT (contacts
at t, engine/contacts/system.py), this kernel, the guard again, DEPTH PROJECTION
(engine/contacts/depth_projection.py). In this kernel:
  1. order      contact graph layers and patches; the cut at the first collision time within
                the step (Schmitt sec. 11: the rest follows as another sub-step)
  2. collide    collisions at t: restitution targets, the last step's impulses as warm start
  3. forces     springs and dampers, joint forces (springs, dampers, brakes in joints), on
                the velocities at t; then the external loads' and actuator efforts' first
                half kick (loads.py)
  4. position   P-steps 1-2: joints and contacts corrected on the look-ahead to t + h until
                every error is below its tolerance, or a cap / the budget stops the loop;
                a diverging loop halves the step (up to max_halvings)
  5. shock      shock propagation over the contact graph's layers, bottom-up
  6. advance    P-step 3: every body moves ballistically to t + h; the loads' second kick
  7. velocity   P-step 4: joints (warm-started from their last correction where the
                iterative solver runs, joints/warm_start.py) and touching contacts at t + h,
                then the velocity shock pass
Each stage is timed into its own statistics field (T_<stage>_NS; step_stats.py names them);
the stopping rules the position and velocity stages share live in solvers/stopping.py.
Every stage and the sub-step loop are NO_REFCOUNT (jitopts.py): compiled with reference
counting, the collide stage spent 12 of its 27 us on the pyramid increfing the contact
arrays it hands to its helpers, and forces and advance cost chain8 (no loads, no springs)
2.3 and 1.3 us a step in calls that had nothing to do. The springs' kernels allocate their
arms and say REFCOUNT; the stages call them only where there are springs.
"""
import numpy as np
from numba import njit

from .clock import monotonic_ns
from .contacts import friction as contact_friction
from .contacts import rows as contact_rows
from .contacts import solve as contacts
from .jitopts import NO_REFCOUNT
from .joints import BALL, generic, spring, warm_start
from .loads import kick
from .solvers import rounds
from .solvers.iterative import (
    advance_all,
    energy_kernel,
    position_loop,
    prepare,
    residuals,
    velocity_loop,
)
from .state import (
    K_H_LAST,
    K_H_TAKEN,
    K_RELAX,
    K_TIME,
    S_BUDGET_NS,
    S_CONTACT_CYCLES,
    S_CONTACT_TOL,
    S_EPS_POS,
    S_EPS_VEL,
    S_GX,
    S_H,
    S_H_PREV,
    S_MAX_HALVINGS,
    S_ORDER,
    S_RELAX_PREV,
    S_SHOCK_PASSES,
    S_SOLVER,
    S_SPRING_ITERATED,
    S_SPRING_SYNC,
    S_TIME,
    S_TOI,
    S_VEL_CORR,
    S_WARM,
    T_ADVANCE_NS,
    T_CAP_HIT,
    T_CHECKS,
    T_COLLIDE_NS,
    T_CONTACT_IMPULSE,
    T_CONTACT_NS,
    T_CONTACTS,
    T_END_DEPTH,
    T_HALVINGS,
    T_LAYERS,
    T_POSITION_NS,
    T_ROWS,
    T_SHOCK_NS,
    T_SIZE,
    T_SOLVE_NS,
    T_TOI_EVENTS,
    T_VEL_CHECKS,
    T_VELOCITY_NS,
)


@njit(cache=True, **NO_REFCOUNT)
def order_contacts(B, J, C, settings, stats):
    """Stage 1: the contact graph's layers (visited top-down in the loops, bottom-up by the
    shock pass), the patches, the shock pass's cap, and the cut at the first collision time
    (Schmitt sec. 11: the step's copy of the settings gets the time taken as S_H). Returns
    the top layer the shock pass starts from (0: no shock pass)."""
    top = contacts.layers(B, J, C)
    contacts.order_by_layer(C, top)
    contact_rows.find_patches(C)
    cap = int(settings[S_SHOCK_PASSES])      # < 0: every layer; 0: off
    if cap > 0 and top > cap:
        stats[T_CAP_HIT] += 1
        top = cap
    if cap == 0:
        top = 0
    stats[T_LAYERS] = top
    # a taller stack gets more sweeps (loops, shock and collision passes): Gauss-Seidel
    # hands a load down about a layer a sweep, and a tower of 40 cubes turned against
    # each other never settled in 10 (its top swayed by centimetres); 12 are enough
    settings[S_CONTACT_CYCLES] = max(settings[S_CONTACT_CYCLES], top // 2)
    stats[T_ROWS] = C.body.shape[0]
    if settings[S_TOI] != 0.0:
        # cut the step just before the first bounce within it; the next sub-step
        # (World.step) starts with that row touching
        h = collision_cut(B, C, settings)
        if h < settings[S_H]:
            settings[S_H] = h
            stats[T_TOI_EVENTS] = 1
    return top


@njit(cache=True, **NO_REFCOUNT)
def collision_cut(B, C, settings):
    """The step's length up to its first collision time (contacts.contact_time, at least
    TOI_MIN of it), settings[S_H] where no row bounces within it. Also the world's cut
    where its islands step apart (islands.py)."""
    h = settings[S_H]
    contacts.prepare(B, C)
    t_hit = contacts.contact_time(B, C, h, settings)
    return max(t_hit, contacts.TOI_MIN * h) if t_hit < h else h


@njit(cache=True, **NO_REFCOUNT)
def collide(B, C, hs, settings, stats, target, first, warm, top):
    """Stage 2: collisions at t (restitution targets), and on the step's first visit the
    last step's impulses as warm start, scaled down to a shorter step. Returns True once the
    warm start is in."""
    t0 = monotonic_ns()
    contacts.prepare(B, C)
    if first:
        contacts.begin_step(B, C)
    contacts.collide(B, C, hs, settings, stats, target, top > 0)
    if not warm:
        h_last = settings[S_H_PREV]
        contacts.warm_start(B, C, False, min(hs / h_last, 1.0) if h_last > 0 else 1.0)
    contacts.save(C)
    stats[T_COLLIDE_NS] += monotonic_ns() - t0
    return True


@njit(cache=True, **NO_REFCOUNT)
def forces(B, J, Sp, hs, h_prev, iterated, scratch_rows):
    """Stage 3: springs and dampers (as impulses for the window (h_prev + h)/2, or begun
    for the iterated springs), the joints' own forces (springs, dampers, brakes), then the
    external loads' and actuator efforts' first half kick. Dampers first, so that they read
    the velocities at t (read after the efforts' kick, a velocity actuator's damper read its
    own load's half step and ran the joint up to 5 % slow); the spring's share of those
    velocities, still to come in its window's impulse, is added where a damper reads them
    (joints/generic.apply_forces, joints/spring.apply_damper)."""
    acc = J.acc
    for j in range(acc.shape[0]):
        for i in range(acc.shape[1]):
            acc[j, i] = 0.0
    if Sp.const.body.shape[0] > 0:    # (the springs' kernels allocate: called only for them)
        if iterated:
            spring.begin_iterated(B, Sp, hs, h_prev)
        else:
            spring.apply_approximate(B, Sp, hs, h_prev)
    joint_forces(B, J, hs, h_prev, scratch_rows)
    kick(B, 0.5 * hs)
    joint_efforts(B, J, 0.5 * hs, scratch_rows)


@njit(cache=True, **NO_REFCOUNT)
def joint_efforts(B, J, dt, scratch_rows):
    """Half of the step's actuator efforts (loads on joints, loads.py): effort * dt along
    each joint's primary coordinate, at t and again at t + h like the body loads' kicks."""
    for j in range(J.const.kind.shape[0]):
        if J.enabled[j] and J.const.kind[j] != BALL and J.effort[j] != 0.0:
            generic.apply_effort(B, J, j, dt, scratch_rows)


@njit(cache=True, **NO_REFCOUNT)
def joint_forces(B, J, hs, h_prev, scratch_rows):
    """The joints' springs, dampers and brakes for the window (h_prev + h)/2."""
    for j in range(J.const.kind.shape[0]):
        if J.enabled[j] and J.const.kind[j] != BALL:
            generic.apply_forces(B, J, j, hs, h_prev, scratch_rows)


@njit(cache=True, **NO_REFCOUNT)
def position(B, J, Sp, C, hs, h_prev, settings, stats, scratch_a, scratch_x, scratch_arms,
             scratch_rows, scratch_lin, base, may_abort, W):
    """Stage 4: joints and contacts on the look-ahead, by the chosen solver. False: the loop
    diverged (only when may_abort) and the sub-step is taken again as two halves. Also
    returns the over-relaxation the iterative loop hands on (1 for the other solvers): the
    velocity loop's start and the next step's (iterative.position_loop)."""
    t0 = monotonic_ns()
    solver = int(settings[S_SOLVER])
    omega = 1.0
    if solver == 0:
        ok, omega = position_loop(B, J, Sp, C, hs, h_prev, settings, stats, scratch_a,
                                  scratch_x, scratch_arms, scratch_rows, scratch_lin, base,
                                  may_abort)
    else:
        ok = rounds.position_stage(B, J, Sp, C, hs, h_prev, settings, stats, scratch_a,
                                   scratch_x, scratch_arms, scratch_rows, may_abort, W, solver)
    stats[T_POSITION_NS] += monotonic_ns() - t0
    return ok, omega


@njit(cache=True, **NO_REFCOUNT)
def shock(B, C, top, hs, settings, stats, velocities, deadline):
    """Stages 5 and 7b: shock propagation over the contact layers, bottom-up (Guendelman
    et al. 2003), on positions or on velocities."""
    t0 = monotonic_ns()
    # positions: each layer to a tenth of the loops' tolerance (a tower's sway is the sum
    # of its layers' position residuals); velocities: to eps_vel itself, since a layer's
    # velocity residual is taken up by the next step's position stage, and a tenth cost
    # the pyramid 2.2x the velocity visits with no tower standing straighter (10-40 cubes
    # at 1/60: the top moved <= 0.5 mm in 10 s either way)
    tol = settings[S_EPS_VEL] if velocities else \
        contacts.SHOCK_TIGHTER * max(settings[S_EPS_POS], settings[S_CONTACT_TOL])
    checks = contacts.shock_pass(B, C, top, hs, tol, settings, velocities, deadline)
    stats[T_VEL_CHECKS if velocities else T_CHECKS] += checks
    stats[T_SHOCK_NS] += monotonic_ns() - t0


@njit(cache=True, **NO_REFCOUNT)
def advance(B, J, Sp, hs, settings, stats, scratch_a, scratch_x, scratch_r, scratch_rows,
            sync):
    """Stage 6: the springs' step ends, every body moves ballistically to t + h (the joints'
    angles stored there, unwrapped), and the external loads' second half kick (with the
    inertia at t + h) completes v + h F/m. With `sync` the springs, dampers and brakes give
    their second half kick too, at t + h (the first took only h/2: their window ends at
    t + h instead of t + h/2), before the loads' as in stage 3 (so a body at rest between a
    damped spring and a load stays there)."""
    t0 = monotonic_ns()
    springs = Sp.const.body.shape[0] > 0   # (the springs' kernels allocate: called only for them)
    if springs:
        spring.end_step(B, Sp)
    advance_all(B, hs, settings, scratch_a, scratch_x, scratch_r)
    generic.store_angles(B, J)
    settings[S_H_PREV] = hs
    prepare(B, J, scratch_r)
    if sync:
        if springs:
            spring.apply_approximate(B, Sp, 0.0, hs)
        joint_forces(B, J, 0.0, hs, scratch_rows)
    kick(B, 0.5 * hs)
    joint_efforts(B, J, 0.5 * hs, scratch_rows)
    stats[T_ADVANCE_NS] += monotonic_ns() - t0


@njit(cache=True, **NO_REFCOUNT)
def velocity(B, J, C, hs, h, top, settings, stats, scratch_rows, W, warm, deadline, omega):
    """Stage 7: joints and touching contacts at t + h (P-step 4), then the velocity shock
    pass; omega: the position loop's last over-relaxation. Returns True once the velocity
    warm start is in."""
    nc = C.body.shape[0]
    t0 = monotonic_ns()
    if nc > 0:
        contacts.prepare(B, C)
        contact_rows.prepare_rows(B, C, contact_rows.STAGE_VELOCITY, top > 0, hs, settings)
    if settings[S_VEL_CORR] == 0.0:
        stats[T_VELOCITY_NS] += monotonic_ns() - t0
        return warm
    if nc > 0 and not warm:
        contacts.warm_start(B, C, True, hs / h)
        warm = True
    solver = int(settings[S_SOLVER])
    warm_start.begin(B, J, hs, solver == 0 and settings[S_WARM] != 0.0, scratch_rows)
    if solver == 0:
        velocity_loop(B, J, C, settings, stats, scratch_rows, deadline, omega)
    else:
        rounds.velocity_stage(B, J, C, settings, stats, scratch_rows, W, solver, deadline)
    if nc > 0:
        contacts.keep_for_warm_start(C, True)
    stats[T_VELOCITY_NS] += monotonic_ns() - t0
    if nc > 0 and top > 0:
        shock(B, C, top, hs, settings, stats, True, deadline)
    return warm


@njit(cache=True, nogil=True)
def step(B, J, Sp, C, settings, stats, W, clock):
    """Advance the world by settings[S_H] (as halves where the position stage diverges, up
    to a collision time where one cuts it); C: the contacts detected at t, possibly none; W:
    the global solvers' structure (solvers/graph.build). The stages are this file's
    functions, in this order. settings is only read; the time taken, the last sub-step's
    length and the time at the end go into clock (K_*).

    The entry points are few and shallow: each compiled kernel that calls another links the
    callee's code and numba optimises and generates the machine code of the whole linked
    tree again, about 13 s of one core for each layer above the stages (a wrapper layer,
    step_after, and sub_steps as a kernel of its own cost 27 s of a 500 s compile)."""
    step_with(B, J, Sp, C, settings, stats, W, False, clock, scratch(B, J, C, settings))


@njit(cache=True)
def scratch(B, J, C, given):
    """The step's working arrays (run() allocates them once for all its steps): the step's
    own copy of the settings, the collision targets, the rotation series' and the joints'
    scratch, the ball joints' look-ahead snapshot, the velocities saved for a halving, the
    bases of the generic joints' linearised look-ahead (impulses.look_ahead_linear)."""
    n = B.pos.shape[0]
    order = int(given[S_ORDER])
    return (np.empty(given.shape[0]), np.empty(C.body.shape[0]),
            np.empty((order + 1, 3, 3)), np.empty((order + 7, 3, 3)),  # motion.series_over_step
            np.empty((3, 3)), np.empty((2, 3)),
            np.empty((12, 3, 3)),        # joints: s[0..5]; a motor's K (7 x 7): s[6..11]
            np.empty((J.const.kind.shape[0], 7, 3)), np.empty((n, 3)), np.empty((n, 3)),
            (np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3)),
             np.zeros(n, dtype=np.bool_)))   # the generic joints' look-ahead bases


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def step_with(B, J, Sp, C, given, stats, W, prepared, clock, work):
    """step() with its working arrays (scratch()). prepared: the derived quantities
    (iterative.prepare) are those of the state as it is, as after a step of run() (the
    step's advance stage computed them at its end and nothing changed since), so the first
    sub-step need not compute them again."""
    t_start = monotonic_ns()
    settings, target, scratch_a, scratch_x, scratch_r, scratch_arms, scratch_rows, \
        scratch_lin, save_vel, save_omega, base = work
    for i in range(given.shape[0]):   # the step's own: S_H, S_CONTACT_CYCLES, S_TIME and
        settings[i] = given[i]        # S_H_PREV change
    stats[:] = 0.0
    # the time budget bounds the position loop (from its start) and, from the step's start,
    # the contact stages after it: each still does at least one sweep (anytime)
    deadline = t_start + int(settings[S_BUDGET_NS]) if settings[S_BUDGET_NS] > 0 else 0
    nc = C.body.shape[0]
    top = 0
    if nc > 0:
        top = order_contacts(B, J, C, settings, stats)                 # 1. order
    sub_steps(B, J, Sp, C, settings, stats, W, prepared, top, deadline, target, scratch_a,
              scratch_x, scratch_r, scratch_arms, scratch_rows, scratch_lin, save_vel,
              save_omega, base)
    clock[K_H_TAKEN] = settings[S_H]
    clock[K_H_LAST] = settings[S_H_PREV]
    clock[K_RELAX] = settings[S_RELAX_PREV]
    clock[K_TIME] = settings[S_TIME]
    residuals(B, J, stats, scratch_rows)
    if nc > 0:
        stats[T_CONTACT_NS] = stats[T_POSITION_NS] + stats[T_SHOCK_NS] + stats[T_VELOCITY_NS]
    stats[T_CONTACTS] = contacts.touching(C)
    stats[T_CONTACT_IMPULSE] = contacts.total_impulse(C)
    stats[T_SOLVE_NS] = monotonic_ns() - t_start


@njit(cache=True, inline='always')
def sub_steps(B, J, Sp, C, settings, stats, W, prepared, top, deadline, target, scratch_a,
              scratch_x, scratch_r, scratch_arms, scratch_rows, scratch_lin, save_vel,
              save_omega, base):
    """Stages 2-7 over the step's sub-steps (halvings where the position stage diverges;
    settings[S_H]: the step, possibly cut at a collision time by order_contacts). Inlined
    into step_with, which is compiled without reference counting (it allocates nothing:
    its caller hands it every scratch array): with reference counting each stage call
    increfs and decrefs every array of the bodies and the contacts it is handed."""
    nc = C.body.shape[0]
    max_level = int(settings[S_MAX_HALVINGS])
    total = 1 << max_level
    done = 0
    level = 0
    iterated = settings[S_SPRING_ITERATED] != 0.0
    sync = settings[S_SPRING_SYNC] != 0.0 and not iterated
    warmed = False
    warmed_v = False
    h = settings[S_H]
    while done < total:
        units = total >> level
        hs = h * units / total
        h_prev = settings[S_H_PREV]
        if not prepared:
            prepare(B, J, scratch_r)
        prepared = False    # a halving restores the velocities: prepare afresh
        if nc > 0:
            warmed = collide(B, C, hs, settings, stats, target,         # 2. collide
                             done == 0 and not warmed, warmed, top)
        _copy_rows(B.vel, save_vel)
        _copy_rows(B.omega, save_omega)
        forces(B, J, Sp, hs, 0.0 if sync else h_prev, iterated,        # 3. forces
               scratch_rows)
        ok, omega = position(B, J, Sp, C, hs, h_prev, settings, stats,  # 4. position
                             scratch_a, scratch_x, scratch_arms, scratch_rows, scratch_lin,
                             base, level < max_level, W)
        settings[S_RELAX_PREV] = omega      # the next position loop's start
        if not ok and level < max_level:
            _copy_rows(save_vel, B.vel)
            _copy_rows(save_omega, B.omega)
            if nc > 0:
                contacts.restore(C)
            level += 1
            stats[T_HALVINGS] += 1
            continue
        if nc > 0:
            contact_friction.break_loose(B, C, hs, settings[S_EPS_VEL])
            contacts.keep_for_warm_start(C, False)
            if top > 0:
                shock(B, C, top, hs, settings, stats, False, deadline)  # 5. shock
            stats[T_END_DEPTH] = max(stats[T_END_DEPTH], contacts.end_depth(B, C, hs))
        advance(B, J, Sp, hs, settings, stats, scratch_a, scratch_x, scratch_r,  # 6. advance
                scratch_rows, sync)
        warmed_v = velocity(B, J, C, hs, h, top, settings, stats,        # 7. velocity
                            scratch_rows, W, warmed_v, deadline, omega)
        settings[S_TIME] += hs
        done += units
        if level > 0 and done % (2 * units) == 0:
            level -= 1



@njit(cache=True, inline='always')
def _copy_rows(src, dst):
    """dst[:, :] = src for (n, 3) arrays, without the temporary copy numba's slice
    assignment allocates (NO_REFCOUNT kernels cannot allocate)."""
    for b in range(src.shape[0]):
        for i in range(3):
            dst[b, i] = src[b, i]

@njit(cache=True, nogil=True)
def run(B, J, Sp, C, given, n_steps, step_stats, step_energy, every, rec_pos, rec_rot,
        rec_vel, rec_omega, W, clock):
    """n_steps steps in one call; per-step stats (n_steps, T_SIZE) and total energy
    (n_steps+1,), and every `every`-th state into rec_* (rows = n_steps // every + 1); the
    last step's clock in clock."""
    settings = given.copy()   # the run's clock: S_TIME and S_H_PREV from step to step
    gravity = settings[S_GX:S_GX + 3].copy()
    stats = np.zeros(T_SIZE)
    k, p = energy_kernel(B, Sp, gravity)
    step_energy[0] = k + p
    rows = rec_pos.shape[0]
    if rows > 0:
        rec_pos[0] = B.pos
        rec_rot[0] = B.rot
        rec_vel[0] = B.vel
        rec_omega[0] = B.omega
    r = 1
    work = scratch(B, J, C, settings)
    for s in range(n_steps):
        step_with(B, J, Sp, C, settings, stats, W, s > 0, clock, work)
        settings[S_TIME] = clock[K_TIME]
        settings[S_H_PREV] = clock[K_H_LAST]
        settings[S_RELAX_PREV] = clock[K_RELAX]
        step_stats[s, :] = stats
        k, p = energy_kernel(B, Sp, gravity)
        step_energy[s + 1] = k + p
        if rows > 0 and (s + 1) % every == 0 and r < rows:
            rec_pos[r] = B.pos
            rec_rot[r] = B.rot
            rec_vel[r] = B.vel
            rec_omega[r] = B.omega
            r += 1
