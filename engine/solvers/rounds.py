"""Position and velocity stages of the global solvers (settings.solver "linear" / "tree").

Position stage (replaces P-steps 1-2 of iterative.py), in rounds:
  1. visit the "other" joints once with the iterative correction (Gauss-Seidel: for the
     linear solver the joint families other than ball, for the tree solver the loop-closing
     joints and the tree joints' limit rows), and the iterated springs;
  2. predict (look-ahead) every global joint's errors at t + h: the gap d_j = b'_j - a'_j of
     a ball joint, the errors of all locked rows of the others (joints/jacobian.py), and the
     wanted change of a motor or servo row;
  3. stop if every global error < eps_pos and step 1 corrected nothing; otherwise solve the
     global system K p = d/h (linear.py) or Baraff's tree system (tree.py) and apply it.
  Motor rows (tree solver) are an active set: a solve that would take a motor's accumulated
  impulse past +-generic.motor_cap is not applied; that motor leaves the solve (refactor without its
  row) and its impulse is brought to the limit as a known impulse of the next solves, until
  the change it wants points back inside the limit (at most twice per step).
  The matrix depends only on the arms and inertias at t, so it is factored once per time
  point and kept (also from the velocity stage at t + h to the next step's position stage,
  which sees the same configuration). Same tolerance, iteration cap (max_cycles rounds),
  divergence test (step halving) and anytime budget as the iterative loop (stopping.py).
Contacts (engine/contacts/solve.py) are Gauss-Seidel rows of step 1 too, visited in the contact
order for the first contact_cycles rounds (the last of them without asking for another
round), as in the iterative loop: block Gauss-Seidel of an exact joint solve and the
contacts, so a servo-driven tree standing on the ground keeps its joints exact. On a tree
without motors a contact acts through the tree (contact_tree.py: routes).
Velocity stage (P-step 4): the same with du_j = u_b - u_a; without other joints one solve.
A singular pivot (redundant joints) makes the stage fall back to Gauss-Seidel visits of the
global joints too, for that factorisation.
Stats: T_SWEEPS counts rounds, T_IMPULSES joint corrections (each joint of a global solve
counts once), T_CHECKS joint error evaluations.
"""
import numpy as np
from numba import njit

from ..clock import monotonic_ns
from ..contacts import rows as contact_rows
from ..contacts import solve as contacts
from ..impulses import ensure_look_ahead, velocity_at
from ..jitopts import NO_REFCOUNT
from ..joints import A_BOUND, A_MOTOR, A_SAT, BALL, dispatch, generic, jacobian, spring
from ..joints.ball import position_error
from ..state import (
    S_BUDGET_NS,
    S_CONTACT_CYCLES,
    S_CONTACT_TOL,
    S_EPS_POS,
    S_EPS_VEL,
    S_GX,
    S_MAX_CYCLES,
    S_ORDER,
    S_SPRING_ITERATED,
    S_TIME,
    T_CHECKS,
    T_IMPULSES,
    T_SWEEPS,
    T_VEL_CHECKS,
    T_VEL_IMPULSES,
)
from . import contact_tree, linear, tree
from .graph import C_FACTORS, C_SOLVES, LINEAR
from .stopping import capped_ok, diverging, growth, out_of_time, past_deadline


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
def _tree_rows_same(J, W, position_stage, copy):
    """Whether every tree joint other than a ball joint (whose rows never change) still has
    the rows of the current factorisation (frame, locks, motor row in or out); with copy:
    record the current ones."""
    for q in range(W.tr_generic.shape[0]):
        j = W.tr_generic[q]
        code = jacobian.row_code(J, j, jacobian.motor_in_solve(J, j, position_stage))
        if copy:
            W.fact_code[j] = code
        elif code != W.fact_code[j]:
            return False
        for side in range(2):
            for r in range(3):
                for c in range(3):
                    if copy:
                        W.fact_frame[j, side, r, c] = J.const.frame[j, side, r, c]
                    elif J.const.frame[j, side, r, c] != W.fact_frame[j, side, r, c]:
                        return False
    return True


