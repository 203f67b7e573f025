"""Panels and plots that fit (issue 18.2): at 1280x720 and 1920x1080 no panel cuts its text
(ImGui's ideal content width of each window fits inside it), plots are at least PLOT_MIN_H
high, log plots get decade limits, and the arrangement is kept in the user's config dir."""
import numpy as np
import pytest

from test_app_gui import display, pump  # noqa: F401  (fixture)

pytestmark = pytest.mark.gui   # the desktop app under Xvfb (test lanes: pyproject markers)

PANELS = ("Scene", "Inspector", "Solver", "Stats", "Tools", "Contacts", "Timeline")


@pytest.fixture(params=[(1280, 720), (1920, 1080)], ids=["720p", "1080p"])
def sized_app(request, display, tmp_path, monkeypatch):  # noqa: F811
    from impulse.app.app import App
    from impulse.app.window import Viewer
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))   # no saved layout yet
    v = Viewer(None, *request.param, vsync=False)
    a = App(v, media_dir=str(display[1]))
    yield a
    a.close()
    v.close()


def windows():
    from imgui_bundle import imgui
    return {w.name: w for w in imgui.get_current_context().windows if w.active and not w.hidden}


@pytest.mark.parametrize("selection", [None, "body", "joint"])
def test_no_panel_cuts_its_text(sized_app, scene_path, selection):
    a = sized_app
    assert a._open(scene_path("servo_arm.json" if selection == "joint" else "box_stack.json"))
    a.panels["contacts"] = True
    a.panels["stats"] = True
    w = a.session.world
    if selection == "body":
        a.selection = ("body", w.body_names[-1])
    elif selection == "joint":
        a.selection = ("joint", w.joint_names[0])
    pump(a, 40)
    shown = windows()
    for name in PANELS:
        assert name in shown, f"{name} not drawn"
        win = shown[name]
        inner = win.inner_rect.max.x - win.inner_rect.min.x
        assert win.content_size_ideal.x <= inner + 1, \
            f"{name}: content {win.content_size_ideal.x:.0f} px in {inner:.0f} px"


def test_plots_have_a_usable_height_and_log_ticks(sized_app, scene_path):
    from impulse.app.ui import stats_panel
    a = sized_app
    assert a._open(scene_path("chain8.json"))
    a.panels["stats"] = True
    pump(a, 60)
    assert stats_panel.plot_heights["energy [J]"] >= stats_panel.PLOT_MIN_H
    lo, hi = stats_panel.decades([np.full(10, 1e-16), np.array([3e-7, 2e-5])])
    assert (lo, hi) == (1e-7, 1e-4)
    assert stats_panel.decades([np.zeros(5)]) == (1e-16, 1e-14)


def test_the_layout_is_kept_in_the_config_dir(sized_app):
    a = sized_app
    pump(a, 3)
    from imgui_bundle import imgui
    imgui.save_ini_settings_to_disk(str(a.viewer.ui.ini_path))
    assert a.viewer.ui.ini_path.parent.name == "impulse"
    assert "[Window][" in a.viewer.ui.ini_path.read_text()


@pytest.mark.parametrize("missed", [False, True], ids=["all met", "tolerances missed"])
def test_stats_fit_without_scrolling(sized_app, scene_path, missed):
    """The Stats panel's content, with the orange "tol. missed" line where steps missed,
    fits inside the window's padding: the "Cycles and errors" header below the plot is not
    cut by the bottom bar (it was, by half its height, at 1280x720: the plot kept 140 px)."""
    from imgui_bundle import imgui

    from impulse.app.ui import stats_panel
    a = sized_app
    assert a._open(scene_path("box_stack.json"))
    if missed:
        a.session.tolerance.missed = a.session.tolerance.steps = 3
    pump(a, 40)
    assert a.session.loop.last_batch is not None      # the physics ran
    win = windows()["Stats"]
    room = win.inner_rect.max.y - win.inner_rect.min.y - 2 * imgui.get_style().window_padding.y
    assert win.content_size_ideal.y <= room + 1, \
        f"Stats: content {win.content_size_ideal.y:.0f} px in {room:.0f} px"
    assert stats_panel.plot_heights["energy [J]"] >= stats_panel.PLOT_MIN_H


def test_reset_layout_puts_panels_back(sized_app, scene_path):
    from imgui_bundle import imgui

    from impulse.app.ui.layout import rect, reset_layout
    a = sized_app
    assert a._open(scene_path("pendulum.json"))
    pump(a, 3)
    width, height = a.viewer.window.width, a.viewer.window.height
    imgui.set_current_context(a.viewer.ui.context)
    tools = windows()["Tools"]
    assert (tools.pos.x, tools.pos.y) == pytest.approx(rect("tools", width, height)[:2], abs=1)
    tools.pos = imgui.ImVec2(500, 300)                   # the user moved it
    pump(a, 2)
    assert windows()["Tools"].pos.x == 500
    reset_layout()
    pump(a, 3)
    assert (windows()["Tools"].pos.x, windows()["Tools"].pos.y) == \
        pytest.approx(rect("tools", width, height)[:2], abs=1)


def test_linear_plots_keep_flat_and_extreme_lines_inside_the_plot():
    from impulse.app.ui import stats_panel
    lo, hi = stats_panel.padded([np.zeros(5), np.full(5, 16.0)])      # asleep: KE 0, PE 16
    assert lo < 0.0 and hi > 16.0 and hi - 16.0 == pytest.approx(0.08 * 16.0)
    lo, hi = stats_panel.padded([np.full(5, 33.0)])                   # one flat line
    assert lo < 33.0 < hi
    assert stats_panel.padded([np.array([np.nan])]) == (0.0, 1.0)
