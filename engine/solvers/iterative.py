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
 4. P-step 4 (optional): velocity correction at t + h until every |du| <= eps_vel.
"Checks" count P-step-1 visits (the report's Table 9.2 unit); "impulses" count corrections.
"""
import numpy as np
from numba import njit

from ..clock import monotonic_ns
from ..joints import dispatch, spring
from ..motion import advance_with, world_inertia
from ..impulses import body_arm, point_velocity, refresh_prediction
from ..state import (S_BUDGET_NS, S_EPS_POS, S_EPS_VEL, S_GX, S_H, S_H_PREV, S_MAX_HALVINGS,
                     S_MAX_SWEEPS, S_ORDER, S_SPRING_ITERATED, S_VEL_CORR, T_BUDGET_HIT,
                     T_CHECKS, T_HALVINGS, T_IMPULSES, T_RESIDUAL, T_SIZE, T_SOLVE_NS,
                     T_SWEEPS, T_VEL_CHECKS, T_VEL_IMPULSES, T_VEL_RESIDUAL)

GROWTH = 2.0  # a cycle whose largest error is this factor above the previous one diverges


@njit(cache=True)
def prepare(B, J):
    """Derived quantities at the current time: world inertia, arms, K^-1; caches reset."""
    for b in range(B.pos.shape[0]):
        if B.static[b]:
            B.inertia_w[b, :, :] = 0.0
            B.inv_inertia_w[b, :, :] = 0.0
        else:
            world_inertia(B.rot[b], B.inertia[b], B.inv_inertia[b], B.inertia_w[b],
                          B.inv_inertia_w[b])
        B.pred_ok[b] = False
    for j in range(J.kind.shape[0]):
        for side in range(2):
            body_arm(B, J.body[j, side], J.anchor[j, side], J.arm[j, side])
        dispatch.prepare(B, J, j)


@njit(cache=True)
def position_loop(B, J, Sp, h, h_prev, settings, stats, scratch_a, scratch_x, may_abort):
    """P-steps 1-2 (and the iterated springs). Returns False if the iteration diverges
    (only checked when may_abort: otherwise it runs on to the cap or budget)."""
    m = J.kind.shape[0]
    iterated = settings[S_SPRING_ITERATED] != 0.0
    items = m + (Sp.body.shape[0] if iterated else 0)
    if items == 0:
        return True
    eps = settings[S_EPS_POS]
    order = int(settings[S_ORDER])
    gravity = settings[S_GX:S_GX + 3]
    max_checks = int(settings[S_MAX_SWEEPS]) * items
    budget = int(settings[S_BUDGET_NS])
    t0 = monotonic_ns()
    since = 0
    idx = 0
    checks = 0
    in_cycle = 0
    cycles = 0
    cycle_max = 0.0
    prev_max = np.inf
    ok = True
    while since < items:
        if checks >= max_checks:
            if may_abort:  # not converging within the cap: treat like divergence
                ok = False
            else:
                stats[T_BUDGET_HIT] += 1
            break
        if idx < m:
            if J.enabled[idx]:
                err, corrected = dispatch.correct_position(B, J, idx, h, eps, order, gravity,
                                                           scratch_a, scratch_x)
            else:
                err, corrected = 0.0, False
            J.err[idx] = err
        else:
            err, corrected = spring.correct_iterated(B, Sp, idx - m, h, h_prev, eps, order,
                                                     gravity, scratch_a, scratch_x)
        checks += 1
        if corrected:
            stats[T_IMPULSES] += 1
            since = 0
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
            if may_abort and (not np.isfinite(cycle_max)
                              or (cycles >= 2 and cycle_max > prev_max * GROWTH)):
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


@njit(cache=True)
def velocity_loop(B, J, settings, stats):
    """P-step 4: cyclic velocity correction of the joints at t + h."""
    m = J.kind.shape[0]
    if m == 0:
        return
    eps = settings[S_EPS_VEL]
    max_checks = int(settings[S_MAX_SWEEPS]) * m
    since = 0
    idx = 0
    checks = 0
    while since < m and checks < max_checks:
        if J.enabled[idx]:
            err, corrected = dispatch.correct_velocity(B, J, idx, eps)
        else:
            corrected = False
        checks += 1
        if corrected:
            stats[T_VEL_IMPULSES] += 1
            since = 0
        else:
            since += 1
        idx += 1
        if idx == m:
            idx = 0
    stats[T_VEL_CHECKS] += checks


@njit(cache=True)
def advance_all(B, h, settings, scratch_a, scratch_x):
    """P-step 3 for every dynamic body, from its (refreshed if stale) look-ahead."""
    order = int(settings[S_ORDER])
    gravity = settings[S_GX:S_GX + 3]
    for b in range(B.pos.shape[0]):
        if B.static[b]:
            continue
        if not B.pred_ok[b]:
            refresh_prediction(B, b, h, order, gravity, scratch_a, scratch_x)
        advance_with(B.pos[b], B.rot[b], B.vel[b], B.omega[b], B.pred_pos[b], B.pred_rot[b],
                     B.pred_series[b], order, gravity, h)
        B.pred_ok[b] = False


@njit(cache=True)
def residuals(B, J, stats):
    """Largest joint gap and joint velocity error at the current time (arms up to date)."""
    gap_max = 0.0
    vel_max = 0.0
    for j in range(J.kind.shape[0]):
        if not J.enabled[j]:
            continue
        g = dispatch.gap(B, J, j)
        if g > gap_max:
            gap_max = g
        ua = point_velocity(B, J.body[j, 0], J.arm[j, 0])
        ub = point_velocity(B, J.body[j, 1], J.arm[j, 1])
        d = np.sqrt((ub[0] - ua[0]) ** 2 + (ub[1] - ua[1]) ** 2 + (ub[2] - ua[2]) ** 2)
        if d > vel_max:
            vel_max = d
    stats[T_RESIDUAL] = gap_max
    stats[T_VEL_RESIDUAL] = vel_max


@njit(cache=True)
def step(B, J, Sp, settings, stats):
    """Advance the world by settings[S_H] (as halves where the iteration diverges)."""
    t_start = monotonic_ns()
    stats[:] = 0.0
    n = B.pos.shape[0]
    order = int(settings[S_ORDER])
    scratch_a = np.empty((order + 1, 3, 3))
    scratch_x = np.empty((order + 2, 3))
    save_vel = np.empty((n, 3))
    save_omega = np.empty((n, 3))
    h = settings[S_H]
    max_level = int(settings[S_MAX_HALVINGS])
    total = 1 << max_level
    done = 0
    level = 0
    iterated = settings[S_SPRING_ITERATED] != 0.0
    while done < total:
        units = total >> level
        hs = h * units / total
        h_prev = settings[S_H_PREV]
        prepare(B, J)
        save_vel[:, :] = B.vel
        save_omega[:, :] = B.omega
        if iterated:
            spring.begin_iterated(B, Sp, hs, h_prev)
        else:
            spring.apply_approximate(B, Sp, hs, h_prev)
        ok = position_loop(B, J, Sp, hs, h_prev, settings, stats, scratch_a, scratch_x,
                           level < max_level)
        if not ok and level < max_level:
            B.vel[:, :] = save_vel
            B.omega[:, :] = save_omega
            level += 1
            stats[T_HALVINGS] += 1
            continue
        spring.end_step(B, Sp)
        advance_all(B, hs, settings, scratch_a, scratch_x)
        settings[S_H_PREV] = hs
        prepare(B, J)
        if settings[S_VEL_CORR] != 0.0:
            velocity_loop(B, J, settings, stats)
        done += units
        if level > 0 and done % (2 * units) == 0:
            level -= 1
    residuals(B, J, stats)
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


@njit(cache=True)
def run(B, J, Sp, settings, n_steps, step_stats, step_energy, every, rec_pos, rec_rot,
        rec_vel, rec_omega):
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
        step(B, J, Sp, settings, stats)
        step_stats[s, :] = stats
        k, p = energy(B, Sp, gravity)
        step_energy[s + 1] = k + p
        if rows > 0 and (s + 1) % every == 0 and r < rows:
            rec_pos[r] = B.pos
            rec_rot[r] = B.rot
            rec_vel[r] = B.vel
            rec_omega[r] = B.omega
            r += 1
