"""Camera: matrices, orbit/pan/zoom/fly, focus, reset, and screen -> world rays."""
import numpy as np
import pytest

from impulse.app.camera import Camera


def point_to_ray_distance(p, origin, direction):
    v = np.asarray(p) - origin
    return np.linalg.norm(v - np.dot(v, direction) * direction)


def test_set_from_scene_dict_and_matrices():
    cam = Camera()
    cam.set_from_dict({"eye": [3.0, 2.0, 4.0], "target": [0.0, 1.0, 0.0], "fov_deg": 50})
    assert np.allclose(cam.eye, [3, 2, 4]) and cam.fov_deg == 50
    view, proj = cam.view_matrix(), cam.projection_matrix(16 / 9)
    assert view.dtype == np.float32 and proj.dtype == np.float32 and view.shape == (4, 4)
    eye_in_cam = view.astype(float) @ np.append(cam.eye, 1.0)
    target_in_cam = view.astype(float) @ np.array([0, 1, 0, 1.0])
    assert np.allclose(eye_in_cam[:3], 0, atol=1e-5)
    assert np.allclose(target_in_cam[:2], 0, atol=1e-5) and target_in_cam[2] < 0


@pytest.mark.parametrize("xy", [(640, 360), (10, 700), (1200, 40), (333.5, 222.25)])
def test_unprojected_ray_hits_the_projected_point(xy):
    cam = Camera()
    cam.set_from_dict({"eye": [4.0, 3.0, 5.0], "target": [0.5, 0.2, -0.3], "fov_deg": 45})
    p = np.array([0.3, 0.9, -0.2])
    x, y, _ = cam.project(p, 1280, 720)
    origin, direction = cam.ray(x, y, 1280, 720)
    assert np.isclose(np.linalg.norm(direction), 1.0)
    assert point_to_ray_distance(p, origin, direction) < 1e-4
    origin, direction = cam.ray(640, 360, 1280, 720)  # centre pixel looks at the target
    assert point_to_ray_distance(cam.target, origin, direction) < 1e-4
    # a point at any depth along the ray through xy projects back onto xy
    ox, oy = xy
    origin, direction = cam.ray(ox, oy, 1280, 720)
    q = origin + direction * 2.5
    assert np.allclose(cam.project(q, 1280, 720)[:2], xy, atol=1e-3)


def test_orbit_keeps_target_and_distance_and_clamps_pitch():
    cam = Camera(eye=(0, 0, 5), target=(0, 0, 0))
    cam.orbit(100, 0)
    assert np.allclose(cam.target, 0) and np.isclose(np.linalg.norm(cam.eye), 5)
    assert cam.eye[0] < 0  # dragging right swings the eye to the left of the target
    cam.orbit(0, -100000)
    assert cam.pitch <= np.radians(89.0) + 1e-9
    assert np.all(np.isfinite(cam.view_matrix()))


def test_pan_zoom_fly_focus_reset():
    cam = Camera(eye=(0, 0, 5), target=(0, 0, 0))
    cam.pan(100, 0, 720)
    assert cam.target[0] < 0 and np.isclose(cam.target[1], 0)  # scene follows the mouse
    cam.zoom(2)
    assert np.isclose(cam.distance, 5 * 0.88 ** 2)
    cam.zoom(-2)
    assert np.isclose(cam.distance, 5)
    before = cam.eye
    cam.fly(1.0, 0.0, 0.0)
    assert np.allclose(cam.eye - before, [0, 0, -1])
    eye = cam.eye
    cam.look(50, 20)
    assert np.allclose(cam.eye, eye)
    cam.focus([1, 2, 3], radius=1.0)
    assert np.allclose(cam.target, [1, 2, 3])
    x, y, _ = cam.project([1, 2, 3], 800, 600)
    assert np.allclose([x, y], [400, 300])
    cam.reset()
    assert np.allclose(cam.eye, [0, 0, 5]) and np.allclose(cam.target, 0)
