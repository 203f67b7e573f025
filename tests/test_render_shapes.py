"""Offscreen rendering of each shape kind, shadows, picking (EGL; fails without GL)."""
import numpy as np
import pytest

from impulse.app.camera import Camera
from impulse.app.render import ImageTarget, Renderer, RenderOptions

from gui_util import (
    BOX,
    CAPSULE,
    CYLINDER,
    HULL,
    PLANE,
    SPHERE,
    FakeWorld,
    gl_context,
    release_gl_context,
)

W, H = 240, 180
BG = (0.1, 0.1, 0.1)
RED = (0.9, 0.15, 0.15)


@pytest.fixture(scope="module")
def gl():
    ctx = gl_context()
    renderer = Renderer(ctx, samples=4, shadow_size=1024)
    target = ImageTarget(ctx, (W, H))
    yield ctx, renderer, target
    renderer.release()
    target.release()
    release_gl_context(ctx)


def render(gl, world, camera, **opts):
    _, renderer, target = gl
    options = RenderOptions(background=BG, show_joints=False, **opts)
    renderer.render(target.fbo, camera.view_matrix(), camera.projection_matrix(W / H), world,
                    options)
    return target.read_rgb()


def pixel(img, xy):
    """Pixel at GL screen position (x, y up) of a top-row-first image."""
    x, y = int(xy[0]), int(xy[1])
    return img[H - 1 - y, x].astype(int)


def is_background(px):
    return np.abs(px - np.array(BG) * 255).max() <= 3


def front_camera():
    cam = Camera()
    cam.set_from_dict({"eye": [0.0, 0.0, 6.0], "target": [0.0, 0.0, 0.0], "fov_deg": 40.0})
    return cam


