"""The viewer when the engine's finite-state guard stops a body (issue 17.1): a Problems
entry naming the body and the step, and the app keeps running."""
import numpy as np
import pytest

from gui_util import wait_until
from test_app_gui import app, display, open_scene, pump, run_steps  # noqa: F401  (fixtures)

pytestmark = pytest.mark.gui   # the desktop app under Xvfb (test lanes: pyproject markers)


def test_a_body_that_goes_non_finite_is_stopped_and_listed(app, scene_path):  # noqa: F811
    open_scene(app, scene_path("box_stack.json"))
    world = app.session.world
    b = next(i for i, m in enumerate(world.models) if not m.static)
    name = world.models[b].name
    app.session.loop.when_idle(lambda: world.body_vel.__setitem__(b, np.nan))
    run_steps(app, 3)
    pump(app, 2)
    assert any(f"body {name!r}" in e and "stopped" in e for e in app.errors), app.errors
    assert np.isfinite(world.body_pos).all() and world.body_static[b]
    img = app.viewer.screenshot()
    red_title = (img[..., 0] > 140) & (img[..., 1] < 50) & (img[..., 2] < 50)
    assert red_title.sum() > 500                         # the Problems window is on screen
    t = world.time
    app.session.loop.paused = False
    assert wait_until(lambda: world.time > t + 0.05, lambda: pump(app))   # still running
    assert len([e for e in app.errors if "stopped" in e]) == 1            # listed once
