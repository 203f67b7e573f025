"""Screenshots and videos (issue 18.5): F12 and F9 take the same content (the panels, unless
View > "Pictures and videos include the panels" is off; Shift takes the other), written to
the user's Pictures / Videos folders, and the status line says where."""
import os

import imageio.v3 as iio
import numpy as np
import pytest

from gui_util import wait_until, xdotool
from test_app_gui import app, display, open_scene, pump  # noqa: F401  (fixtures)

pytestmark = pytest.mark.gui   # the desktop app under Xvfb (test lanes: pyproject markers)


def xdo(*args):
    xdotool(os.environ["DISPLAY"], *args)


def panel_pixels(img):
    """The Scene panel's area (top left)."""
    return img[40:200, 5:200].astype(int)


def test_f12_and_shift_f12_choose_the_panels_and_go_to_pictures(app, scene_path,  # noqa: F811
                                                                 tmp_path, monkeypatch):
    import impulse.app.app as app_module
    monkeypatch.setattr(app_module, "pictures_dir", lambda: tmp_path / "Pictures")
    monkeypatch.setattr(app, "media_dir", None)
    open_scene(app, scene_path("box_stack.json"))
    app.status = ""
    xdo("mousemove", "500", "320")
    xdo("key", "F12")
    assert wait_until(lambda: "screenshot" in app.status, lambda: pump(app))
    shots = sorted((tmp_path / "Pictures" / "impulse").glob("impulse-shot-*.png"))
    assert len(shots) == 1 and str(shots[0]) in app.status and "with panels" in app.status
    xdo("key", "shift+F12")
    assert wait_until(lambda: len(list((tmp_path / "Pictures" / "impulse").glob("*.png"))) == 2,
                      lambda: pump(app))
    assert "without panels" in app.status
    with_ui = iio.imread(shots[0])[..., :3]
    second = [p for p in (tmp_path / "Pictures" / "impulse").glob("*.png") if p != shots[0]][0]
    without = iio.imread(second)[..., :3]
    assert with_ui.shape == without.shape
    # the panels are in one and not in the other: the Scene panel's corner differs a lot
    diff = np.abs(panel_pixels(with_ui) - panel_pixels(without)).sum(axis=2)
    assert (diff > 8).mean() > 0.9 and (diff > 60).mean() > 0.05    # panel and its text
    # the View menu's switch turns the default around
    app.capture_panels = False
    path = app.screenshot(tmp_path / "default.png")
    assert "without panels" in app.status
    img = iio.imread(path)[..., :3]
    assert (np.abs(panel_pixels(img) - panel_pixels(without)).sum(axis=2) > 8).mean() < 0.05


def test_f9_records_the_same_content_to_videos(app, scene_path, tmp_path,  # noqa: F811
                                               monkeypatch):
    import impulse.app.app as app_module
    monkeypatch.setattr(app_module, "videos_dir", lambda: tmp_path / "Videos")
    monkeypatch.setattr(app, "media_dir", None)
    app.capture_panels = True
    open_scene(app, scene_path("pendulum.json"), paused=False)
    xdo("key", "F9")
    assert wait_until(lambda: app.recorder.active, lambda: pump(app))
    assert "recording to" in app.status and app.recording_panels
    pump(app, 6)
    xdo("key", "F9")
    assert wait_until(lambda: not app.recorder.active, lambda: pump(app))
    videos = list((tmp_path / "Videos" / "impulse").glob("impulse-video-*.mp4"))
    assert len(videos) == 1 and str(videos[0]) in app.status
    assert videos[0].stat().st_size > 1000
