"""Position and velocity stages of the global solvers (settings.solver "linear" / "tree").

Position stage (replaces P-steps 1-2 of iterative.py), in rounds:
  1. visit the "other" joints once with the iterative correction (Gauss-Seidel: joint
     families other than ball; for the tree solver also the loop-closing ball joints), and
     the iterated springs;
  2. predict (look-ahead) every global joint's gap d_j = b'_j - a'_j at t + h;
  3. stop if every global |d_j| < eps_pos and step 1 corrected nothing; otherwise solve the
     global system K p = d/h (linear.py) or Baraff's tree system (tree.py) and apply it.
  The matrix depends only on the arms and inertias at t, so it is factored once per time
  point and kept (also from the velocity stage at t + h to the next step's position stage,
  which sees the same configuration). Same tolerance, iteration cap (max_iterations rounds),
  divergence test (step halving) and anytime budget as the iterative loop.
Velocity stage (P-step 4): the same with du_j = u_b - u_a; without other joints one solve.
A singular pivot (redundant joints) makes the stage fall back to Gauss-Seidel visits of the
global joints too, for that factorisation.
Stats: T_SWEEPS counts rounds, T_IMPULSES joint corrections (each joint of a global solve
counts once), T_CHECKS joint error evaluations.
"""
import numpy as np
from numba import njit

from ..clock import monotonic_ns
from ..impulses import ensure_look_ahead, velocity_at
from ..jitopts import NO_REFCOUNT
from ..joints import BALL, dispatch, generic, spring
from ..joints.ball import position_error
from ..state import (S_BUDGET_NS, S_EPS_POS, S_EPS_VEL, S_GX, S_MAX_SWEEPS, S_ORDER, S_TIME,
                     S_SPRING_ITERATED, T_BUDGET_HIT, T_CHECKS, T_IMPULSES, T_SWEEPS,
                     T_VEL_CHECKS, T_VEL_IMPULSES)
from . import GROWING_CYCLES, linear, tree
from .graph import C_FACTORS, C_SOLVES, LINEAR



@njit(cache=True, **NO_REFCOUNT)
def _same_or_copy(src, dst, copy):
    """Whether the (k, 3, 3)/(k, 2, 3) arrays are equal; with copy: dst <- src."""
    same = True
    for i in range(src.shape[0]):
        for a in range(src.shape[1]):
            for c in range(src.shape[2]):
                if copy:
                    dst[i, a, c] = src[i, a, c]
                elif src[i, a, c] != dst[i, a, c]:
                    return False
    return same


@njit(cache=True, **NO_REFCOUNT)
def ensure_factor(B, J, W, solver):
    """Factor for the current configuration unless that is already done. Returns ok."""
    n = B.pos.shape[0]
    fm = W.fact_mass
    same = W.fact_kind[0] == solver and _same_or_copy(B.rot, W.fact_rot, False) \
        and _same_or_copy(J.arm, W.fact_arm, False)
    if same:
        for b in range(n):
            if fm[b, 0] != B.inv_mass[b] or fm[b, 1] != B.inv_inertia[b, 0] \
                    or fm[b, 2] != B.inv_inertia[b, 1] or fm[b, 3] != B.inv_inertia[b, 2]:
                same = False
                break
    if same:
        return W.fact_ok[0] != 0
    _same_or_copy(B.rot, W.fact_rot, True)
    _same_or_copy(J.arm, W.fact_arm, True)
    for b in range(n):
        fm[b, 0] = B.inv_mass[b]
        fm[b, 1] = B.inv_inertia[b, 0]
        fm[b, 2] = B.inv_inertia[b, 1]
        fm[b, 3] = B.inv_inertia[b, 2]
    if solver == LINEAR:
        ok = linear.factor(W, J.arm, B.inv_mass, B.inv_inertia_w, B.static)
    else:
        ok = tree.factor(W, J.body, J.arm, B.inv_mass, B.inertia_w, B.inv_inertia,
                         B.inv_inertia_w)
    W.fact_kind[0] = solver
    W.fact_ok[0] = 1 if ok else 0
    W.count[C_FACTORS] += 1
    return ok


