"""The statistics of one step, by name. The kernels write them into one float array at the
T_* positions of state.py (numba takes flat arrays); this table says what each field is and
how the sub-steps of a step combine, and World.last_step() / RunResult.records() read the
array through it. Times are kept in ns and reported in ms (`<stage>_ms`).

Vocabulary (README "Python API"): a *check* is one visit of a joint or contact row by a
correction loop; an *impulse* (a *correction*, the unit of Schmitt's Table 9.2) is a visit
that applied one; a *cycle* is one sweep of the iterative loop over all rows, or one round
of a global solver; a *halving* is a step taken again as two halves after its position stage
diverged.
"""
import numpy as np

from . import state as S

# name, index into the stats array, unit ("count", "m", "m/s", "N s", "ns"), how the
# sub-steps of a step combine ("sum" or "max")
FIELDS = (
    ("checks", S.T_CHECKS, "count", "sum"),
    ("impulses", S.T_IMPULSES, "count", "sum"),
    ("cycles", S.T_SWEEPS, "count", "sum"),
    ("max_position_error", S.T_RESIDUAL, "m", "max"),
    ("velocity_checks", S.T_VEL_CHECKS, "count", "sum"),
    ("velocity_impulses", S.T_VEL_IMPULSES, "count", "sum"),
    ("max_velocity_error", S.T_VEL_RESIDUAL, "m/s", "max"),
    ("step_halvings", S.T_HALVINGS, "count", "sum"),
    ("budget_hit", S.T_BUDGET_HIT, "count", "sum"),
    ("cap_hit", S.T_CAP_HIT, "count", "sum"),
    ("collisions", S.T_COLLISIONS, "count", "sum"),
    ("contacts", S.T_CONTACTS, "count", "max"),
    ("contact_rows", S.T_ROWS, "count", "max"),
    ("shock_layers", S.T_LAYERS, "count", "max"),
    ("toi_events", S.T_TOI_EVENTS, "count", "sum"),
    ("end_depth", S.T_END_DEPTH, "m", "max"),
    ("contact_depth", S.T_DEPTH, "m", "max"),
    ("contact_impulse", S.T_CONTACT_IMPULSE, "N s", "sum"),
    # the stages' times (engine/step.py), then the kernel's whole step and the contacts' part
    ("detect", S.T_DETECT_NS, "ns", "sum"),
    ("collide", S.T_COLLIDE_NS, "ns", "sum"),
    ("position", S.T_POSITION_NS, "ns", "sum"),
    ("shock", S.T_SHOCK_NS, "ns", "sum"),
    ("advance", S.T_ADVANCE_NS, "ns", "sum"),
    ("velocity", S.T_VELOCITY_NS, "ns", "sum"),
    ("project", S.T_PROJECT_NS, "ns", "sum"),
    ("solve", S.T_SOLVE_NS, "ns", "sum"),
    ("contact", S.T_CONTACT_NS, "ns", "sum"),
)
assert sorted(i for _, i, _, _ in FIELDS) == list(range(S.T_SIZE)), "a stats field is unnamed"

_MAX = np.array([i for _, i, _, how in FIELDS if how == "max"], dtype=np.int64)


def reported_name(name, unit):
    return f"{name}_ms" if unit == "ns" else name


RECORD = np.dtype([(reported_name(n, u), np.float64) for n, _, u, _ in FIELDS])


def as_dict(stats):
    """One step's stats array as {name: value}: counts as int, times in ms."""
    out = {}
    for name, i, unit, _ in FIELDS:
        v = float(stats[i])
        out[reported_name(name, unit)] = v * 1e-6 if unit == "ns" else \
            int(v) if unit == "count" else v
    return out


def records(stats):
    """Stats rows (steps, T_SIZE) as a structured array of RECORD (times in ms)."""
    stats = np.asarray(stats, dtype=np.float64).reshape(-1, S.T_SIZE)
    out = np.zeros(stats.shape[0], dtype=RECORD)
    for name, i, unit, _ in FIELDS:
        out[reported_name(name, unit)] = stats[:, i] * (1e-6 if unit == "ns" else 1.0)
    return out


def merge(total, part):
    """The stats of a step's sub-steps taken together: the largest of the "max" fields, the
    sum of the others."""
    out = total + part
    out[_MAX] = np.maximum(total[_MAX], part[_MAX])
    return out
