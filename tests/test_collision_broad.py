"""Broad phase against brute force, collision filters, ray casts."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from impulse.engine.collision import (
    BOX,
    CAPSULE,
    CYLINDER,
    HULL,
    PLANE,
    SPHERE,
    CollisionDetector,
    excluded_pair_keys,
    ray_plane_hit,
)


def rot(axis, ang):
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(ang) * K + (1 - math.cos(ang)) * K @ K


def random_scene(rng, n_bodies, with_plane=True):
    """Random bodies (1-2 shapes each) in a 4 m cube; body 0 a static ground plane."""
    pos = rng.uniform(-2, 2, (n_bodies, 3))
    R = np.array([rot(rng.normal(size=3), rng.uniform(0, math.pi)) for _ in range(n_bodies)])
    vel = rng.normal(size=(n_bodies, 3)) * 2
    omega = rng.normal(size=(n_bodies, 3)) * 3
    static = rng.uniform(size=n_bodies) < 0.2
    sb, kind, size, lpos, lrot = [], [], [], [], []
    hv, hs, hc = [], [], []
    for b in range(n_bodies):
        if b == 0 and with_plane:
            pos[0] = 0
            R[0] = np.eye(3)
            static[0] = True
            shapes = [PLANE]
        else:
            shapes = list(rng.choice([SPHERE, BOX, CAPSULE, CYLINDER, HULL],
                                     size=rng.integers(1, 3)))
        for k in shapes:
            sb.append(b)
            kind.append(int(k))
            size.append(rng.uniform(0.05, 0.5, 3))
            lpos.append(rng.uniform(-0.3, 0.3, 3) if k != PLANE else np.zeros(3))
            lrot.append(rot(rng.normal(size=3), rng.uniform(0, 3)) if k != PLANE else np.eye(3))
            hs.append(sum(hc))
            if k == HULL:
                pts = rng.normal(size=(12, 3)) * 0.3
                hv.append(pts)
                hc.append(12)
            else:
                hc.append(0)
    k = len(sb)
    group = rng.integers(1, 8, k)
    mask = rng.integers(0, 8, k)
    mask[rng.uniform(size=k) < 0.5] = -1
    det = CollisionDetector(np.array(sb), np.array(kind), np.array(size), np.array(lpos),
                            np.array(lrot), np.vstack(hv) if hv else None, np.array(hs),
                            np.array(hc), group, mask, margin=0.02)
    excl = [tuple(rng.integers(0, n_bodies, 2)) for _ in range(n_bodies // 3)]
    det.set_filters(group, mask, excluded_pair_keys(excl, n_bodies))
    return det, (pos, R, vel, omega, static)


def pair_set(pairs):
    return {(min(a, b), max(a, b)) for a, b in np.asarray(pairs).reshape(-1, 2)}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 60), h=st.sampled_from([0.0, 0.01, 0.05]))
def test_sweep_and_prune_equals_brute_force(seed, n, h):
    rng = np.random.default_rng(seed)
    det, state = random_scene(rng, n)
    det.detect(*state, h)
    got = pair_set(det.pairs)
    want = pair_set(det.brute_force_pairs(state[4]))
    assert got == want
    assert len(got) == det.n_pairs          # each pair once
    # in body order: (i, j) with i < j, sorted (broadphase.sort_pairs: the rows' memory order)
    assert [tuple(p) for p in det.pairs] == sorted(got)
    # move everything a bit (insertion sort path) and compare again
    pos = state[0] + rng.normal(size=state[0].shape) * 0.3
    pos[state[4]] = state[0][state[4]]
    state2 = (pos,) + state[1:]
    det.detect(*state2, h)
    assert pair_set(det.pairs) == pair_set(det.brute_force_pairs(state[4]))
    assert [tuple(p) for p in det.pairs] == sorted(pair_set(det.pairs))


def test_broad_phase_aabbs_cover_motion():
    # a sphere moving at 10 m/s towards another is paired only once h covers the gap
    sb, kind = np.array([0, 1]), np.array([SPHERE, SPHERE])
    size = np.array([[0.5, 0, 0], [0.5, 0, 0]])
    det = CollisionDetector(sb, kind, size, margin=0.01)
    pos = np.array([[0.0, 0, 0], [1.3, 0, 0]])
    R = np.tile(np.eye(3), (2, 1, 1))
    vel = np.array([[10.0, 0, 0], [0, 0, 0]])
    z = np.zeros((2, 3))
    st_ = np.array([False, False])
    assert len(det.detect(pos, R, vel, z, st_, 0.01)) == 0       # 0.1 m < 0.3 - 0.02
    cs = det.detect(pos, R, vel, z, st_, 0.03)                   # 0.3 m covers the gap
    assert len(cs) == 1 and cs.depth[0] == pytest.approx(-0.3, abs=1e-14)
    # rotation: a long box spinning fast reaches further
    det = CollisionDetector(sb, np.array([BOX, SPHERE]), np.array([[1.0, 0.1, 0.1],
                                                                   [0.1, 0, 0]]))
    pos = np.array([[0.0, 0, 0], [0.0, 0.5, 0]])
    om = np.array([[0, 0, 20.0], [0, 0, 0]])
    det.detect(pos, R, z, z, st_, 0.0)
    assert det.n_pairs == 0
    det.detect(pos, R, z, om, st_, 0.02)
    assert det.n_pairs == 1


def _two_spheres(**kw):
    sb = np.array([0, 1, 1])
    kind = np.array([SPHERE, SPHERE, SPHERE])
    size = np.array([[0.5, 0, 0], [0.5, 0, 0], [0.3, 0, 0]])
    lpos = np.array([[0, 0, 0], [0, 0, 0], [-0.2, 0, 0]])
    det = CollisionDetector(sb, kind, size, lpos, **kw)
    pos = np.array([[0.0, 0, 0], [0.9, 0, 0]])
    R = np.tile(np.eye(3), (2, 1, 1))
    z = np.zeros((2, 3))
    return det, (pos, R, z, z, np.array([False, False]), 0.0)


def test_filters_groups_masks_and_excluded_pairs():
    det, state = _two_spheres()
    cs = det.detect(*state)
    # shapes 1 and 2 share body 1: never paired; both touch shape 0
    assert sorted(zip(cs.shape_a.tolist(), cs.shape_b.tolist(), strict=True)) == [(0, 1), (0, 2)]
    det.set_filters(np.array([1, 2, 2]), np.array([1, 1, -1]))   # 0 in g1 hits g1 only
    cs = det.detect(*state)
    assert len(cs) == 0
    det.set_filters(np.array([1, 2, 1]), np.array([1, 1, 1]))
    cs = det.detect(*state)
    assert sorted(zip(cs.shape_a.tolist(), cs.shape_b.tolist(), strict=True)) == [(0, 2)]
    det.set_filters(None, None, excluded_pair_keys([(1, 0)], 2))
    assert len(det.detect(*state)) == 0
    assert excluded_pair_keys([(1, 0), (0, 1), (3, 2)], 5).tolist() == [1, 13]
    # two static bodies never collide
    pos, R, v, w, _, h = state
    det.set_filters()
    assert len(det.detect(pos, R, v, w, np.array([True, True]), h)) == 0
    assert len(det.detect(pos, R, v, w, np.array([True, False]), h)) == 2


def test_contact_buffers_grow():
    n = 300
    sb = np.arange(n)
    kind = np.full(n, BOX)
    size = np.tile([0.5, 0.5, 0.5], (n, 1))
    det = CollisionDetector(np.append(sb, n), np.append(kind, PLANE),
                            np.vstack([size, [0, 0, 0]]))
    pos = np.zeros((n + 1, 3))
    pos[:n, 0] = np.arange(n) * 1.5
    pos[:n, 1] = 0.499
    R = np.tile(np.eye(3), (n + 1, 1, 1))
    z = np.zeros((n + 1, 3))
    st_ = np.zeros(n + 1, bool)
    st_[n] = True
    cs = det.detect(pos, R, z, z, st_, 0.0)
    assert len(cs) == 4 * n
    np.testing.assert_allclose(cs.depth, 0.001, atol=1e-12)


def test_raycast_hits_closest_body():
    sb = np.arange(6)
    kind = np.array([PLANE, SPHERE, BOX, CAPSULE, CYLINDER, HULL])
    size = np.array([[0, 0, 0], [0.5, 0, 0], [0.5, 0.25, 0.5], [0.2, 0.4, 0],
                     [0.3, 0.4, 0], [0, 0, 0]])
    hull = np.array([[sx, sy, sz] for sx in (-.4, .4) for sy in (-.4, .4) for sz in (-.4, .4)])
    det = CollisionDetector(sb, kind, size, hull_vertex=hull,
                            shape_hull_start=np.zeros(6, int),
                            shape_hull_count=np.array([0, 0, 0, 0, 0, 8]))
    pos = np.array([[0, 0, 0], [0, 1, 0], [3, 1, 0], [6, 1, 0], [9, 1, 0], [12, 1, 0.]])
    R = np.tile(np.eye(3), (6, 1, 1))
    R[2] = rot([0, 1, 0], 0.3)
    down = np.array([0, -1.0, 0])
    expect = {0: 5 - 1.5, 3: 5 - 1.25, 6: 5 - 1.6, 9: 5 - 1.4, 12: 5 - 1.4}
    bodies = {0: 1, 3: 2, 6: 3, 9: 4, 12: 5}
    for x, t in expect.items():
        hit = det.raycast([x, 5, 0], down, pos, R)
        assert hit.body == bodies[x]
        assert hit.distance == pytest.approx(t, abs=1e-12)
        np.testing.assert_allclose(hit.normal, [0, 1, 0], atol=1e-12)
        np.testing.assert_allclose(hit.point, [x, 5 - t, 0], atol=1e-12)
    # between bodies: the ground plane
    hit = det.raycast([1.6, 5, 0.9], [0, -2, 0], pos, R)
    assert hit.body == 0 and hit.distance == pytest.approx(5.0)
    # sideways into the sphere, the capsule's side, the cylinder's side
    hit = det.raycast([-5, 1, 0], [1, 0, 0], pos, R)
    assert hit.body == 1 and hit.distance == pytest.approx(4.5, abs=1e-12)
    np.testing.assert_allclose(hit.normal, [-1, 0, 0], atol=1e-12)
    hit = det.raycast([6, 1.1, -5], [0, 0, 1], pos, R)
    assert hit.body == 3 and hit.distance == pytest.approx(4.8, abs=1e-12)
    hit = det.raycast([9, 1.1, 5], [0, 0, -1], pos, R)
    assert hit.body == 4 and hit.distance == pytest.approx(4.7, abs=1e-12)
    # oblique into the box's rotated face, skip_body, misses
    d = np.array([1.0, -1.0, 0.0])
    hit = det.raycast([0.0, 4.0, 0.0], d, pos, R, skip_body=1)
    assert hit.body == 2
    assert hit.point[1] == pytest.approx(1.25, abs=1e-12)
    assert det.raycast([0, 5, 0], [0, 1, 0], pos, R) is None
    assert det.raycast([0, 5, 0], down, pos, R, max_distance=3.0) is None
    # a ray starting inside the sphere ignores it and finds the plane
    hit = det.raycast([0, 1, 0], down, pos, R)
    assert hit.body == 0 and hit.distance == pytest.approx(1.0)


def test_ray_plane_helper():
    assert ray_plane_hit([0, 2, 0], [0, -1, 0], [5, 0, 5], [0, 1, 0]) == pytest.approx(2.0)
    assert ray_plane_hit([0, 2, 0], [1, -1, 0], [0, 0, 0], [0, 1, 0]) == \
        pytest.approx(2 * math.sqrt(2))
    assert ray_plane_hit([0, 2, 0], [0, 1, 0], [0, 0, 0], [0, 1, 0]) == math.inf
    assert ray_plane_hit([0, 2, 0], [1, 0, 0], [0, 0, 0], [0, 1, 0]) == math.inf


def test_benchmark_scene_resting_cubes():
    from impulse.engine.collision.bench import resting_cubes
    shapes, state = resting_cubes(27, gap=0.02, yaw=0.0)
    det = CollisionDetector(*shapes, margin=0.01)
    cs = det.detect(*state, 0.01)
    # 9 cubes on the floor and 18 stacked pairs, 4 face points each, 1 mm deep
    assert len(cs) == 4 * (9 + 18)
    np.testing.assert_allclose(cs.depth, 0.001, atol=1e-9)
    np.testing.assert_allclose(np.abs(cs.normal[:, 1]), 1.0, atol=1e-12)
    prev = cs.copy()
    cs2 = det.detect(*state, 0.01)
    assert np.all(cs2.match(prev) == np.arange(len(cs2)))


@pytest.mark.parametrize("spread,radius", [(100.0, 0.01), (3.0, 0.4), (10.0, 0.3)])
def test_slabbed_sweep_with_large_and_tiny_boxes(spread, radius):
    rng = np.random.default_rng(int(spread))
    n = 300
    kind = np.array([BOX] + [SPHERE] * n + [PLANE])
    size = np.vstack([[spread / 2, 0.5, spread / 3]] + [[radius, 0, 0]] * n + [[0, 0, 0]])
    det = CollisionDetector(np.arange(n + 2), kind, size, margin=0.01)
    pos = np.vstack([[0, -0.5, 0], rng.uniform(-spread / 2, spread / 2, (n, 3)), [0, -1, 0]])
    R = np.tile(np.eye(3), (n + 2, 1, 1))
    vel = rng.normal(size=(n + 2, 3))
    z = np.zeros((n + 2, 3))
    static = np.zeros(n + 2, bool)
    static[[0, n + 1]] = True
    det.detect(pos, R, vel, z, static, 0.02)
    assert pair_set(det.pairs) == pair_set(det.brute_force_pairs(static))
    assert len(pair_set(det.pairs)) == det.n_pairs


@pytest.mark.parametrize("asleep", [0.0, 0.3, 0.9, 0.99, 1.0])
@pytest.mark.parametrize("seed", [1, 2])
def test_sleeping_boxes_look_only_at_moving_ones_and_find_every_pair(asleep, seed):
    """A pile where a share of the bodies is static (fixed or asleep): the sweep skips their
    static neighbours (broadphase.py) and still finds exactly brute force's pairs, each
    once, also after the moving ones moved."""
    rng = np.random.default_rng(seed)
    n = 400
    kind = np.array([BOX] * n + [PLANE])
    size = np.vstack([rng.uniform(0.05, 0.4, (n, 3)), [[0, 0, 0]]])
    det = CollisionDetector(np.arange(n + 1), kind, size, margin=0.01)
    pos = np.vstack([rng.uniform(-3, 3, (n, 3)) * [1, 0.3, 1], [[0, -1, 0]]])
    R = np.tile(np.eye(3), (n + 1, 1, 1))
    vel = rng.normal(size=(n + 1, 3))
    z = np.zeros((n + 1, 3))
    static = np.append(rng.uniform(size=n) < asleep, True)
    for _ in range(2):
        det.detect(pos, R, vel, z, static, 1 / 60)
        want = pair_set(det.brute_force_pairs(static))
        assert pair_set(det.pairs) == want and len(want) == det.n_pairs
        assert all(not (static[a] and static[b]) for a, b in want)
        pos = pos + np.where(static[:, None], 0.0, rng.normal(size=pos.shape) * 0.2)
