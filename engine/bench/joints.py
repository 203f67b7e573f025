"""Benchmarks of `impulse bench`: each returns rows (dicts) for the table and the JSON file."""
import os
from dataclasses import replace

import numpy as np

from .. import state as S
from ..metrics import run_summary
from ..scene import load_scene
from ..scenes_list import SCENES_DIR

SCENES = SCENES_DIR


def _scene(name):
    return os.path.join(SCENES, name)


# (h, simulated seconds, the report's method: plain Gauss-Seidel from no first guess)
CHAIN8_RUNS = (0.01, 10.0, True), (0.005, 10.0, True), (0.01, 30.0, False), (0.01, 30.0, True)
CHAIN8_REPEATS = 3     # timed runs per row (the same arithmetic each time): the median counts
CHAIN8_TARGET = {"realtime_factor": 400, "corrections_per_s": 5e6}   # issue 22, item 8


def chain8():
    """Schmitt's 8-Loop, Dmax = 1e-5: 10 s at h = 0.01 and 0.005 (Tables 9.2-9.4, with the
    report's method: relaxation 1, warm_start false), and the 30 s at h = 0.01 of `impulse
    sim chain8 --h 0.01 --eps-pos 1e-5 --duration 30` with the default settings and with
    the report's method, with the speed targets of issue 22 (400x real time, 5 M
    corrections/s: the default settings' warm start leaves fewer corrections to share a
    step's fixed cost, so the per-correction speed is the report method's row). Each row's
    timing is the median wall time of CHAIN8_REPEATS runs from the scene's start (shared
    machines vary)."""
    rows = []
    for h, seconds, report in CHAIN8_RUNS:
        warm = load_scene(_scene("chain8.json"))
        warm.settings.h = h
        warm.run(10)  # JIT warm-up outside the measurement
        walls = []
        for _ in range(CHAIN8_REPEATS):
            world = load_scene(_scene("chain8.json"))
            world.settings.h = h
            world.settings.eps_pos = 1e-5
            if report:      # the report's method: plain Gauss-Seidel, no first guess
                world.settings.relaxation = 1.0
                world.settings.warm_start = False
            e0 = sum(world.energy())
            result = world.run(int(round(seconds / h)))
            walls.append(result.wall_time)
        s = run_summary(world, replace(result, wall_time=float(np.median(walls))), "chain8", e0)
        row = {
            "benchmark": "chain8", "h": h, "sim_s": seconds, "eps_pos": 1e-5,
            "relaxation": world.settings.relaxation,
            "warm_start": world.settings.warm_start,
            "corrections_per_step": round(s["corrections_per_step_mean"], 2),
            "paper_corrections_per_step": {0.01: 113.08, 0.005: 81.36}[h]
            if seconds == 10.0 else None,
            "corrections_per_s": round(s["corrections_per_second"]),
            "realtime_factor": round(s["realtime_factor"], 1),
            "ms_per_step": round(1e3 * s["wall_time"] / s["steps"], 4),
            "energy_drift_mean_J": round(s["energy_abs_drift_mean"], 4),
            "max_gap_m": s["max_position_error"],
            "step_halvings": s["step_halvings"],
        }
        if seconds == 30.0:
            keys = CHAIN8_TARGET if report else ("realtime_factor",)
            row["meets_target"] = all(row[k] >= CHAIN8_TARGET[k] for k in keys)
        rows.append(row)
    return rows


TREE_SIZES = (31, 63, 127, 255)
TREE_METHODS = (("iterative", 1e-3), ("iterative", 1e-6), ("linear", 1e-6), ("tree", 1e-6))
TREE_SECONDS = 10.0     # simulated per combination ...
TREE_WALL_LIMIT = 15.0  # ... unless its wall time passes this (sim_s then says how far)
GAP_LIMIT = 0.01        # stable: finite, every joint gap < 1 cm, and the energy never
ENERGY_RISE = 0.01      # rises above E(0) + 1 % |E(0)| (no damping: a rise is instability)


def _stable(gap_max, energy):
    e0 = energy[0]
    return bool(np.isfinite(energy).all() and gap_max < GAP_LIMIT
                and energy.max() <= e0 + ENERGY_RISE * abs(e0))


