import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENES = os.path.join(ROOT, "scenes")
sys.path.insert(0, ROOT)


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
    springs' dampers, brakes, or spring dampers)."""
    for jm in world.joint_models + world.spring_models:
        spec = jm.spec
        if "motor" in spec or spec.get("damping", 0) or spec.get("spring", {}).get("damping", 0):
            return False
    return True


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
    """Compile the physics kernels once, in this process, before any test starts a
    subprocess (which then loads numba's cache instead of compiling for minutes)."""
    from engine.warmup import warm_up
    warm_up()
