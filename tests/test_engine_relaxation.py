"""Over-relaxation of the iterative loops' joint corrections (engine/solvers/relaxation.py;
issue 22, item 4): a slow Gauss-Seidel loop (floating chains, trees) takes Young's factor
for the rate it shows and needs far fewer cycles, every step still ends with every joint
within eps, and the motion is the plain loop's; joints that close a loop keep plain
Gauss-Seidel."""
import numpy as np
import pytest

from impulse.engine import state as S
from impulse.engine.bench import loops
from impulse.engine.scene import load_scene
from impulse.engine.solvers import BLOCK, GROWTH, relaxation

EPS = 1e-9   # the loop's tolerance in the calls of relaxation.adapted below


def _py(kernel):
    """The Python function of a compiled kernel (itself where numba is off)."""
    return getattr(kernel, "py_func", kernel)


def test_young_factor_follows_the_rate():
    young = _py(relaxation.young)
    assert young(0.0) == 1.0
    for rho in (0.5, 0.9, 0.95):
        omega = young(rho)
        # Young: the over-relaxed rate omega - 1 is sqrt(rho)-like, well below rho
        assert omega == pytest.approx(2.0 / (1.0 + np.sqrt(1.0 - rho)))
        assert omega - 1.0 < rho
    assert young(0.999999) == relaxation.OMEGA_MAX
    assert young(0.9) < relaxation.OMEGA_MAX


def test_the_factor_is_taken_only_where_the_loop_is_slow():
    adapted = _py(relaxation.adapted)
    after = relaxation.RELAX_AFTER
    young = _py(relaxation.young)
    inf = np.inf
    slow = 0.95 ** BLOCK          # a block's largest error over the block before's
    fast = 0.5 ** BLOCK
    assert adapted(0.0, 1.0, 0, inf, after, 1.0, slow, EPS) == (pytest.approx(young(0.95)), after,
                                                           slow)
    assert adapted(0.0, 1.0, 0, inf, after, 1.0, fast, EPS) == (1.0, 0, inf)          # fast
    assert adapted(0.0, 1.0, 0, inf, after - BLOCK, 1.0, slow, EPS) == (1.0, 0, inf)  # too early
    assert adapted(0.0, 1.0, 0, inf, after + 1, 1.0, slow, EPS) == (1.0, 0, inf)      # mid-block
    assert adapted(0.0, 1.0, 0, inf, after, inf, slow, EPS) == (1.0, 0, inf)          # no block
    assert adapted(0.0, 1.0, 0, inf, after, 1.0, 1.5, EPS) == (1.0, 0, inf)           # growing
    assert adapted(0.0, 1.0, 0, inf, after, 1.0, 0.0, EPS) == (1.0, 0, inf)           # converged
    assert adapted(1.0, 1.0, 0, inf, after, 1.0, slow, EPS) == (1.0, 0, inf)          # plain
    assert adapted(1.3, 1.3, 0, inf, after, 1.0, slow, EPS) == (1.3, 0, inf)          # fixed


def test_the_factor_goes_back_to_plain_where_over_relaxing_does_not_help():
    adapted = _py(relaxation.adapted)
    gave_up = relaxation.GAVE_UP
    limit = relaxation.GIVE_UP
    at = relaxation.RELAX_AFTER
    ref = 1.0                          # the last plain block's largest error
    # the errors may rise after the switch, up to GIVE_UP x ref
    assert adapted(0.0, 1.7, at, ref, at + BLOCK, ref, 0.9 * limit, EPS) == (1.7, at, ref)
    assert adapted(0.0, 1.7, at, ref, at + BLOCK, ref, 1.1 * limit, EPS) == (1.0, gave_up, ref)
    assert adapted(0.0, 1.7, at, ref, at + 4 * BLOCK, 0.1, 1.1 * limit, EPS) == (1.0, gave_up, ref)
    # a rising pair of blocks below the limit keeps omega (bumps), and no re-reading
    assert adapted(0.0, 1.7, at, ref, at + 2 * BLOCK, 0.5, 0.6, EPS) == (1.7, at, ref)
    # past the first block, a block may not grow past GROWTH x the one before (and eps)
    assert adapted(0.0, 1.7, at, ref, at + 2 * BLOCK, 0.1, 1.1 * GROWTH * 0.1, EPS) == \
        (1.0, gave_up, ref)
    assert adapted(0.0, 1.7, at, ref, at + 2 * BLOCK, 0.1, 1.1 * GROWTH * 0.1, 1.0) == \
        (1.7, at, ref)     # met eps, then more on the exact look-ahead: not SOR's doing
    # a loop that gave up stays plain
    assert adapted(0.0, 1.0, gave_up, ref, at + 3 * BLOCK, 1.0, 0.95 ** BLOCK, EPS) == \
        (1.0, gave_up, ref)


