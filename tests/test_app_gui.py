"""The desktop app in a real window under Xvfb, driven with xdotool and pyglet events.

Fails (never skips) without Xvfb or OpenGL; only the drag physics assertion is skipped
while the engine lacks World.drag_start."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from impulse.app import editor as E

from app_scenes import drag_scene, two_boxes
from gui_util import wait_until, xdotool

pytestmark = pytest.mark.gui   # the desktop app under Xvfb (test lanes: pyproject markers)

W, H = 1024, 640
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def display(xvfb, tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    old = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    os.environ.update(XDG_CACHE_HOME=str(home / "cache"), XDG_CONFIG_HOME=str(home / "config"))
    yield xvfb, home
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def app(display):
    from impulse.app.app import App
    from impulse.app.window import Viewer

    v = Viewer(None, W, H, vsync=False)
    a = App(v, media_dir=str(display[1]))
    yield a
    a.close()
    v.close()


def pump(app, n=1):
    for _ in range(n):
        app.viewer.window.dispatch_events()
        app.viewer.frame()


def run_steps(app, n):
    """n single steps (handed to the physics thread by the next frame), then wait for them."""
    app.session.loop.request_step(n)
    pump(app, 2)
    app.session.loop.sync()


def xdo(*args):
    xdotool(os.environ["DISPLAY"], *args)


def screen(app, x, y):
    """pyglet window coordinates (y up) -> X screen coordinates."""
    wx, wy = app.viewer.window.get_location()
    return str(int(wx + x)), str(int(wy + app.viewer.window.height - 1 - y))


def imgui_screen(app, x, y):
    wx, wy = app.viewer.window.get_location()
    return str(int(wx + x)), str(int(wy + y))


def click_button(app, key):
    from impulse.app.ui.widgets import rects

    assert key in rects, f"button {key!r} was not drawn"
    for _ in range(40):        # below the fold (e.g. a gallery card): wheel down to it
        x0, y0, x1, y1 = rects[key]
        if y1 <= app.viewer.window.height:
            break
        window = app.viewer.window
        xdo("mousemove", *imgui_screen(app, window.width / 2, window.height / 2))
        xdo("click", "5")
        pump(app, 2)
    x0, y0, x1, y1 = rects[key]
    assert y1 <= app.viewer.window.height, f"button {key!r} stays below the window"
    xdo("mousemove", *imgui_screen(app, (x0 + x1) / 2, (y0 + y1) / 2))
    pump(app, 2)
    xdo("click", "1")
    pump(app, 3)


def project(app, point):
    x, y, _ = app.viewer.camera.project(point, *app.viewer.size)
    scale = app.viewer.window.width / app.viewer.size[0]
    return x * scale, y * scale


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def open_scene(app, path, paused=True):
    assert app._open(path), app.errors
    app.session.loop.paused = paused
    pump(app, 3)


def test_launcher_gallery_opens_a_scene(app, display):
    from impulse.app.gallery import scene_entries

    entries = scene_entries()
    assert len(entries) >= 5
    assert wait_until(lambda: app.launcher.thumbnails_done, lambda: pump(app), timeout=60)
    pump(app, 2)
    from impulse.app.ui.widgets import rects

    for e in entries:
        assert f"card.{e.name}" in rects
        assert app.launcher.textures[e.path] is not None, app.launcher.failures
    thumbs = list((display[1] / "cache" / "impulse" / "thumbs").glob("*.png"))
    assert len(thumbs) == len(entries)
    img = app.viewer.screenshot("/tmp/shots/launcher_test.png")
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 300          # pictures, not flat cards
    pendulum = next(e for e in entries if e.path.name == "pendulum.json")
    click_button(app, f"card.{pendulum.name}")
    assert wait_until(lambda: app.session is not None, lambda: pump(app))
    assert app.session.path.endswith("pendulum.json")
    assert "pendulum.json - impulse" in app.viewer.window.caption
    recent = json.loads((display[1] / "config" / "impulse" / "recent.json").read_text())
    assert recent[0].endswith("pendulum.json")


def test_pause_step_reset(app, scene_path):
    open_scene(app, scene_path("pendulum.json"), paused=False)
    w, loop = app.session.world, app.session.loop
    h = w.settings.h
    assert wait_until(lambda: w.time > 0.05, lambda: pump(app))
    xdo("mousemove", *screen(app, W // 2, H // 2))
    xdo("key", "space")
    assert wait_until(lambda: loop.paused, lambda: pump(app))
    loop.sync()                        # a batch handed out before the pause still finishes
    t0 = w.time
    pump(app, 5)
    assert w.time == t0
    xdo("key", "Right")
    assert wait_until(lambda: w.time > t0, lambda: pump(app))
    assert w.time == pytest.approx(t0 + h, abs=1e-12)
    xdo("key", "n")
    assert wait_until(lambda: w.time > t0 + 1.5 * h, lambda: pump(app))
    assert w.time == pytest.approx(t0 + 2 * h, abs=1e-12)
    pos0 = app.session.initial["bob"]["position"]
    xdo("key", "BackSpace")
    assert wait_until(lambda: w.time == 0.0, lambda: pump(app))
    assert np.allclose(w.body_pos[0], pos0) and np.allclose(w.body_vel[0], 0)
    assert loop.paused
    xdo("key", "space")
    assert wait_until(lambda: w.time > 0.05, lambda: pump(app))


def test_history_scrub_and_resume(app, scene_path):
    open_scene(app, scene_path("double_pendulum.json"), paused=False)
    ses = app.session
    assert wait_until(lambda: ses.world.time > 0.6, lambda: pump(app), timeout=20)
    ses.loop.pause()
    pump(app)
    t_end = ses.world.time
    snap = {s["time"]: s for s in ses.history.snapshots}
    ses.scrub(0.3)
    t = ses.world.time
    assert t <= 0.3 + 1e-9 and t > 0.2 and np.allclose(ses.world.body_pos, snap[t]["pos"])
    run_steps(app, 1)
    assert ses.world.time == pytest.approx(t + ses.world.settings.h)
    assert ses.history.span[1] <= ses.world.time + 1e-12 < t_end     # the later future is gone


def test_drag_moves_body_and_release_lets_it_fall(app, tmp_path):
    open_scene(app, write(tmp_path, "drag.json", drag_scene()))
    w = app.session.world
    crate, post = w.body_index("crate"), w.body_index("post")
    # a fixed body is selectable but not draggable
    xdo("mousemove", *screen(app, *project(app, w.body_pos[post])))
    pump(app, 2)
    xdo("mousedown", "1")
    pump(app, 2)
    assert not app.grab.active
    xdo("mouseup", "1")
    assert wait_until(lambda: app.selection == ("body", "post"), lambda: pump(app))
    # grab the crate and pull it to the right
    x, y = project(app, w.body_pos[crate])
    xdo("mousemove", *screen(app, x, y))
    pump(app, 2)
    xdo("mousedown", "1")
    assert wait_until(lambda: app.grab.active, lambda: pump(app))
    app.session.loop.resume()
    start = w.body_pos[crate].copy()
    for i in range(1, 9):
        xdo("mousemove", *screen(app, x + 15 * i, y))
        pump(app, 2)
    assert app.grab.target[0] > start[0] + 0.3           # the target follows the cursor
    assert len(app.scene_view.gizmo_lines) == 1          # the drag line is drawn
    app.viewer.screenshot(tmp_path / "drag.png")
    # (the physics thread's pace depends on the machine: wait for the motion, not a time)
    wait_until(lambda: w.body_pos[crate][0] > start[0] + 0.25, lambda: pump(app))
    moved = w.body_pos[crate] - start
    xdo("mouseup", "1")
    assert wait_until(lambda: not app.grab.active, lambda: pump(app))
    assert moved[0] > 0.2 and abs(moved[1]) < 0.3, moved
    y_release = w.body_pos[crate][1]
    assert wait_until(lambda: w.body_pos[crate][1] < y_release - 0.1,   # let go: it falls
                      lambda: pump(app))


@pytest.mark.parametrize("kind", ["ball", "hinge"])
def test_joint_tool_joins_two_bodies_and_undo_removes_it(app, tmp_path, kind):
    open_scene(app, write(tmp_path, "two.json", two_boxes()))
    w = app.session.world
    a, b = w.body_index("a"), w.body_index("b")
    app.joint_tool.kind = kind            # what the type combo sets
    click_button(app, "joint.start")
    assert app.joint_tool.active
    for body in (a, b):
        xdo("mousemove", *screen(app, *project(app, w.body_pos[body])))
        pump(app, 2)
        xdo("click", "1")
        pump(app, 3)
    assert wait_until(lambda: len(w.joint_names) == 1, lambda: pump(app))
    spec = w.joint_models[0].spec
    assert spec["type"] == kind and spec["bodies"] == ["a", "b"]
    if kind == "hinge":                   # axis along the view direction
        assert np.allclose(spec["axis"], -app.viewer.camera.direction)
    ax, ay, az = spec["anchor"]                              # the clicked point on b's front face
    assert abs(az - 0.2) < 1e-3 and 0.3 < ax < 0.7 and abs(ay - 1.0) < 0.2
    assert app.selection == ("joint", spec["name"])
    b_pos = w.body_pos[b].copy()
    anchors = w.joint_anchor_world()[0]
    run_steps(app, 60)
    assert w.body_pos[b][0] - b_pos[0] < -0.07               # b is pulled along by a
    gap = w.joint_anchor_world()[0]
    moved = np.linalg.norm(anchors[0] - w.joint_anchor_world()[0][0])
    assert np.linalg.norm(gap[0] - gap[1]) < 1e-3 < moved
    xdo("mousemove", *screen(app, W // 2, 40))
    pump(app)
    xdo("key", "ctrl+z")
    assert wait_until(lambda: len(w.joint_names) == 0, lambda: pump(app))
    xdo("key", "BackSpace")
    pump(app, 2)
    run_steps(app, 60)
    assert np.allclose(w.body_pos[w.body_index("b")], [0.5, 1.0, 0.0])    # alone again: b rests
    xdo("key", "ctrl+shift+z")
    assert wait_until(lambda: len(w.joint_names) == 1, lambda: pump(app))


def test_palette_drop_save_and_load_same_state(app, tmp_path, monkeypatch):
    from impulse.app.session import states_equal
    from impulse.engine import load_scene

    path = write(tmp_path, "save.json", drag_scene())
    open_scene(app, path)
    w = app.session.world
    n = len(w.body_names)
    from impulse.app.ui.widgets import rects

    x0, y0, x1, y1 = rects["palette.sphere"]
    xdo("mousemove", *imgui_screen(app, (x0 + x1) / 2, (y0 + y1) / 2))
    pump(app, 2)
    xdo("mousedown", "1")
    pump(app, 2)
    tx, ty = project(app, [-0.8, 0.0, 0.0])
    for f in (0.3, 0.6, 1.0):
        sx, sy = imgui_screen(app, 0, 0)
        xdo("mousemove", *screen(app, tx * f + (x0 + x1) / 2 * (1 - f),
                                 ty * f + (H - (y0 + y1) / 2) * (1 - f)))
        pump(app, 2)
    xdo("mouseup", "1")
    assert wait_until(lambda: len(w.body_names) == n + 1, lambda: pump(app))
    new = w.body_names[-1]
    assert new.startswith("sphere") and app.selection == ("body", new)
    assert abs(w.body_pos[-1][0] + 0.8) < 0.1 and abs(w.body_pos[-1][1] - 0.15) < 0.05
    assert app.session.dirty and "*" in app.viewer.window.caption
    run_steps(app, 25)
    xdo("mousemove", *screen(app, W // 2, 40))
    xdo("key", "ctrl+s")
    assert wait_until(lambda: not app.session.dirty, lambda: pump(app))
    assert "*" not in app.viewer.window.caption
    app.session.reset()                     # Save wrote the scene as it starts, drop included
    assert states_equal(load_scene(path), w, tol=1e-9)
    # a failed save shows the error and leaves the file as it was
    before = open(path, "rb").read()
    from impulse.app.editor import EditBody

    app.run(EditBody(new, {"color": [0.0, 1.0, 0.0]}))

    def disk_full(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", disk_full)
    xdo("key", "ctrl+s")
    assert wait_until(lambda: bool(app.errors), lambda: pump(app))
    monkeypatch.undo()
    assert "Save failed" in app.errors[0] and "no space left" in app.errors[0]
    assert open(path, "rb").read() == before and app.session.dirty


def test_dropped_file_asks_about_unsaved_changes_then_opens(app, tmp_path, scene_path):
    from impulse.app.editor import Duplicate

    open_scene(app, write(tmp_path, "one.json", drag_scene()))
    app.errors = []
    app.run(Duplicate(app.session.world, "crate"))
    assert app.session.dirty
    target = scene_path("chain8.json")
    app.viewer.window.dispatch_event("on_file_drop", 100, 100, [target])
    pump(app, 3)
    assert app.dialogs.kind == "unsaved" and app.session.path.endswith("one.json")
    click_button(app, "modal.cancel")
    assert app.dialogs.kind is None and app.session.path.endswith("one.json")
    app.viewer.window.dispatch_event("on_file_drop", 100, 100, [target])
    pump(app, 3)
    click_button(app, "modal.discard")
    assert wait_until(lambda: app.session.path == target, lambda: pump(app))
    assert len(app.session.world.body_names) == 10
    # and closing the window with unsaved changes asks first, the simulation holding still
    app.run(Duplicate(app.session.world, "link1"))
    loop = app.session.loop
    loop.resume()
    app.viewer.window.dispatch_event("on_close")
    pump(app, 3)
    assert app.dialogs.kind == "unsaved" and not app.viewer.window.has_exit
    loop.sync()
    held = app.session.world.time
    pump(app, 5)
    loop.sync()
    assert loop.paused and app.session.world.time == held
    click_button(app, "modal.cancel")
    assert app.session is not None and not loop.paused      # it goes on as it was
    loop.pause()                                            # paused before: stays paused
    app.viewer.window.dispatch_event("on_close")
    pump(app, 3)
    click_button(app, "modal.cancel")
    assert loop.paused


def test_broken_file_shows_problems_and_app_survives(app, tmp_path, scene_path):
    open_scene(app, scene_path("pendulum.json"), paused=False)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "impulse-scene", "version": 1,
                               "bodies": [{"name": "x", "mass": -1, "colour": [1, 0, 0]}]}))
    app.viewer.window.dispatch_event("on_file_drop", 50, 50, [str(bad)])
    pump(app, 3)
    assert len(app.errors) >= 2
    assert any("$.bodies[0].mass" in e for e in app.errors)
    assert any("colour" in e for e in app.errors)
    assert app.session.path.endswith("pendulum.json")
    t = app.session.world.time
    assert wait_until(lambda: app.session.world.time > t + 0.05, lambda: pump(app))
    img = app.viewer.screenshot()
    red_title = (img[..., 0] > 140) & (img[..., 1] < 50) & (img[..., 2] < 50)
    assert red_title.sum() > 500                         # the Problems window is on screen
    click_button(app, "problems.dismiss")
    assert app.errors == []
    (tmp_path / "broken.json").write_text("{not json")
    app.open_path(str(tmp_path / "broken.json"))
    pump(app, 2)
    assert "invalid JSON at line 1" in app.errors[0]


def test_screenshot_and_video_recording(app, display, scene_path):
    import imageio.v3 as iio

    open_scene(app, scene_path("double_pendulum.json"), paused=False)
    xdo("mousemove", *screen(app, W // 2, H // 2))
    xdo("key", "F9")
    assert wait_until(lambda: app.recorder.active, lambda: pump(app))
    pump(app, 12)
    assert app.recorder.frames >= 12
    assert any(t.startswith("REC  ") and t.endswith(" frames") for t in app.overlay_lines)
    xdo("key", "F9")
    assert wait_until(lambda: not app.recorder.active, lambda: pump(app))
    videos = list(display[1].glob("impulse-video-*.mp4"))
    assert len(videos) == 1
    frames = iio.imread(videos[0])
    assert frames.shape[0] == app.recorder.frames and frames.shape[1:3] == (H, W)
    assert frames[-1].std() > 5                        # a picture of the scene
    xdo("key", "F12")
    assert wait_until(lambda: list(display[1].glob("impulse-shot-*.png")), lambda: pump(app))


def test_inspector_and_solver_edits_are_undoable_commands(app, tmp_path):
    open_scene(app, write(tmp_path, "edit.json", drag_scene()))
    w = app.session.world
    app.select("body", "crate")
    pump(app, 3)
    click_button(app, "inspector.fixed")
    assert wait_until(lambda: bool(w.body_static[w.body_index("crate")]), lambda: pump(app))
    assert app.selection == ("body", "crate") and app.session.dirty
    click_button(app, "solver.velocity_correction")
    assert w.settings.velocity_correction is False
    xdo("mousemove", *screen(app, W // 2, 40))
    pump(app)
    xdo("key", "ctrl+z")
    assert wait_until(lambda: w.settings.velocity_correction, lambda: pump(app))
    xdo("key", "ctrl+z")
    assert wait_until(lambda: not w.body_static[w.body_index("crate")], lambda: pump(app))
    assert not app.session.dirty


def test_contact_filter_stops_a_collision(app, tmp_path):
    """A crate falls on a fixed shelf and stays there; with the filter crate/shelf added
    through the Contacts panel it falls through the shelf to the ground; undo restores."""
    from impulse.app.ui.widgets import rects

    from app_scenes import box, doc

    ground = {"name": "ground", "fixed": True, "shape": {"type": "plane"}}
    scene = doc([ground, box("shelf", [0, 0.5, 0], size=1.0, fixed=True),
                 box("crate", [0, 1.5, 0], size=0.3)])
    scene["settings"]["sleeping"] = False   # (a sleeping crate lists no contact)
    path = write(tmp_path, "shelf.json", scene)
    open_scene(app, path)
    w = app.session.world
    crate = w.body_index("crate")
    run_steps(app, 100)
    assert w.body_pos[crate][1] == pytest.approx(1.15, abs=5e-3)   # resting on the shelf
    assert len(w.contacts) >= 1
    open_scene(app, path)
    w = app.session.world
    app.panels["contacts"] = True
    app.filter_pick[:] = [w.body_index("crate"), w.body_index("shelf")]  # what the combos set
    pump(app, 2)
    click_button(app, "contacts.add")
    assert w.contacts_spec["disabled_pairs"] == [["crate", "shelf"]]
    pump(app, 2)
    assert "contacts.remove.crate/shelf" in rects                  # the panel lists it
    app.viewer.screenshot(tmp_path / "contact_filter.png")
    run_steps(app, 100)
    assert w.body_pos[crate][1] == pytest.approx(0.15, abs=5e-3)   # through, onto the ground
    xdo("mousemove", *screen(app, W // 2, 40))
    pump(app)
    xdo("key", "ctrl+z")
    assert wait_until(lambda: not w.contacts_spec.get("disabled_pairs"), lambda: pump(app))


def start_typing(app, key):
    """Put an edit field into text entry: a drag field takes Ctrl+click, an input field a
    click; Ctrl+A selects what it shows."""
    from imgui_bundle import imgui

    from impulse.app.ui.widgets import rects

    x0, y0, x1, y1 = rects[key]
    x, y = x0 + 12, (y0 + y1) / 2                    # the first component
    xdo("mousemove", *imgui_screen(app, x, y))
    # under load the X server hands the events over late: wait until imgui has seen them
    assert wait_until(lambda: abs(imgui.get_io().mouse_pos.x - x) < 2
                      and abs(imgui.get_io().mouse_pos.y - y) < 2, lambda: pump(app))
    xdo("keydown", "ctrl")
    pump(app)
    xdo("click", "1")
    pump(app, 3)
    xdo("keyup", "ctrl")
    assert wait_until(lambda: imgui.get_io().want_text_input, lambda: pump(app)), key
    xdo("key", "ctrl+a")
    pump(app, 2)


def leave_field(app, how):
    """Return, Tab, or a click on the Inspector's title bar (nothing there to edit)."""
    if how == "click":
        xdo("mousemove", *imgui_screen(app, W - 100, 30))
        pump(app, 2)
        xdo("click", "1")
    else:
        xdo("key", how)
    pump(app, 3)


