"""The iterative (Gauss-Seidel) driver of the step's position and velocity stages
(engine/step.py lists the stages), and what every driver uses: prepare, advance_all,
residuals, energy.

The stages it drives (Schmitt sec. 5-6, design.md sec. 2):
 1. springs/dampers become impulses at t (step.forces);
 2. P-steps 1-2: visit the joints cyclically; for each, predict its points at t + h by
    look-ahead and, if the error is >= eps_pos, apply the correcting impulse at t. Stop when
    a full cycle needed no correction and the exact look-ahead agrees, or on the iteration
    cap / time budget (anytime: the best state so far is used and the residual reported).
    Ball joints and contacts read a linearised look-ahead between exact snapshots
    (joints/ball.py, contacts/rows.py): a correction costs no Taylor series of its bodies'
    rotation; only the snapshots do (the joints': at the start, every JOINT_SNAP_EVERY
    cycles, and before the loop stops); hinges, sliders and the other generic joints read
    each body's look-ahead linearised from its last exact one (impulses.look_ahead_linear),
    and the loop refreshes the exact one before it stops. A slow loop over-relaxes the
    joints' corrections (relaxation.py). If the largest error grows as a trend instead of
    shrinking (stopping.py; or is not finite), the iteration diverges: restore the
    velocities, halve h and do the step as two halves (recursively, up to max_halvings);
 3. P-step 3: advance every body ballistically;
 4. P-step 4 (optional): velocity correction at t + h until every |du| <= eps_vel (contacts:
    contact_cycles cycles, then the velocity shock pass), over-relaxed as P-step 2.
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
from ..contacts import rows as contact_rows
from ..contacts import solve as contacts
from ..impulses import ensure_look_ahead, velocity_at
from ..jitopts import NO_REFCOUNT
from ..joints import BALL, P_LIM1, P_LIM2, P_MOTOR, dispatch, generic, spring
from ..motion import advance_body, world_inertia
from ..state import (
    S_BUDGET_NS,
    S_CONTACT_CYCLES,
    S_CONTACT_TOL,
    S_EPS_POS,
    S_EPS_VEL,
    S_GX,
    S_MAX_CYCLES,
    S_ORDER,
    S_RELAX,
    S_RELAX_PREV,
    S_SPRING_ITERATED,
    S_TIME,
    S_WARM,
    T_CHECKS,
    T_IMPULSES,
    T_RESIDUAL,
    T_SWEEPS,
    T_VEL_CHECKS,
    T_VEL_IMPULSES,
    T_VEL_RESIDUAL,
)
from .relaxation import GAVE_UP, LONG, adapted, carried, inherited
from .stopping import capped_ok, diverging, growth, out_of_time, past_deadline

# cycles between exact snapshots of the ball joints' look-ahead (besides the first and the
# ones before stopping): chain8 at h = 0.01 (Dmax 1e-5, 10 s) takes 2.4 snapshots and 114.7
# corrections a step at 16 (8: 3.1 and 114.6; never: 2.1 and 115.0; the exact look-ahead at
# every visit: 114.5 corrections)
JOINT_SNAP_EVERY = 16


@njit(cache=True, **NO_REFCOUNT)
def prepare(B, J, k_scratch):
    """Derived quantities at the current time: world inertia, arms, K^-1; caches reset.
    k_scratch: (3, 3)."""
    static, rot, pred_ok = B.static, B.rot, B.pred_ok
    iw, aw = B.inertia_w, B.inv_inertia_w
    for b in range(B.pos.shape[0]):
        if static[b]:
            # zeroed once: both are R I R^T-like (symmetric, positive semi-definite), so a
            # zero diagonal means a zero matrix; rewriting 18 zeros for each of 10 000
            # sleeping cubes cost 85 us a call, twice a step
            if iw[b, 0, 0] != 0.0 or iw[b, 1, 1] != 0.0 or iw[b, 2, 2] != 0.0 \
                    or aw[b, 0, 0] != 0.0 or aw[b, 1, 1] != 0.0 or aw[b, 2, 2] != 0.0:
                iw[b, :, :] = 0.0
                aw[b, :, :] = 0.0
        else:
            world_inertia(rot[b], B.const.inertia[b], B.inv_inertia[b], B.inertia_w[b],
                          B.inv_inertia_w[b])
        pred_ok[b] = False
    kind, body, anchor, arm = J.const.kind, J.const.body, J.const.anchor, J.arm
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
def snapshot_joints(kind, body, arm, enabled, joint_err, static, pos, vel, omega, inertia_w,
                    inv_inertia_w, pred_ok, pred_pos, pred_series, pred_rot, h, order, gravity,
                    scratch_a, scratch_x, lin):
    """Exact look-ahead of every ball joint into lin (joints/ball.py: C0, du0); returns the
    largest gap |C0| (NaN if one is not finite)."""
    worst = 0.0
    for j in range(kind.shape[0]):
        if not enabled[j] or kind[j] != BALL:
            continue
        for side in range(2):
            ensure_look_ahead(body[j, side], static, pred_ok, pos, vel, omega, inertia_w,
                              inv_inertia_w, pred_pos, pred_series, pred_rot, h, order, gravity,
                              scratch_a, scratch_x)
        err = dispatch.snapshot(kind, j, body, arm, static, pos, vel, omega, pred_pos, pred_rot,
                                lin)
        joint_err[j] = err
        if not err <= worst:  # also catches NaN
            worst = err
    return worst


@njit(cache=True, **NO_REFCOUNT)
def locks_only(J, springs, contacts):
    """True where a loop's items are all locks: no contacts, no iterated springs, no joint
    with a motor or a limit row (where the over-relaxation read may be kept:
    relaxation.carried)."""
    if contacts > 0 or springs > 0:
        return False
    param = J.const.param
    for j in range(J.const.kind.shape[0]):
        if J.enabled[j] and J.const.kind[j] != BALL and (
                param[j, P_MOTOR] != 0.0 or param[j, P_LIM1] != 0.0 or param[j, P_LIM2] != 0.0):
            return False
    return True


@njit(cache=True, **NO_REFCOUNT)
def position_loop(B, J, Sp, C, h, h_prev, settings, stats, scratch_a, scratch_x, scratch_arms,
                  scratch_rows, scratch_lin, base, may_abort):
    """P-steps 1-2 (and the iterated springs, then the contacts as items after them).
    Returns (ok, omega): ok False if the iteration diverges (only checked when may_abort:
    otherwise it runs on to the cap or budget); omega the over-relaxation it ended on where
    its items are all locks (locks_only) and it ran LONG (relaxation.py), else 1: the
    velocity loop's start (relaxation.inherited) and the next step's (carried).
    scratch_lin: (joints, 7, 3), the ball joints' snapshot; base: the bodies' look-ahead
    bases of the generic joints' linearised visits (impulses.look_ahead_linear)."""
    m = J.const.kind.shape[0]
    iterated = settings[S_SPRING_ITERATED] != 0.0
    m_sp = m + (Sp.const.body.shape[0] if iterated else 0)
    items = m_sp + C.body.shape[0]
    if items == 0:
        return True, 1.0
    eps = settings[S_EPS_POS]
    eps_c = max(eps, settings[S_CONTACT_TOL])
    contact_cycles = int(settings[S_CONTACT_CYCLES])
    order = int(settings[S_ORDER])
    gravity = settings[S_GX:S_GX + 3]
    t = settings[S_TIME]
    max_checks = int(settings[S_MAX_CYCLES]) * items
    budget = int(settings[S_BUDGET_NS])
    relax_setting = settings[S_RELAX]
    keep = locks_only(J, m_sp - m, C.body.shape[0])
    relax, relax_since, relax_ref = carried(relax_setting,
                                            settings[S_RELAX_PREV] if keep else 0.0, t, h)
    kind, body, enabled = J.const.kind, J.const.body, J.enabled
    arm, kinv, joint_err = J.arm, J.kinv, J.err
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
    block_max, prev_block = 0.0, np.inf
    rising = 0
    ok = True
    dirty = False       # corrections since the contacts' last look-ahead snapshot
    snapped = -1        # the cycle of that snapshot
    # the ball joints' linearised look-ahead: exact snapshot now, and again every
    # JOINT_SNAP_EVERY cycles and before the loop stops if corrections came since (j_dirty)
    j_dirty = False
    j_snapped = 0
    # the generic joints' visits read each body's look-ahead linearised from its last exact
    # one (impulses.look_ahead_linear) once an impulse moved it; g_dirty: one was read since
    # the last exact refresh, which the loop takes before it may stop
    g_dirty = False
    base_ok = base[4]
    for b in range(base_ok.shape[0]):
        base_ok[b] = False
    snapshot_joints(kind, body, arm, enabled, joint_err, static, pos, vel, omega, inertia_w,
                    inv_inertia_w, pred_ok, pred_pos, pred_series, pred_rot, h, order, gravity,
                    scratch_a, scratch_x, scratch_lin)
    while True:
        if since >= items:
            # converged on the linearised look-ahead: check on the exact one
            check_c = dirty and m_sp < items and cycles <= contact_cycles
            if not (j_dirty or check_c or g_dirty):
                break
            refreshed = g_dirty
            if g_dirty:
                # exact look-ahead for every body the generic visits read linearised; the
                # loop stops only after a whole cycle on it without a correction
                g_dirty = False
                for b in range(pos.shape[0]):
                    ensure_look_ahead(b, static, pred_ok, pos, vel, omega, inertia_w,
                                      inv_inertia_w, pred_pos, pred_series, pred_rot, h,
                                      order, gravity, scratch_a, scratch_x)
            worst = 0.0
            if j_dirty:
                j_dirty = False
                j_snapped = cycles
                worst = snapshot_joints(kind, body, arm, enabled, joint_err, static, pos, vel,
                                        omega, inertia_w, inv_inertia_w, pred_ok, pred_pos,
                                        pred_series, pred_rot, h, order, gravity, scratch_a,
                                        scratch_x, scratch_lin)
            worst_c = 0.0
            if check_c:
                dirty = False
                snapped = cycles
                worst_c = contact_rows.snapshot(B, C, h, order, gravity, scratch_a, scratch_x)
            if worst < eps and worst_c < eps_c and not refreshed:
                break
            since = 0
        if idx == 0 and j_dirty and cycles - j_snapped >= JOINT_SNAP_EVERY:
            j_dirty = False
            j_snapped = cycles
            if not snapshot_joints(kind, body, arm, enabled, joint_err, static, pos, vel, omega,
                                   inertia_w, inv_inertia_w, pred_ok, pred_pos, pred_series,
                                   pred_rot, h, order, gravity, scratch_a, scratch_x,
                                   scratch_lin) < eps:
                since = 0   # the visits since the last correction read the old snapshot
        if checks >= max_checks:
            ok = capped_ok(may_abort, stats)
            break
        if idx < m:
            if enabled[idx] and kind[idx] != BALL:
                err, corrected, linear = generic.correct_position(
                    B, J, idx, h, eps, t, order, gravity, scratch_a, scratch_x, scratch_rows,
                    base, True, relax, cycles < contact_cycles)
                if linear:
                    g_dirty = True
            elif enabled[idx]:
                # P-step 1 on the linearised look-ahead of the last snapshot
                err, corrected = dispatch.correct_position_linear(
                    kind, idx, body, arm, kinv, h, eps, static, inv_mass, vel, omega,
                    inv_inertia_w, pred_ok, scratch_lin, relax)
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
            j_dirty = True
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
            # (while contacts still push, joint errors may rise: not counted)
            settled = cycles > contact_cycles or items == m_sp
            before = prev_block
            rising, block_max, prev_block = growth(rising, block_max, prev_block, cycles, settled,
                                                         cycle_max, eps)
            was = relax_since
            relax, relax_since, relax_ref = adapted(relax_setting, relax, relax_since,
                                                    relax_ref, cycles, before, prev_block, eps)
            if relax_since == GAVE_UP and was != GAVE_UP:
                rising = 0      # the over-relaxation's growth, not the step's
            if may_abort and diverging(cycle_max, rising):
                ok = False
                break
            cycle_max = 0.0
            in_cycle = 0
            if out_of_time(t0, budget, stats):
                break
    stats[T_CHECKS] += checks
    stats[T_SWEEPS] += cycles
    return ok, (relax if keep and cycles >= LONG else 1.0)