def test_the_factor_is_raised_by_youngs_relation():
    """A rate under SOR above omega - 1 means omega is below the optimum: Young's relation
    (rate + omega - 1)^2 = rate omega^2 rho gives Gauss-Seidel's rho and a larger omega
    (at most OMEGA_MAX); a rate at omega - 1 (the optimum or past it) keeps omega."""
    adapted = _py(relaxation.adapted)
    young = _py(relaxation.young)
    at = relaxation.RELAX_AFTER
    rho = 0.98                         # Gauss-Seidel's rate; Young's omega 1.75
    omega = 1.5                        # taken from an early, low reading
    # SOR's rate with omega below the optimum: the larger root of
    # lam^2 + (2 (omega - 1) - omega^2 rho) lam + (omega - 1)^2 = 0
    b = 2 * (omega - 1) - omega ** 2 * rho
    lam = (-b + np.sqrt(b * b - 4 * (omega - 1) ** 2)) / 2
    new, since, ref = adapted(0.0, omega, at, 1.0, at + 2 * BLOCK, 0.5, 0.5 * lam ** BLOCK, EPS)
    assert (since, ref) == (at + 2 * BLOCK, 1.0)
    assert new == pytest.approx(young(rho), rel=1e-9) and young(rho) < relaxation.OMEGA_MAX
    # too soon after a change (one block on the new omega): no reading
    assert adapted(0.0, omega, at, 1.0, at + BLOCK, 0.5, 0.5 * lam ** BLOCK, EPS) == \
        (omega, at, 1.0)
    # at the optimum the rate is omega - 1: no change
    opt = young(rho)
    assert adapted(0.0, opt, at, 1.0, at + 2 * BLOCK, 0.5, 0.5 * (opt - 1) ** BLOCK, EPS) == \
        (opt, at, 1.0)
    # never past OMEGA_MAX
    assert young(0.9999) == relaxation.OMEGA_MAX


def _cycles(w, seconds):
    """Runs the world; returns (position + velocity cycles per step, stats)."""
    r = w.run(int(round(seconds / w.settings.h)))
    st = r.stats
    vel = st[:, S.T_VEL_CHECKS] / max(len(w.joint_names), 1)
    return float((st[:, S.T_SWEEPS] + vel).mean()), st


# the over-relaxation's own effect: from the report's cold start (the warm start's is
# tests/test_engine_warm_start.py's)
def _chain(links, kind, h):
    def make(relax):
        w = loops.floating_chain(links, kind, h)
        w.settings.relaxation, w.settings.warm_start = relax, False
        return w
    return make


def _tree(scene_path, n):
    def make(relax):
        w = load_scene(scene_path(f"tree_{n}.json"))
        w.settings.solver, w.settings.relaxation = "iterative", relax
        w.settings.warm_start = False
        return w
    return make


def _tree_at(scene_path, n, h):
    def make(relax):
        w = _tree(scene_path, n)(relax)
        w.settings.h = h
        return w
    return make


@pytest.mark.parametrize("case", ["hinge4 1/60", "hinge4 0.01", "hinge7 1/60", "hinge7 0.01",
                                  "tree_31 1/30", "tree_31 1/60", "tree_31 0.005"])
def test_a_slow_loop_needs_far_fewer_cycles_and_still_meets_eps(scene_path, case):
    """Floating hinge chains and the 31-joint tree, several h: the adapted factor needs at
    most 60 % of plain Gauss-Seidel's cycles (position and velocity loops)."""
    name, arg = case.split()
    h = {"1/30": 1 / 30, "1/60": 1 / 60, "0.01": 0.01, "0.005": 0.005}[arg]
    make = {"hinge4": lambda: _chain(4, "hinge", h), "hinge7": lambda: _chain(7, "hinge", h),
            "tree_31": lambda: _tree_at(scene_path, 31, h)}[name]()
    seconds = 1.0
    plain, st_plain = _cycles(make(1.0), seconds)
    adapted, st = _cycles(make(0.0), seconds)
    assert adapted < 0.6 * plain, (plain, adapted)
    eps = make(0.0).settings.eps_pos
    assert (st[:, S.T_RESIDUAL] <= eps * 1.001).all()           # every step met eps
    assert st[:, S.T_HALVINGS].sum() == 0
    assert st[:, S.T_BUDGET_HIT].sum() == 0


@pytest.mark.parametrize("scene,h", [("slider_crank.json", 1 / 60), ("slider_crank.json", 0.005),
                                     ("chain8.json", 0.01)])