def _tree_ours(n, solver, eps):
    world = load_scene(_scene(f"tree_{n}.json"))
    world.settings.solver = solver
    world.settings.eps_pos = world.settings.eps_vel = eps
    chunk = int(round(0.2 / world.settings.h))
    total = int(round(TREE_SECONDS / world.settings.h))
    stats, energy, wall = [], [np.array([sum(world.energy())])], 0.0
    while sum(len(s) for s in stats) < total and wall < TREE_WALL_LIMIT:
        r = world.run(chunk)
        stats.append(r.stats)
        energy.append(r.energy[1:])
        wall += r.wall_time
    st, energy = np.concatenate(stats), np.concatenate(energy)
    gap = float(st[:, S.T_RESIDUAL].max())
    return {
        "benchmark": "tree", "joints": n, "method": f"{solver} ({eps:g})",
        "sim_s": round(st.shape[0] * world.settings.h, 2),
        "ms_per_step": round(1e3 * wall / st.shape[0], 3),
        "ms_median": round(float(np.median(st[:, S.T_SOLVE_NS])) * 1e-6, 3),
        "max_gap_m": gap, "rounds_per_step": round(float(st[:, S.T_SWEEPS].mean()), 1),
        "energy_rise_J": round(float(energy.max() - energy[0]), 3),
        "cap_stops": int(st[:, S.T_BUDGET_HIT].sum()), "halvings": int(st[:, S.T_HALVINGS].sum()),
        "stable": _stable(gap, energy),
    }


def tree():
    """Bender's Table 1 on this machine: trees of 31..255 ball joints, h = 1/30; iterative
    at 1e-3 and 1e-6, linear and O(n) at 1e-6; then the peers on the same models if the
    `peers` extra is installed. ms_per_step: mean wall time per step; ms_median: median of
    the steps' own timers (robust when the machine is shared)."""
    from . import peers
    warm = load_scene(_scene("tree_31.json"))  # JIT warm-up outside the measurement
    for solver in ("iterative", "linear", "tree"):
        warm.settings.solver = solver
        warm.run(5)
    rows = [_tree_ours(n, solver, eps) for n in TREE_SIZES for solver, eps in TREE_METHODS]
    ours = {r["joints"]: r["ms_per_step"] for r in rows if r["method"].startswith("tree")}
    mujoco, pybullet = peers.available()
    if mujoco is None or pybullet is None:
        print("peers skipped: install the `peers` extra (mujoco, pybullet) to compare")
    for n in TREE_SIZES:
        world = load_scene(_scene(f"tree_{n}.json"))
        steps = int(round(TREE_SECONDS / world.settings.h))
        runs = []
        if mujoco is not None:
            for name, xml in (("mujoco ball euler", peers.mjcf_tree(world, "Euler")),
                              ("mujoco ball rk4", peers.mjcf_tree(world, "RK4")),
                              ("mujoco connect euler", peers.mjcf_connect(world, "Euler"))):
                runs.append((name, peers.run_mujoco(mujoco, world, xml, steps)))
        if pybullet is not None:
            runs.append(("pybullet p2p", peers.run_pybullet(pybullet, world, steps)))
        for name, (times, gaps, energy) in runs:
            ms = 1e3 * float(times.mean())
            rows.append({
                "benchmark": "tree", "joints": n, "method": name,
                "sim_s": round(len(times) * world.settings.h, 2),
                "ms_per_step": round(ms, 3), "ms_median": round(1e3 * float(np.median(times)), 3),
                "max_gap_m": float(gaps.max()) if len(gaps) else float("nan"),
                "energy_rise_J": round(float(energy.max() - energy[0]), 3),
                "stable": _stable(float(np.nanmax(gaps)) if len(gaps) else np.inf, energy)
                and len(times) == steps,
                "ours_tree_over_peer": round(ours[n] / ms, 2),
            })
    return rows


def contacts(scenes=None):
    """Contact scenes: ms per step by stage, most collisions/contacts, peers, and behaviour
    figures against analytic values and MuJoCo (bench_contacts). scenes: only these (scene
    file names without .json; default: the environment's IMPULSE_BENCH_SCENES=a,b, else
    all); an unknown name raises ValueError."""
    from .contacts import contacts as run
    return run(scenes)


def imports(scenes=None):
    """Imported URDF/MJCF models (engine/bench/imports.py); `scenes`: model names."""
    from .imports import imports as run
    return run(scenes.split(",") if scenes else None)


def loops():
    """Closed loops, floating chains and trees: iterative against tree (engine/bench/loops.py)."""
    from .loops import loops as run
    return run()


BENCHMARKS = {"chain8": chain8, "tree": tree, "loops": loops, "contacts": contacts,
              "import": imports}


def format_table(rows):
    """Plain-text table of rows with the union of their keys as columns; rows with a
    `figure` key (the contacts bench's behaviour figures) follow as a table of their own."""
    if not rows:
        return "(no rows)"
    figures = [r for r in rows if "figure" in r]
    if figures and len(figures) < len(rows):
        return (format_table([r for r in rows if "figure" not in r]) + "\n\n"
                + format_table(figures))
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[_fmt(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]

    def line(vals):
        return "  ".join(v.rjust(w) for v, w in zip(vals, widths, strict=True))

    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}" if (abs(v) < 1e-3 and v != 0) else f"{v:g}"
    if isinstance(v, np.integer):
        return str(int(v))
    return str(v)
