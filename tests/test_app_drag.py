"""MouseGrab without a window: plane through the picked point, depth by wheel, throw."""
from types import SimpleNamespace

import numpy as np
import pytest

from impulse.app.camera import Camera
from impulse.app.drag import MOD_SHIFT, MouseGrab
from impulse.engine import scene_to_world

from app_scenes import drag_scene


@pytest.fixture
def grab():
    world = scene_to_world(drag_scene())
    cam = Camera(eye=(0.0, 1.0, 5.0), target=(0.0, 1.0, 0.0))
    selected = []
    viewer = SimpleNamespace(camera=cam, select=selected.append)
    t = [0.0]
    g = MouseGrab(viewer, world, clock=lambda: t[0])
    g.t, g.selected = t, selected
    return g


def ray_to(point, eye=(0.0, 1.0, 5.0)):
    d = np.asarray(point, float) - eye
    return np.asarray(eye, float), d / np.linalg.norm(d)


def test_fixed_body_is_not_grabbed_but_dynamic_is(grab):
    w = grab.world
    post, crate = w.body_index("post"), w.body_index("crate")
    assert grab.begin(post, [0.9, 1.0, 0.2], ray_to([0.9, 1.0, 0.2])) is False and not grab.active
    assert grab.begin(crate, [0.0, 1.0, 0.2], ray_to([0.0, 1.0, 0.2])) is True
    assert grab.active and grab.selected == [crate]
    assert grab.adapter.active == hasattr(w, "drag_start")


def test_target_moves_on_the_view_plane_wheel_moves_depth_shift_release_throws(grab):
    w = grab.world
    crate = w.body_index("crate")
    grab.begin(crate, [0.0, 1.0, 0.2], ray_to([0.0, 1.0, 0.2]))
    for i in range(1, 6):
        grab.t[0] = 0.02 * i
        grab.move(ray_to([0.1 * i, 1.0, 0.2]))
    assert np.allclose(grab.target, [0.5, 1.0, 0.2])              # plane z = 0.2 faces the eye
    assert np.allclose(grab.cursor_velocity(), [5.0, 0.0, 0.0])   # 0.1 m per 20 ms
    lines = grab.gizmo_lines()
    assert lines.shape == (1, 2, 3) and np.allclose(lines[0, 1], grab.target)
    grab.end(MOD_SHIFT)
    assert not grab.active and np.allclose(w.body_vel[crate], [5.0, 0.0, 0.0])
    grab.begin(crate, [0.0, 1.0, 0.2], ray_to([0.0, 1.0, 0.2]))
    grab.scroll(1.0)                                               # wheel up: further away
    assert grab.target[2] < 0.2 - 0.3 and abs(grab.target[1] - 1.0) < 1e-9


def test_plain_release_keeps_the_physics_velocity(grab):
    w = grab.world
    crate = w.body_index("crate")
    w.body_vel[crate] = [0.0, -1.0, 0.0]
    grab.begin(crate, [0.0, 1.0, 0.2], ray_to([0.0, 1.0, 0.2]))
    grab.t[0] = 0.05
    grab.move(ray_to([1.0, 1.0, 0.2]))
    grab.end(0)
    assert np.allclose(w.body_vel[crate], [0.0, -1.0, 0.0]) and len(grab.gizmo_lines()) == 0
