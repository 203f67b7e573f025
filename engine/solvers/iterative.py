"""The time step of the impulse method with the iterative (Gauss-Seidel) joint correction.

One step t -> t + h (Schmitt sec. 5-6, design.md sec. 2):
 1. springs/dampers become impulses at t;
 2. P-steps 1-2: visit the joints cyclically; for each, predict its points at t + h by
    look-ahead and, if the error is >= eps_pos, apply the correcting impulse at t. Stop when
    a full cycle needed no correction, or on the iteration cap / time budget (anytime: the
    best state so far is used and the residual reported). If the largest error of a cycle
    grows instead of shrinking (or is not finite), the iteration diverges: restore the
    velocities, halve h and do the step as two halves (recursively, up to max_halvings);
 3. P-step 3: advance every body ballistically;
 4. P-step 4 (optional): velocity correction at t + h until every |du| <= eps_vel (contacts:
    contact_sweeps cycles, then the velocity shock pass).
"Checks" count P-step-1 visits (the report's Table 9.2 unit); "impulses" count corrections.

The loops unpack the Bodies/Joints tuples once and hand the member arrays on one by one:
passing a tuple into the (inlined) per-joint functions costs one refcount call per member
array at every call site, which dominated the step (see impulses.py).
The per-step kernels below `step` are also compiled without numba's reference counting
(jitopts.NO_REFCOUNT): they must never allocate arrays; scratch comes from `step`.
"""
import numpy as np
from numba import njit

from ..clock import monotonic_ns
from ..contacts import friction as contact_friction
from ..contacts import rows as contact_rows
from ..contacts import solve as contacts
from ..impulses import ensure_look_ahead, velocity_at
from ..jitopts import NO_REFCOUNT
from ..joints import BALL, dispatch, generic, spring
from ..motion import advance_body, world_inertia
from ..state import (
    S_BUDGET_NS,
    S_CONTACT_SWEEPS,
    S_CONTACT_TOL,
    S_EPS_POS,
    S_EPS_VEL,
    S_GX,
    S_H,
    S_H_PREV,
    S_MAX_HALVINGS,
    S_MAX_SWEEPS,
    S_ORDER,
    S_SHOCK_PASSES,
    S_SOLVER,
    S_SPRING_ITERATED,
    S_TIME,
    S_TOI,
    S_VEL_CORR,
    T_BUDGET_HIT,
    T_CAP_HIT,
    T_CHECKS,
    T_COLLIDE_NS,
    T_CONTACT_IMPULSE,
    T_CONTACT_NS,
    T_CONTACTS,
    T_END_DEPTH,
    T_HALVINGS,
    T_IMPULSES,
    T_LAYERS,
    T_RESIDUAL,
    T_ROWS,
    T_SIZE,
    T_SOLVE_NS,
    T_SWEEPS,
    T_TOI_EVENTS,
    T_VEL_CHECKS,
    T_VEL_IMPULSES,
    T_VEL_RESIDUAL,
)
from . import GROWING_CYCLES, rounds


@njit(cache=True, **NO_REFCOUNT)
def prepare(B, J, k_scratch):
    """Derived quantities at the current time: world inertia, arms, K^-1; caches reset.
    k_scratch: (3, 3)."""
    static, rot, pred_ok = B.static, B.rot, B.pred_ok
    for b in range(B.pos.shape[0]):
        if static[b]:
            B.inertia_w[b, :, :] = 0.0
            B.inv_inertia_w[b, :, :] = 0.0
        else:
            world_inertia(rot[b], B.inertia[b], B.inv_inertia[b], B.inertia_w[b],
                          B.inv_inertia_w[b])
        pred_ok[b] = False
    kind, body, anchor, arm = J.kind, J.body, J.anchor, J.arm
    for j in range(kind.shape[0]):
        for side in range(2):
            # world arm R u of the body-frame anchor u (for the world: the world point)
            b = body[j, side]
            for i in range(3):
                if b < 0:
                    arm[j, side, i] = anchor[j, side, i]
                else:
                    arm[j, side, i] = rot[b, i, 0] * anchor[j, side, 0] \
                        + rot[b, i, 1] * anchor[j, side, 1] + rot[b, i, 2] * anchor[j, side, 2]
        dispatch.prepare(kind, j, body, arm, J.kinv, static, B.inv_mass, B.inv_inertia_w,
                         k_scratch)


