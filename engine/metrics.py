"""Summaries of a run: energy drift, errors, iteration counts, timings (for sim and bench)."""
import numpy as np

from . import state as S


def contact_columns(stats):
    """Per-step contact figures of World.run()'s stats rows (steps, T_SIZE), by name: the
    `--contact-columns` of a trajectory; run_summary reports their maxima and sums."""
    return {
        "contact_rows": stats[:, S.T_ROWS],
        "collisions": stats[:, S.T_COLLISIONS],
        "contact_depth": stats[:, S.T_DEPTH],
        "shock_layers": stats[:, S.T_LAYERS],
        "cap_hit": ((stats[:, S.T_BUDGET_HIT] > 0) | (stats[:, S.T_CAP_HIT] > 0)).astype(int),
        "toi_events": stats[:, S.T_TOI_EVENTS],
        "contact_impulse": stats[:, S.T_CONTACT_IMPULSE],
    }


def run_summary(world, result, scene_name, energy_initial):
    """The `impulse sim --json` object for a finished World.run()."""
    st = result.stats
    steps = st.shape[0]
    sim_time = steps * world.settings.h
    corrections = int(st[:, S.T_IMPULSES].sum())
    drift = np.abs(result.energy - energy_initial)
    wall = result.wall_time
    c = contact_columns(st)
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
        "contact_depth_max": float(c["contact_depth"].max(initial=0.0)),
        "contact_rows_max": int(c["contact_rows"].max(initial=0)),
        "collisions_max": int(c["collisions"].max(initial=0)),
        "shock_layers_max": int(c["shock_layers"].max(initial=0)),
        "cap_steps": int(c["cap_hit"].sum()),
        "toi_events": int(c["toi_events"].sum()),
        "contact_impulse_total": float(c["contact_impulse"].sum()),
        "settings": world.settings.to_dict(),
    }
