"""Narrow phase: contact counts, depths, normals and body-frame points against hand
computed values; symmetry; persistence ids."""
import math

import numpy as np
import pytest

from impulse.engine.collision import (
    BOX,
    CAPSULE,
    CYLINDER,
    HULL,
    PLANE,
    SPHERE,
    CollisionDetector,
    load_obj_points,
)


def rot(axis, ang):
    """Rotation matrix about a unit axis (Rodrigues)."""
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(ang) * K + (1 - math.cos(ang)) * K @ K


class Scene:
    """Bodies with one or more shapes, turned into the detector's flat arrays."""

    def __init__(self):
        self.pos, self.R, self.vel, self.omega, self.static = [], [], [], [], []
        self.sb, self.kind, self.size, self.lpos, self.lrot = [], [], [], [], []
        self.hv, self.hs, self.hc = [], [], []

    def body(self, pos, R=None, static=False, vel=(0, 0, 0), omega=(0, 0, 0)):
        self.pos.append(np.asarray(pos, float))
        self.R.append(np.eye(3) if R is None else np.asarray(R, float))
        self.vel.append(np.asarray(vel, float))
        self.omega.append(np.asarray(omega, float))
        self.static.append(static)
        return len(self.pos) - 1

    def shape(self, body, kind, size=(0, 0, 0), lpos=(0, 0, 0), lrot=None, hull=None):
        self.sb.append(body)
        self.kind.append(kind)
        self.size.append(np.asarray(size, float))
        self.lpos.append(np.asarray(lpos, float))
        self.lrot.append(np.eye(3) if lrot is None else np.asarray(lrot, float))
        n = sum(self.hc)
        self.hs.append(n)
        pts = np.zeros((0, 3)) if hull is None else np.asarray(hull, float)
        self.hc.append(len(pts))
        self.hv.append(pts)
        return len(self.sb) - 1

    def add(self, kind, size, pos, R=None, static=False, hull=None, **kw):
        b = self.body(pos, R, static, **kw)
        self.shape(b, kind, size, hull=hull)
        return b

    def detector(self, margin=0.01, **kw):
        return CollisionDetector(np.array(self.sb), np.array(self.kind), np.array(self.size),
                                 np.array(self.lpos), np.array(self.lrot),
                                 np.vstack(self.hv), np.array(self.hs), np.array(self.hc),
                                 margin=margin, **kw)

    def state(self):
        return (np.array(self.pos), np.array(self.R), np.array(self.vel),
                np.array(self.omega), np.array(self.static))

    def detect(self, h=0.0, margin=0.01, det=None):
        det = det or self.detector(margin)
        return det.detect(*self.state(), h)

    def collide(self, a, b, det=None, h=0.0):
        det = det or self.detector()
        return det.collide(a, b, *self.state(), h)


def ground(sc, R=None, y=0.0):
    return sc.add(PLANE, (0, 0, 0), (0, y, 0), R, static=True)