@njit(cache=True, **NO_REFCOUNT)
def ensure_factor(B, J, W, solver, position_stage, s):
    """Factor for the current configuration (and, for the tree, the current rows) unless
    that is already done. Returns ok. s: scratch (12, 3, 3)."""
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
    if same and solver != LINEAR:
        same = _tree_rows_same(J, W, position_stage, False)
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
        _tree_rows_same(J, W, position_stage, True)
        for q in range(W.tr_joint.shape[0]):
            j = W.tr_joint[q]
            W.tr_nrow[j], W.tr_motor[j] = jacobian.build_rows(
                B, J, j, jacobian.motor_in_solve(J, j, position_stage), W.tr_g[j], s)
        ok = tree.factor(W, J.const.body, B.inv_mass, B.inertia_w, B.inv_inertia, B.inv_inertia_w)
    W.fact_kind[0] = solver
    W.fact_ok[0] = 1 if ok else 0
    W.count[C_FACTORS] += 1
    return ok


@njit(cache=True, **NO_REFCOUNT)
def _set_ball_rhs(W, solver, g, j, dx, dy, dz):
    """Right side of ball joint j (global joint number g): the wanted change d of
    c = u_a - u_b (linear: y_g = d; tree: x_j = -d, the ball's rows are the world axes)."""
    if solver == LINEAR:
        W.lin_y[g, 0], W.lin_y[g, 1], W.lin_y[g, 2] = dx, dy, dz
    else:
        W.tr_xj[j, 0], W.tr_xj[j, 1], W.tr_xj[j, 2] = -dx, -dy, -dz


@njit(cache=True, **NO_REFCOUNT)
def _tree_rhs(B, J, W, j, h, t, velocity, s):
    """x_j = -d_j for tree joint j; returns (lock error, motor error)."""
    x = W.tr_xj[j]
    err, motor_err = jacobian.row_targets(B, J, j, h, t, velocity, W.tr_motor[j], x, s)
    for i in range(W.tr_nrow[j]):
        x[i] = -x[i]
    return err, motor_err


@njit(cache=True, **NO_REFCOUNT)
def _tree_solve_apply(B, J, W, h, position_stage, s):
    """The tree solve with the motors as an active set. A saturated motor's impulse is
    brought to its bound A_BOUND cap as a known impulse of the solve (x_b). If a motor
    row of the solve would take its accumulated impulse past +-cap, nothing is applied:
    that motor is marked saturated at that side and the caller refactors and solves again.
    Returns whether the solve was applied."""
    tree.clear_loads(W)
    free = W.tr_free
    if position_stage:
        for q in range(free.shape[0]):
            j = free[q]
            if J.acc[j, A_SAT] > 0.0:
                lam = J.acc[j, A_BOUND] * generic.motor_cap(J, j, h) - J.acc[j, A_MOTOR]
                if lam != 0.0:
                    jacobian.add_motor_load(B, J, j, lam, W.tr_xb, s)
    tree.solve(W, J.const.body)
    W.count[C_SOLVES] += 1
    saturated = False
    if position_stage:
        for q in range(free.shape[0]):
            j = free[q]
            r = W.tr_motor[j]
            if r < 0:
                continue
            cap = generic.motor_cap(J, j, h)
            acc = J.acc[j, A_MOTOR] + W.tr_zj[j, r]
            if abs(acc) > cap:
                J.acc[j, A_SAT] = abs(J.acc[j, A_SAT]) + 1.0
                J.acc[j, A_BOUND] = 1.0 if acc > 0.0 else -1.0
                saturated = True
    if saturated:
        return False
    tree.apply(W, B.vel, B.omega, B.pred_ok)
    if position_stage:
        for q in range(free.shape[0]):
            j = free[q]
            if W.tr_motor[j] >= 0:
                J.acc[j, A_MOTOR] += W.tr_zj[j, W.tr_motor[j]]
            elif J.acc[j, A_SAT] > 0.0:
                J.acc[j, A_MOTOR] = J.acc[j, A_BOUND] * generic.motor_cap(J, j, h)
    return True


