"""`impulse bench loops` (issue 22, item 4): closed loops, floating chains and trees on the
iterative solver, with the default settings (adapted over-relaxation, warm start) and with
the report's method (plain Gauss-Seidel from no first guess: relaxation 1, warm_start
false), against the tree solver on the same run: ms per step, cycles per
step of the position and velocity loops, step halvings, the largest joint error at a step's
end, and the iterative solver's time over the tree solver's (target: at most LOOPS_TARGET,
with halvings on at most 1 % of the steps)."""
import time

import numpy as np

from .. import state as S
from ..scene import load_scene
from ..world import World
from .joints import _scene

LOOPS_TARGET = 3.0      # iterative time / tree time
HALVING_SHARE = 0.01    # halvings per step


def floating_chain(links, kind, h, solver="iterative"):
    """A chain of `links` boxes joined end to end by ball or hinge joints (hinge axes
    alternating z, y), no gravity, set tumbling (seeded): every joint couples through free
    bodies, no fixed anchor. eps_pos 1e-6, eps_vel 1e-5."""
    w = World({"h": h, "eps_pos": 1e-6, "eps_vel": 1e-5, "solver": solver,
               "gravity": [0, 0, 0]})
    rng = np.random.default_rng(links)
    for i in range(links):
        w.add_body({"name": f"b{i}", "shape": {"type": "box", "size": [0.3, 0.06, 0.06]},
                    "mass": 1.0 + i % 3, "position": [0.3 * i, 0.0, 0.0],
                    "velocity": rng.normal(0, 0.5, 3).tolist(),
                    "angular_velocity": rng.normal(0, 3.0, 3).tolist()})
    for i in range(links - 1):
        j = {"name": f"j{i}", "type": kind, "bodies": [f"b{i}", f"b{i + 1}"],
             "anchor": [0.3 * i + 0.15, 0.0, 0.0]}
        if kind == "hinge":
            j["axis"] = [0, 0, 1] if i % 2 == 0 else [0, 1, 0]
        w.add_joint(j)
    return w


def _scene_world(name):
    def make(solver):
        w = load_scene(_scene(f"{name}.json"))
        w.settings.solver = solver
        return w
    return make


# (label, world maker taking the solver, simulated seconds)
CASES = [("slider_crank", _scene_world("slider_crank"), 5.0)]
for _kind, _links in (("ball", 5), ("hinge", 4), ("hinge", 7)):
    for _h in (1 / 60, 0.01):
        CASES.append((f"floating {_kind} chain of {_links}, h = {_h:.4g}",
                      lambda solver, k=_kind, n=_links, h=_h: floating_chain(n, k, h, solver),
                      4.0))
CASES += [("tree_31", _scene_world("tree_31"), 2.0), ("tree_63", _scene_world("tree_63"), 2.0)]

# (label, solver, relaxation, warm_start); the second is the report's method
METHODS = (("iterative", "iterative", 0.0, True),
           ("iterative, plain Gauss-Seidel, cold", "iterative", 1.0, False),
           ("tree", "tree", None, None))


def _run(make, solver, relaxation, warm_start, seconds):
    def world():
        w = make(solver)
        if relaxation is not None:
            w.settings.relaxation = relaxation
            w.settings.warm_start = warm_start
        return w

    world().run(3)                  # compiled code warm, outside the measurement
    w = world()
    w.run(1)                        # and the world's own first-step set-up (its tables)
    steps = int(round(seconds / w.settings.h))
    t0 = time.process_time()
    r = w.run(steps)
    cpu = time.process_time() - t0
    st = r.stats
    n_items = max(len(w.joint_names), 1)
    return {
        "ms_per_step": round(1e3 * cpu / steps, 4),
        "cycles_per_step": round(float(st[:, S.T_SWEEPS].mean()), 1),
        "velocity_cycles_per_step": round(float(st[:, S.T_VEL_CHECKS].mean()) / n_items, 1),
        "halvings": int(st[:, S.T_HALVINGS].sum()), "steps": steps,
        "max_gap_m": float(st[:, S.T_RESIDUAL].max()),
        "cap_stops": int(st[:, S.T_BUDGET_HIT].sum()),
    }


def loops():
    """The rows: one per case and method (ms per step is CPU time, robust on a shared
    machine); iterative rows carry over_tree (their time / the tree solver's) and
    meets_target."""
    rows = []
    for label, make, seconds in CASES:
        runs = {name: _run(make, solver, relax, warm, seconds)
                for name, solver, relax, warm in METHODS}
        tree_ms = runs["tree"]["ms_per_step"]
        for name, _, _, _ in METHODS:
            row = {"benchmark": "loops", "case": label, "method": name, **runs[name]}
            if name != "tree":
                row["over_tree"] = round(row["ms_per_step"] / tree_ms, 2)
                row["meets_target"] = bool(row["over_tree"] <= LOOPS_TARGET and row["halvings"]
                                           <= HALVING_SHARE * row["steps"])
            rows.append(row)
    return rows