@pytest.mark.parametrize("how", ["Return", "Tab", "click"])
def test_typed_values_are_applied_once_as_doubles(app, tmp_path, how):
    """Typing into each kind of field (a float and a vector in the Inspector, a scientific and
    an integer field in the Solver panel) and leaving it applies exactly the typed double as
    one undo entry; the saved file keeps it; an attempt that changes nothing adds nothing."""
    path = write(tmp_path, "typed.json", drag_scene())
    open_scene(app, path)
    ses, w = app.session, app.session.world
    app.panels["contacts"] = False            # (an earlier test opened it over the Inspector)
    app.select("body", "crate")
    pump(app, 3)
    crate = lambda: w.body_entry(w.body_index("crate"))            # noqa: E731
    fields = [("crate.mass", "2.3", lambda: crate()["mass"], 2.3),
              ("set.eps_pos", "1e-6", lambda: w.settings.eps_pos, 1e-6),
              ("set.max_cycles", "777", lambda: w.settings.max_cycles, 777),
              ("crate.pos", "0.1", lambda: crate()["position"], [0.1, 1.0, 0.0])]
    for key, text, read, expected in fields:
        n = len(ses.editor.undo_stack)
        start_typing(app, key)
        xdo("type", text)
        pump(app, 2)
        leave_field(app, how)
        if key == "crate.pos" and how == "Tab":           # Tab moves on to y, then z, then out
            leave_field(app, "Tab")
            leave_field(app, "Tab")
        assert wait_until(lambda read=read, expected=expected: read() == expected,
                          lambda: pump(app)), (key, read())
        assert len(ses.editor.undo_stack) == n + 1, (key, [c.label for c in ses.editor.undo_stack])
    app.viewer.screenshot(tmp_path / f"typed_{how}.png")
    if how != "click":      # (a second click on the title bar soon after the last one would
        leave_field(app, "click")   # be a double click, and fold the Inspector for good)
    xdo("key", "ctrl+s")
    assert wait_until(lambda: not ses.dirty, lambda: pump(app))
    saved = json.loads(open(path).read())
    assert saved["settings"]["eps_pos"] == 1e-6 and saved["settings"]["max_cycles"] == 777
    body = next(b for b in saved["bodies"] if b["name"] == "crate")
    assert body["mass"] == 2.3 and body["position"] == [0.1, 1.0, 0.0]
    # attempts that change nothing: no undo entry, not modified, the history stays
    run_steps(app, 20)
    snapshots, n = len(ses.history.snapshots), len(ses.editor.undo_stack)
    assert snapshots >= 10
    for key, text, _read, _expected in fields:
        start_typing(app, key)
        if key != "crate.pos":                 # the same value typed again
            xdo("type", text)
            pump(app, 2)
        leave_field(app, how)
        if how != "click":      # (two quick clicks on the title bar would fold the window)
            leave_field(app, "click")
    assert len(ses.editor.undo_stack) == n and not ses.dirty
    assert len(ses.history.snapshots) >= snapshots                  # kept (a clear leaves one)


