"""Joints you can see (issue 18 item 1) and thumbnails that show the scene (item 4), in the
desktop app under Xvfb: links from the bodies' centres to the anchors where the anchors
are, the View menu's Joints toggle, the joint tool's preview and anchor choice, every
bundled scene's thumbnail filling its picture, the gallery using the window's width."""
import os
from pathlib import Path

import numpy as np
import pytest

from app_scenes import box, doc
from test_app_gui import app, click_button, display, open_scene, project, pump, screen, write, xdo  # noqa: F401

SHOTS = Path("/tmp/shots")
APART = 2.3                                    # the two boxes, 2.3 m apart


def boxes_apart(joints=()):
    """Two boxes 2.3 m apart, no gravity, looked at from the front."""
    bodies = [box("a", [-APART / 2, 1.0, 0.0]),
              box("b", [APART / 2, 1.0, 0.0], color=(0.2, 0.5, 0.9))]
    return doc(bodies, joints, gravity=(0.0, 0.0, 0.0))


def pixel_at(app, image, point):
    """RGB of the screenshot pixel where a world point is seen."""
    x, y = project(app, point)
    return image[int(image.shape[0] - 1 - y), int(x)].astype(int)


def shot(app, name=None):
    """The 3D view without the panels (optionally saved under /tmp/shots)."""
    pump(app, 2)
    if name:
        SHOTS.mkdir(exist_ok=True)
    return app.viewer.screenshot(SHOTS / name if name else None, with_ui=False)