@njit(cache=True, **NO_REFCOUNT)
def velocity_loop(B, J, C, settings, stats, scratch_rows, deadline, omega_pos):
    """P-step 4: cyclic velocity correction of the joints and touching contacts at t + h.
    Contacts take part for contact_cycles cycles, or until monotonic_ns() passes deadline
    (0: none); the joints always run to eps_vel or the cap (cutting them short lets a
    budget-starved tree_255 diverge). omega_pos: the over-relaxation the sub-step's position
    loop ended on (relaxation.inherited)."""
    m = J.const.kind.shape[0]
    items = m + C.body.shape[0]
    if items == 0:
        return
    eps = settings[S_EPS_VEL]
    contact_cycles = int(settings[S_CONTACT_CYCLES])
    max_checks = int(settings[S_MAX_CYCLES]) * items
    relax_setting = settings[S_RELAX]
    relax, relax_since, relax_ref = inherited(relax_setting, omega_pos)    # relaxation.py
    # warm started (joints/warm_start.py), the first cycle corrects every joint whatever
    # its error, as a cold start's first cycle does: left just under eps_vel by the warm
    # start, a pendulum held by a torque kept 6e-6 m/s at rest
    eps_first = 0.0 if settings[S_WARM] != 0.0 else eps
    kind, body, arm, kinv, enabled = J.const.kind, J.const.body, J.arm, J.kinv, J.enabled
    for j in range(m):
        if enabled[j] and kind[j] != BALL:
            generic.factor_velocity_locks(B, J, j, scratch_rows)
    static, vel, omega, inv_mass = B.static, B.vel, B.omega, B.inv_mass
    inv_inertia_w, pred_ok = B.inv_inertia_w, B.pred_ok
    since = 0
    idx = 0
    checks = 0
    cycles = 0
    cycle_max = 0.0     # the joints' largest error of the cycle, and of blocks of cycles
    block_max, prev_block = 0.0, np.inf
    contacts_on = True
    while since < items and checks < max_checks:
        err = 0.0
        eps_joint = eps_first if cycles == 0 else eps
        if idx >= m:
            # contacts: contact_cycles cycles here, then the velocity shock pass finishes
            # the stacks (and the joints may finish against the contacts' impulses)
            if contacts_on and cycles < contact_cycles:
                _, corrected = contacts.visit_velocity(B, C, idx - m, 1, eps, False)
            else:
                corrected = False
        elif enabled[idx] and kind[idx] != BALL:
            err, corrected = generic.correct_velocity(B, J, idx, eps_joint, scratch_rows,
                                                      cycles < contact_cycles, relax)
        elif enabled[idx]:
            err, corrected = dispatch.correct_velocity(kind, idx, body, arm, kinv, eps_joint,
                                                       static, inv_mass, vel, omega,
                                                       inv_inertia_w, pred_ok, relax, J.warm)
        else:
            corrected = False
        checks += 1
        if corrected:
            stats[T_VEL_IMPULSES] += 1
            since = 0
        else:
            since += 1
        if err > cycle_max:
            cycle_max = err
        idx += 1
        if idx == items:
            idx = 0
            cycles += 1
            before = prev_block
            _, block_max, prev_block = growth(0, block_max, prev_block, cycles,
                                              cycles > contact_cycles or items == m,
                                              cycle_max, eps)
            relax, relax_since, relax_ref = adapted(relax_setting, relax, relax_since,
                                                    relax_ref, cycles, before, prev_block, eps)
            cycle_max = 0.0
            if contacts_on and C.body.shape[0] > 0 and past_deadline(deadline, stats):
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
    kind, body, arm, enabled = J.const.kind, J.const.body, J.arm, J.enabled
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


