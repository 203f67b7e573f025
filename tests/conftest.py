import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENES = os.path.join(ROOT, "scenes")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def scene_path():
    return lambda name: os.path.join(SCENES, name)


@pytest.fixture(scope="session")
def xvfb_display():
    """One Xvfb for the whole session: pyglet keeps its X connection open after a window
    closes, and Xlib ends the process if that server goes away before the process does."""
    from gui_util import start_xvfb
    proc, name = start_xvfb((1280, 800))
    yield name
    proc.terminate()
    proc.wait(timeout=10)