def drawn_along(app, on, off, p0, p1, fractions) -> list[bool]:
    """Whether the pixels at these fractions of the segment p0..p1 differ between two shots."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    points = [p0 + f * (p1 - p0) for f in fractions]
    return [np.abs(pixel_at(app, on, p) - pixel_at(app, off, p)).max() > 40 for p in points]


@pytest.mark.gui
def test_gallery_uses_the_window_width(app, display):         # first: no scene is open yet
    from impulse.app.ui.widgets import rects

    assert app.session is None                           # the app starts in the launcher
    pump(app, 3)
    cards = [r for k, r in rects.items() if k.startswith("card.")]
    right = max(r[2] for r in cards)
    first_row = [r for r in cards if abs(r[1] - min(c[1] for c in cards)) < 2]
    assert len(first_row) >= 4 and right > app.viewer.window.width - 30
    shot_path = SHOTS / "launcher_full_width.png"
    SHOTS.mkdir(exist_ok=True)
    app.viewer.screenshot(shot_path)
    assert os.path.getsize(shot_path) > 0


@pytest.mark.gui
def test_pendulum_link_runs_from_the_bob_to_the_pivot(app, scene_path):
    open_scene(app, scene_path("pendulum.json"))
    w = app.session.world
    pivot, bob = w.joint_anchor_world()[0][0], w.body_pos[0].copy()
    app.viewer.options.show_joints = True
    on = shot(app, "joints_pendulum.png")
    app.viewer.options.show_joints = False
    off = shot(app)
    app.viewer.options.show_joints = True
    assert all(drawn_along(app, on, off, bob, pivot, (0.3, 0.5, 0.7, 0.9, 1.0)))


@pytest.mark.gui
def test_links_of_a_joint_between_two_boxes_and_the_view_menu_toggle(app, tmp_path):
    joint = {"name": "link", "type": "ball", "bodies": ["a", "b"], "anchor": [0.0, 1.0, 0.0]}
    open_scene(app, write(tmp_path, "apart.json", boxes_apart([joint])))
    w = app.session.world
    a, b = w.body_pos[w.body_index("a")], w.body_pos[w.body_index("b")]
    anchor = w.joint_anchor_world()[0][0]
    assert np.allclose(anchor, [0.0, 1.0, 0.0])
    assert app.viewer.options.show_joints
    on = shot(app, "joints_two_boxes.png")
    for menu_click in ("menu.View", "menu.View.Joints"):        # View > Joints: off
        click_button(app, menu_click)
    assert not app.viewer.options.show_joints
    off = shot(app)
    outside = (0.3, 0.5, 0.7, 0.9)                               # of the way, beyond the box
    assert all(drawn_along(app, on, off, a, anchor, outside))
    assert all(drawn_along(app, on, off, b, anchor, outside))
    assert not any(drawn_along(app, on, off, a + [0, 0.45, 0], b + [0, 0.45, 0], outside))
    for menu_click in ("menu.View", "menu.View.Joints"):        # and on again
        click_button(app, menu_click)
    assert app.viewer.options.show_joints


@pytest.mark.gui
@pytest.mark.parametrize("scene", ["slider_crank.json", "chain8.json", "mass_spring.json",
                                   "motors.json", "universal_shaft.json"])
def test_joint_gizmos_of_bundled_scenes_add_pixels(app, scene_path, scene):
    open_scene(app, scene_path(scene))
    on = shot(app, f"joints_{Path(scene).stem}.png")
    app.viewer.options.show_joints = False
    off = shot(app)
    app.viewer.options.show_joints = True
    changed = (np.abs(on.astype(int) - off.astype(int)).max(axis=2) > 40).sum()
    assert changed > 300, changed


def _pick_first_box(app, w):
    click_button(app, "joint.start")
    assert app.joint_tool.active
    xdo("mousemove", *screen(app, *project(app, w.body_pos[w.body_index("a")])))
    pump(app, 2)
    xdo("click", "1")
    pump(app, 3)
    assert app.joint_tool.first is not None


@pytest.mark.gui
def test_joint_tool_previews_the_anchor_and_both_links_before_the_second_click(app, tmp_path):
    open_scene(app, write(tmp_path, "apart.json", boxes_apart()))
    w = app.session.world
    a, b = w.body_pos[w.body_index("a")].copy(), w.body_pos[w.body_index("b")].copy()
    app.joint_tool.kind, app.joint_tool.anchor = "ball", "middle"
    before = shot(app)
    _pick_first_box(app, w)
    assert app.scene_view.joint_preview is not None      # over the first box: to the world
    xdo("mousemove", *screen(app, *project(app, b)))
    pump(app, 3)
    preview = app.scene_view.joint_preview
    assert preview is not None and len(w.joint_names) == 0
    assert np.allclose(preview.anchor[0], [(a + b) / 2] * 2)
    assert np.allclose(preview.centre[0], [a, b]) and preview.attached[0].all()
    during = shot(app, "joint_tool_preview.png")
    assert all(drawn_along(app, during, before, a, (a + b) / 2, (0.4, 0.6, 0.9)))
    assert all(drawn_along(app, during, before, b, (a + b) / 2, (0.4, 0.6, 0.9)))
    xdo("key", "Escape")
    pump(app, 3)
    assert app.scene_view.joint_preview is None


@pytest.mark.gui
@pytest.mark.parametrize("choice, expected", [
    ("clicked", None), ("first", [-APART / 2, 1.0, 0.0]), ("second", [APART / 2, 1.0, 0.0]),
    ("middle", [0.0, 1.0, 0.0])])
def test_anchor_choice_places_the_new_joints_anchor(app, tmp_path, choice, expected):
    open_scene(app, write(tmp_path, "apart.json", boxes_apart()))
    w = app.session.world
    app.joint_tool.kind, app.joint_tool.anchor = "hinge", choice     # what the combos set
    _pick_first_box(app, w)
    xdo("mousemove", *screen(app, *project(app, w.body_pos[w.body_index("b")])))
    pump(app, 2)
    xdo("click", "1")
    pump(app, 3)
    assert len(w.joint_names) == 1
    anchor = w.joint_anchor_world()[0][0]
    if expected is None:                                  # the clicked point: b's front face
        assert abs(anchor[2] - 0.2) < 1e-3 and abs(anchor[0] - APART / 2) < 0.2
    else:
        assert np.allclose(anchor, expected, atol=1e-9)


@pytest.mark.gui
def test_every_bundled_scene_fills_its_thumbnail(app):
    """Without the grid, what the scene draws covers at least half the picture's width or
    height (the old thumbnails, framed by the scene camera, showed specks: 25-45 %)."""
    from impulse.app.gallery import scene_entries
    from impulse.app.render import RenderOptions
    from impulse.app.thumbs import THUMB_SIZE, render_world, settle
    from impulse.engine import load_scene

    opts = RenderOptions(grid=False)
    background = np.round(np.array(opts.background) * 255)
    small = []
    for e in scene_entries():
        world = load_scene(e.path)
        settle(world)
        image = render_world(app.viewer.ctx, app.viewer.renderer, world, THUMB_SIZE, opts)
        scene = np.abs(image.astype(float) - background).max(axis=2) > 8
        ys, xs = np.nonzero(scene)
        span = max(np.ptp(xs) / image.shape[1], np.ptp(ys) / image.shape[0]) if len(xs) else 0.0
        if span < 0.5 or scene.mean() < 0.005:
            small.append((e.path.name, round(span, 2), round(scene.mean(), 4)))
    assert not small


@pytest.mark.parametrize("scene", ["motors.json", "universal_shaft.json", "servo_arm.json",
                                   "slider_crank.json"])
def test_needles_and_axes_show_the_engines_joint_coordinates(scene_path, scene):
    """The drawn frames are the engine's: B's needle stands at the joint's angle in the arc's
    plane, B's anchor at the joint's offset along A's axis."""
    from impulse.app.joint_drawing import joint_drawing
    from impulse.app.render.joint_gizmos import angle_planes
    from impulse.engine import load_scene
    from impulse.engine.joints import COORD_ANGLE_B_Y, COORD_ANGLE_X, COORD_OFFSET_X

    w = load_scene(scene_path(scene))
    w.run(40)
    d = joint_drawing(w)
    for j, jm in enumerate(w.joint_models):
        engine = w.joint_coordinates(jm.name)
        for which in range(2):
            if d.coord[j, which] in (COORD_ANGLE_X, COORD_ANGLE_B_Y):
                u, v, needle = (a[0] for a in angle_planes(d, np.array([j]), which))
                drawn = np.arctan2(needle @ v, needle @ u)
            elif d.coord[j, which] == COORD_OFFSET_X:
                drawn = (d.anchor[j, 1] - d.anchor[j, 0]) @ d.frame[j, 0, :, 0]
            else:
                continue
            assert abs(drawn - engine[which]) < 1e-9, (jm.name, which)
