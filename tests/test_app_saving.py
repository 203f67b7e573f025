"""Saving in the viewer keeps what the user opened (issue 18.3): a bundled scene is never
overwritten, Save asks where to put a copy (the documents folder), Save writes the scene as
it starts, Save state as writes this moment."""
import json
import os

import numpy as np
import pytest

from gui_util import wait_until, xdotool
from test_app_gui import app, display, open_scene, pump, run_steps  # noqa: F401  (fixtures)

pytestmark = pytest.mark.gui   # the desktop app under Xvfb (test lanes: pyproject markers)


def xdo(*args):
    xdotool(os.environ["DISPLAY"], *args)


def test_ctrl_s_on_a_bundled_scene_asks_for_a_copy_in_documents(app, scene_path,  # noqa: F811
                                                                 tmp_path, monkeypatch):
    import impulse.app.app as app_module
    monkeypatch.setattr(app_module, "documents_dir", lambda: tmp_path / "Documents")
    path = scene_path("box_stack.json")
    before = open(path, "rb").read()
    open_scene(app, path)
    run_steps(app, 20)
    xdo("key", "ctrl+s")
    assert wait_until(lambda: app.dialogs.kind == "path", lambda: pump(app))
    assert app.dialogs.path == str(tmp_path / "Documents" / "box_stack.json")
    assert open(path, "rb").read() == before
    # the copy: the scene as it starts, next to nothing of the run
    (tmp_path / "Documents").mkdir()
    app.dialogs.close()
    pump(app, 2)
    assert app._save_to(app.dialogs.path)
    assert app.session.path == str(tmp_path / "Documents" / "box_stack.json")
    saved = json.loads((tmp_path / "Documents" / "box_stack.json").read_text())
    original = json.loads(before)
    assert "state" not in saved
    for a, b in zip(saved["bodies"], original["bodies"], strict=True):
        assert np.allclose(a["position"], b.get("position", [0, 0, 0]), atol=1e-12)
    assert open(path, "rb").read() == before
    # Save state as: this moment, next to the copy; the open file stays the copy
    state_path = app._default_path("-state")
    assert state_path == str(tmp_path / "Documents" / "box_stack-state.json")
    assert app._save_state_to(state_path)
    st = json.loads(open(state_path).read())["state"]
    assert st["time"] == app.session.world.time > 0
    assert app.session.path.endswith("box_stack.json")