def test_closed_loops_keep_plain_gauss_seidel(scene_path, scene, h):
    """Where the joints close a loop the adapted factor is 1: the same steps, bit for bit,
    as relaxation = 1 (over-relaxed, the slider crank took 1.3-2x the cycles)."""
    runs = []
    for relax in (0.0, 1.0):
        w = load_scene(scene_path(scene))
        w.settings.solver, w.settings.h, w.settings.relaxation = "iterative", h, relax
        w.run(int(round(0.5 / h)))
        runs.append(w.body_pos.copy())
    assert np.array_equal(runs[0], runs[1])


def test_closed_loops_in_the_joint_graph():
    from impulse.engine.solvers.graph import has_closed_loop
    from impulse.engine.world import World

    def world(pairs, disabled=()):
        w = World({"gravity": [0, 0, 0]})
        for i in range(4):
            w.add_body({"name": f"b{i}", "shape": {"type": "sphere", "radius": 0.1},
                        "mass": 1.0, "position": [float(i), 0.0, 0.0]})
        for k, (a, b) in enumerate(pairs):
            w.add_joint({"name": f"j{k}", "type": "ball", "bodies": [a, b],
                         "anchor": [0.5 * k, 0.0, 0.0]})
        for k in disabled:
            w.J.enabled[k] = False     # as sleeping switches a joint off
        return has_closed_loop(w.B, w.J)

    chain = [("world", "b0"), ("b0", "b1"), ("b1", "b2"), ("b2", "b3")]
    assert not world(chain)                                    # hung at one end
    assert world(chain + [("b3", "world")])                    # hung at both ends
    assert not world(chain + [("b3", "world")], disabled=(4,))  # the second one switched off
    assert world([("b0", "b1"), ("b1", "b2"), ("b2", "b0")])   # a floating ring
    assert not world([("world", "b0"), ("world", "b1"), ("b1", "b2")])  # two trees


def test_tree_63_converges_without_halving(scene_path):
    """Plain Gauss-Seidel on the 63-joint tree runs into its cycle cap and halves the step
    (about twice a step); over-relaxed it meets eps in every step."""
    w = _tree(scene_path, 63)(0.0)
    _, st = _cycles(w, 0.5)
    assert st[:, S.T_HALVINGS].sum() == 0
    assert st[:, S.T_BUDGET_HIT].sum() == 0
    assert (st[:, S.T_RESIDUAL] <= w.settings.eps_pos * 1.001).all()


@pytest.mark.parametrize("h", [1 / 30, 0.01])
def test_the_over_relaxed_tree_moves_as_the_plain_one(scene_path, h):
    """Both loops stop within eps_pos = 1e-6 every step; the 31 bodies' paths agree."""
    make = _tree_at(scene_path, 31, h)
    a, b = make(1.0), make(0.0)
    steps = int(round(1.0 / h))
    a.run(steps)
    b.run(steps)
    assert np.abs(a.body_pos - b.body_pos).max() < 1e-4
    assert np.abs(a.body_vel - b.body_vel).max() < 1e-3


@pytest.mark.parametrize("h", [0.01, 1 / 60])
def test_a_floating_chain_keeps_its_momentum_and_energy_with_the_defaults(h):
    """No gravity: the joints' impulses are internal (the over-relaxed ones, and the warm
    start's, equal and opposite along the locks), so linear and angular momentum hold to
    rounding, and the kinetic energy stays as close to its start as the report's method
    (plain Gauss-Seidel, cold) keeps it."""
    drift = {}
    for relax, warm in ((1.0, False), (0.0, False), (1.0, True), (0.0, True)):
        w = loops.floating_chain(7, "hinge", h)
        w.settings.relaxation, w.settings.warm_start = relax, warm
        p0, l0 = w.momentum()
        e0 = sum(w.energy())
        r = w.run(100)
        p1, l1 = w.momentum()
        assert np.abs(p1 - p0).max() < 1e-9 and np.abs(l1 - l0).max() < 1e-6
        drift[relax, warm] = np.abs(r.energy - e0).max() / abs(e0)
    for key in ((0.0, False), (1.0, True), (0.0, True)):
        assert drift[key] < 2.0 * drift[1.0, False] + 1e-6, (key, drift)


