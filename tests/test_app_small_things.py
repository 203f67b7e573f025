"""Small things a newcomer notices (issue 18.6): the first click after a tool button reaches
the view; contact depths in words; scenes that open paused when asked."""
import math
import os

import pytest

from app_scenes import two_boxes
from gui_util import xdotool
from test_app_gui import app, click_button, display, open_scene, project, pump, screen, write  # noqa: F401


def xdo(*args):
    xdotool(os.environ["DISPLAY"], *args)


@pytest.mark.gui
def test_the_first_click_after_a_tool_button_reaches_the_view(app, tmp_path):  # noqa: F811
    open_scene(app, write(tmp_path, "two.json", two_boxes()))
    w = app.session.world
    a = w.body_index("a")
    click_button(app, "joint.start")
    assert app.joint_tool.active and app.joint_tool.first is None
    assert app.viewer.ui.want_mouse                 # the UI still has the mouse ...
    xdo("mousemove", *screen(app, *project(app, w.body_pos[a])))
    xdo("click", "1")                               # ... when the click comes: no frame between
    pump(app, 3)
    assert app.joint_tool.first is not None and app.joint_tool.first[0] == "a"


@pytest.mark.gui
def test_a_click_on_a_panel_stays_the_panels(app, tmp_path):  # noqa: F811
    open_scene(app, write(tmp_path, "two.json", two_boxes()))
    app.selection = None
    from impulse.app.ui.widgets import rects
    x0, y0, x1, y1 = rects["joint.start"]
    wx, wy = app.viewer.window.get_location()
    xdo("mousemove", str(int(wx + x1 + 5)), str(int(wy + y0 + 2)))      # the panel, no button
    pump(app, 2)
    xdo("click", "1")
    pump(app, 3)
    assert app.selection is None and app.viewer.controller.mode is None


@pytest.mark.gui
def test_open_scenes_paused_when_asked(app, scene_path):  # noqa: F811
    app.open_paused = True
    app.open_path(scene_path("pendulum.json"))
    pump(app, 3)
    t = app.session.world.time
    pump(app, 10)
    assert app.session.loop.paused and app.session.world.time == t
    app.open_paused = False
    app.open_path(scene_path("box_stack.json"))
    pump(app, 3)
    assert not app.session.loop.paused


def test_contact_depths_in_words():
    from impulse.app.ui.contacts_panel import depth_text
    assert depth_text(-1e-9) == depth_text(0.0) == depth_text(4e-6) == "touching"
    assert depth_text(2.5e-4) == "overlap 0.25 mm"
    assert depth_text(-3e-3) == "gap 3.00 mm"


@pytest.mark.parametrize("mat", [{}, {"static_friction": 0.8}, {"restitution": 0.4},
                                 {"static_friction": 0.9, "dynamic_friction": 0.3},
                                 {"rolling_friction": 0.01, "torsional_friction": 0.002}])
def test_the_inspector_shows_the_material_values_in_force(mat):
    """The Inspector's material fields show what the engine uses (its defaults where the
    file has none), not numbers of their own."""
    from types import SimpleNamespace

    from impulse.app.ui.inspector import MATERIAL_FIELDS, material_in_effect
    from impulse.engine.contacts.system import material_of

    shown = material_in_effect(mat)
    assert list(shown) == list(MATERIAL_FIELDS)
    assert tuple(shown.values()) == material_of(SimpleNamespace(material=mat))


def test_the_inspector_shows_rounding_dust_in_a_rotation_as_zero():
    """A body's orientation a rounding error off identity reads 0.0 degrees, not -0.0."""
    from impulse.app.ui.inspector import quat_to_euler_deg
    angles = quat_to_euler_deg([1.0, -1e-17, 0.0, 0.0])
    assert angles == [0.0, 0.0, 0.0] and f"{angles[0]:.1f}" == "0.0"
    assert quat_to_euler_deg([math.cos(0.25), 0.0, math.sin(0.25), 0.0])[1] == \
        pytest.approx(math.degrees(0.5))