TETRA = np.array([[0.6, 0.0, 0.0], [-0.4, 0.5, 0.0], [-0.4, -0.5, 0.0], [0.0, 0.0, 0.6]])
CASES = {
    "sphere": (SPHERE, (0.5, 0, 0)),
    "box": (BOX, (0.6, 0.3, 0.2)),
    "capsule": (CAPSULE, (0.25, 0.5, 0)),
    "cylinder": (CYLINDER, (0.4, 0.5, 0)),
    "hull": (HULL, (0, 0, 0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_kind_renders_at_its_projected_position(gl, name):
    kind, size = CASES[name]
    pos = np.array([0.7, -0.3, 0.0])
    world = FakeWorld([(kind, size, pos, None, RED)], hull_vertex=TETRA, hull_ranges=[(0, 4)])
    cam = front_camera()
    img = render(gl, world, cam, shadows=False, grid=False)
    centre = pixel(img, cam.project(pos, W, H))
    assert not is_background(centre), f"{name}: nothing drawn at the body's projected centre"
    assert centre[0] >= 2 * max(centre[1], centre[2]) + 20, f"{name}: not the body colour"
    assert is_background(pixel(img, cam.project(pos + [-2.0, 1.5, 0.0], W, H)))


def test_capsule_and_box_scale_per_axis(gl):
    """Capsule: radius and half length scale separately; box: half extents per axis."""
    cam = front_camera()
    r, hl = 0.2, 0.8
    world = FakeWorld([(CAPSULE, (r, hl, 0), (0, 0, 0), None, RED)])
    img = render(gl, world, cam, shadows=False, grid=False)
    for y in (hl + 0.8 * r, -(hl + 0.8 * r)):
        assert not is_background(pixel(img, cam.project([0, y, 0.0], W, H)))
    for p in ([0, hl + 1.4 * r, 0], [1.6 * r, 0, 0], [1.6 * r, hl, 0]):
        assert is_background(pixel(img, cam.project(p, W, H))), p
    world = FakeWorld([(BOX, (1.0, 0.25, 0.25), (0, 0, 0), None, RED)])
    img = render(gl, world, cam, shadows=False, grid=False)
    assert not is_background(pixel(img, cam.project([0.9, 0, 0.25], W, H)))
    assert is_background(pixel(img, cam.project([0, 0.5, 0.25], W, H)))
    assert is_background(pixel(img, cam.project([1.15, 0, 0.25], W, H)))


def test_different_arrays_give_different_images(gl):
    cam = front_camera()
    sphere = (SPHERE, (0.5, 0, 0), (-1, 0, 0), None, RED)
    a = FakeWorld([sphere, (BOX, (0.3, 0.3, 0.3), (1, 0, 0), None, RED)])
    b = FakeWorld([sphere, (BOX, (0.3, 0.3, 0.3), (1, 0.8, 0), None, RED)])
    img_a = render(gl, a, cam)
    img_b = render(gl, b, cam)
    assert np.array_equal(img_a, render(gl, a, cam)), "same arrays must give the same image"
    changed = np.abs(img_a.astype(int) - img_b.astype(int)).max(axis=2) > 10
    assert changed.sum() > 200


def test_shadow_darkens_ground_below_box(gl):
    light = np.array([0.3, 1.0, 0.2])
    box_pos = np.array([0.0, 1.5, 0.0])
    shadow_at = box_pos - light / light[1] * box_pos[1]   # light ray through the box centre
    world = FakeWorld([(PLANE, (0, 0, 0), (0, 0, 0), None, (0.7, 0.7, 0.7)),
                       (BOX, (0.4, 0.4, 0.4), box_pos, None, RED)], static=[True, False])
    cam = Camera()
    cam.set_from_dict({"eye": (shadow_at + [0.0, 6.0, 2.5]).tolist(), "target": shadow_at.tolist(),
                       "fov_deg": 45})
    lit = render(gl, world, cam, shadows=False, grid=False, light_dir=light)
    shaded = render(gl, world, cam, shadows=True, grid=False, light_dir=light)
    at = cam.project(shadow_at, W, H)
    assert pixel(shaded, at).sum() < 0.75 * pixel(lit, at).sum()
    far = cam.project(shadow_at + [2.0, 0.0, 1.0], W, H)
    assert abs(pixel(shaded, far).sum() - pixel(lit, far).sum()) <= 6
    toward_light = cam.project(-shadow_at * [1, 0, 1], W, H)   # mirror point: stays lit
    assert abs(pixel(shaded, toward_light).sum() - pixel(lit, toward_light).sum()) <= 6


def test_pick_returns_body_and_surface_point(gl):
    _, renderer, _ = gl
    cam = front_camera()
    world = FakeWorld([(SPHERE, (0.5, 0, 0), (-1, 0, 0), None, RED),
                       (BOX, (0.3, 0.3, 0.3), (1, 0, 0), None, RED)])
    render(gl, world, cam)
    view, proj = cam.view_matrix(), cam.projection_matrix(W / H)
    x, y, _ = cam.project([-1, 0, 0], W, H)
    body, point = renderer.pick(view, proj, x, y, (W, H))
    assert body == 0
    assert abs(np.linalg.norm(point - [-1, 0, 0]) - 0.5) < 0.03
    x, y, _ = cam.project([1, 0, 0], W, H)
    assert renderer.pick(view, proj, x, y, (W, H))[0] == 1
    assert renderer.pick(view, proj, 2, 2, (W, H)) == (-1, None)


def test_gizmos_and_highlight_change_the_image(gl):
    cam = front_camera()
    world = FakeWorld([(SPHERE, (0.5, 0, 0), (0, 0, 0), None, RED)])
    world.contact_world = np.array([[1.5, 0.0, 0.0]])
    world.contact_normal = np.array([[0.0, 1.0, 0.0]])
    world.contact_impulse = np.array([2.0])
    world.anchors = np.array([[[-1.5, 0.0, 0.0], [-1.5, 1.0, 0.0]]])
    world.body_vel[0] = (0.0, -4.0, 0.0)
    base = render(gl, world, cam)
    _, renderer, target = gl
    opts = RenderOptions(background=BG, show_joints=True, show_contacts=True, show_velocity=True,
                         show_com=True, selected=(0,))
    renderer.render(target.fbo, cam.view_matrix(), cam.projection_matrix(W / H), world, opts)
    img = target.read_rgb()
    for p in ([1.5, 0.5, 0.0], [-1.5, 0.5, 0.0]):   # contact normal arrow, joint error segment
        assert not is_background(pixel(img, cam.project(p, W, H)))
        assert is_background(pixel(base, cam.project(p, W, H)))
    edge = cam.project([0.52, 0.0, 0.0], W, H)         # outline just outside the sphere
    assert pixel(img, edge)[0] > 200 and pixel(img, edge)[1] > 100
    wire = render(gl, world, cam, wireframe=True)
    assert not np.array_equal(wire, base)


def test_holding_joint_draws_one_anchor_sphere_and_an_open_one_all_three_parts():
    from impulse.app.render.gizmos import build_gizmos
    world = FakeWorld([(SPHERE, (0.5, 0, 0), (0, 0, 0), None, RED)])
    opts = RenderOptions(show_joints=True)
    r = opts.gizmo_radius
    world.anchors = np.array([[[0.0, 0.0, 0.0], [0.0, 0.2 * r, 0.0]],     # holds: B inside A
                              [[1.0, 0.0, 0.0], [1.0, 0.5, 0.0]]])       # open by 0.5 m
    giz = build_gizmos(world, opts)
    assert len(giz.spheres) == 3 and len(giz.cylinders) == 1
    assert np.allclose(giz.cylinders[0, 9:12], [1.0, 0.25, 0.0])       # the open joint's bar


def test_small_far_gizmo_spheres_use_the_coarse_mesh(gl):
    from impulse.app.render import meshes
    from impulse.app.render.instances import pack_instances
    from impulse.app.render.lod import FINE_PX, LodBatch, projected_radius_px
    ctx, _, _ = gl
    cam = front_camera()
    proj = cam.projection_matrix(W / H)
    near, far = [0.0, 0.0, 5.0], [0.0, 0.0, -30.0]                   # 1 m and 36 m away
    rows = pack_instances(np.tile(np.identity(3), (2, 1, 1)), np.array([near, far]),
                          np.full((2, 3), 0.05), np.zeros((2, 3)), np.ones((2, 3)),
                          np.zeros(2), np.full(2, -1.0))
    px = projected_radius_px(rows, [0.0, 0.0, 6.0], proj, H)
    assert px[0] > FINE_PX > px[1]
    lod = LodBatch(ctx, meshes.sphere(12, 6), meshes.sphere(6, 3))
    lod.set_instances(rows)
    lod.choose([0.0, 0.0, 6.0], proj, H)
    assert (lod.fine.count, lod.coarse.count) == (1, 1)
    assert np.allclose(lod.fine.rows[0, 9:12], near) and np.allclose(lod.coarse.rows[0, 9:12], far)
    lod.release()


def test_loads_draw_a_force_arrow_from_its_point_and_a_torque_arrow_along_its_axis():
    from impulse.app.render.gizmos import (
        LOAD_FORCE,
        LOAD_TORQUE,
        build_gizmos,
        load_arrow_length,
    )
    world = FakeWorld([(SPHERE, (0.5, 0, 0), (0, 0, 0), None, RED)])
    point, force, torque = [0.0, 0.5, 0.0], [0.0, 0.0, 10.0], [3.0, 0.0, 0.0]
    world.load_arrows = lambda: np.array([[point, force, torque]])
    opts = RenderOptions(show_joints=False, show_loads=True)
    giz = build_gizmos(world, opts)
    assert len(giz.cones) == 2 and len(giz.cylinders) == 2
    for row, vec, color in zip(giz.cones, (force, torque), (LOAD_FORCE, LOAD_TORQUE),
                               strict=True):
        assert np.allclose(row[18:21], color)
        unit = np.asarray(vec) / np.linalg.norm(vec)
        tip = row[9:12] + unit * row[13]                 # the cone's base + its height
        assert np.allclose(tip, np.asarray(point) + unit * load_arrow_length(
            np.linalg.norm(vec)), atol=1e-5)
    assert load_arrow_length(1.0) == pytest.approx(0.3)
    assert load_arrow_length(100.0) == pytest.approx(0.3 * np.log2(101))
    assert len(build_gizmos(world, RenderOptions(show_joints=False, show_loads=False)).cones) == 0
