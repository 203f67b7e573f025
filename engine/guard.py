"""The finite-state guard at step boundaries: a body whose state is NaN, infinite or beyond
RUNAWAY (it left any sensible world) is never handed to collision detection or to the next
step. World.step checks before detection and after the kernel; a body that fails is stopped
where it last was good (made fixed, velocities zeroed) and reported as a Problem.
"""
from dataclasses import dataclass

import numpy as np
from numba import njit

# |coordinate|, |velocity| [m, m/s, rad/s] beyond this: a failure (MuJoCo's mjMAXVAL)
RUNAWAY = 1e10


@dataclass
class Problem:
    """A body stopped by the guard: at which step (World.steps_taken), time and why."""
    step: int
    time: float
    body: str
    reason: str

    def line(self):
        return f"step {self.step} (t = {self.time:.6g} s): body {self.body!r} {self.reason}; " \
               f"it was stopped and fixed"


@njit(cache=True)
def bad_bodies(pos, rot, vel, omega, static, out):
    """Writes into out[:k] the dynamic bodies whose state is not finite or beyond RUNAWAY
    (rotation entries beyond 2); returns k. NaN fails every comparison, so `not (x <= L)`."""
    k = 0
    for b in range(pos.shape[0]):
        if static[b]:
            continue
        ok = True
        for i in range(3):
            if not (abs(pos[b, i]) <= RUNAWAY and abs(vel[b, i]) <= RUNAWAY
                    and abs(omega[b, i]) <= RUNAWAY):
                ok = False
            for j in range(3):
                if not (abs(rot[b, i, j]) <= 2.0):
                    ok = False
        if not ok:
            out[k] = b
            k += 1
    return k


@njit(cache=True)
def check_and_keep(pos, rot, vel, omega, static, out, good_pos, good_rot):
    """bad_bodies at a step's start, and where none is bad the poses kept as the step's good
    ones (good_pos, good_rot: where the guard puts back a body it stops); one call."""
    k = bad_bodies(pos, rot, vel, omega, static, out)
    if k == 0:
        good_pos[:] = pos
        good_rot[:] = rot
    return k


def zero_non_finite(*arrays):
    """Replace NaN/inf entries by 0 in place (impulse accumulators, warm starts)."""
    for a in arrays:
        if a is not None and a.size and not np.isfinite(a).all():
            a[~np.isfinite(a)] = 0.0
