"""Simulation settings of a scene (the `settings` object of a scene file)."""
import logging
import warnings
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from . import state as S
from .solvers import SOLVERS

log = logging.getLogger(__name__)

# settings renamed to the README glossary's words (a cycle is one sweep of the loop over its
# rows, or one round of a global solver): old name -> new name. Scene files, --set, --vary
# and Python attributes with an old name still work, with a warning.
RENAMED = {"max_iterations": "max_cycles", "contact_sweeps": "contact_cycles"}


def current_name(key, where=None):
    """A settings key under its current name; an old name is mapped, with a warning that
    names where it was read (a file, an option), if given."""
    new = RENAMED.get(key)
    if new is None:
        return key
    if where:
        log.warning("%s: setting '%s' is now called '%s' (read as it)", where, key, new)
    return new


def upgrade_settings(settings, where):
    """Rename old keys of a scene's `settings` object in place (a warning each; where both
    names are given the new one wins)."""
    if not isinstance(settings, dict):
        return
    for old, new in RENAMED.items():
        if old in settings:
            value = settings.pop(old)
            current_name(old, f"{where}: $.settings.{old}")
            settings.setdefault(new, value)


@dataclass
class Settings:
    h: float = 0.01                        # time step [s]
    gravity: list = field(default_factory=lambda: [0.0, -9.81, 0.0])
    solver: str = "iterative"
    eps_pos: float = 1e-5                  # Dmax: joint position tolerance [m]
    eps_vel: float = 1e-4                  # Vmax: joint velocity tolerance [m/s]
    max_cycles: int = 500                  # cap on correction cycles per step
    time_budget_ms: float = 0.0            # wall-time budget of the correction loop; 0 = none
    taylor_order: int = 4                  # order of the rotation series
    velocity_correction: bool = True       # P-step 4
    max_halvings: int = 4                  # step halvings allowed when the iteration diverges
    spring_mode: str = "approximate"       # or "iterated"
    restitution_law: str = "newton"        # collisions: "newton" (velocity) or "poisson"
    restitution_threshold: float = 0.05    # approach speed [m/s] below which e is taken as 0
    contact_margin: float = 0.01           # detection margin [m]: contacts this far apart
    shock_passes: int = -1                 # shock propagation: most layers (-1 = all the
                                           # contact graph has; 0 = off)
    contact_cycles: int = 10               # cycles in which contacts keep the loops going;
                                           # cycle cap of the collision and shock passes
    contact_tolerance: float = 1e-5        # contacts: position change [m] that needs a cycle
    sleeping: bool = True                  # islands at rest sleep (engine/sleeping.py)
    sleep_time: float = 0.5                # [s] still this long before an island sleeps
    sleep_speed: float = 0.03              # [m/s] fastest point speed counted as still
    sleep_drift: float = 1e-3              # [m] a still body's fastest point may move this
                                           # far from where its still time began
    islands: bool = True                   # big islands run their own loops, on all
                                           # cores (engine/islands.py)
    extrapolate: bool = False              # Schmitt sec. 8: h and 2 x h/2, extrapolated
                                           # (engine/extrapolation.py)
    relaxation: float = 0.0                # iterative loops: joint corrections times this
                                           # factor; 0 = adapted to a slow loop, 1 = plain
                                           # Gauss-Seidel (solvers/relaxation.py)
    warm_start: bool = True                # iterative velocity stage: the joints' last
                                           # correction as the first guess
                                           # (joints/warm_start.py)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name != "_template":
            object.__setattr__(self, "_template", None)     # to_array builds it anew

    def to_array(self, h_prev, time=0.0, relax_prev=0.0):
        """The kernels' settings array (state.S_*). Built once and copied while no field is
        set and the gravity list holds the same values (filling it read 25 attributes, 4 us
        a step, a sixth of the box stack's Python)."""
        t = getattr(self, "_template", None)
        if t is None or t[1] != list(self.gravity):    # (a list may change in place)
            t = (self._fill(), list(self.gravity))
            object.__setattr__(self, "_template", t)
        a = t[0].copy()
        a[S.S_RELAX_PREV] = relax_prev
        a[S.S_H_PREV] = h_prev
        a[S.S_TIME] = time
        return a

    def _fill(self):
        a = np.zeros(S.S_SIZE)
        a[S.S_H] = self.h
        a[S.S_EPS_POS] = self.eps_pos
        a[S.S_EPS_VEL] = self.eps_vel
        a[S.S_MAX_CYCLES] = self.max_cycles
        a[S.S_BUDGET_NS] = self.time_budget_ms * 1e6
        a[S.S_ORDER] = self.taylor_order
        a[S.S_VEL_CORR] = 1.0 if self.velocity_correction else 0.0
        a[S.S_MAX_HALVINGS] = self.max_halvings
        a[S.S_SPRING_ITERATED] = 1.0 if self.spring_mode == "iterated" else 0.0
        a[S.S_GX:S.S_GX + 3] = self.gravity
        a[S.S_SOLVER] = SOLVERS.index(self.solver)
        a[S.S_RESTITUTION_LAW] = (S.RESTITUTION_POISSON if self.restitution_law == "poisson"
                                  else S.RESTITUTION_NEWTON)
        a[S.S_REST_SPEED] = self.restitution_threshold
        a[S.S_SHOCK_PASSES] = self.shock_passes
        a[S.S_CONTACT_CYCLES] = self.contact_cycles
        a[S.S_CONTACT_TOL] = self.contact_tolerance
        a[S.S_TOI] = 1.0
        a[S.S_RELAX] = self.relaxation
        a[S.S_WARM] = 1.0 if self.warm_start else 0.0
        a[S.S_SPRING_SYNC] = 1.0 if self.extrapolate and self.spring_mode == "approximate" \
            else 0.0
        return a

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        """Settings from a scene's `settings` (validated): integer fields become int (a
        JSON 4.0 is the integer 4), number fields float."""
        kinds = {f.name: f.type for f in fields(cls)}
        out = {}
        for k, v in d.items():
            k = current_name(k, "settings")
            if k in kinds:
                out[k] = int(v) if kinds[k] is int else float(v) if kinds[k] is float else v
        return cls(**out)


def _renamed(old):
    new = RENAMED[old]

    def get(self):
        warnings.warn(f"Settings.{old} is now Settings.{new}", DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    def set(self, value):
        warnings.warn(f"Settings.{old} is now Settings.{new}", DeprecationWarning, stacklevel=2)
        setattr(self, new, value)

    return property(get, set, doc=f"old name of {new}")


for _old in RENAMED:
    setattr(Settings, _old, _renamed(_old))
