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


def unmet_steps(stats, eps_pos, eps_vel):
    """(steps,) bool: steps that ended with a tolerance unmet: a joint gap above eps_pos or a
    joint velocity error above eps_vel (with 0.1 % slack for rounding), or a loop that
    stopped on its cycle cap or time budget (T_BUDGET_HIT). NaN counts as unmet."""
    met = (stats[:, S.T_RESIDUAL] <= eps_pos * 1.001) & \
        (stats[:, S.T_VEL_RESIDUAL] <= eps_vel * 1.001) & (stats[:, S.T_BUDGET_HIT] == 0)
    return ~met


class RunTally:
    """The figures of a run taken in parts (World.run chunks): memory stays bounded however
    long the run. add() each part's RunResult; summary() gives the `impulse sim --json`
    object."""

    _SUMS = {"corrections": S.T_IMPULSES, "checks": S.T_CHECKS, "cycles": S.T_SWEEPS,
             "velocity_corrections": S.T_VEL_IMPULSES, "step_halvings": S.T_HALVINGS,
             "budget_stops": S.T_BUDGET_HIT}

    def __init__(self, energy_initial):
        self.e0 = float(energy_initial)
        self.steps = 0
        self.wall = 0.0
        self.sums = dict.fromkeys(self._SUMS, 0.0)
        self.max_pos = self.max_vel = 0.0
        self.drift_sum, self.drift_max, self.drift_count = 0.0, 0.0, 0
        self.energy_final = self.e0
        self.contact_max = {"contact_depth": 0.0, "contact_rows": 0, "collisions": 0,
                            "shock_layers": 0}
        self.contact_sum = {"cap_hit": 0, "toi_events": 0, "contact_impulse": 0.0}
        self.unmet = 0
        self.first_unmet = None

    def add(self, result, eps_pos, eps_vel):
        st = result.stats
        n = st.shape[0]
        if n == 0:
            return
        for k, col in self._SUMS.items():
            self.sums[k] += float(st[:, col].sum())
        self.max_pos = _nanmax(self.max_pos, st[:, S.T_RESIDUAL])
        self.max_vel = _nanmax(self.max_vel, st[:, S.T_VEL_RESIDUAL])
        energy = result.energy if self.steps == 0 else result.energy[1:]
        drift = np.abs(energy - self.e0)
        self.drift_sum += float(drift.sum())
        self.drift_count += drift.size
        self.drift_max = _nanmax(self.drift_max, drift)
        self.energy_final = float(result.energy[-1])
        c = contact_columns(st)
        for k in self.contact_max:
            self.contact_max[k] = _nanmax(self.contact_max[k], c[k])
        for k in self.contact_sum:
            self.contact_sum[k] += float(c[k].sum())
        bad = unmet_steps(st, eps_pos, eps_vel)
        if bad.any() and self.first_unmet is None:
            self.first_unmet = self.steps + int(np.argmax(bad)) + 1
        self.unmet += int(bad.sum())
        self.steps += n
        self.wall += result.wall_time

    def summary(self, world, scene_name):
        steps, wall = self.steps, self.wall
        sim_time = steps * world.settings.h
        corrections = int(self.sums["corrections"])
        per_step = (lambda x: x / steps) if steps else (lambda x: 0.0)
        return {
            "scene": scene_name,
            "steps": steps,
            "h": world.settings.h,
            "sim_time": sim_time,
            "wall_time": wall,
            "realtime_factor": sim_time / wall if wall > 0 else None,
            "corrections": corrections,
            "corrections_per_second": corrections / wall if wall > 0 else None,
            "corrections_per_step_mean": per_step(corrections),
            "checks_per_step_mean": per_step(self.sums["checks"]),
            "cycles_per_step_mean": per_step(self.sums["cycles"]),
            "velocity_corrections": int(self.sums["velocity_corrections"]),
            "max_position_error": self.max_pos,
            "max_velocity_error": self.max_vel,
            "step_halvings": int(self.sums["step_halvings"]),
            "budget_stops": int(self.sums["budget_stops"]),
            "tolerance_unmet_steps": self.unmet,
            "first_unmet_step": self.first_unmet,
            "energy_initial": self.e0,
            "energy_final": self.energy_final,
            "energy_abs_drift_mean": self.drift_sum / self.drift_count if self.drift_count
            else 0.0,
            "energy_abs_drift_max": self.drift_max,
            "contact_depth_max": float(self.contact_max["contact_depth"]),
            "contact_rows_max": _count(self.contact_max["contact_rows"]),
            "collisions_max": _count(self.contact_max["collisions"]),
            "shock_layers_max": _count(self.contact_max["shock_layers"]),
            "cap_steps": int(self.contact_sum["cap_hit"]),
            "toi_events": int(self.contact_sum["toi_events"]),
            "contact_impulse_total": self.contact_sum["contact_impulse"],
            "stopped_bodies": [{"body": p.body, "step": p.step, "time": p.time,
                                "reason": p.reason} for p in world.problems],
            "settings": world.settings.to_dict(),
        }


def _count(x):
    return int(x) if np.isfinite(x) else None


def _nanmax(current, values):
    """max(current, values...) where any NaN makes the result NaN (a figure that was not
    finite must not read as 0 or as a small error)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return current
    if not np.isfinite(values).all() or not np.isfinite(current):
        return float("nan") if np.isnan(values).any() or np.isnan(current) else float("inf")
    return max(current, float(values.max()))


def run_summary(world, result, scene_name, energy_initial):
    """The `impulse sim --json` object for one finished World.run()."""
    tally = RunTally(energy_initial)
    tally.add(result, world.settings.eps_pos, world.settings.eps_vel)
    return tally.summary(world, scene_name)