@njit(cache=True, **NO_REFCOUNT)
def _set_rhs(W, solver, g, j, dx, dy, dz):
    """Right side of global joint number g (joint j): the wanted change d of c = u_a - u_b."""
    if solver == LINEAR:
        W.lin_y[g, 0], W.lin_y[g, 1], W.lin_y[g, 2] = dx, dy, dz
    else:
        W.tr_xj[j, 0], W.tr_xj[j, 1], W.tr_xj[j, 2] = -dx, -dy, -dz


@njit(cache=True, **NO_REFCOUNT)
def _solve_apply(B, J, W, solver):
    if solver == LINEAR:
        linear.solve(W)
        linear.apply(W, J.body, J.arm, B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w,
                     B.pred_ok)
    else:
        tree.solve(W, J.body, J.arm)
        tree.apply(W, B.vel, B.omega, B.pred_ok)
    W.count[C_SOLVES] += 1


@njit(cache=True, **NO_REFCOUNT)
def position_stage(B, J, Sp, h, h_prev, settings, stats, scratch_a, scratch_x, scratch_arms,
                   scratch_rows, may_abort, W, solver):
    """Rounds of (Gauss-Seidel on the other joints, global solve). Returns False if the
    iteration diverges or hits the cap (only when may_abort: the caller halves the step)."""
    glob = W.lin_joint if solver == LINEAR else W.tr_joint
    other = W.lin_other if solver == LINEAR else W.tr_other
    iterated = settings[S_SPRING_ITERATED] != 0.0
    n_sp = Sp.body.shape[0] if iterated else 0
    ng, no = glob.shape[0], other.shape[0]
    if ng + no + n_sp == 0:
        return True
    use_global = ng > 0 and ensure_factor(B, J, W, solver)
    eps = settings[S_EPS_POS]
    order = int(settings[S_ORDER])
    gravity = settings[S_GX:S_GX + 3]
    max_rounds = int(settings[S_MAX_SWEEPS])
    budget = int(settings[S_BUDGET_NS])
    t = settings[S_TIME]
    kind, body, arm, kinv, joint_err = J.kind, J.body, J.arm, J.kinv, J.err
    static, pos, vel, omega, inv_mass = B.static, B.pos, B.vel, B.omega, B.inv_mass
    inertia_w, inv_inertia_w = B.inertia_w, B.inv_inertia_w
    pred_ok, pred_pos, pred_series, pred_rot = B.pred_ok, B.pred_pos, B.pred_series, B.pred_rot
    t0 = monotonic_ns()
    rounds = 0
    checks = 0
    prev_max = np.inf
    rising = 0
    ok = True
    while True:
        # 1. Gauss-Seidel visits (the global joints too if their matrix is singular)
        n_gs = no + (0 if use_global else ng)
        corrected_any = False
        round_max = 0.0
        for q in range(n_gs + n_sp):
            if q < n_gs:
                j = other[q] if q < no else glob[q - no]
                for side in range(2):
                    ensure_look_ahead(body[j, side], static, pred_ok, pos, vel, omega,
                                      inertia_w, inv_inertia_w, pred_pos, pred_series,
                                      pred_rot, h, order, gravity, scratch_a, scratch_x)
                if kind[j] == BALL:
                    err, corrected = dispatch.correct_position(
                        kind, j, body, arm, kinv, h, eps, static, pos, inv_mass, vel, omega,
                        inv_inertia_w, pred_ok, pred_pos, pred_rot)
                else:
                    err, corrected = generic.correct_position(B, J, j, h, eps, t, order, gravity,
                                                              scratch_a, scratch_x, scratch_rows)
                joint_err[j] = err
            else:
                err, corrected = spring.correct_iterated(B, Sp, q - n_gs, h, h_prev, eps,
                                                         order, gravity, scratch_a,
                                                         scratch_x, scratch_arms)
            checks += 1
            if corrected:
                stats[T_IMPULSES] += 1
                corrected_any = True
            if not err <= round_max:
                round_max = err
        # 2. predicted gaps of the global joints
        need = False
        if use_global:
            for g in range(ng):
                j = glob[g]
                for side in range(2):
                    ensure_look_ahead(body[j, side], static, pred_ok, pos, vel, omega,
                                      inertia_w, inv_inertia_w, pred_pos, pred_series,
                                      pred_rot, h, order, gravity, scratch_a, scratch_x)
                dx, dy, dz = position_error(j, body, arm, static, pos, pred_pos, pred_rot)
                err = np.sqrt(dx * dx + dy * dy + dz * dz)
                joint_err[j] = err
                if not err < eps:
                    need = True
                if not err <= round_max:
                    round_max = err
                _set_rhs(W, solver, g, j, dx / h, dy / h, dz / h)
            checks += ng
        # 3. converged, diverging, capped, or solve
        if not need and not corrected_any:
            break
        rising = rising + 1 if (round_max > prev_max and round_max >= eps) else 0
        if may_abort and (not np.isfinite(round_max) or rising >= GROWING_CYCLES):
            ok = False
            break
        prev_max = round_max
        if rounds >= max_rounds:
            if may_abort:
                ok = False
            else:
                stats[T_BUDGET_HIT] += 1
            break
        if need:
            _solve_apply(B, J, W, solver)
            stats[T_IMPULSES] += ng
        rounds += 1
        if budget > 0 and monotonic_ns() - t0 > budget:
            stats[T_BUDGET_HIT] += 1
            break
    stats[T_CHECKS] += checks
    stats[T_SWEEPS] += rounds
    return ok