@njit(cache=True, **NO_REFCOUNT)
def position_loop(B, J, Sp, C, h, h_prev, settings, stats, scratch_a, scratch_x, scratch_arms,
                  scratch_rows, may_abort):
    """P-steps 1-2 (and the iterated springs, then the contacts as items after them).
    Returns False if the iteration diverges (only checked when may_abort: otherwise it runs
    on to the cap or budget)."""
    m = J.kind.shape[0]
    iterated = settings[S_SPRING_ITERATED] != 0.0
    m_sp = m + (Sp.body.shape[0] if iterated else 0)
    items = m_sp + C.body.shape[0]
    if items == 0:
        return True
    eps = settings[S_EPS_POS]
    eps_c = max(eps, settings[S_CONTACT_TOL])
    contact_cycles = int(settings[S_CONTACT_SWEEPS])
    order = int(settings[S_ORDER])
    gravity = settings[S_GX:S_GX + 3]
    t = settings[S_TIME]
    max_checks = int(settings[S_MAX_SWEEPS]) * items
    budget = int(settings[S_BUDGET_NS])
    kind, body, arm, kinv, enabled, joint_err = J.kind, J.body, J.arm, J.kinv, J.enabled, J.err
    static, pos, vel, omega, inv_mass = B.static, B.pos, B.vel, B.omega, B.inv_mass
    inertia_w, inv_inertia_w = B.inertia_w, B.inv_inertia_w
    pred_ok, pred_pos, pred_series, pred_rot = B.pred_ok, B.pred_pos, B.pred_series, B.pred_rot
    t0 = monotonic_ns()
    since = 0
    idx = 0
    checks = 0
    in_cycle = 0
    cycles = 0
    cycle_max = 0.0
    prev_max = np.inf
    rising = 0
    ok = True
    dirty = False       # corrections since the contacts' last look-ahead snapshot
    snapped = -1        # the cycle of that snapshot
    while True:
        if since >= items:
            # converged on the contacts' linearised look-ahead: check on the exact one
            if not (dirty and m_sp < items and cycles <= contact_cycles):
                break
            dirty = False
            snapped = cycles
            if contact_rows.snapshot(B, C, h, order, gravity, scratch_a, scratch_x) < eps_c:
                break
            since = 0
        if checks >= max_checks:
            if may_abort:  # not converging within the cap: treat like divergence
                ok = False
            else:
                stats[T_BUDGET_HIT] += 1
            break
        if idx < m:
            if enabled[idx] and kind[idx] != BALL:
                err, corrected = generic.correct_position(B, J, idx, h, eps, t, order, gravity,
                                                          scratch_a, scratch_x, scratch_rows)
            elif enabled[idx]:
                # P-step 1: both bodies' look-ahead up to date, then the joint's error
                for side in range(2):
                    ensure_look_ahead(body[idx, side], static, pred_ok, pos, vel, omega,
                                      inertia_w, inv_inertia_w, pred_pos, pred_series,
                                      pred_rot, h, order, gravity, scratch_a, scratch_x)
                err, corrected = dispatch.correct_position(
                    kind, idx, body, arm, kinv, h, eps, static, pos, inv_mass, vel, omega,
                    inv_inertia_w, pred_ok, pred_pos, pred_rot)
            else:
                err, corrected = 0.0, False
            joint_err[idx] = err
        elif idx < m_sp:
            err, corrected = spring.correct_iterated(B, Sp, idx - m, h, h_prev, eps, order,
                                                     gravity, scratch_a, scratch_x, scratch_arms)
        elif cycles <= contact_cycles:
            # contacts: own tolerance; Gauss-Seidel over contacts may oscillate (Coulomb
            # friction is not smooth), so only a non-finite error counts for the divergence
            # test; after contact_cycles they get one last cycle without asking for more,
            # then rest (impulses kept) so the joints can finish against them; shock
            # propagation finishes the free bodies' contacts. An exact snapshot of the
            # look-ahead starts every SNAP_EVERY-th cycle and the last one.
            if idx == m_sp and snapped != cycles and (cycles % contact_rows.SNAP_EVERY == 0
                                                      or cycles == contact_cycles):
                contact_rows.snapshot(B, C, h, order, gravity, scratch_a, scratch_x)
                dirty = False
                snapped = cycles
            err, corrected = contacts.visit_position(B, C, idx - m_sp, 1, C.heavy, h, eps_c,
                                                     False)
            err = 0.0 if np.isfinite(err) else err
            if cycles == contact_cycles:
                corrected = False
        else:
            err, corrected = 0.0, False
        checks += 1
        if corrected:
            stats[T_IMPULSES] += 1
            since = 0
            dirty = True
        else:
            since += 1
        if not err <= cycle_max:  # also catches NaN
            cycle_max = err
        idx += 1
        in_cycle += 1
        if idx == items:
            idx = 0
        if in_cycle == items:
            cycles += 1
            # diverging: not finite, or the largest error (above eps) grew in GROWING_CYCLES
            # cycles in a row -- single rises are normal Gauss-Seidel behaviour
            # (while contacts still push, joint errors may rise: not counted)
            settled = cycles > contact_cycles or items == m_sp
            rising = rising + 1 if (settled and cycle_max > prev_max and cycle_max >= eps) \
                else 0
            if may_abort and (not np.isfinite(cycle_max) or rising >= GROWING_CYCLES):
                ok = False
                break
            prev_max = cycle_max
            cycle_max = 0.0
            in_cycle = 0
            if budget > 0 and monotonic_ns() - t0 > budget:
                stats[T_BUDGET_HIT] += 1
                break
    stats[T_CHECKS] += checks
    stats[T_SWEEPS] += cycles
    return ok


