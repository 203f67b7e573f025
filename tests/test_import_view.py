"""`impulse view ROBOT.urdf` opens the imported model (a screenshot under Xvfb in which the
robot covers a good part of the frame: the scene's camera frames it), `impulse view` of a
bad model file says so in one line with exit status 2, a model dropped on the window opens,
and its visual meshes are drawn in place of its collision shapes until the View panel's
toggle turns them off."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from import_corpus import corpus_path
from test_app_gui import app, display, pump  # noqa: F401  (fixtures)

pytest.importorskip("mujoco")
pytestmark = pytest.mark.gui

REPO = Path(__file__).resolve().parent.parent


def impulse(*args, env):
    return subprocess.run([sys.executable, "-m", "impulse.app", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def env(xvfb, tmp_path):
    return {**os.environ, "DISPLAY": xvfb, "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_CONFIG_HOME": str(tmp_path / "config")}


def test_view_a_urdf_model(env, tmp_path):
    import imageio.v3 as iio
    out = tmp_path / "kuka.png"
    r = impulse("-q", "view", corpus_path("kuka_iiwa"), "--screenshot", str(out), "--frames",
                "2", "--paused", "--no-ui", "--size", "480x270", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    img = iio.imread(out)[..., :3].astype(np.int16)
    background = np.array([0.16, 0.18, 0.22]) * 255
    drawn = (np.abs(img - background).sum(axis=2) > 40).mean()
    assert drawn > 0.02                         # the arm, not a speck far away


def test_view_a_bad_model_file(env, tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r"><link name="a"><collision><geometry>'
                   '<mesh filename="gone.stl"/></geometry></collision></link></robot>')
    r = impulse("view", str(bad), "--frames", "1", env=env)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert str(bad) in r.stderr and 'mesh filename="gone.stl"' in r.stderr


def test_dropped_model_opens_without_a_file_of_its_own(app, tmp_path):  # noqa: F811
    notes = tmp_path / "notes.txt"
    notes.write_text("not a model")
    app.on_files([str(notes), corpus_path("kuka_iiwa")])      # the model is picked
    pump(app, 3)
    assert app.errors == [], app.errors
    world = app.session.world
    assert world.meta["source"] == corpus_path("kuka_iiwa") and len(world.joint_names) == 7
    assert app.session.path is None          # Save asks for a name: the URDF stays as it is


def test_visual_meshes_replace_collision_shapes_until_toggled(app):  # noqa: F811
    app.on_files([corpus_path("r2d2")])
    pump(app, 3)
    world, renderer = app.session.world, app.viewer.renderer
    visuals = world.meta["visuals"]
    assert len(visuals) == 16 and {v.body for v in visuals} <= set(world.body_names)
    assert len(renderer.visuals.live()) == 16
    shown = app.viewer.screenshot(with_ui=False).astype(int)
    drawn_ids = {int(i) for r in renderer.shapes.values() for i in r.rows[:, 22]}
    assert not drawn_ids & {world.body_names.index(v.body) for v in visuals}
    app.viewer.options.show_visuals = False                  # the View panel's toggle
    pump(app, 3)
    assert renderer.visuals.live() == []
    hulls = app.viewer.screenshot(with_ui=False).astype(int)
    assert (np.abs(shown - hulls).sum(axis=2) > 30).mean() > 0.005    # the look changed
    app.viewer.options.show_visuals = True