@njit(cache=True, **NO_REFCOUNT)
def velocity_stage(B, J, settings, stats, scratch_rows, W, solver):
    """P-step 4 at t + h: global solves of the relative joint velocities (Gauss-Seidel for
    the other joints in between) until every |du| <= eps_vel or the cap."""
    glob = W.lin_joint if solver == LINEAR else W.tr_joint
    other = W.lin_other if solver == LINEAR else W.tr_other
    ng, no = glob.shape[0], other.shape[0]
    if ng + no == 0:
        return
    use_global = ng > 0 and ensure_factor(B, J, W, solver)
    eps = settings[S_EPS_VEL]
    max_rounds = int(settings[S_MAX_SWEEPS])
    kind, body, arm, kinv = J.kind, J.body, J.arm, J.kinv
    static, vel, omega, inv_mass = B.static, B.vel, B.omega, B.inv_mass
    inv_inertia_w, pred_ok = B.inv_inertia_w, B.pred_ok
    checks = 0
    for rounds in range(max_rounds + 1):
        n_gs = no + (0 if use_global else ng)
        corrected_any = False
        for q in range(n_gs):
            j = other[q] if q < no else glob[q - no]
            if kind[j] == BALL:
                err, corrected = dispatch.correct_velocity(kind, j, body, arm, kinv, eps,
                                                           static, inv_mass, vel, omega,
                                                           inv_inertia_w, pred_ok)
            else:
                err, corrected = generic.correct_velocity(B, J, j, eps, scratch_rows)
            checks += 1
            if corrected:
                stats[T_VEL_IMPULSES] += 1
                corrected_any = True
        need = False
        if use_global:
            for g in range(ng):
                j = glob[g]
                ax, ay, az = velocity_at(static, vel, omega, body[j, 0], arm[j, 0, 0],
                                         arm[j, 0, 1], arm[j, 0, 2])
                bx, by, bz = velocity_at(static, vel, omega, body[j, 1], arm[j, 1, 0],
                                         arm[j, 1, 1], arm[j, 1, 2])
                dx, dy, dz = bx - ax, by - ay, bz - az
                if not np.sqrt(dx * dx + dy * dy + dz * dz) <= eps:
                    need = True
                _set_rhs(W, solver, g, j, dx, dy, dz)
            checks += ng
        if (not need and not corrected_any) or rounds == max_rounds:
            break
        if need:
            _solve_apply(B, J, W, solver)
            stats[T_VEL_IMPULSES] += ng
    stats[T_VEL_CHECKS] += checks