def test_a_fixed_factor_from_the_scene_settings(scene_path, tmp_path):
    """relaxation = 1.5 over-relaxes from the first cycle; out of range is refused."""
    import json

    from impulse.engine.scene import SceneError
    scene = json.loads(open(scene_path("slider_crank.json")).read())
    scene["settings"]["relaxation"] = 1.5
    p = tmp_path / "crank.json"
    p.write_text(json.dumps(scene))
    w = load_scene(str(p))
    assert w.settings.relaxation == 1.5
    _, st = _cycles(w, 0.5)
    assert (st[:, S.T_RESIDUAL] <= w.settings.eps_pos * 1.001).all()
    scene["settings"]["relaxation"] = 2.5
    p.write_text(json.dumps(scene))
    with pytest.raises(SceneError, match="relaxation"):
        load_scene(str(p))


def test_the_loops_start_on_the_factor_already_read():
    """The velocity loop starts on the factor its position loop ended on (inherited); the
    position loop on CARRY of the last step's over-relaxation (carried); a plain or fixed
    setting, or a plain last step, starts as before (initial)."""
    inherited = _py(relaxation.inherited)
    probe = relaxation.PROBE_S

    def carried(setting, prev, t=0.3 * probe, h=0.01 * probe):
        return _py(relaxation.carried)(setting, prev, t, h)

    inf, carry = np.inf, relaxation.CARRY
    assert 0.5 < carry < 1.0
    assert carried(0.0, 1.8) == (pytest.approx(1.0 + carry * 0.8), 0, inf)
    # a step across a multiple of PROBE_S starts plain and reads the rate afresh
    assert carried(0.0, 1.8, 2.99 * probe, 0.02 * probe) == (1.0, 0, inf)
    assert carried(0.0, 1.8, 3.0 * probe, 0.02 * probe) == \
        (pytest.approx(1.0 + carry * 0.8), 0, inf)
    assert inherited(0.0, 1.8) == (1.8, 0, inf)
    for start in (carried, inherited):
        assert start(0.0, 1.0) == (1.0, 0, inf)        # the last loop stayed plain
        assert start(0.0, 0.0) == (1.0, 0, inf)        # none yet (a world's first step)
        assert start(1.0, 1.8) == (1.0, 0, inf)        # plain Gauss-Seidel asked for
        assert start(1.3, 1.8) == (1.3, 0, inf)        # a fixed factor
    # started over-relaxed, no plain block came before: only the growth rule sends it back
    adapted = _py(relaxation.adapted)
    at = relaxation.RELAX_AFTER
    assert adapted(0.0, 1.72, 0, inf, at, 1.0, 1.9, EPS) == (1.72, 0, inf)
    assert adapted(0.0, 1.72, 0, inf, at, 1.0, 2.1, EPS) == (1.0, relaxation.GAVE_UP, inf)


def _one_step_cycles(w, relax_prev):
    """Position cycles of one step from the world's state with S_RELAX_PREV = relax_prev;
    the world is put back where it was."""
    snap = w.get_state()
    w.relax_prev = relax_prev
    st = w.run(1).stats[0]
    w.set_state(snap)
    return st[S.T_SWEEPS], st[S.T_RESIDUAL]


@pytest.mark.parametrize("case", ["hinge7 1/60", "hinge7 0.01", "tree_31 1/30", "tree_63 1/60",
                                  "tree_63 1/30"])
def test_the_carried_factor_saves_the_position_loops_plain_cycles(scene_path, case):
    """After a second of motion the last step's factor is > 1; started on it, the next
    position loop needs fewer cycles than started plain (which reads the rate again after
    RELAX_AFTER plain cycles), over several states, and meets eps either way."""
    name, arg = case.split()
    h = {"1/30": 1 / 30, "1/60": 1 / 60, "0.01": 0.01}[arg]
    if name.startswith("hinge"):
        w = _chain(int(name[5:]), "hinge", h)(0.0)
    else:
        w = _tree_at(scene_path, int(name[5:]), h)(0.0)
    w.settings.warm_start = True
    # (the 4-hinge chain, whose loops are short, 18-20 cycles, gains as often as it loses
    # step by step: -19 to +8 cycles; its whole runs are in the bench and in
    # test_a_slow_loop_needs_far_fewer_cycles_and_still_meets_eps)
    w.run(int(round(0.1 / h)))
    saved, factors = [], []
    probe = relaxation.PROBE_S
    while len(saved) < 10:
        w.run(2)
        if np.floor(w.time / probe) != np.floor((w.time + h) / probe):
            continue        # a probing step starts plain whatever it is handed
        factors.append(w.relax_prev)
        with_carry, r1 = _one_step_cycles(w, w.relax_prev)
        plain_start, r2 = _one_step_cycles(w, 0.0)
        assert max(r1, r2) <= w.settings.eps_pos * 1.001
        saved.append(plain_start - with_carry)
    assert np.median(factors) > 1.2, factors
    # (step by step the saving varies, -3 to 16 cycles; 6.7 to 12.8 on average)
    assert np.mean(saved) >= 0.4 * relaxation.RELAX_AFTER, saved


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 0.01])
def test_a_short_loop_hands_on_no_factor(h):
    """A loop shorter than LONG hands 1 to the next step, whatever it started on: a
    pendulum held out by a torque reads a slow rate at its 10th cycle and stops there
    (started on that factor, 1.65, every step took 32 cycles and it drifted from its
    balance angle); handed 1.8, which keeps its loop long, the next step across a multiple
    of PROBE_S starts plain and puts it back on plain Gauss-Seidel."""
    from tests.test_engine_loads import torque_held_pendulum
    w, th = torque_held_pendulum(h, 7.0)
    st = w.run(int(round(1.0 / h))).stats
    assert st[:, S.T_SWEEPS].max() < relaxation.LONG
    assert w.relax_prev == 1.0
    w.relax_prev = 1.8          # as if it had run long: the next probe puts it back
    w.run(int(np.ceil(relaxation.PROBE_S / h)) + 1)
    assert w.relax_prev == 1.0
    st = w.run(10).stats
    assert st[:, S.T_SWEEPS].max() < relaxation.LONG
    p = w.B.pos[0]
    # (the steps started on 1.8 drifted it by about 1e-7; left alone it holds 1e-9:
    # tests/test_engine_loads.py)
    assert np.arctan2(p[0], -p[1]) == pytest.approx(th, abs=5e-7)