@njit(cache=True, **NO_REFCOUNT)
def _solve_apply(B, J, W, solver, h, position_stage, s):
    """One global solve, applied; False if the tree solve's motor set changed instead."""
    if solver == LINEAR:
        linear.solve(W)
        linear.apply(W, J.const.body, J.arm, B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w,
                     B.pred_ok)
        W.count[C_SOLVES] += 1
        return True
    return _tree_solve_apply(B, J, W, h, position_stage, s)


@njit(cache=True, **NO_REFCOUNT)
def position_stage(B, J, Sp, C, h, h_prev, settings, stats, scratch_a, scratch_x, scratch_arms,
                   scratch_rows, may_abort, W, solver):
    """Rounds of (Gauss-Seidel on the other rows, global solve). Returns False if the
    iteration diverges or hits the cap (only when may_abort: the caller halves the step)."""
    glob = W.lin_joint if solver == LINEAR else W.tr_joint
    other = W.lin_other if solver == LINEAR else W.tr_other
    free = W.tr_free if solver != LINEAR else W.tr_free[:0]
    iterated = settings[S_SPRING_ITERATED] != 0.0
    n_sp = Sp.const.body.shape[0] if iterated else 0
    ng, no, nf = glob.shape[0], other.shape[0], free.shape[0]
    nc = C.body.shape[0]
    if ng + no + n_sp + nc == 0:
        return True
    eps = settings[S_EPS_POS]
    eps_c = max(eps, settings[S_CONTACT_TOL])
    contact_rounds = int(settings[S_CONTACT_CYCLES])
    order = int(settings[S_ORDER])
    gravity = settings[S_GX:S_GX + 3]
    max_rounds = int(settings[S_MAX_CYCLES])
    budget = int(settings[S_BUDGET_NS])
    t = settings[S_TIME]
    kind, body, arm, kinv, joint_err = J.const.kind, J.const.body, J.arm, J.kinv, J.err
    static, pos, vel, omega, inv_mass = B.static, B.pos, B.vel, B.omega, B.inv_mass
    inertia_w, inv_inertia_w = B.inertia_w, B.inv_inertia_w
    pred_ok, pred_pos, pred_series, pred_rot = B.pred_ok, B.pred_pos, B.pred_series, B.pred_rot
    t0 = monotonic_ns()
    rounds = 0
    checks = 0
    block_max, prev_block = 0.0, np.inf
    rising = 0
    active_set_changed = False
    refactor = True
    use_global = False
    routed = False
    ok = True
    while True:
        # the factorisation: per configuration, and for the tree per set of rows (a motor
        # that saturated or came back in the last round)
        if refactor:
            use_global = ng > 0 and ensure_factor(B, J, W, solver, True, scratch_rows)
            refactor = False
            routed = use_global and solver != LINEAR and nc > 0 and contact_tree.routes(J, W)
            if routed:
                contact_tree.set_keff(B, J, W, C)
        # 1. Gauss-Seidel visits (the global joints too if their matrix is singular; the
        #    tree joints' limits and saturated motors)
        n_gs = no + (0 if use_global else ng)
        n_free = nf if use_global else 0
        corrected_any = False
        pending_load = False
        round_max = 0.0
        for q in range(n_gs + n_free + n_sp):
            if q < n_gs + n_free:
                if q < n_gs:
                    j = other[q] if q < no else glob[q - no]
                else:
                    j = free[q - n_gs]
                for side in range(2):
                    ensure_look_ahead(body[j, side], static, pred_ok, pos, vel, omega,
                                      inertia_w, inv_inertia_w, pred_pos, pred_series,
                                      pred_rot, h, order, gravity, scratch_a, scratch_x)
                if q >= n_gs:
                    err, corrected = generic.limit_and_motor_rows(B, J, j, h, eps, t,
                                                                  scratch_rows, False, 1.0)
                    if jacobian.motor_wants_back(B, J, j, h, t, eps, scratch_rows):
                        corrected = True
                        active_set_changed = True
                    elif J.acc[j, A_SAT] > 0.0 and J.acc[j, A_MOTOR] \
                            != J.acc[j, A_BOUND] * generic.motor_cap(J, j, h):
                        pending_load = True
                elif kind[j] == BALL:
                    err, corrected = dispatch.correct_position(
                        kind, j, body, arm, kinv, h, eps, static, pos, inv_mass, vel, omega,
                        inv_inertia_w, pred_ok, pred_pos, pred_rot)
                    joint_err[j] = err
                else:
                    err, corrected, _ = generic.correct_position(
                        B, J, j, h, eps, t, order, gravity, scratch_a, scratch_x, scratch_rows,
                        generic.exact_base(B), False, 1.0, True)
                    joint_err[j] = err
            else:
                err, corrected = spring.correct_iterated(B, Sp, q - n_gs - n_free, h, h_prev,
                                                         eps, order, gravity, scratch_a,
                                                         scratch_x, scratch_arms)
            checks += 1
            if corrected:
                stats[T_IMPULSES] += 1
                corrected_any = True
            if not err <= round_max:
                round_max = err
        if rounds <= contact_rounds:
            if nc > 0:   # the exact look-ahead: the global solves move the bodies a lot
                contact_rows.snapshot(B, C, h, order, gravity, scratch_a, scratch_x)
            for i in range(nc):   # only a non-finite contact error counts for divergence
                if routed:
                    contact_tree.hold(B, C, C.order[i])
                err, corrected = contacts.visit_position(B, C, i, 1, C.heavy, h, eps_c, False,
                                                         not routed)
                if routed:
                    contact_tree.route(B, J, W, C, C.order[i], True)
                checks += 1
                if corrected and rounds < contact_rounds:
                    stats[T_IMPULSES] += 1
                    corrected_any = True
                if not np.isfinite(err):
                    round_max = err
        # 2. predicted errors of the global joints' rows
        need = pending_load
        if use_global:
            for g in range(ng):
                j = glob[g]
                for side in range(2):
                    ensure_look_ahead(body[j, side], static, pred_ok, pos, vel, omega,
                                      inertia_w, inv_inertia_w, pred_pos, pred_series,
                                      pred_rot, h, order, gravity, scratch_a, scratch_x)
                if kind[j] == BALL:  # (the linear solver's joints are all ball joints)
                    dx, dy, dz = position_error(j, body, arm, static, pos, pred_pos, pred_rot)
                    err = np.sqrt(dx * dx + dy * dy + dz * dz)
                    _set_ball_rhs(W, solver, g, j, dx / h, dy / h, dz / h)
                    motor_err = 0.0
                else:
                    err, motor_err = _tree_rhs(B, J, W, j, h, t, False, scratch_rows)
                joint_err[j] = err
                if not (err < eps and motor_err < eps):
                    need = True
                if not err <= round_max:
                    round_max = err
            checks += ng
        # 3. converged, diverging, capped, or solve
        if not need and not corrected_any:
            break
        # (a motor leaving or re-entering the solve moves the errors: not a divergence;
        # nor do joint errors that rise while the contacts still push)
        settled = (nc == 0 or rounds > contact_rounds) and not active_set_changed
        rising, block_max, prev_block = growth(rising, block_max, prev_block, rounds + 1,
                                                     settled, round_max, eps)
        refactor = active_set_changed
        active_set_changed = False
        if may_abort and diverging(round_max, rising):
            ok = False
            break
        if rounds >= max_rounds:
            ok = capped_ok(may_abort, stats)
            break
        if need:
            if not _solve_apply(B, J, W, solver, h, True, scratch_rows):
                active_set_changed = True
                refactor = True
            stats[T_IMPULSES] += ng
        rounds += 1
        if out_of_time(t0, budget, stats):
            break
    contact_tree.clear_keff(C)
    stats[T_CHECKS] += checks
    stats[T_SWEEPS] += rounds
    return ok