@njit(cache=True, **NO_REFCOUNT)
def velocity_loop(B, J, C, settings, stats, scratch_rows, deadline):
    """P-step 4: cyclic velocity correction of the joints and touching contacts at t + h.
    Contacts take part for contact_sweeps cycles, or until monotonic_ns() passes deadline
    (0: none); the joints always run to eps_vel or the cap (cutting them short lets a
    budget-starved tree_255 diverge)."""
    m = J.kind.shape[0]
    items = m + C.body.shape[0]
    if items == 0:
        return
    eps = settings[S_EPS_VEL]
    contact_cycles = int(settings[S_CONTACT_SWEEPS])
    max_checks = int(settings[S_MAX_SWEEPS]) * items
    kind, body, arm, kinv, enabled = J.kind, J.body, J.arm, J.kinv, J.enabled
    static, vel, omega, inv_mass = B.static, B.vel, B.omega, B.inv_mass
    inv_inertia_w, pred_ok = B.inv_inertia_w, B.pred_ok
    since = 0
    idx = 0
    checks = 0
    cycles = 0
    contacts_on = True
    while since < items and checks < max_checks:
        if idx >= m:
            # contacts: contact_sweeps cycles here, then the velocity shock pass finishes
            # the stacks (and the joints may finish against the contacts' impulses)
            if contacts_on and cycles < contact_cycles:
                err, corrected = contacts.visit_velocity(B, C, idx - m, 1, eps, False)
            else:
                corrected = False
        elif enabled[idx] and kind[idx] != BALL:
            err, corrected = generic.correct_velocity(B, J, idx, eps, scratch_rows)
        elif enabled[idx]:
            err, corrected = dispatch.correct_velocity(kind, idx, body, arm, kinv, eps, static,
                                                       inv_mass, vel, omega, inv_inertia_w,
                                                       pred_ok)
        else:
            corrected = False
        checks += 1
        if corrected:
            stats[T_VEL_IMPULSES] += 1
            since = 0
        else:
            since += 1
        idx += 1
        if idx == items:
            idx = 0
            cycles += 1
            if contacts_on and C.body.shape[0] > 0 and deadline > 0 \
                    and monotonic_ns() > deadline:
                stats[T_BUDGET_HIT] = max(stats[T_BUDGET_HIT], 1.0)   # one stop per step
                contacts_on = False
    stats[T_VEL_CHECKS] += checks


