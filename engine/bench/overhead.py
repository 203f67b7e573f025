"""Python time per step: what a step spends outside the compiled kernels, and how many
kernel calls it makes (issue 21 asks for one compiled call per step and under 5 us of
Python on the box stack).

kernel_clock() wraps, for the length of a `with`, every way a step enters compiled code:
numba's dispatcher call, FastCall (engine/fastcall.py: the step kernel, the detection) and
IslandStep.run (a split step's threads, engine/islands.py), and counts the outermost such
calls and their nanoseconds. A step's Python time is its wall time less those nanoseconds.
The wrappers' own cost (a Python call and two clock reads a kernel call, about 0.3 us) falls
partly on each side, so read the figure to a microsecond or two a call.
"""
import time
import types
from contextlib import contextmanager

import numpy as np

from .. import fastcall, islands
from .. import step as stages

# numba's dispatcher class, taken from a kernel (this module stays out of the kernel cache's
# key, engine/kernel_cache.py, so it imports no numba); a function with NUMBA_DISABLE_JIT
DISPATCHER = type(stages.step)


class KernelClock:
    def __init__(self):
        self.ns = 0          # in the outermost kernel calls, since the last reset
        self.calls = 0
        self._depth = 0

    def wrap(self, call):
        def timed(*args, **kwargs):
            if self._depth:
                return call(*args, **kwargs)
            self._depth += 1
            t0 = time.perf_counter_ns()
            try:
                return call(*args, **kwargs)
            finally:
                self.ns += time.perf_counter_ns() - t0
                self.calls += 1
                self._depth -= 1
        return timed


@contextmanager
def kernel_clock():
    """A KernelClock counting every kernel call made inside the `with` (module docstring)."""
    clock = KernelClock()
    patched = [(fastcall.FastCall, "__call__"), (islands.IslandStep, "run")]
    if DISPATCHER is not types.FunctionType:
        patched.append((DISPATCHER, "__call__"))
    saved = [(getattr(owner, name), name in vars(owner)) for owner, name in patched]
    try:
        for (owner, name), (orig, _) in zip(patched, saved, strict=True):
            setattr(owner, name, clock.wrap(orig))
        yield clock
    finally:
        for (owner, name), (orig, own) in zip(patched, saved, strict=True):
            if own:
                setattr(owner, name, orig)
            else:                 # (inherited: numba's dispatcher call is its C base's)
                delattr(owner, name)


def python_per_step(world, steps):
    """(median Python microseconds, median kernel calls) of the world's next `steps` steps
    (each step's wall time less its time in kernels)."""
    python_us, calls = np.zeros(steps), np.zeros(steps)
    with kernel_clock() as clock:
        for i in range(steps):
            clock.ns = clock.calls = 0
            t0 = time.perf_counter_ns()
            world.step()
            python_us[i] = (time.perf_counter_ns() - t0 - clock.ns) / 1e3
            calls[i] = clock.calls
    return float(np.median(python_us)), float(np.median(calls))
