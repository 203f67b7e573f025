"""bench/overhead.py: the Python time and the kernel calls of a step."""
import os

from numba.core.registry import CPUDispatcher

from impulse.engine import fastcall, islands
from impulse.engine.bench.overhead import kernel_clock, python_per_step
from impulse.engine.scene import load_scene
from impulse.engine.scenes_list import SCENES_DIR


def test_a_contact_step_is_counted_kernel_by_kernel_and_the_wrappers_go_away():
    w = load_scene(os.path.join(SCENES_DIR, "box_stack.json"))
    w.settings.sleeping = False
    w.step()
    w.step()     # (the first step in one call makes its FixedArgs: one more call)
    before = (vars(fastcall.FastCall)["__call__"], vars(islands.IslandStep)["run"])
    with kernel_clock() as clock:
        w.step()
        assert clock.calls == 1          # a resting stack: one call (engine/contact_step.py)
        assert clock.ns > 0
        calls = clock.calls
        w.step()
        assert clock.calls == 2 * calls  # the same kernels each step of a resting stack
    assert "__call__" not in vars(CPUDispatcher)
    assert (vars(fastcall.FastCall)["__call__"], vars(islands.IslandStep)["run"]) == before
    python_us, per_step = python_per_step(w, 5)
    assert per_step == calls
    assert 0.0 < python_us < 1e5


def test_a_fast_call_through_the_dispatcher_is_one_call():
    """A FastCall's first call goes through numba's dispatcher: one kernel call, not two."""
    import numpy as np
    from numba import njit

    @njit
    def twice(x):
        return 2.0 * x[0]

    call = fastcall.FastCall(twice, loose=(0,))
    with kernel_clock() as clock:
        assert call(np.ones(1)) == 2.0        # compiles: FastCall -> dispatcher
        assert call(np.ones(1)) == 2.0        # the remembered entry point
        assert twice(np.ones(1)) == 2.0       # the dispatcher alone
    assert clock.calls == 3
