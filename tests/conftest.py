import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENES = os.path.join(ROOT, "scenes")
sys.path.insert(0, ROOT)


@pytest.fixture
def scene_path():
    return lambda name: os.path.join(SCENES, name)
