"""Summaries of a run: energy drift, errors, iteration counts, timings (for sim and bench)."""
import numpy as np

from . import state as S


def run_summary(world, result, scene_name, energy_initial):
    """The `impulse sim --json` object for a finished World.run()."""
    st = result.stats
    steps = st.shape[0]
    sim_time = steps * world.settings.h
    corrections = int(st[:, S.T_IMPULSES].sum())
    drift = np.abs(result.energy - energy_initial)
    wall = result.wall_time
    return {
        "scene": scene_name,
        "steps": steps,
        "h": world.settings.h,
        "sim_time": sim_time,
        "wall_time": wall,
        "realtime_factor": sim_time / wall if wall > 0 else float("inf"),
        "corrections": corrections,
        "corrections_per_second": corrections / wall if wall > 0 else float("inf"),
        "iterations_per_step_mean": corrections / steps if steps else 0.0,
        "checks_per_step_mean": float(st[:, S.T_CHECKS].mean()) if steps else 0.0,
        "cycles_per_step_mean": float(st[:, S.T_SWEEPS].mean()) if steps else 0.0,
        "velocity_corrections": int(st[:, S.T_VEL_IMPULSES].sum()),
        "max_position_error": float(st[:, S.T_RESIDUAL].max()) if steps else 0.0,
        "max_velocity_error": float(st[:, S.T_VEL_RESIDUAL].max()) if steps else 0.0,
        "step_halvings": int(st[:, S.T_HALVINGS].sum()),
        "budget_stops": int(st[:, S.T_BUDGET_HIT].sum()),
        "energy_initial": float(energy_initial),
        "energy_final": float(result.energy[-1]),
        "energy_abs_drift_mean": float(drift.mean()),
        "energy_abs_drift_max": float(drift.max()),
    }
