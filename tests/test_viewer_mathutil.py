"""app.mathutil's pyrr-backed matrices against what they must do, worked out by hand: the
column-vector convention (M @ v), look_at's camera frame, and the clip ranges of the
perspective and orthographic projections (OpenGL: near -> z = -1, far -> z = +1)."""
import numpy as np
import pytest

from impulse.app.mathutil import basis_from_y, gl_bytes, look_at, ortho, perspective


def apply(m, p):
    """Homogeneous point p through m (column vectors), divided by w."""
    q = m @ np.append(np.asarray(p, float), 1.0)
    return q[:3] / q[3]


@pytest.mark.parametrize("eye, target", [((3.0, 2.0, 4.0), (0.0, 1.0, 0.0)),
                                         ((-5.0, 0.5, 1.0), (2.0, -1.0, 3.0)),
                                         ((0.0, 6.0, 0.0), (0.0, 0.0, 0.0)),     # straight down
                                         ((0.0, -2.0, 0.0), (0.0, 1.0, 0.0))])   # straight up
def test_look_at_puts_the_eye_at_the_origin_and_the_target_on_minus_z(eye, target):
    m = look_at(eye, target)
    assert m.shape == (4, 4) and np.all(np.isfinite(m))
    assert np.allclose(apply(m, eye), 0.0, atol=1e-12)
    dist = np.linalg.norm(np.subtract(target, eye))
    assert np.allclose(apply(m, target), [0.0, 0.0, -dist], atol=1e-12)
    r = m[:3, :3]                                   # a rotation: orthonormal, no mirror
    assert np.allclose(r @ r.T, np.identity(3), atol=1e-12) and np.isclose(np.linalg.det(r), 1)
    assert np.allclose(m[3], [0.0, 0.0, 0.0, 1.0])  # last row, not column: M @ v


def test_look_at_keeps_world_up_pointing_up_on_screen():
    m = look_at((4.0, 1.0, 4.0), (0.0, 1.0, 0.0))
    up_in_cam = m[:3, :3] @ np.array([0.0, 1.0, 0.0])
    assert np.allclose(up_in_cam, [0.0, 1.0, 0.0], atol=1e-12)
    right_in_cam = m[:3, :3] @ (np.array([1.0, 0.0, -1.0]) / np.sqrt(2.0))  # eye's right
    assert np.allclose(right_in_cam, [1.0, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("fov, aspect, near, far", [(45.0, 16 / 9, 0.1, 100.0),
                                                    (90.0, 1.0, 0.002, 820.0),
                                                    (30.0, 0.5, 1.0, 2.0)])
def test_perspective_maps_the_frustum_onto_the_clip_cube(fov, aspect, near, far):
    p = perspective(fov, aspect, near, far)
    assert np.allclose(p[3], [0.0, 0.0, -1.0, 0.0])         # w = -z_camera
    assert np.isclose(apply(p, (0.0, 0.0, -near))[2], -1.0)
    assert np.isclose(apply(p, (0.0, 0.0, -far))[2], 1.0)
    t = np.tan(np.radians(fov) / 2.0)
    for z in (near, np.sqrt(near * far), far):                # frustum edges at any depth
        corner = apply(p, (aspect * t * z, t * z, -z))
        assert np.allclose(corner[:2], [1.0, 1.0])
        corner = apply(p, (-aspect * t * z, -t * z, -z))
        assert np.allclose(corner[:2], [-1.0, -1.0])


def test_ortho_maps_the_box_onto_the_clip_cube():
    left, right, bottom, top, near, far = -2.0, 3.0, -1.0, 4.0, 0.5, 10.0
    m = ortho(left, right, bottom, top, near, far)
    assert np.allclose(m[3], [0.0, 0.0, 0.0, 1.0])
    assert np.allclose(apply(m, (left, bottom, -near)), [-1.0, -1.0, -1.0])
    assert np.allclose(apply(m, (right, top, -far)), [1.0, 1.0, 1.0])


def test_basis_from_y_and_gl_bytes():
    d = np.array([[0.0, 2.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, -3.0]])
    r = basis_from_y(d)
    assert np.allclose(r[:, :, 1], d / np.linalg.norm(d, axis=1, keepdims=True))
    assert np.allclose(r @ r.transpose(0, 2, 1), np.identity(3))
    assert np.allclose(np.linalg.det(r), 1.0)
    m = np.arange(16.0).reshape(4, 4)
    assert np.array_equal(np.frombuffer(gl_bytes(m), np.float32), m.T.ravel())  # column-major


def test_xrmath_quaternions_turns_and_fov_projection():
    from types import SimpleNamespace

    from impulse.app.vr.xrmath import pose_to_matrix, projection_from_fov, rotation_y, translation

    s = np.sqrt(0.5)                                # a quarter turn about +z: x -> y, y -> -x
    pose = SimpleNamespace(orientation=SimpleNamespace(x=0.0, y=0.0, z=s, w=s),
                           position=SimpleNamespace(x=1.0, y=2.0, z=3.0))
    m = pose_to_matrix(pose)
    assert np.allclose(m @ [1.0, 0.0, 0.0, 1.0], [1.0, 3.0, 3.0, 1.0])
    assert np.allclose(m @ [0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0])
    pose.orientation = SimpleNamespace(x=0.0, y=0.0, z=0.0, w=0.0)   # no valid orientation
    assert np.allclose(pose_to_matrix(pose)[:3, :3], np.identity(3))
    assert np.allclose(rotation_y(np.pi / 2) @ [0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0])
    assert np.allclose(translation(1.0, -2.0, 0.5) @ [1.0, 1.0, 1.0, 1.0], [2.0, -1.0, 1.5, 1.0])
    # a symmetric field of view is the ordinary perspective; an asymmetric one puts its own
    # edges on the clip square's
    half = np.radians(40.0)
    sym = SimpleNamespace(angle_left=-half, angle_right=half, angle_down=-half, angle_up=half)
    assert np.allclose(projection_from_fov(sym, 0.1, 50.0), perspective(80.0, 1.0, 0.1, 50.0))
    fov = SimpleNamespace(angle_left=-0.9, angle_right=0.6, angle_down=-0.8, angle_up=0.7)
    p = projection_from_fov(fov, 0.05, 100.0)
    for z in (0.05, 1.0, 100.0):
        lo = apply(p, (np.tan(-0.9) * z, np.tan(-0.8) * z, -z))
        hi = apply(p, (np.tan(0.6) * z, np.tan(0.7) * z, -z))
        assert np.allclose(lo[:2], [-1.0, -1.0]) and np.allclose(hi[:2], [1.0, 1.0])
    assert np.isclose(apply(p, (0.0, 0.0, -0.05))[2], -1.0)
    assert np.isclose(apply(p, (0.0, 0.0, -100.0))[2], 1.0)