def test_a_body_is_renamed_in_the_inspector_and_back_with_undo(app, tmp_path):
    """The Inspector's name field renames the body (one undo entry); the
    selection and the saved file follow; undo gives the old name back; a taken name is
    refused with a message and changes nothing."""
    path = write(tmp_path, "rename.json", drag_scene())
    open_scene(app, path)
    ses, w = app.session, app.session.world
    app.panels["contacts"] = False
    app.select("body", "crate")
    pump(app, 3)
    n = len(ses.editor.undo_stack)
    start_typing(app, "crate.name")
    xdo("type", "box1")
    pump(app, 2)
    leave_field(app, "Return")
    assert wait_until(lambda: "box1" in w.body_names, lambda: pump(app)), w.body_names
    assert "crate" not in w.body_names and app.selection == ("body", "box1")
    assert len(ses.editor.undo_stack) == n + 1
    xdo("key", "ctrl+s")
    assert wait_until(lambda: not ses.dirty, lambda: pump(app))
    assert "box1" in [b["name"] for b in json.loads(open(path).read())["bodies"]]
    app.undo()
    pump(app, 2)
    assert "crate" in w.body_names and app.selection == ("body", "crate")
    other = next(b for b in w.body_names if b != "crate")
    assert not app.run(E.RenameBody("crate", other)) and "crate" in w.body_names