@njit(cache=True)
def energy(B, Sp, gravity):
    """energy_kernel() for Python callers (a kernel without reference counting is called
    from kernels only)."""
    return energy_kernel(B, Sp, gravity)


@njit(cache=True, **NO_REFCOUNT)
def energy_kernel(B, Sp, gravity):
    """(kinetic, potential) energy: sum m v^2/2 + w_b^T J w_b/2; -m g.s plus springs."""
    kin = 0.0
    pot = 0.0
    # (no reference counting and no views of a body's rows: run() calls this every step,
    # and the increfs of the tuples' arrays cost chain8 0.4 us a step)
    static, inv_mass, pos, r, v, w = B.static, B.inv_mass, B.pos, B.rot, B.vel, B.omega
    inertia = B.const.inertia
    for b in range(pos.shape[0]):
        if static[b] or inv_mass[b] == 0.0:
            continue
        m = 1.0 / inv_mass[b]
        kin += 0.5 * m * (v[b, 0] * v[b, 0] + v[b, 1] * v[b, 1] + v[b, 2] * v[b, 2])
        for k in range(3):
            wb = r[b, 0, k] * w[b, 0] + r[b, 1, k] * w[b, 1] + r[b, 2, k] * w[b, 2]
            kin += 0.5 * inertia[b, k] * wb * wb
        pot -= m * (gravity[0] * pos[b, 0] + gravity[1] * pos[b, 1] + gravity[2] * pos[b, 2])
    if Sp.const.body.shape[0] > 0:
        pot += spring.potential_energy(B, Sp)
    return kin, pot