@pytest.mark.parametrize("parts", ["steps", "save"])
def test_the_carried_factor_is_state(parts, tmp_path):
    """Step by step, or saved and loaded halfway, the floating 7-hinge chain continues bit
    for bit as in one run (the factor travels in the settings, the clock and the saved
    state)."""
    from impulse.engine.scene import save_scene
    h = 1 / 60
    a = _chain(7, "hinge", h)(0.0)
    a.settings.warm_start = True
    a.run(60)
    assert a.relax_prev > 1.3
    if parts == "steps":
        b = _chain(7, "hinge", h)(0.0)
        b.settings.warm_start = True
        for _ in range(30):
            b.step()
        b.run(30)
    else:
        b = _chain(7, "hinge", h)(0.0)
        b.settings.warm_start = True
        b.run(30)
        save_scene(b, tmp_path / "chain.json")
        b = load_scene(tmp_path / "chain.json")
        b.run(30)
    assert b.relax_prev == a.relax_prev
    assert np.array_equal(a.B.pos, b.B.pos) and np.array_equal(a.B.vel, b.B.vel)


def _lever_servo(h):
    from tests.test_engine_servos import lever
    return lever(0.3, 0.1, h, "iterative", 0.4, 10.0)


def test_the_factor_is_kept_only_where_the_loop_holds_locks_alone(scene_path):
    """A motor, a limit, an iterated spring or a contact in the loop: no factor is carried
    to the next step nor handed to the velocity loop (a lever's servo started over-relaxed
    never reached its target; a servo-held quadruped blew up on its feet)."""
    from impulse.engine.solvers.iterative import locks_only
    lk = _py(locks_only)
    chain = _chain(4, "hinge", 0.01)(0.0)
    assert lk(chain.J, 0, 0)
    assert not lk(chain.J, 0, 3) and not lk(chain.J, 1, 0)      # contacts, springs
    assert not lk(_lever_servo(0.01).J, 0, 0)                   # a motor
    from impulse.engine.joints import P_LIM1
    limited = _chain(4, "hinge", 0.01)(0.0)
    limited.J.const.param[1, P_LIM1] = 1.0                      # a limit row
    assert not lk(limited.J, 0, 0)
    # behaviour: the servo's step is the same whatever factor the world hands it
    for h in (1 / 60, 0.01):
        w = _lever_servo(h)
        w.run(int(round(0.05 / h)))
        assert w.relax_prev == 1.0
        snap = w.get_state()
        w.relax_prev = 1.8
        w.run(3)
        a = w.B.pos.copy(), w.B.omega.copy()
        w.set_state(snap)
        w.run(3)
        assert np.array_equal(a[0], w.B.pos) and np.array_equal(a[1], w.B.omega)


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 0.01])
def test_a_lever_servo_reaches_its_target_after_a_slow_first_move(h):
    """The servo's first move makes its loop slow enough to over-relax; the steps after it
    start plain again and the lever holds its target."""
    w = _lever_servo(h)
    w.run(int(round(2.0 / h)))
    assert w.joint_coordinates("h")[0] == pytest.approx(0.4, abs=1e-6)
    assert abs(w.body_omega[0][2]) < 1e-6