@njit(cache=True, **NO_REFCOUNT)
def advance_all(B, h, settings, scratch_a, scratch_x, scratch_r):
    """P-step 3 for every dynamic body, from its (refreshed if stale) look-ahead."""
    order = int(settings[S_ORDER])
    gravity = settings[S_GX:S_GX + 3]
    static, pos, rot, vel, omega, pred_ok = B.static, B.pos, B.rot, B.vel, B.omega, B.pred_ok
    pred_pos, pred_series, pred_rot = B.pred_pos, B.pred_series, B.pred_rot
    for b in range(pos.shape[0]):
        if static[b]:
            continue
        ensure_look_ahead(b, static, pred_ok, pos, vel, omega, B.inertia_w, B.inv_inertia_w,
                          pred_pos, pred_series, pred_rot, h, order, gravity, scratch_a,
                          scratch_x)
        advance_body(b, pos, rot, vel, omega, pred_pos, pred_rot, pred_series, order, gravity,
                     h, scratch_r)
        pred_ok[b] = False


@njit(cache=True, **NO_REFCOUNT)
def residuals(B, J, stats, scratch_rows):
    """Largest joint gap and joint velocity error at the current time (arms up to date)."""
    gap_max = 0.0
    vel_max = 0.0
    kind, body, arm, enabled = J.kind, J.body, J.arm, J.enabled
    static, pos, vel, omega = B.static, B.pos, B.vel, B.omega
    for j in range(kind.shape[0]):
        if not enabled[j]:
            continue
        if kind[j] == BALL:
            g = dispatch.gap(kind, j, body, arm, pos)
        else:
            g = generic.error_now(B, J, j, scratch_rows)
        if g > gap_max:
            gap_max = g
        if kind[j] != BALL:  # velocity residual of the generic rows: measured by P-step 4
            continue
        ua = velocity_at(static, vel, omega, body[j, 0], arm[j, 0, 0], arm[j, 0, 1], arm[j, 0, 2])
        ub = velocity_at(static, vel, omega, body[j, 1], arm[j, 1, 0], arm[j, 1, 1], arm[j, 1, 2])
        d = np.sqrt((ub[0] - ua[0]) ** 2 + (ub[1] - ua[1]) ** 2 + (ub[2] - ua[2]) ** 2)
        if d > vel_max:
            vel_max = d
    stats[T_RESIDUAL] = gap_max
    stats[T_VEL_RESIDUAL] = vel_max


