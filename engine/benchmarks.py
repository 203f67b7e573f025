"""Benchmarks of `impulse bench`: each returns rows (dicts) for the table and the JSON file."""
import os

import numpy as np

from .metrics import run_summary
from .scene import load_scene

SCENES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenes")


def _scene(name):
    return os.path.join(SCENES, name)


def chain8():
    """Schmitt's 8-Loop, 10 s, Dmax = 1e-5 at h = 0.01 and 0.005 (Tables 9.2-9.4)."""
    rows = []
    for h in (0.01, 0.005):
        warm = load_scene(_scene("chain8.json"))
        warm.settings.h = h
        warm.run(10)  # JIT warm-up outside the measurement
        world = load_scene(_scene("chain8.json"))
        world.settings.h = h
        world.settings.eps_pos = 1e-5
        e0 = sum(world.energy())
        result = world.run(int(round(10.0 / h)))
        s = run_summary(world, result, "chain8", e0)
        rows.append({
            "benchmark": "chain8", "h": h, "eps_pos": 1e-5,
            "corrections_per_step": round(s["iterations_per_step_mean"], 2),
            "paper_corrections_per_step": {0.01: 113.08, 0.005: 81.36}[h],
            "corrections_per_s": round(s["corrections_per_second"]),
            "realtime_factor": round(s["realtime_factor"], 1),
            "ms_per_step": round(1e3 * s["wall_time"] / s["steps"], 4),
            "energy_drift_mean_J": round(s["energy_abs_drift_mean"], 4),
            "max_gap_m": s["max_position_error"],
            "step_halvings": s["step_halvings"],
        })
    return rows


BENCHMARKS = {"chain8": chain8}


def format_table(rows):
    """Plain-text table of rows with the union of their keys as columns."""
    if not rows:
        return "(no rows)"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[_fmt(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths))
    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.3g}" if (abs(v) < 1e-3 and v != 0) else f"{v:g}"
    if isinstance(v, np.integer):
        return str(int(v))
    return str(v)
