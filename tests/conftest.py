import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENES = os.path.join(ROOT, "scenes")
sys.path.insert(0, ROOT)


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