@njit(cache=True, nogil=True)
def step(B, J, Sp, C, settings, stats, W):
    """Advance the world by settings[S_H] (as halves where the iteration diverges); C: the
    contacts detected at t (engine/contacts/solve.py), possibly none; W: the global solvers'
    structure (graph.build); settings[S_SOLVER] picks the solver (the global solvers take
    the contacts as Gauss-Seidel rows between their solves)."""
    t_start = monotonic_ns()
    stats[:] = 0.0
    # the time budget bounds the position loop (from its start) and, from the step's start,
    # the contact stages after it: each still does at least one sweep (anytime)
    deadline = t_start + int(settings[S_BUDGET_NS]) if settings[S_BUDGET_NS] > 0 else 0
    nc = C.body.shape[0]
    target = np.empty(nc)
    t_contact = 0
    n = B.pos.shape[0]
    order = int(settings[S_ORDER])
    scratch_a = np.empty((order + 1, 3, 3))
    scratch_x = np.empty((order + 2, 3, 3))
    scratch_r = np.empty((3, 3))
    scratch_arms = np.empty((2, 3))
    scratch_rows = np.empty((6, 3, 3))
    save_vel = np.empty((n, 3))
    save_omega = np.empty((n, 3))
    h = settings[S_H]
    max_level = int(settings[S_MAX_HALVINGS])
    total = 1 << max_level
    done = 0
    level = 0
    iterated = settings[S_SPRING_ITERATED] != 0.0
    warmed = False
    warmed_v = False
    top = 0
    if nc > 0:   # contact graph layers: visit top-down in the loop, shock pass bottom-up
        top = contacts.layers(B, J, C)
        C.order[:] = np.argsort(-C.layer, kind="mergesort")
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
        settings[S_CONTACT_SWEEPS] = max(settings[S_CONTACT_SWEEPS], top // 2)
        stats[T_ROWS] = nc
        if settings[S_TOI] != 0.0:
            # Schmitt sec. 11: cut the step just before the first bounce within it; the
            # next sub-step (World.step) starts with that row touching
            contacts.prepare(B, C)
            t_hit = contacts.contact_time(B, C, settings[S_H], settings)
            if t_hit < settings[S_H]:
                settings[S_H] = max(t_hit, contacts.TOI_MIN * settings[S_H])
                stats[T_TOI_EVENTS] = 1
    h = settings[S_H]
    while done < total:
        units = total >> level
        hs = h * units / total
        h_prev = settings[S_H_PREV]
        prepare(B, J, scratch_r)
        if nc > 0:
            t0 = monotonic_ns()
            contacts.prepare(B, C)
            if done == 0 and not warmed:
                contacts.begin_step(B, C)
            contacts.collide(B, C, hs, settings, stats, target, top > 0)
            if not warmed:   # the last step's impulses, scaled down to a shorter step
                h_last = settings[S_H_PREV]
                contacts.warm_start(B, C, False, min(hs / h_last, 1.0) if h_last > 0 else 1.0)
                warmed = True
            contacts.save(C)
            stats[T_COLLIDE_NS] += monotonic_ns() - t0
        save_vel[:, :] = B.vel
        save_omega[:, :] = B.omega
        J.acc[:, :] = 0.0
        if iterated:
            spring.begin_iterated(B, Sp, hs, h_prev)
        else:
            spring.apply_approximate(B, Sp, hs, h_prev)
        for j in range(J.kind.shape[0]):
            if J.enabled[j] and J.kind[j] != BALL:
                generic.apply_forces(B, J, j, hs, h_prev, scratch_rows)
        solver = int(settings[S_SOLVER])
        t0 = monotonic_ns()
        if solver == 0:
            ok = position_loop(B, J, Sp, C, hs, h_prev, settings, stats, scratch_a, scratch_x,
                               scratch_arms, scratch_rows, level < max_level)
        else:
            ok = rounds.position_stage(B, J, Sp, C, hs, h_prev, settings, stats, scratch_a,
                                       scratch_x, scratch_arms, scratch_rows, level < max_level,
                                       W, solver)
        t_contact += monotonic_ns() - t0
        if not ok and level < max_level:
            B.vel[:, :] = save_vel
            B.omega[:, :] = save_omega
            if nc > 0:
                contacts.restore(C)
            level += 1
            stats[T_HALVINGS] += 1
            continue
        if nc > 0:
            contact_friction.break_loose(B, C, hs, settings[S_EPS_VEL])
            contacts.keep_for_warm_start(C, False)
        if nc > 0 and top > 0:
            t0 = monotonic_ns()
            stats[T_CHECKS] += contacts.shock_pass(
                B, C, top, hs, contacts.SHOCK_TIGHTER * max(settings[S_EPS_POS],
                                                           settings[S_CONTACT_TOL]),
                settings, False, deadline)
            t_contact += monotonic_ns() - t0
        if nc > 0:
            stats[T_END_DEPTH] = max(stats[T_END_DEPTH], contacts.end_depth(B, C, hs))
        spring.end_step(B, Sp)
        advance_all(B, hs, settings, scratch_a, scratch_x, scratch_r)
        settings[S_H_PREV] = hs
        prepare(B, J, scratch_r)
        if nc > 0:
            contacts.prepare(B, C)
            contact_rows.prepare_rows(B, C, contact_rows.STAGE_VELOCITY, top > 0, hs, settings)
        if settings[S_VEL_CORR] != 0.0:
            t0 = monotonic_ns()
            if nc > 0 and not warmed_v:
                contacts.warm_start(B, C, True, hs / h)
                warmed_v = True
            if solver == 0:
                velocity_loop(B, J, C, settings, stats, scratch_rows, deadline)
            else:
                rounds.velocity_stage(B, J, C, settings, stats, scratch_rows, W, solver, deadline)
            if nc > 0:
                contacts.keep_for_warm_start(C, True)
            if nc > 0 and top > 0:
                stats[T_VEL_CHECKS] += contacts.shock_pass(
                    B, C, top, hs, contacts.SHOCK_TIGHTER * settings[S_EPS_VEL], settings,
                    True, deadline)
            t_contact += monotonic_ns() - t0
        settings[S_TIME] += hs
        done += units
        if level > 0 and done % (2 * units) == 0:
            level -= 1
    residuals(B, J, stats, scratch_rows)
    stats[T_CONTACT_NS] = t_contact if nc > 0 else 0
    stats[T_CONTACTS] = contacts.touching(C)
    stats[T_CONTACT_IMPULSE] = contacts.total_impulse(C)
    stats[T_SOLVE_NS] = monotonic_ns() - t_start


@njit(cache=True)
def energy(B, Sp, gravity):
    """(kinetic, potential) energy: sum m v^2/2 + w_b^T J w_b/2; -m g.s plus springs."""
    kin = 0.0
    pot = 0.0
    for b in range(B.pos.shape[0]):
        if B.static[b] or B.inv_mass[b] == 0.0:
            continue
        m = 1.0 / B.inv_mass[b]
        r = B.rot[b]
        v = B.vel[b]
        w = B.omega[b]
        kin += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        for k in range(3):
            wb = r[0, k] * w[0] + r[1, k] * w[1] + r[2, k] * w[2]
            kin += 0.5 * B.inertia[b, k] * wb * wb
        pot -= m * (gravity[0] * B.pos[b, 0] + gravity[1] * B.pos[b, 1]
                    + gravity[2] * B.pos[b, 2])
    return kin, pot + spring.potential_energy(B, Sp)


@njit(cache=True, nogil=True)
def run(B, J, Sp, C, settings, n_steps, step_stats, step_energy, every, rec_pos, rec_rot,
        rec_vel, rec_omega, W):
    """n_steps steps in one call; per-step stats (n_steps, T_SIZE) and total energy
    (n_steps+1,), and every `every`-th state into rec_* (rows = n_steps // every + 1)."""
    gravity = settings[S_GX:S_GX + 3].copy()
    stats = np.zeros(T_SIZE)
    k, p = energy(B, Sp, gravity)
    step_energy[0] = k + p
    rows = rec_pos.shape[0]
    if rows > 0:
        rec_pos[0] = B.pos
        rec_rot[0] = B.rot
        rec_vel[0] = B.vel
        rec_omega[0] = B.omega
    r = 1
    for s in range(n_steps):
        step(B, J, Sp, C, settings, stats, W)
        step_stats[s, :] = stats
        k, p = energy(B, Sp, gravity)
        step_energy[s + 1] = k + p
        if rows > 0 and (s + 1) % every == 0 and r < rows:
            rec_pos[r] = B.pos
            rec_rot[r] = B.rot
            rec_vel[r] = B.vel
            rec_omega[r] = B.omega
            r += 1