def cube_points(he):
    return np.array([[sx * he[0], sy * he[1], sz * he[2]]
                     for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


def world_a(sc, cs, i):
    b = cs.body_a[i]
    return sc.pos[b] + sc.R[b] @ cs.point_a[i]


def world_b(sc, cs, i):
    b = cs.body_b[i]
    return sc.pos[b] + sc.R[b] @ cs.point_b[i]


def test_sphere_plane_exact():
    sc = Scene()
    ground(sc)
    s = sc.add(SPHERE, (0.5, 0, 0), (0.3, 0.49, -0.2))
    cs = sc.detect()
    assert len(cs) == 1
    assert cs.body_a[0] == s and cs.body_b[0] == 0
    np.testing.assert_allclose(cs.normal[0], [0, 1, 0], atol=1e-15)
    assert cs.depth[0] == pytest.approx(0.01, abs=1e-14)
    np.testing.assert_allclose(cs.point_a[0], [0, -0.5, 0], atol=1e-14)
    np.testing.assert_allclose(cs.point_b[0], [0.3, 0, -0.2], atol=1e-14)
    np.testing.assert_allclose(cs.world[0], [0.3, -0.005, -0.2], atol=1e-14)


def test_sphere_tilted_plane_and_margin():
    R = rot([0, 0, 1], 0.3)                      # plane normal = R[:,1]
    n = R[:, 1]
    sc = Scene()
    ground(sc, R)
    sc.add(SPHERE, (0.25, 0, 0), 0.25 * n + 0.004 * n)   # 4 mm above: inside margin
    cs = sc.detect(margin=0.01)
    assert len(cs) == 1
    np.testing.assert_allclose(cs.normal[0], n, atol=1e-14)
    assert cs.depth[0] == pytest.approx(-0.004, abs=1e-14)
    assert len(sc.detect(margin=0.003)) == 0


def test_box_resting_flat_on_plane_four_corners():
    for yaw in (0.0, 0.7):
        sc = Scene()
        ground(sc)
        he = (0.5, 0.25, 0.4)
        b = sc.add(BOX, he, (1.0, 0.25 - 0.002, 2.0), rot([0, 1, 0], yaw))
        cs = sc.detect()
        assert len(cs) == 4
        assert np.all(cs.body_a == b)
        np.testing.assert_allclose(cs.depth, 0.002, atol=1e-13)
        np.testing.assert_allclose(cs.normal, np.tile([0, 1, 0], (4, 1)), atol=1e-15)
        got = sorted(map(tuple, np.round(cs.point_a, 12)))
        want = sorted((sx * 0.5, -0.25, sz * 0.4) for sx in (-1, 1) for sz in (-1, 1))
        np.testing.assert_allclose(got, want, atol=1e-12)
        for i in range(4):   # plane point = corner projected onto y = 0
            w = world_b(sc, cs, i)
            assert w[1] == pytest.approx(0.0, abs=1e-13)


def test_tilted_box_on_plane_one_corner():
    sc = Scene()
    ground(sc)
    R = rot([1, 0, 1], 0.4) @ rot([0, 1, 0], 0.2)
    he = np.array([0.3, 0.2, 0.1])
    low = min((R @ c)[1] for c in cube_points(he))
    sc.add(BOX, he, (0, -low - 0.001, 0), R)
    cs = sc.detect()
    assert len(cs) == 1
    assert cs.depth[0] == pytest.approx(0.001, abs=1e-13)


def test_box_box_face_four_points():
    sc = Scene()
    sc.add(BOX, (0.5, 0.5, 0.5), (0, 0.5, 0))
    top = sc.add(BOX, (0.3, 0.2, 0.25), (0.05, 1.0 + 0.2 - 0.003, -0.02))
    cs = sc.detect()
    assert len(cs) == 4
    # A is the lower shape index (equal kinds): body 0 below, normal from top box to it
    assert np.all(cs.body_a == 0) and np.all(cs.body_b == top)
    np.testing.assert_allclose(cs.normal, np.tile([0, -1, 0], (4, 1)), atol=1e-14)
    np.testing.assert_allclose(cs.depth, 0.003, atol=1e-12)
    got = sorted(map(tuple, np.round(cs.point_b, 10)))
    want = sorted((sx * 0.3, -0.2, sz * 0.25) for sx in (-1, 1) for sz in (-1, 1))
    np.testing.assert_allclose(got, want, atol=1e-10)
    for i in range(4):
        assert world_a(sc, cs, i)[1] == pytest.approx(1.0, abs=1e-12)


def test_box_box_rotated_octagon_reduced_to_four():
    sc = Scene()
    sc.add(BOX, (0.5, 0.5, 0.5), (0, 0.5, 0))
    sc.add(BOX, (0.5, 0.5, 0.5), (0, 1.5 - 0.004, 0), rot([0, 1, 0], math.pi / 4))
    cs = sc.detect()
    assert len(cs) == 4
    np.testing.assert_allclose(cs.depth, 0.004, atol=1e-12)
    w = cs.world
    # the 4 kept points are corners of the octagon |x|,|z| <= 0.5, |x|+|z| <= 0.5 sqrt 2
    assert np.all(np.abs(w[:, [0, 2]]) <= 0.5 + 1e-9)
    assert np.all(np.abs(w[:, 0]) + np.abs(w[:, 2]) <= 0.5 * math.sqrt(2) + 1e-9)
    area = 0.5 * abs(np.cross(w[1] - w[0], w[2] - w[0])[1])
    assert area > 0.2


@pytest.mark.parametrize("turn", [math.radians(3), math.radians(-5), math.pi / 4])
def test_rotated_face_manifold_keeps_its_points_under_micrometre_tilts(turn):
    """Two cubes turned against each other touch on an octagon, reduced to 4 points. A
    resting stack tilts them by micrometres each step; the kept points (feature ids) must not
    flip with that, or each step starts rows without warm start (the 20-cube tower ran its
    loops to the cycle cap every step, manifold.DEPTH_TIE). A real tilt (a corner deeper by
    0.1 mm) must still bring the deepest corner in."""
    def features(tilt_x, tilt_z):
        sc = Scene()
        sc.add(BOX, (0.5, 0.5, 0.5), (0, 0.25, 0))
        sc.add(BOX, (0.5, 0.5, 0.5), (0.003, 0.75 - 2e-6, 0),
               rot([1, 0, 0], tilt_x) @ rot([0, 0, 1], tilt_z) @ rot([0, 1, 0], turn))
        cs = sc.detect()
        assert len(cs) == 4
        return sorted(cs.feature.tolist()), cs.depth.max(), cs
    ref = features(0.0, 0.0)[0]
    for tx, tz in [(2e-6, 0.0), (-2e-6, 0.0), (0.0, 3e-6), (-1e-6, -2e-6), (3e-6, 3e-6)]:
        # a tilt of 4e-6 rad moves a 0.25 m half extent's corner by 1 um
        assert features(tx, tz)[0] == ref, (tx, tz)
    # tilted by 4e-4 rad the overlap's corners lie up to 0.2 mm apart in depth: the deepest
    # point of the overlap (a fine grid over it; depth is linear there) is kept
    tilt = 4e-4
    _, kept, cs = features(tilt, 0.0)
    R = rot([1, 0, 0], tilt) @ rot([0, 1, 0], turn)
    centre = np.array([0.003, 0.75 - 2e-6, 0.0])
    n, f = R @ [0, -1, 0], centre + R @ [0, -0.25, 0]
    x, z = np.meshgrid(np.linspace(-0.25, 0.25, 501), np.linspace(-0.25, 0.25, 501))
    y = f[1] - (n[0] * (x - f[0]) + n[2] * (z - f[2])) / n[1]
    local = np.einsum("ji,...j->...i", R, np.stack([x, y, z], axis=-1) - centre)
    inside = (np.abs(local[..., 0]) <= 0.25) & (np.abs(local[..., 2]) <= 0.25)
    deepest = (0.5 - y)[inside].max()
    assert kept >= deepest - 1e-6
    assert cs.depth.max() - cs.depth.min() > 5e-5


def test_box_box_edge_edge_one_point():
    r2 = math.sqrt(2.0)
    sc = Scene()
    sc.add(BOX, (0.5, 0.5, 0.5), (0, 0, 0), rot([0, 0, 1], math.pi / 4))   # top edge || z
    up = sc.add(BOX, (0.5, 0.5, 0.5), (0, r2 - 0.01, 0), rot([1, 0, 0], math.pi / 4))
    cs = sc.detect()
    assert len(cs) == 1
    np.testing.assert_allclose(cs.normal[0], [0, -1, 0], atol=1e-12)   # from upper to lower
    assert cs.depth[0] == pytest.approx(0.01, abs=1e-12)
    np.testing.assert_allclose(cs.world[0], [0, r2 / 2 - 0.005, 0], atol=1e-12)
    assert cs.body_b[0] == up


def test_capsule_lying_on_plane_two_points():
    sc = Scene()
    ground(sc)
    R = rot([0, 0, 1], math.pi / 2)              # segment along world x
    sc.add(CAPSULE, (0.2, 0.5, 0), (0, 0.2 - 0.001, 0), R)
    cs = sc.detect()
    assert len(cs) == 2
    np.testing.assert_allclose(cs.depth, 0.001, atol=1e-13)
    xs = sorted(cs.world[:, 0])
    np.testing.assert_allclose(xs, [-0.5, 0.5], atol=1e-12)
    # standing upright: one point
    sc2 = Scene()
    ground(sc2)
    sc2.add(CAPSULE, (0.2, 0.5, 0), (0, 0.7 - 0.001, 0))
    cs2 = sc2.detect()
    assert len(cs2) == 1 and cs2.depth[0] == pytest.approx(0.001, abs=1e-13)


def test_cylinder_on_plane_standing_and_lying():
    sc = Scene()
    ground(sc)
    sc.add(CYLINDER, (0.3, 0.5, 0), (0, 0.5 - 0.002, 0), rot([0, 1, 0], 0.3))
    cs = sc.detect()
    assert len(cs) == 4
    np.testing.assert_allclose(cs.depth, 0.002, atol=1e-13)
    np.testing.assert_allclose(np.hypot(cs.world[:, 0], cs.world[:, 2]), 0.3, atol=1e-12)
    sc = Scene()
    ground(sc)
    sc.add(CYLINDER, (0.3, 0.5, 0), (0, 0.3 - 0.002, 0), rot([1, 0, 0], math.pi / 2))
    cs = sc.detect()
    assert len(cs) == 2
    np.testing.assert_allclose(cs.depth, 0.002, atol=1e-13)
    np.testing.assert_allclose(sorted(cs.world[:, 2]), [-0.5, 0.5], atol=1e-12)


def test_sphere_pairs_exact():
    sc = Scene()
    sc.add(SPHERE, (0.5, 0, 0), (0, 0, 0))
    sc.add(SPHERE, (0.3, 0, 0), (0.5, 0.5, 0))
    cs = sc.detect()
    d = math.hypot(0.5, 0.5)
    assert len(cs) == 1 and cs.depth[0] == pytest.approx(0.8 - d, abs=1e-14)
    np.testing.assert_allclose(cs.normal[0], [-1 / math.sqrt(2), -1 / math.sqrt(2), 0],
                               atol=1e-14)   # from b (larger index) to a
    # sphere against box face, edge region and inside
    sc = Scene()
    bx = sc.add(BOX, (0.5, 0.5, 0.5), (0, 0, 0), rot([0, 1, 0], 0.4))
    s1 = sc.add(SPHERE, (0.2, 0, 0), (0, 0.69, 0))
    cs = sc.collide(bx, s1)
    assert cs.depth[0] == pytest.approx(0.01, abs=1e-13)
    np.testing.assert_allclose(cs.normal[0], [0, -1, 0], atol=1e-13)
    # sphere against capsule side and cylinder cap/side
    sc = Scene()
    cp = sc.add(CAPSULE, (0.1, 0.5, 0), (0, 0, 0))
    sp = sc.add(SPHERE, (0.2, 0, 0), (0.29, 0.3, 0))
    cs = sc.collide(sp, cp)
    assert cs.depth[0] == pytest.approx(0.01, abs=1e-13)
    np.testing.assert_allclose(cs.normal[0], [1, 0, 0], atol=1e-13)
    sc = Scene()
    cy = sc.add(CYLINDER, (0.3, 0.5, 0), (0, 0, 0))
    sp = sc.add(SPHERE, (0.2, 0, 0), (0.1, 0.69, 0.1))
    sq = sc.add(SPHERE, (0.2, 0, 0), (0.49, 0.0, 0.0))
    cs = sc.collide(sp, cy)
    assert cs.depth[0] == pytest.approx(0.01, abs=1e-13)
    np.testing.assert_allclose(cs.normal[0], [0, 1, 0], atol=1e-13)
    cs = sc.collide(sq, cy)
    assert cs.depth[0] == pytest.approx(0.01, abs=1e-13)
    np.testing.assert_allclose(cs.normal[0], [1, 0, 0], atol=1e-13)


def test_capsule_capsule_parallel_and_crossed():
    sc = Scene()
    Rx = rot([0, 0, 1], math.pi / 2)
    a = sc.add(CAPSULE, (0.1, 0.5, 0), (0, 0, 0), Rx)
    b = sc.add(CAPSULE, (0.1, 0.5, 0), (0.3, 0.19, 0), Rx)
    cs = sc.collide(a, b)
    assert len(cs) == 2
    np.testing.assert_allclose(cs.depth, 0.01, atol=1e-12)
    np.testing.assert_allclose(sorted(cs.world[:, 0]), [-0.2, 0.5], atol=1e-12)
    np.testing.assert_allclose(cs.normal, np.tile([0, -1, 0], (2, 1)), atol=1e-12)
    sc = Scene()
    a = sc.add(CAPSULE, (0.1, 0.5, 0), (0, 0, 0), Rx)
    b = sc.add(CAPSULE, (0.1, 0.5, 0), (0.1, 0.19, 0.05), rot([1, 0, 0], math.pi / 2))
    cs = sc.collide(a, b)
    assert len(cs) == 1 and cs.depth[0] == pytest.approx(0.01, abs=1e-12)


def test_capsule_box_lying_two_points_and_deep():
    sc = Scene()
    bx = sc.add(BOX, (1.0, 0.5, 1.0), (0, -0.5, 0))
    cp = sc.add(CAPSULE, (0.2, 0.4, 0), (0.1, 0.2 - 0.003, 0.2), rot([1, 0, 0], math.pi / 2))
    cs = sc.collide(cp, bx)
    assert len(cs) == 2
    np.testing.assert_allclose(cs.depth, 0.003, atol=1e-12)
    np.testing.assert_allclose(cs.normal, np.tile([0, 1, 0], (2, 1)), atol=1e-12)
    np.testing.assert_allclose(sorted(cs.world[:, 2]), [-0.2, 0.6], atol=1e-12)
    # core segment inside the box: SAT path, depth = radius + core depth
    sc = Scene()
    bx = sc.add(BOX, (1.0, 0.5, 1.0), (0, -0.5, 0))
    cp = sc.add(CAPSULE, (0.2, 0.4, 0), (0.1, -0.05, 0.2), rot([1, 0, 0], math.pi / 2))
    cs = sc.collide(cp, bx)
    assert len(cs) == 2
    np.testing.assert_allclose(cs.depth, 0.25, atol=1e-12)


def test_hull_cube_matches_box():
    he = np.array([0.4, 0.3, 0.2])
    R = rot([1, 2, 3], 0.5)
    for kind in (BOX, HULL):
        sc = Scene()
        ground(sc)
        if kind == BOX:
            sc.add(BOX, he, (0, 0.3 - 0.001, 0))
        else:
            sc.add(HULL, (0, 0, 0), (0, 0.3 - 0.001, 0), hull=cube_points(he))
        cs = sc.detect()
        assert len(cs) == 4
        np.testing.assert_allclose(cs.depth, 0.001, atol=1e-13)
    # box vs box and hull vs box with random pose agree on the deepest depth and normal
    rng = np.random.default_rng(3)
    for _ in range(20):
        R = rot(rng.normal(size=3), rng.uniform(0, math.pi))
        p = rng.uniform(-0.3, 0.3, 3) + [0, 0.75, 0]
        res = []
        for kind in (BOX, HULL):
            sc = Scene()
            base = sc.add(BOX, (0.5, 0.5, 0.5), (0, 0, 0))
            if kind == BOX:
                o = sc.add(BOX, he, p, R)
            else:
                o = sc.add(HULL, (0, 0, 0), p, R, hull=cube_points(he))
            cs = sc.collide(o, base)
            res.append((len(cs), cs.depth.max() if len(cs) else None,
                        cs.normal[np.argmax(cs.depth)] if len(cs) else None))
        assert res[0][0] == res[1][0] or min(res[0][0], res[1][0]) > 0
        if res[0][1] is not None:
            assert res[1][1] == pytest.approx(res[0][1], abs=1e-9)
            np.testing.assert_allclose(res[0][2], res[1][2], atol=1e-6)


def test_hull_from_obj_on_box_and_sphere(tmp_path):
    # a tetrahedron-topped prism written as OBJ (faces ignored, hull from points)
    pts = np.vstack([cube_points([0.5, 0.1, 0.5]), [[0, 0.4, 0]]])
    f = tmp_path / "gem.obj"
    lines = "".join(f"v {x!r} {y!r} {z!r}\n" for x, y, z in pts.astype(float).tolist())
    f.write_text("# gem\n" + lines + "f 1 2 3\n")
    loaded = load_obj_points(str(f))
    np.testing.assert_allclose(loaded, pts)
    sc = Scene()
    bx = sc.add(BOX, (1, 0.5, 1), (0, -0.5, 0))
    h = sc.add(HULL, (0, 0, 0), (0, 0.1 - 0.002, 0), hull=loaded)
    cs = sc.collide(h, bx)
    assert len(cs) == 4
    np.testing.assert_allclose(cs.depth, 0.002, atol=1e-12)
    np.testing.assert_allclose(cs.normal, np.tile([0, 1, 0], (4, 1)), atol=1e-12)
    sp = sc.add(SPHERE, (0.2, 0, 0), (0, (0.1 - 0.002) + 0.4 + 0.2 - 0.01, 0))
    cs = sc.collide(sp, h)
    assert len(cs) == 1
    assert cs.depth[0] == pytest.approx(0.01, abs=1e-9)   # touches the apex vertex
    np.testing.assert_allclose(cs.normal[0], [0, 1, 0], atol=1e-9)
    cy = sc.add(CYLINDER, (0.3, 0.2, 0), (0.6, 0.2 - 0.004, 0.6))
    cs = sc.collide(cy, bx)
    assert len(cs) == 4
    np.testing.assert_allclose(cs.depth, 0.004, atol=1e-9)


def test_symmetry_swapping_flips_normal():
    rng = np.random.default_rng(7)
    kinds = [(SPHERE, (0.3, 0, 0)), (BOX, (0.3, 0.2, 0.25)), (CAPSULE, (0.15, 0.3, 0)),
             (CYLINDER, (0.25, 0.3, 0)), (HULL, (0, 0, 0))]
    hull = rng.normal(size=(20, 3)) * 0.3
    for ka, sa in kinds:
        for kb, sb in kinds:
            sc = Scene()
            a = sc.add(ka, sa, (0, 0, 0), rot([1, 1, 0], 0.3), hull=hull if ka == HULL else None)
            b = sc.add(kb, sb, (0.2, 0.45, 0.1), rot([0, 1, 1], 0.7),
                       hull=hull if kb == HULL else None)
            det = sc.detector()
            ab = sc.collide(a, b, det)
            ba = sc.collide(b, a, det)
            assert len(ab) == len(ba) > 0, (ka, kb)
            ia = np.lexsort(ab.world.T)
            ib = np.lexsort(ba.world.T)
            np.testing.assert_allclose(ab.normal[ia], -ba.normal[ib], atol=1e-12)
            np.testing.assert_allclose(ab.depth[ia], ba.depth[ib], atol=1e-12)
            np.testing.assert_allclose(ab.point_a[ia], ba.point_b[ib], atol=1e-12)
            np.testing.assert_allclose(np.linalg.norm(ab.normal, axis=1), 1.0, atol=1e-12)
            # depth convention: depth = n . (pb - pa) in world
            for i in range(len(ab)):
                assert np.dot(ab.normal[i], world_b(sc, ab, i) - world_a(sc, ab, i)) \
                    == pytest.approx(ab.depth[i], abs=1e-9)


def test_persistent_feature_ids_under_small_motion():
    def scene(dx, ang):
        sc = Scene()
        ground(sc)
        sc.add(BOX, (0.5, 0.5, 0.5), (dx, 0.499, 0), rot([0, 1, 0], ang))
        sc.add(BOX, (0.45, 0.45, 0.45), (0.05 + dx, 1.448, dx), rot([0, 1, 0], 0.5 + ang))
        sc.add(CYLINDER, (0.3, 0.5, 0), (3 + dx, 0.499, 0), rot([0, 1, 0], ang))
        sc.add(CAPSULE, (0.2, 0.5, 0), (-3, 0.199, dx), rot([1, 0, 0], math.pi / 2 + ang))
        return sc
    prev = scene(0.0, 0.0).detect()
    assert len(prev) == 4 + 4 + 4 + 2
    assert len(set(zip(prev.shape_a, prev.shape_b, prev.feature, strict=True))) == len(prev)
    for dx, ang in [(1e-4, 0.0), (2e-4, 1e-3), (-3e-4, -2e-3), (1e-3, 5e-3)]:
        cur = scene(dx, ang).detect()
        m = cur.match(prev)
        assert len(cur) == len(prev)
        assert np.all(m >= 0)
        np.testing.assert_allclose(cur.point_a, prev.point_a[m], atol=5e-3)
        prev = cur
    # a new contact gets -1
    far = scene(0.0, 0.0)
    far.add(SPHERE, (0.5, 0, 0), (10, 0.49, 0))
    m = far.detect().match(prev)
    assert np.sum(m < 0) == 1


def test_speculative_contact_from_velocity():
    sc = Scene()
    ground(sc)
    sc.add(SPHERE, (0.5, 0, 0), (0, 0.6, 0), vel=(0, -8.0, 0))
    assert len(sc.detect(h=0.0)) == 0
    cs = sc.detect(h=0.02)          # closes 0.16 m within the step
    assert len(cs) == 1 and cs.depth[0] == pytest.approx(-0.1, abs=1e-14)


KINDS = [(PLANE, (0, 0, 0)), (SPHERE, (0.3, 0, 0)), (BOX, (0.3, 0.2, 0.25)),
         (CAPSULE, (0.15, 0.3, 0)), (CYLINDER, (0.25, 0.3, 0)), (HULL, (0, 0, 0))]


@pytest.mark.slow
def test_fuzz_all_pairs_finite_and_consistent():
    """Random poses of every kind pair, including coincident centres: contacts are finite,
    normals unit, depth = n.(pb - pa), and a shape pair reported as overlapping really
    overlaps (checked for spheres and planes where the answer is closed form)."""
    rng = np.random.default_rng(11)
    hull = rng.normal(size=(16, 3)) * 0.25
    for trial in range(60):
        for ia, (ka, sa) in enumerate(KINDS):
            for kb, sb in KINDS[ia:]:
                if ka == PLANE and kb == PLANE:
                    continue
                sc = Scene()
                Ra = rot(rng.normal(size=3), rng.uniform(0, math.pi))
                Rb = rot(rng.normal(size=3), rng.uniform(0, math.pi))
                pb = rng.normal(size=3) * 0.3 if trial % 5 else np.zeros(3)
                a = sc.add(ka, sa, (0, 0, 0), Ra, static=ka == PLANE,
                           hull=hull if ka == HULL else None)
                b = sc.add(kb, sb, pb, Rb, hull=hull if kb == HULL else None)
                cs = sc.collide(b, a)
                assert len(cs) <= 4
                for i in range(len(cs)):
                    assert np.all(np.isfinite(cs.normal[i])) and np.isfinite(cs.depth[i])
                    assert np.linalg.norm(cs.normal[i]) == pytest.approx(1.0, abs=1e-9)
                    assert np.dot(cs.normal[i], world_b(sc, cs, i) - world_a(sc, cs, i)) \
                        == pytest.approx(cs.depth[i], abs=1e-7)
                    assert cs.depth[i] >= -0.01 - 1e-12
                if ka == SPHERE and kb == SPHERE:
                    d = 0.6 - np.linalg.norm(pb)
                    assert (len(cs) == 1) == (d >= -0.01)
                    if len(cs):
                        assert cs.depth[0] == pytest.approx(d, abs=1e-12)
                if ka == PLANE and kb == SPHERE:
                    d = 0.3 - np.dot(Ra[:, 1], pb)
                    assert (len(cs) == 1) == (d >= -0.01)
                    if len(cs):
                        assert cs.depth[0] == pytest.approx(d, abs=1e-12)


def test_convex_pairs_depth_matches_sampled_surface():
    """Sphere against box/cylinder/hull: the reported depth equals r - signed distance of
    the centre, the signed distance found by brute force over the shape's surface."""
    rng = np.random.default_rng(5)
    for kind, size in [(BOX, (0.3, 0.2, 0.25)), (CYLINDER, (0.25, 0.3, 0))]:
        for _ in range(30):
            sc = Scene()
            R = rot(rng.normal(size=3), rng.uniform(0, math.pi))
            o = sc.add(kind, size, (0, 0, 0), R)
            c = rng.normal(size=3) * 0.4
            s = sc.add(SPHERE, (0.2, 0, 0), c)
            cs = sc.collide(s, o)
            q = R.T @ c
            if kind == BOX:
                h = np.array(size)
                out = np.maximum(np.abs(q) - h, 0.0)
                sd = np.linalg.norm(out) if np.any(out > 0) else np.max(np.abs(q) - h)
            else:
                rho, y = math.hypot(q[0], q[2]), abs(q[1])
                dr, dy = rho - size[0], y - size[1]
                sd = math.hypot(max(dr, 0), max(dy, 0)) if (dr > 0 or dy > 0) else max(dr, dy)
            want = 0.2 - sd
            if want >= -0.01:
                assert len(cs) == 1 and cs.depth[0] == pytest.approx(want, abs=1e-12)
            else:
                assert len(cs) == 0


def test_obj_and_hull_errors(tmp_path):
    f = tmp_path / "bad.obj"
    f.write_text("v 0 0 0\nv 1 nope 0\n")
    with pytest.raises(ValueError, match=r"bad.obj:2"):
        load_obj_points(str(f))
    g = tmp_path / "empty.obj"
    g.write_text("# nothing\n")
    with pytest.raises(ValueError, match="no vertices"):
        load_obj_points(str(g))
    sc = Scene()
    sc.add(HULL, (0, 0, 0), (0, 0, 0), hull=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="at least 4"):
        sc.detector()


def brick_on_brick(turn, shift_z=0.0, nudge=0.0, kind=BOX):
    """A brick 0.4 x 0.2 x 0.2 m on another, shifted 0.1 m along x (a wall's bond): their
    long side faces line up, and `turn` [rad] about the vertical makes the upper brick's
    edges cross the lower one's there. Returns the contacts' world points."""
    he = np.array([0.2, 0.1, 0.1])         # half extents
    sc = Scene()
    hull = cube_points(he) if kind == HULL else None
    size = (0, 0, 0) if kind == HULL else he
    sc.add(kind, size, (0.0, 0.1, 0.0), hull=hull)
    sc.add(kind, size, np.array([0.1, 0.299, shift_z]) * (1.0 + nudge),
           rot([0, 1, 0], turn), hull=hull)
    cs = sc.detect()
    assert len(cs) == 4
    return cs.world


@pytest.mark.parametrize("kind", [BOX, HULL])
@pytest.mark.parametrize("turn", [2e-7, -3e-6, 1e-5, 4e-5])
@pytest.mark.parametrize("shift_z", [0.0, 1e-9, -2e-7])
def test_a_bond_keeps_the_overlaps_four_corners(kind, turn, shift_z):
    """Two bricks whose side faces line up (a wall built stone on stone): clipping leaves
    points where the upper brick's edges cross the lower one's, on the overlap's edges, and
    the manifold must keep the overlap's corners, not such a point (wall_car kept a side
    patch's points at x = 2.92 .. 3.1 of an overlap 2.9 .. 3.1: a corner's load went to the
    wrong place, collision/manifold.py drop_edge_points)."""
    w = brick_on_brick(turn, shift_z, kind=kind)
    x, z = w[:, 0], w[:, 2]
    # the overlap is x in [-0.1, 0.2], z in [-0.1, 0.1] (to the turn's micrometres)
    for cx in (-0.1, 0.2):
        for cz in (-0.1, 0.1):
            assert np.min(np.hypot(x - cx, z - cz)) < 2e-5, (cx, cz, w)


@pytest.mark.parametrize("kind", [BOX, HULL])
@pytest.mark.parametrize("turn", [0.0, 2e-7, -3e-6])
def test_a_patchs_points_come_in_one_order_whatever_the_last_bit(kind, turn):
    """The order of a patch's rows decides a Gauss-Seidel answer; it must not follow which
    vertex clipping started from, which flips with the last bit of a pose where the faces
    line up (wall_car settled up to 0.9 mm elsewhere after a 1e-15 nudge of its start;
    collision/manifold.py in_place_order)."""
    ref = brick_on_brick(turn, kind=kind)
    for nudge in (1e-15, -1e-15, 2e-15, -3e-15, 1e-13):
        np.testing.assert_allclose(brick_on_brick(turn, nudge=nudge, kind=kind), ref,
                                   atol=1e-9, err_msg=str(nudge))
    for shift_z in (1e-17, -1e-17, 3e-17, -3e-17, 1e-16, -1e-16):   # the side faces' line
        np.testing.assert_allclose(brick_on_brick(turn, shift_z, kind=kind), ref,
                                   atol=1e-9, err_msg=str(shift_z))