# `impulse view` as a user starts it, which also writes where the dialog's buttons are drawn
QUIT_DRIVER = """
import json, os, sys
from impulse.app import __main__ as entry
from impulse.app.ui import widgets
record = widgets.record_rect
def record_and_publish(key):
    record(key)
    if key.startswith("modal."):
        with open(sys.argv[1] + ".tmp", "w") as f:
            json.dump({k: v for k, v in widgets.rects.items() if k.startswith("modal.")}, f)
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
widgets.record_rect = record_and_publish
sys.exit(entry.view(sys.argv[2:]))
"""


@pytest.mark.parametrize("button", ["save", "discard", "no dialog"])
def test_quit_through_the_unsaved_changes_dialog_exits_cleanly(display, tmp_path, button):
    """Ctrl+Q with unsaved changes asks; Cancel keeps the window open; Save or Discard (or Ctrl+Q
    once undo made the scene clean again) ends the process with status 0 and nothing on stderr
    about GL: the GL objects go while the context is alive."""
    from app_scenes import box, doc

    path = write(tmp_path, "quit.json", doc([box("crate", [0.0, 1.0, 0.0], size=0.6)],
                                            gravity=(0.0, 0.0, 0.0)))
    before = open(path).read()
    rects_file = tmp_path / "rects.json"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-c", QUIT_DRIVER, str(rects_file), path,
                             "--size", "1024x640", "--paused"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)

    def title_is(pattern):
        return subprocess.run(["xdotool", "search", "--name", pattern], env=env,
                              capture_output=True).returncode == 0

    def until(predicate, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end and proc.poll() is None:
            if predicate():
                return True
            time.sleep(0.2)
        return predicate()

    def click(x, y):
        xdo("mousemove", str(int(x)), str(int(y)))
        time.sleep(0.3)
        xdo("click", "1")

    def dialog_button(name):
        """Click a button of the dialog once its place has settled (it sizes itself)."""
        assert until(rects_file.exists, 10)
        old = None
        while old != (new := json.loads(rects_file.read_text())):
            old = new
            time.sleep(0.5)
        x0, y0, x1, y1 = new[f"modal.{name}"]
        click((x0 + x1) / 2, (y0 + y1) / 2)

    try:
        assert until(lambda: title_is(r"^quit\.json - impulse$"), 120), "no window"
        for _ in range(10):                        # the crate in the middle: select, duplicate
            click(512, 320)
            xdo("key", "ctrl+d")
            if until(lambda: title_is(r"^quit\.json \* - impulse$"), 3):
                break
        assert title_is(r"^quit\.json \* - impulse$")
        xdo("mousemove", "512", "100")
        xdo("key", "ctrl+q")
        dialog_button("cancel")
        time.sleep(1.0)
        assert proc.poll() is None and title_is(r"^quit\.json \* - impulse$")   # still open
        if button == "no dialog":
            xdo("mousemove", "512", "100")
            xdo("key", "ctrl+z")
            assert until(lambda: title_is(r"^quit\.json - impulse$"), 10)
            xdo("key", "ctrl+q")
        else:
            rects_file.unlink()
            xdo("key", "ctrl+q")
            dialog_button(button)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "Exception ignored" not in err, err[-3000:]
    names = [b["name"] for b in json.loads(open(path).read())["bodies"]]
    assert names == (["crate", "crate_2"] if button == "save" else ["crate"])
    if button != "save":
        assert open(path).read() == before


def test_loads_are_listed_and_a_constant_one_is_edited_in_the_inspector(app, tmp_path,
                                                                       scene_path):
    """The Scene tree lists the external loads; selecting one shows it in the Inspector,
    where a constant torque typed in applies as one undo entry (sequences are shown, and
    edited in the file)."""
    path = tmp_path / "loads.json"
    path.write_bytes(open(scene_path("loads.json"), "rb").read())
    open_scene(app, str(path))
    ses, w = app.session, app.session.world
    app.panels["contacts"] = False
    app.select("load", "hold")
    pump(app, 3)
    assert app.viewer.options.selected == (w.body_index("bob"),)   # its body is highlighted
    n = len(ses.editor.undo_stack)
    start_typing(app, "load.hold.torque")
    xdo("type", "3")
    pump(app, 2)
    leave_field(app, "Return")
    assert wait_until(lambda: w.load_entry("hold")["torque"] == [3.0, 0.0, 4.905],
                      lambda: pump(app)), w.load_entry("hold")
    assert len(ses.editor.undo_stack) == n + 1 and ses.dirty
    app.viewer.screenshot(tmp_path / "load_inspector.png")
    app.select("load", "push")                                     # a sequence: shown
    pump(app, 3)
    assert "load.push.force" not in _rects_now(app)
    xdo("mousemove", *screen(app, W // 2, 40))
    pump(app)
    xdo("key", "ctrl+z")
    assert wait_until(lambda: w.load_entry("hold")["torque"] == [0, 0, 4.905],
                      lambda: pump(app))


def _rects_now(app):
    """The widget rectangles recorded in the last frame."""
    from impulse.app.ui.widgets import rects
    rects.clear()
    pump(app, 2)
    return dict(rects)
