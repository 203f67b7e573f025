"""A first start's physics as Python while the kernels compile (engine/interpreted.py, issue
19): every path a scene, a drag or an edit reaches runs without compiling anything, it moves
bodies as the compiled kernels do, and the compiled kernels take over in the same worlds."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from impulse.engine import interpreted, load_scene
from impulse.engine.scenes_list import resolve_scene

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_it_tells_a_kernel_from_a_function():
    """A kernel is told by numba's `py_func` and `overloads` (numba versions pyproject.toml
    allows); a loud failure here, not a silent compile in the viewer's thread."""
    from impulse.engine import step as stages
    assert interpreted.is_kernel(stages.step) and interpreted.is_kernel(stages.step_with)
    assert not interpreted.is_kernel(stages.step.py_func) and not interpreted.is_kernel(len)


@pytest.mark.slow
def test_nothing_compiles_while_interpreting(tmp_path):
    """With an empty kernel cache and numba's compile made to fail, the warm-up's paths
    (step, drag, edits, contacts, islands, sleeping) and the bundled scenes step: no kernel
    was called as a kernel. (Without interpret() the first step fails here.)"""
    script = tmp_path / "leak.py"
    script.write_text(textwrap.dedent("""
        import sys
        from numba.core import dispatcher
        def refuse(self, *a, **k):
            raise RuntimeError(f"kernel called: {self.py_func.__module__}.{self.py_func.__name__}")
        dispatcher.Dispatcher._compile_for_args = refuse
        dispatcher.Dispatcher.compile = refuse
        from impulse.engine import interpreted, load_scene, warmup
        from impulse.engine.scenes_list import bundled_scenes, resolve_scene
        if sys.argv[1] == "interpret":
            interpreted.interpret()
        warmup.warm_step()
        warmup.warm_interaction()
        warmup.warm_contacts()
        for item in bundled_scenes():
            if item["name"] in ("funnel_1000", "wall_car"):     # minutes as Python
                continue
            w = load_scene(resolve_scene(item["name"]))
            w.step()
            w.step()
        print("stepped every scene")
    """))
    env = {**os.environ, "IMPULSE_KERNEL_CACHE": str(tmp_path / "empty")}
    run = [sys.executable, str(script)]
    out = subprocess.run(run + ["interpret"], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "stepped every scene" in out.stdout
    control = subprocess.run(run + ["as is"], env=env, capture_output=True, text=True,
                             timeout=600)
    assert control.returncode != 0 and "kernel called" in control.stderr


@pytest.fixture
def interpreting():
    interpreted.interpret()
    try:
        yield
    finally:
        interpreted.use_compiled()


def _run(name, steps, h=None):
    w = load_scene(resolve_scene(name))
    if h is not None:
        w.settings.h = h
    for _ in range(steps):
        w.step()
    return w


QUICK = ("pendulum", "newtons_cradle")          # under a second as Python: the fast lane


@pytest.mark.parametrize("name, steps, h", [
    pytest.param(*case, marks=() if case[0] in QUICK else pytest.mark.slow) for case in (
        ("pendulum", 100, None), ("double_pendulum", 200, None), ("chain8", 100, None),
        ("newtons_cradle", 60, None), ("box_stack", 60, None), ("box_stack", 30, 1 / 30),
        ("rolling_bodies", 60, None), ("slider_crank", 100, None), ("spinning_top", 100, None),
        ("tree_31", 30, None))])
def test_python_and_compiled_kernels_move_bodies_alike(name, steps, h):
    """The same scene stepped as Python and compiled ends in the same place: bit for bit in
    most (2026-12-01), within a few ulps in the chain and the tree (the compiled code may
    fuse a multiply and an add)."""
    interpreted.interpret()
    try:
        a = _run(name, steps, h)
    finally:
        interpreted.use_compiled()
    b = _run(name, steps, h)
    assert a.time == pytest.approx(b.time)
    assert np.allclose(a.B.pos, b.B.pos, rtol=0, atol=1e-12), np.abs(a.B.pos - b.B.pos).max()
    assert np.allclose(a.B.vel, b.B.vel, rtol=0, atol=1e-12), np.abs(a.B.vel - b.B.vel).max()


def test_a_world_made_while_interpreting_runs_compiled_after(interpreting):
    w = load_scene(resolve_scene("chain8"))
    w.step()
    assert w._step_kernel.dispatcher.py_func is not None     # it kept the kernel
    t = time.perf_counter()
    w.step()
    python_s = time.perf_counter() - t
    interpreted.use_compiled()
    w.step()                                  # loads from the cache
    t = time.perf_counter()
    w.step()
    compiled_s = time.perf_counter() - t
    assert w._step_kernel._known                # the compiled entry point was called
    assert compiled_s < python_s / 5, (compiled_s, python_s)
    assert not interpreted.active()
