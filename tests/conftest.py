import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENES = os.path.join(ROOT, "scenes")


# contact scenes lose energy in inelastic impacts and friction: tests/test_engine_contacts.py
# covers them (the hexapod walks on the tree solver with its contacts as rows around it)
CONTACT_SCENES = {"rod_table.json", "four_balls.json", "box_stack.json", "pyramid.json",
                  "funnel_1000.json", "wall_car.json", "hexapod.json", "chain_drape.json",
                  "newtons_cradle.json", "bouncing_balls.json", "rolling_bodies.json",
                  "tall_tower.json", "spinning_top.json"}


# Scenes made for the tree solver: a chain of holding servos that the Gauss-Seidel rows of
# the iterative and linear solvers converge on only very slowly (issue 3's servo_arm).
TREE_SCENES = {"servo_arm.json"}


def joint_scene_paths():
    """The bundled scenes without contacts (the joint and solver tests run each of them)."""
    import glob
    folder = os.path.join(os.path.dirname(__file__), "..", "scenes")
    return sorted(p for p in glob.glob(os.path.join(folder, "*.json"))
                  if os.path.basename(p) not in CONTACT_SCENES)


def passive(world):
    """True if nothing in the world adds or removes energy on purpose (no motors, joint
    springs' dampers, brakes, spring dampers, external loads, or rolling and torsional
    friction)."""
    if getattr(world, "load_models", None):
        return False
    for jm in world.joint_models + world.spring_models:
        spec = jm.spec
        if "motor" in spec or spec.get("damping", 0) or spec.get("spring", {}).get("damping", 0):
            return False
    return not any(m.material.get("rolling_friction", 0) or m.material.get("torsional_friction", 0)
                   for m in world.models)


# Test lanes (pyproject's markers; README "Test lanes"): `slow` for tests over about 1.5 s
# warm and for the costly cases of sweeps, `gui` for tests that need an X display.
SLOW = pytest.mark.slow


def slow_except(values, *fast):
    """Parametrize values for a sweep (of scenes, steps, solvers...) where only the cases
    named in `fast` stay in the fast lane: every other one, a scene added later too, gets the
    `slow` mark. A case is named by its value (a path also by its file name); a case that is
    a tuple of arguments by its first argument, or by a tuple of its first arguments."""
    return [v if _named(v, fast) else _slow(v) for v in values]


def slow_only(values, *slow):
    """The other way round: only the cases named in `slow` get the `slow` mark."""
    return [_slow(v) if _named(v, slow) else v for v in values]


def _slow(value):
    return pytest.param(*(value if isinstance(value, tuple) else (value,)), marks=SLOW)


def _named(value, names):
    args = value if isinstance(value, tuple) else (value,)
    for name in names:
        first = name if isinstance(name, tuple) else (name,)   # names the first arguments
        if all(_is(a, n) for a, n in zip(args, first, strict=False)):
            return True
    return False


def _is(arg, name):
    return (type(arg) is type(name) and arg == name) or (
        isinstance(arg, str) and os.path.basename(arg) == name)


@pytest.fixture
def scene_path():
    return lambda name: os.path.join(SCENES, name)


@pytest.fixture(scope="session")
def xvfb():
    """One Xvfb for the whole session: pyglet binds the first X display a process uses, so
    in-process windows must all live on the same server, alive until the end."""
    from gui_util import start_xvfb

    proc, name = start_xvfb((1280, 800))
    os.environ["DISPLAY"] = name
    yield name
    proc.terminate()
    proc.wait(timeout=10)


def pytest_sessionstart(session):
    """Compile the physics kernels once, before any test starts a subprocess (which then
    loads numba's cache instead of compiling for minutes): on all cores where the cache
    lacks them (engine/compile_plan.py), then loaded into this process."""
    from impulse.engine.compile_plan import planned_jobs
    from impulse.engine.warmup import warm_up
    warm_up(jobs=planned_jobs())


def pytest_collection_modifyitems(config, items):
    """Test lanes (pyproject's markers): a test that starts Xvfb, through the `xvfb`
    fixture directly or through a fixture built on it (display, app, viewer), is a `gui`
    test even where its module forgot the mark, so `-m "not gui"` never needs a display."""
    for item in items:
        if "xvfb" in getattr(item, "fixturenames", ()) and "gui" not in item.keywords:
            item.add_marker(pytest.mark.gui)