@njit(cache=True, **NO_REFCOUNT)
def velocity_stage(B, J, C, settings, stats, scratch_rows, W, solver, deadline):
    """P-step 4 at t + h: global solves of the relative joint velocities (Gauss-Seidel for
    the other joints, the tree joints' limits and, for contact_cycles rounds or until
    monotonic_ns() passes deadline (0: none), the contacts in between) until every error
    <= eps_vel or the cap. A motor's velocity row runs with its joint's limits
    (generic.motor_velocity_row), outside the global solve."""
    glob = W.lin_joint if solver == LINEAR else W.tr_joint
    other = W.lin_other if solver == LINEAR else W.tr_other
    free = W.tr_free if solver != LINEAR else W.tr_free[:0]
    ng, no, nf = glob.shape[0], other.shape[0], free.shape[0]
    nc = C.body.shape[0]
    if ng + no + nc == 0:
        return
    use_global = ng > 0 and ensure_factor(B, J, W, solver, False, scratch_rows)
    routed = use_global and solver != LINEAR and nc > 0 and contact_tree.routes(J, W)
    if routed:
        contact_tree.set_keff(B, J, W, C)
    eps = settings[S_EPS_VEL]
    contact_rounds = int(settings[S_CONTACT_CYCLES])
    contacts_on = nc > 0
    max_rounds = int(settings[S_MAX_CYCLES])
    kind, body, arm, kinv = J.const.kind, J.const.body, J.arm, J.kinv
    static, vel, omega, inv_mass = B.static, B.vel, B.omega, B.inv_mass
    inv_inertia_w, pred_ok = B.inv_inertia_w, B.pred_ok
    n_gs = no + (0 if use_global else ng)
    for q in range(n_gs):      # the joints visited one by one
        j = other[q] if q < no else glob[q - no]
        if kind[j] != BALL:
            generic.factor_velocity_locks(B, J, j, scratch_rows)
    checks = 0
    for rounds in range(max_rounds + 1):
        n_free = nf if use_global else 0
        corrected_any = False
        for q in range(n_gs + n_free):
            if q >= n_gs:
                err, corrected = generic.limit_velocity_rows(B, J, free[q - n_gs], eps,
                                                             scratch_rows,
                                                             rounds < contact_rounds)
            else:
                j = other[q] if q < no else glob[q - no]
                if kind[j] == BALL:
                    err, corrected = dispatch.correct_velocity(kind, j, body, arm, kinv, eps,
                                                               static, inv_mass, vel, omega,
                                                               inv_inertia_w, pred_ok, 1.0,
                                                               J.warm)
                else:
                    err, corrected = generic.correct_velocity(B, J, j, eps, scratch_rows,
                                                              rounds < contact_rounds, 1.0)
            checks += 1
            if corrected:
                stats[T_VEL_IMPULSES] += 1
                corrected_any = True
        if contacts_on and rounds < contact_rounds:
            for i in range(nc):
                if routed:
                    contact_tree.hold(B, C, C.order[i])
                corrected = contacts.visit_velocity(B, C, i, 1, eps, False, not routed)[1]
                if routed:
                    contact_tree.route(B, J, W, C, C.order[i], False)
                checks += 1
                if corrected:
                    stats[T_VEL_IMPULSES] += 1
                    corrected_any = True
            if past_deadline(deadline, stats):
                contacts_on = False
        need = False
        if use_global:
            for g in range(ng):
                j = glob[g]
                if kind[j] == BALL:
                    ax, ay, az = velocity_at(static, vel, omega, body[j, 0], arm[j, 0, 0],
                                             arm[j, 0, 1], arm[j, 0, 2])
                    bx, by, bz = velocity_at(static, vel, omega, body[j, 1], arm[j, 1, 0],
                                             arm[j, 1, 1], arm[j, 1, 2])
                    dx, dy, dz = bx - ax, by - ay, bz - az
                    err = np.sqrt(dx * dx + dy * dy + dz * dz)
                    _set_ball_rhs(W, solver, g, j, dx, dy, dz)
                else:
                    err = _tree_rhs(B, J, W, j, 1.0, 0.0, True, scratch_rows)[0]
                if not err <= eps:
                    need = True
            checks += ng
        if (not need and not corrected_any) or rounds == max_rounds:
            break
        if need:
            _solve_apply(B, J, W, solver, 1.0, False, scratch_rows)
            stats[T_VEL_IMPULSES] += ng
    contact_tree.clear_keff(C)
    stats[T_VEL_CHECKS] += checks
